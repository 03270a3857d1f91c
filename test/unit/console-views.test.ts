import { describe, expect, it } from 'vitest';
import { p } from '../../console/src/api-path.js';
import { diffLines, diffStats } from '../../console/src/diff.js';
import { href, parseRoute, versionAddresses } from '../../console/src/route.js';
import { inheritedRules, ruleOutcomes } from '../../console/src/rules.js';
import { type DeviceRow, rowWindow, visibleRows } from '../../console/src/table.js';
import { latestPerTree, linePath, passPercent, plot, type TrendPoint } from '../../console/src/trend.js';
import type { Batch } from '../../console/src/types.js';

const row = (device: string, grade: DeviceRow['grade'], score?: number, errors = 0): DeviceRow => ({
  device,
  grade,
  errors,
  warnings: 0,
  reportId: `r-${device}`,
  ...(score !== undefined ? { score } : {}),
});

describe('console routes', () => {
  it('parses every page and round-trips names that need encoding', () => {
    expect(parseRoute('')).toEqual({ page: 'overview' });
    expect(parseRoute('#/')).toEqual({ page: 'overview' });
    expect(parseRoute('#/batches')).toEqual({ page: 'batches' });
    expect(parseRoute('#/adapters/')).toEqual({ page: 'adapters' });
    expect(parseRoute(href('batches', 'b1', 'devices', 'core/1 a'))).toEqual({ page: 'device', batchId: 'b1', device: 'core/1 a' });
    expect(parseRoute(href('trees', 't#1'))).toEqual({ page: 'tree', treeId: 't#1' });
    expect(parseRoute('#/plans/p1')).toEqual({ page: 'plan', planId: 'p1' });
    expect(parseRoute('#/remediations/r1')).toEqual({ page: 'remediation', remediationId: 'r1' });
  });

  it('answers not-found for unknown or malformed addresses', () => {
    for (const hash of ['#/nope', '#/batches/b1/devices', '#/batches//x', '#/trees/%E0%A4%A']) {
      expect(parseRoute(hash).page).toBe('not-found');
    }
  });
});

describe('console devices table', () => {
  const rows = [row('edge-10', 'fail', 40, 3), row('edge-2', 'pass', 100), row('core-1', 'review', 80, 1), row('edge-1', 'error')];
  const all = { grade: '' as const, search: '', key: 'device' as const, direction: 'ascending' as const };

  it('sorts names naturally and reverses on descending', () => {
    expect(visibleRows(rows, all).map((r) => r.device)).toEqual(['core-1', 'edge-1', 'edge-2', 'edge-10']);
    expect(visibleRows(rows, { ...all, direction: 'descending' }).map((r) => r.device)).toEqual(['edge-10', 'edge-2', 'edge-1', 'core-1']);
  });

  it('sorts by grade order and by score, unscored last ascending', () => {
    expect(visibleRows(rows, { ...all, key: 'grade' }).map((r) => r.grade)).toEqual(['pass', 'review', 'fail', 'error']);
    expect(visibleRows(rows, { ...all, key: 'score' }).map((r) => r.device)).toEqual(['edge-1', 'edge-10', 'core-1', 'edge-2']);
    expect(visibleRows(rows, { ...all, key: 'errors', direction: 'descending' }).map((r) => r.device)).toEqual(['edge-10', 'core-1', 'edge-1', 'edge-2']);
  });

  it('filters by grade and by a case-insensitive name search', () => {
    expect(visibleRows(rows, { ...all, grade: 'fail' }).map((r) => r.device)).toEqual(['edge-10']);
    expect(visibleRows(rows, { ...all, search: ' EDGE-1 ' }).map((r) => r.device)).toEqual(['edge-1', 'edge-10']);
    expect(visibleRows(rows, { ...all, grade: 'pass', search: 'core' })).toEqual([]);
  });

  it('keeps the input unchanged', () => {
    const before = rows.map((r) => r.device);
    visibleRows(rows, { ...all, direction: 'descending' });
    expect(rows.map((r) => r.device)).toEqual(before);
  });

  it('renders only the rows in view plus overscan, padding the rest, for 10,000 rows', () => {
    expect(rowWindow(10_000, 0, 400, 40, 10)).toEqual({ start: 0, end: 21, padTop: 0, padBottom: (10_000 - 21) * 40 });
    const middle = rowWindow(10_000, 200_000, 400, 40, 10);
    expect(middle).toEqual({ start: 4990, end: 5021, padTop: 4990 * 40, padBottom: (10_000 - 5021) * 40 });
    expect(middle.padTop + (middle.end - middle.start) * 40 + middle.padBottom).toBe(10_000 * 40);
    expect(rowWindow(10_000, 10_000 * 40, 400, 40, 10)).toMatchObject({ end: 10_000, padBottom: 0 });
  });

  it('handles an empty or short list', () => {
    expect(rowWindow(0, 500, 400, 40)).toEqual({ start: 0, end: 0, padTop: 0, padBottom: 0 });
    expect(rowWindow(3, 0, 400, 40)).toEqual({ start: 0, end: 3, padTop: 0, padBottom: 0 });
  });
});

describe('console diff view', () => {
  it('classifies the lines of a unified diff', () => {
    const lines = diffLines('--- a\n+++ b\n@@ -1,2 +1,2 @@\n {\n-  "mtu": 1500\n+  "mtu": 9000\n');
    expect(lines.map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'context', 'removed', 'added']);
    expect(lines[4]?.text).toBe('-  "mtu": 1500');
    expect(diffStats(lines)).toEqual({ added: 1, removed: 1 });
  });

  it('answers no lines for an empty diff', () => {
    expect(diffLines('')).toEqual([]);
    expect(diffLines('\n')).toEqual([]);
  });
});

describe('console trend chart', () => {
  const box = { width: 200, height: 120, left: 20, right: 10, top: 10, bottom: 10 };
  const point = (batchId: string, at: string, pass: number, total: number): TrendPoint => ({ batchId, at, pass, total, fail: total - pass });

  it('places points by time and pass share, oldest first', () => {
    const plotted = plot([point('b2', '2026-01-03T00:00:00Z', 10, 10), point('b1', '2026-01-01T00:00:00Z', 5, 10)], box);
    expect(plotted.map((p) => p.point.batchId)).toEqual(['b1', 'b2']);
    expect(plotted.map((p) => [p.x, p.y])).toEqual([
      [20, 60],
      [190, 10],
    ]);
    expect(linePath(plotted)).toBe('M20 60 L190 10');
  });

  it('spreads points of one instant evenly and centres a single one', () => {
    const same = plot([point('a', '2026-01-01T00:00:00Z', 0, 4), point('b', '2026-01-01T00:00:00Z', 4, 4), point('c', '2026-01-01T00:00:00Z', 2, 4)], box);
    expect(same.map((p) => p.x)).toEqual([20, 105, 190]);
    expect(plot([point('a', '2026-01-01T00:00:00Z', 1, 2)], box)[0]?.x).toBe(105);
  });

  it('counts an empty batch as 0 %', () => {
    expect(passPercent(point('a', '2026-01-01T00:00:00Z', 0, 0))).toBe(0);
    expect(passPercent(point('a', '2026-01-01T00:00:00Z', 1, 3))).toBeCloseTo(33.33, 2);
  });
});

describe('console rule outcomes', () => {
  const rule = (id: string) => ({ id });
  const root = {
    name: 'base',
    rules: [rule('aaa')],
    children: [
      { name: 'wan', rules: [rule('bgp'), rule('ntp')], children: [{ name: 'pe', rules: [rule('mpls')], children: [] }] },
      { name: 'lan', rules: [rule('stp')], children: [] },
    ],
  };

  it('collects the rules from the root down to the node, in order, with their node', () => {
    expect(inheritedRules(root, 'base/wan/pe')?.map((r) => `${r.node}:${r.rule.id}`)).toEqual(['base:aaa', 'base/wan:bgp', 'base/wan:ntp', 'base/wan/pe:mpls']);
    expect(inheritedRules(root, 'base')?.map((r) => r.rule.id)).toEqual(['aaa']);
  });

  it('answers undefined for a path the version does not have', () => {
    expect(inheritedRules(root, 'base/core')).toBeUndefined();
    expect(inheritedRules(root, 'other/wan')).toBeUndefined();
  });

  it('marks each rule failing, exempted or passing', () => {
    const rules = inheritedRules(root, 'base/wan') ?? [];
    const outcomes = ruleOutcomes(
      rules,
      [
        { ruleId: 'ntp', at: '/a' },
        { ruleId: 'ntp', at: '/b' },
      ],
      [{ ruleId: 'aaa' }],
    );
    expect(outcomes.map((o) => [o.rule.id, o.outcome, o.issues.length])).toEqual([
      ['aaa', 'exempted', 0],
      ['bgp', 'pass', 0],
      ['ntp', 'fail', 2],
    ]);
  });
});

describe('console version addresses', () => {
  it('addresses repeated labels as label~N in stored order', () => {
    expect(versionAddresses(['initial', 'draft', '1', 'draft', 'draft']).map((v) => v.address)).toEqual(['initial', 'draft', '1', 'draft~2', 'draft~3']);
    expect(versionAddresses([])).toEqual([]);
  });
});

describe('console overview', () => {
  const batch = (batchId: string, treeId: string | undefined, status: Batch['status'], kind: Batch['kind'] = 'compliance'): Batch => ({
    batchId,
    kind,
    adapterId: 'a',
    status,
    total: 1,
    done: 1,
    totals: { errors: 0, warnings: 0, infos: 0, passes: 1 },
    grades: { pass: 1, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: 0 },
    sync: 'none',
    started: '2026-01-01T00:00:00Z',
    ...(treeId ? { treeId } : {}),
  });

  it('keeps the newest completed compliance batch of each tree', () => {
    const batches = [
      batch('b5', 't1', 'running'),
      batch('b4', 't1', 'completed'),
      batch('b3', undefined, 'completed', 'backup'),
      batch('b2', 't2', 'failed'),
      batch('b1', 't1', 'completed'),
      batch('b0', 't2', 'completed'),
    ];
    expect(latestPerTree(batches).map((b) => b.batchId)).toEqual(['b4', 'b0']);
  });
});

describe('API paths', () => {
  it('encodes each name or id as one segment, and refuses dot segments the browser would resolve', () => {
    expect(p('/adapters', 'a/b', 'stop')).toBe('/adapters/a%2Fb/stop');
    expect(p('/configuration_manager/remediations', '...')).toBe('/configuration_manager/remediations/...');
    for (const dots of ['.', '..']) expect(() => p('/configuration_manager/remediations', dots, 'rollback')).toThrow('is not a name or an id');
  });
});
