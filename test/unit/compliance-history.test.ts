/**
 * The pure part of plan history: delta classes and rule states, against straightforward
 * references computed from a device's whole sequence of checks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GRADES, type Grade } from '../../functions/compliance/grading.js';
import { rulesFor } from '../../functions/compliance/check.js';
import {
  deltaChange,
  deviceStep,
  MAX_DEVICE_RULES,
  nextRules,
  type CheckedDevice,
  type RuleState,
  type StoredState,
} from '../../functions/compliance/history.js';
import { deviceStateItem } from '../../functions/compliance/history-items.js';
import { historyChunk, type HistoryDeps } from '../../functions/compliance/history-steps.js';
import type { BatchPlan, PlanRule, Report } from '../../functions/compliance/model.js';
import { DYNAMO_ITEM_LIMIT_BYTES, itemBytes } from '../../functions/platform/item-size.js';
import { CONFIG_LIMITS, RULE_ID_PATTERN_SOURCE } from '../../functions/trees/config-checks.js';

const RULES = ['a', 'b', 'c', 'd'];
const ALL: ReadonlySet<string> = new Set(RULES);
const EVALUATED: readonly Grade[] = ['pass', 'review', 'fail'];

/** One check: the rules the batch's version gave the device, a grade, and the failing rules (among those) when rules were evaluated. */
interface Check {
  readonly evaluable: readonly string[];
  readonly grade: Grade;
  readonly failing?: string[];
}

/** The tree's rules: mostly all of them, sometimes a version that removed some (and may add them back later). */
const version = fc.oneof({ weight: 2, arbitrary: fc.constant(RULES) }, { weight: 1, arbitrary: fc.subarray(RULES) });
const check: fc.Arbitrary<Check> = version.chain((evaluable) =>
  fc.oneof(
    fc.record({ evaluable: fc.constant(evaluable), grade: fc.constantFrom(...EVALUATED), failing: fc.subarray([...evaluable]) }),
    fc.record({ evaluable: fc.constant(evaluable), grade: fc.constantFrom<Grade>('error', 'out-of-sync') }),
  ),
);

/**
 * Rule states from the whole sequence: the reference the incremental state must equal. A rule
 * counts from the check after the last one whose version did not give it to the device.
 */
const referenceRules = (checks: readonly Check[], times: readonly string[]): Record<string, RuleState> => {
  const out: Record<string, RuleState> = {};
  for (const rule of RULES) {
    let start = 0;
    checks.forEach((c, i) => {
      if (!c.evaluable.includes(rule)) start = i + 1;
    });
    const seen = checks
      .map((c, i) => ({ at: times[i]!, failing: c.failing?.includes(rule) }))
      .slice(start)
      .filter((c) => c.failing !== undefined);
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
const checked = (i: number, c: Pick<Check, 'grade' | 'failing'>): CheckedDevice => ({
  device: 'r1',
  batchId: `batch${i}`,
  at: at(i),
  grade: c.grade,
  reportId: `report${i}`,
  ...(c.failing ? { failing: c.failing } : {}),
});

/** A stored state as the table gives it back (JSON). */
const reread = (state: StoredState): StoredState => JSON.parse(JSON.stringify(state)) as StoredState;

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
          rules = nextRules(rules, c.failing, times[i]!, new Set(c.evaluable));
          for (const id of Object.keys(rules)) expect(c.evaluable).toContain(id);
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
          const evaluable = new Set(c.evaluable);
          const once = deviceStep(stored, checked(i, c), previous, evaluable);
          expect(deviceStep(once.state, checked(i, c), previous, evaluable)).toEqual(once);
          expect(deviceStep(reread(once.state), checked(i, c), previous, evaluable)).toEqual(once);
          stored = reread(once.state);
          // Some batches of the plan completed without this device: it is new in the next.
          previous = skipPrevious && i % 2 === 0 ? `other${i}` : `batch${i}`;
        });
      }),
    );
  });

  it('keep before the step only the batch, grade and time it replaced and the rules it changed', () => {
    fc.assert(
      fc.property(fc.array(check, { minLength: 2, maxLength: 10 }), (checks) => {
        let stored: StoredState | undefined;
        checks.forEach((c, i) => {
          const evaluable = new Set(c.evaluable);
          const { state } = deviceStep(stored, checked(i, c), `batch${i - 1}`, evaluable);
          if (!stored) expect(state.before).toBeUndefined();
          else {
            const { batchId, grade, at: when, rules } = stored;
            const changed = Object.fromEntries(
              [...evaluable].filter((id) => JSON.stringify(rules[id]) !== JSON.stringify(state.rules[id])).map((id) => [id, rules[id] ?? null]),
            );
            expect(state.before).toEqual({ batchId, grade, at: when, changed });
          }
          stored = reread(state);
        });
      }),
    );
  });

  it('drop the rules a new version removed, and start a rule added back afresh', () => {
    const two = new Set(['a', 'b']);
    const first = deviceStep(undefined, checked(0, { grade: 'fail', failing: ['a', 'b'] }), undefined, two);
    // Version 2 removes `b`: it is gone from the state, though the device was not graded.
    const second = deviceStep(first.state, checked(1, { grade: 'error' }), 'batch0', new Set(['a']));
    expect(second.state.rules).toEqual({ a: { failing: true, firstFailedAt: at(0), lastChangedAt: at(0) } });
    // What the step changed is `b` only (removed): `a` is as it was.
    expect(second.state.before).toEqual({ batchId: 'batch0', grade: 'fail', at: at(0), changed: {} });
    // `b` comes back and fails: a new streak, its earlier one is not remembered.
    const third = deviceStep(second.state, checked(2, { grade: 'fail', failing: ['b'] }), 'batch1', two);
    expect(third.state.rules).toEqual({
      a: { failing: false, lastChangedAt: at(2) },
      b: { failing: true, firstFailedAt: at(2), lastChangedAt: at(2) },
    });
    expect(third.state.before).toEqual({
      batchId: 'batch1',
      grade: 'error',
      at: at(1),
      changed: { a: { failing: true, firstFailedAt: at(0), lastChangedAt: at(0) }, b: null },
    });
  });

  it('keep a rule named __proto__ (a valid rule id) as any other', () => {
    expect(new RegExp(RULE_ID_PATTERN_SOURCE).test('__proto__')).toBe(true);
    const rules = new Set(['__proto__', 'a']);
    const first = deviceStep(undefined, checked(0, { grade: 'fail', failing: ['a'] }), undefined, rules);
    const second = deviceStep(reread(first.state), checked(1, { grade: 'fail', failing: ['__proto__'] }), 'batch0', rules);
    const state = reread(second.state);
    expect(Object.keys(state.rules).sort()).toEqual(['__proto__', 'a']);
    expect(Object.hasOwn(state.rules, '__proto__')).toBe(true);
    expect(JSON.stringify(state.before)).toContain('"__proto__":null');
    expect(deviceStep(state, checked(1, { grade: 'fail', failing: ['__proto__'] }), 'batch0', rules)).toEqual(second);
  });

  it('run again on a state whose whole previous state an earlier release kept', () => {
    const previous = { batchId: 'batch0', grade: 'fail' as const, at: at(0), rules: { a: { failing: true, firstFailedAt: at(0), lastChangedAt: at(0) } } };
    const expected = deviceStep(previous, checked(1, { grade: 'pass', failing: [] }), 'batch0', ALL);
    const legacy: StoredState = { ...expected.state, before: previous };
    expect(deviceStep(legacy, checked(1, { grade: 'pass', failing: [] }), 'batch0', ALL)).toEqual(expected);
  });

  it('a device the previous completed batch did not check is new; one it did moves from its grade', () => {
    const first = deviceStep(undefined, checked(0, { grade: 'pass', failing: [] }), undefined, ALL);
    expect(first.change).toBe('new');
    const second = deviceStep(first.state, checked(1, { grade: 'fail', failing: ['a'] }), 'batch0', ALL);
    expect(second).toMatchObject({ change: 'newly-failing', from: 'pass' });
    expect(second.state.rules['a']).toEqual({ failing: true, firstFailedAt: at(1), lastChangedAt: at(1) });
    const skipped = deviceStep(second.state, checked(3, { grade: 'fail', failing: ['a'] }), 'batch2', ALL);
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
      plan: async () => ({ variables: {}, rulesByNode: {}, nodes: ['base'] }),
      store: {
        getChunk: async () => [{ device: 'r1', node: 'base' }],
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

describe("a chunk of history and the batch version's rules", () => {
  it("keeps of each device's rules only those its node inherits in the batch's plan", async () => {
    const rule = (id: string, node: string) => ({ id, node, path: '/x', mode: 'required', severity: 'error' }) as PlanRule;
    const plan: BatchPlan = {
      variables: {},
      rulesByNode: { base: [rule('a', 'base')], 'base/wan': [rule('w', 'base/wan')], 'base/lan': [rule('l', 'base/lan')] },
      nodes: ['base', 'base/wan', 'base/lan'],
    };
    const batchId = 'b'.repeat(24);
    const failed = () => ({ failing: true, firstFailedAt: at(0), lastChangedAt: at(0) });
    // r1 was on base/lan and failed `l` and `x`, a rule the version no longer has; it is on base/wan now.
    const stored: StoredState = { batchId: 'batch0', grade: 'fail', at: at(0), rules: { a: failed(), l: failed(), x: failed() } };
    const written: { checked: CheckedDevice; state: StoredState }[][] = [];
    const deps = {
      plan: async () => plan,
      store: {
        getChunk: async () => [{ device: 'r1', node: 'base/wan' }],
        chunkReports: async (): Promise<Report[]> => [
          {
            reportId: `${batchId}-f0000000100000000`,
            batchId,
            device: 'r1',
            grade: 'fail',
            totals: { errors: 1, warnings: 0, infos: 0, passes: 1 },
            issues: [{ ruleId: 'w' } as Report['issues'][number]],
            checkedAt: at(1),
          },
        ],
      },
      history: {
        states: async () => new Map([['r1', stored]]),
        writeDevices: async (_p: string, _b: string, writes: { checked: CheckedDevice; state: StoredState }[]) => void written.push(writes),
      },
    } as unknown as HistoryDeps;
    const work = { kind: 'compliance', adapterId: 'a', chunks: 1, concurrency: 1, sync: 'none', expiresAt: 1, started: at(1), planId: 'p'.repeat(24) } as const;
    await historyChunk(batchId, 0, work, 'batch0', deps);
    const { state } = written[0]![0]!;
    expect(state.rules).toEqual({ a: { failing: false, lastChangedAt: at(1) }, w: { failing: true, firstFailedAt: at(1), lastChangedAt: at(1) } });
    // Only what the step changed among the rules the device has now: `l` and `x` are not kept.
    expect(state.before).toEqual({ batchId: 'batch0', grade: 'fail', at: at(0), changed: { a: failed(), w: null } });
  });
});

describe("a device's STATE item", () => {
  /** The longest rule id a tree takes (ASCII only: a byte a character), made distinct by its number. */
  const longestId = (n: number) => `r${n}-`.padEnd(CONFIG_LIMITS.ruleId, 'x');
  /** A version whose deepest node inherits the most rules a node path can hold. */
  const fullPath = (prefix: string): { plan: BatchPlan; node: string } => {
    const nodes = Array.from({ length: CONFIG_LIMITS.nodeDepth }, (_, d) => ['base', ...Array.from({ length: d }, (_, i) => `n${i}`)].join('/'));
    const rulesByNode = Object.fromEntries(
      nodes.map((node, d) => [
        node,
        Array.from(
          { length: CONFIG_LIMITS.rulesPerNode },
          (_, r) => ({ id: longestId(d * 1000 + r).replace('x', prefix), node, path: '', mode: 'required', severity: 'error' }) as PlanRule,
        ),
      ]),
    );
    return { plan: { variables: {}, rulesByNode, nodes }, node: nodes.at(-1)! };
  };
  const PLAN = 'f'.repeat(24);
  /** The longest device name, in 4-byte characters. */
  const DEVICE = '\u{1F5A7}'.repeat(CONFIG_LIMITS.deviceName);

  it('holds at most the rules a device can inherit: ids of at most 128 ASCII characters', () => {
    const pattern = new RegExp(RULE_ID_PATTERN_SOURCE);
    expect(pattern.test(longestId(799))).toBe(true);
    expect(pattern.test(`${longestId(799)}x`)).toBe(false);
    expect(pattern.test('r\u00e9gle')).toBe(false);
    const { plan, node } = fullPath('x');
    expect(new Set(rulesFor(plan, node).map((r) => r.id)).size).toBe(MAX_DEVICE_RULES);
  });

  it("stays under DynamoDB's item limit at its largest: every rule failing, and every one changed, with the longest times", () => {
    const latest = new Date(8.64e15).toISOString();
    const failing: RuleState = { failing: true, firstFailedAt: latest, lastChangedAt: latest };
    const rules = Object.fromEntries(Array.from({ length: MAX_DEVICE_RULES }, (_, i) => [longestId(i), failing]));
    const batchId = 'f'.repeat(24);
    const largest: StoredState = { batchId, grade: 'out-of-sync', at: latest, rules, before: { batchId, grade: 'out-of-sync', at: latest, changed: rules } };
    const bytes = itemBytes(deviceStateItem(PLAN, DEVICE, largest, Number.MAX_SAFE_INTEGER));
    expect(bytes).toBeLessThan(DYNAMO_ITEM_LIMIT_BYTES);

    // The states a device with the most rules goes through, versions replacing every rule, stay within it.
    const versions = [fullPath('x'), fullPath('y')].map(({ plan, node }) => [...new Set(rulesFor(plan, node).map((r) => r.id))]);
    let stored: StoredState | undefined;
    for (let i = 0; i < 12; i++) {
      const ids = versions[Math.floor(i / 4) % 2]!;
      const check = { grade: i % 2 ? 'pass' : 'fail', failing: i % 2 ? [] : ids } as const;
      const { state } = deviceStep(stored, checked(i, { grade: check.grade, failing: [...check.failing] }), `batch${i - 1}`, new Set(ids));
      expect(Object.keys(state.rules).length).toBeLessThanOrEqual(MAX_DEVICE_RULES);
      expect(itemBytes(deviceStateItem(PLAN, DEVICE, state, Number.MAX_SAFE_INTEGER))).toBeLessThanOrEqual(bytes);
      stored = reread(state);
    }
  });
});
