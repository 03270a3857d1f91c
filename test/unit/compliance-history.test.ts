/**
 * The pure part of plan history: delta classes and rule states, against straightforward
 * references computed from a device's whole sequence of checks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GRADES, type Grade } from '../../functions/compliance/grading.js';
import { deltaChange, deviceStep, nextRules, type CheckedDevice, type RuleState, type StoredState } from '../../functions/compliance/history.js';
import { historyChunk, type HistoryDeps } from '../../functions/compliance/history-steps.js';
import type { Report } from '../../functions/compliance/model.js';

const RULES = ['a', 'b', 'c', 'd'];
const EVALUATED: readonly Grade[] = ['pass', 'review', 'fail'];

/** One check: a grade, and the failing rules when rules were evaluated. */
const check = fc.oneof(
  fc.record({ grade: fc.constantFrom(...EVALUATED), failing: fc.subarray(RULES) }),
  fc.record({ grade: fc.constantFrom<Grade>('error', 'out-of-sync') }),
);

/** Rule states from the whole sequence: the reference the incremental state must equal. */
const referenceRules = (checks: readonly { grade: Grade; failing?: string[] }[], times: readonly string[]): Record<string, RuleState> => {
  const out: Record<string, RuleState> = {};
  for (const rule of RULES) {
    const seen = checks.map((c, i) => ({ at: times[i]!, failing: c.failing?.includes(rule) })).filter((c) => c.failing !== undefined);
    const firstFailure = seen.findIndex((c) => c.failing);
    if (firstFailure < 0) continue;
    const known = seen.slice(firstFailure);
    const last = known[known.length - 1]!;
    let changed = known[0]!.at;
    for (let i = 1; i < known.length; i++) if (known[i]!.failing !== known[i - 1]!.failing) changed = known[i]!.at;
    let streak = known.length - 1;
    while (last.failing && streak > 0 && known[streak - 1]!.failing) streak--;
    out[rule] = last.failing ? { failing: true, firstFailedAt: known[streak]!.at, lastChangedAt: changed } : { failing: false, lastChangedAt: changed };
  }
  return out;
};

const referenceChange = (from: Grade | undefined, to: Grade | undefined) => {
  if (from === to) return undefined;
  if (from === undefined) return 'new';
  if (to === undefined) return 'gone';
  if (to === 'fail') return 'newly-failing';
  if (from === 'fail' && ['pass', 'review'].includes(to)) return 'fixed';
  return 'changed';
};

const at = (i: number) => `2026-01-${String(i + 1).padStart(2, '0')}T00:00:00.000Z`;
const checked = (i: number, c: { grade: Grade; failing?: string[] }): CheckedDevice => ({
  device: 'r1',
  batchId: `batch${i}`,
  at: at(i),
  grade: c.grade,
  reportId: `report${i}`,
  ...(c.failing ? { failing: c.failing } : {}),
});

describe('delta classes', () => {
  it('match the reference for every pair of grades', () => {
    const grades = [undefined, ...GRADES];
    for (const from of grades) for (const to of grades) expect(deltaChange(from, to), `${from} → ${to}`).toBe(referenceChange(from, to));
  });

  it('name the examples of the contract', () => {
    expect(deltaChange('pass', 'fail')).toBe('newly-failing');
    expect(deltaChange('fail', 'review')).toBe('fixed');
    expect(deltaChange('fail', 'out-of-sync')).toBe('changed');
    expect(deltaChange('review', 'error')).toBe('changed');
    expect(deltaChange('pass', 'pass')).toBeUndefined();
  });
});

describe('rule states', () => {
  it('folded check by check equal the reference computed from the whole sequence', () => {
    fc.assert(
      fc.property(fc.array(check, { minLength: 1, maxLength: 12 }), (checks) => {
        const times = checks.map((_, i) => at(i));
        let rules: Record<string, RuleState> = {};
        checks.forEach((c, i) => {
          rules = nextRules(rules, 'failing' in c ? c.failing : undefined, times[i]!);
        });
        expect(rules).toEqual(referenceRules(checks, times));
      }),
    );
  });

  it('a device step run again on its own output gives the same state and change', () => {
    fc.assert(
      fc.property(fc.array(check, { minLength: 2, maxLength: 8 }), fc.boolean(), (checks, skipPrevious) => {
        let stored: StoredState | undefined;
        let previous: string | undefined;
        checks.forEach((c, i) => {
          const once = deviceStep(stored, checked(i, c), previous);
          const again = deviceStep(once.state, checked(i, c), previous);
          expect(again).toEqual(once);
          stored = once.state;
          // Some batches of the plan completed without this device: it is new in the next.
          previous = skipPrevious && i % 2 === 0 ? `other${i}` : `batch${i}`;
        });
      }),
    );
  });

  it('a device the previous completed batch did not check is new; one it did moves from its grade', () => {
    const first = deviceStep(undefined, checked(0, { grade: 'pass', failing: [] }), undefined);
    expect(first.change).toBe('new');
    const second = deviceStep(first.state, checked(1, { grade: 'fail', failing: ['a'] }), 'batch0');
    expect(second).toMatchObject({ change: 'newly-failing', from: 'pass' });
    expect(second.state.rules['a']).toEqual({ failing: true, firstFailedAt: at(1), lastChangedAt: at(1) });
    const skipped = deviceStep(second.state, checked(3, { grade: 'fail', failing: ['a'] }), 'batch2');
    expect(skipped.change).toBe('new');
    expect(skipped.state.rules['a']!.firstFailedAt).toBe(at(1));
  });
});

describe('a chunk of history', () => {
  it('writes one step per device when a late write left a device reported twice: the later check', async () => {
    const report = (checkedAt: string, grade: Grade, n: number): Report => ({
      reportId: `${'a'.repeat(24)}-p00000001000000${String(n).padStart(2, '0')}`,
      batchId: 'a'.repeat(24),
      device: 'r1',
      grade,
      totals: { errors: 0, warnings: 0, infos: 0, passes: 1 },
      issues: [],
      checkedAt,
    });
    const written: { checked: CheckedDevice }[][] = [];
    const deps = {
      store: {
        chunkReports: async () => [
          report('2026-11-27T10:00:00.000Z', 'fail', 1),
          report('2026-11-27T10:05:00.000Z', 'pass', 2),
          report('2026-11-27T10:01:00.000Z', 'review', 3),
        ],
      },
      history: {
        states: async () => new Map(),
        writeDevices: async (_p: string, _b: string, writes: { checked: CheckedDevice }[]) => void written.push(writes),
      },
    } as unknown as HistoryDeps;
    const work = {
      kind: 'compliance',
      adapterId: 'a',
      chunks: 1,
      concurrency: 1,
      sync: 'none',
      expiresAt: 1,
      started: '2026-11-27T09:00:00.000Z',
      planId: 'p'.repeat(24),
    } as const;
    const counts = await historyChunk('a'.repeat(24), 0, work, undefined, deps);
    expect(written).toHaveLength(1);
    expect(written[0]!.map((w) => [w.checked.device, w.checked.grade])).toEqual([['r1', 'pass']]);
    expect(counts.new).toBe(1);
  });
});
