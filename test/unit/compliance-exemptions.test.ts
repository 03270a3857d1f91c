/**
 * Grading with exemptions (functions/compliance/exempted.ts, check.ts): an exempted rule is
 * evaluated, listed in `exempted` with its outcome and the exemption, and left out of the
 * issues, the score and the totals while the device's check time is before `until`; from
 * `until` on it counts again. The real evaluator grades real configurations here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDevice, MAX_ISSUE_BYTES } from '../../functions/compliance/check.js';
import { boundedExempted, exemptionsAt, MAX_EXEMPTED_BYTES } from '../../functions/compliance/exempted.js';
import { score } from '../../functions/compliance/grading.js';
import type { BatchPlan, PlanRule } from '../../functions/compliance/model.js';
import { MAX_REPORT_BYTES } from '../../functions/compliance/store.js';
import type { ExemptedRule, FrozenExemption } from '../../functions/exemptions/model.js';
import { evaluateRules } from '../../functions/trees/rules.js';

const UNTIL = '2026-12-01T12:00:00+01:00'; // 11:00 UTC
const UNTIL_MS = Date.parse(UNTIL);

const frozen = (exemptionId: string, ruleId: string, until = UNTIL): FrozenExemption => ({
  exemptionId: exemptionId.padStart(24, '0'),
  ruleId,
  until,
  reason: `waiver for ${ruleId}`,
  by: 'alice',
});

/** Three rules on `base`: ntp (error) fails on the config below, banner (warning) passes, domain (info) fails. */
const RULES: readonly PlanRule[] = [
  { id: 'ntp', node: 'base', path: '/ntp/server', mode: 'required', severity: 'error', value: '10.0.0.1' },
  { id: 'banner', node: 'base', path: '/banner', mode: 'exact', severity: 'warning', value: 'authorized use only' },
  { id: 'domain', node: 'base', path: '/domain', mode: 'exact', severity: 'info', value: 'example.net' },
];
const CONFIG = { ntp: { server: '192.0.2.1' }, banner: 'authorized use only', domain: 'example.org' };

const planWith = (exemptions: readonly FrozenExemption[], rules: readonly PlanRule[] = RULES): BatchPlan => ({
  variables: {},
  nodes: ['base'],
  rulesByNode: { base: rules },
  exemptions,
});

const check = (plan: BatchPlan, places: readonly number[] | undefined, at: number, device = 'edge-1') =>
  checkDevice(
    { device, node: 'base', ...(places ? { exemptions: places } : {}) },
    { batchId: 'a'.repeat(24), treeId: 'b'.repeat(24), version: 'v1', adapterId: 'lab', plan },
    {
      relayGet: async () => [{ result: '200', data: { 'tailf-ncs:config': CONFIG } }] as never,
      evaluate: evaluateRules,
      gate: { run: (fetch) => fetch(), pause: () => undefined },
      now: () => new Date(at),
    },
  );

describe('a report with exemptions', () => {
  it('lists an exempted failing rule with its outcome and exemption, and leaves it out of issues, score and totals', async () => {
    const exemption = frozen('1', 'ntp');
    const report = await check(planWith([exemption]), [0], UNTIL_MS - 1);
    expect(report.exempted).toEqual([{ ruleId: 'ntp', node: 'base', severity: 'error', outcome: 'fail', exemption }]);
    expect(report.issues.map((i) => i.ruleId)).toEqual(['domain']);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, infos: 1, passes: 1 });
    // banner (1) passed, domain (0.5) failed: 1 / 1.5.
    expect(report.score).toBe(66.7);
    expect(report.grade).toBe('fail');
    expect(report.checkedAt).toBe(new Date(UNTIL_MS - 1).toISOString());
  });

  it('lists an exempted passing rule too, and counts it nowhere else', async () => {
    const report = await check(planWith([frozen('1', 'banner')]), [0], UNTIL_MS - 60_000);
    expect(report.exempted?.map((e) => [e.ruleId, e.outcome])).toEqual([['banner', 'pass']]);
    expect(report.totals).toEqual({ errors: 1, warnings: 0, infos: 1, passes: 0 });
    expect(report.score).toBe(0);
    expect(report.issues.map((i) => i.ruleId)).toEqual(['ntp', 'domain']);
  });

  it('lists a rule that cannot be evaluated as exempted with outcome invalid', async () => {
    const rules: PlanRule[] = [...RULES, { id: 'broken', node: 'base', path: 'no-slash', mode: 'required', severity: 'error' }];
    const report = await check(planWith([frozen('1', 'broken')], rules), [0], UNTIL_MS - 1);
    expect(report.exempted?.map((e) => [e.ruleId, e.outcome])).toEqual([['broken', 'invalid']]);
    expect(report.totals.errors).toBe(1);
  });

  it('counts the rule again from `until` on: at the exact millisecond, and after', async () => {
    const plan = planWith([frozen('1', 'ntp')]);
    for (const at of [UNTIL_MS, UNTIL_MS + 1, UNTIL_MS + 86_400_000]) {
      const report = await check(plan, [0], at);
      expect(report.exempted).toBeUndefined();
      expect(report.issues.map((i) => i.ruleId)).toEqual(['ntp', 'domain']);
      expect(report.totals).toEqual({ errors: 1, warnings: 0, infos: 1, passes: 1 });
    }
  });

  it('exempts a rule on the device whose chunk entry names the exemption only', async () => {
    const plan = planWith([frozen('1', 'ntp')]);
    const exempted = await check(plan, [0], UNTIL_MS - 1, 'edge-1');
    const other = await check(plan, undefined, UNTIL_MS - 1, 'edge-2');
    const empty = await check(plan, [], UNTIL_MS - 1, 'edge-3');
    expect(exempted.exempted).toHaveLength(1);
    expect(exempted.issues.map((i) => i.ruleId)).not.toContain('ntp');
    for (const report of [other, empty]) {
      expect(report.exempted).toBeUndefined();
      expect(report.issues.map((i) => i.ruleId)).toContain('ntp');
      expect(report.totals.errors).toBe(1);
    }
  });

  it('ignores an exemption of a rule the device is not checked against', async () => {
    const report = await check(planWith([frozen('1', 'gone')]), [0], UNTIL_MS - 1);
    expect(report.exempted).toBeUndefined();
    expect(report.totals).toEqual({ errors: 1, warnings: 0, infos: 1, passes: 1 });
  });
});

describe('exemptionsAt', () => {
  const later = '2027-06-01T00:00:00Z';
  const plan = planWith([frozen('1', 'ntp'), frozen('2', 'ntp', later), frozen('3', 'banner'), frozen('4', 'domain', '2020-01-01T00:00:00Z')]);

  it('takes, of two exemptions of one rule, the one that holds longer, whatever their order', () => {
    expect(exemptionsAt(plan, [0, 1], new Date(UNTIL_MS - 1)).get('ntp')?.exemptionId).toMatch(/2$/);
    expect(exemptionsAt(plan, [1, 0], new Date(UNTIL_MS - 1)).get('ntp')?.exemptionId).toMatch(/2$/);
    // The first has ended: the second still holds.
    expect(exemptionsAt(plan, [0, 1], new Date(UNTIL_MS)).get('ntp')?.exemptionId).toMatch(/2$/);
  });

  it('holds only what the device names and what has not ended', () => {
    const held = exemptionsAt(plan, [0, 2, 3], new Date(UNTIL_MS - 1));
    expect([...held.keys()].sort()).toEqual(['banner', 'ntp']);
    expect(exemptionsAt(plan, [0, 2], new Date(UNTIL_MS)).size).toBe(0);
    expect(exemptionsAt(plan, undefined, new Date(0)).size).toBe(0);
    // A place past the plan's list (a damaged entry) exempts nothing.
    expect(exemptionsAt(plan, [9], new Date(0)).size).toBe(0);
    expect(exemptionsAt(planWith([]), [0], new Date(0)).size).toBe(0);
  });
});

describe('grading with exemptions, on any rules and exemptions', () => {
  it('grades the rules no exemption holds exactly as if the others were absent, and lists the others', async () => {
    const severities = ['error', 'warning', 'info'] as const;
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ severity: fc.constantFrom(...severities), passes: fc.boolean(), exempt: fc.boolean(), ended: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (specs) => {
          const rules: PlanRule[] = specs.map((s, i) => ({
            id: `r${i}`,
            node: 'base',
            path: '/banner',
            mode: 'exact',
            severity: s.severity,
            value: s.passes ? 'authorized use only' : 'other',
          }));
          const exemptions = specs.flatMap((s, i) => (s.exempt ? [frozen(String(i), `r${i}`, s.ended ? '2026-12-01T10:00:00Z' : UNTIL)] : []));
          const report = await check(
            planWith(exemptions, rules),
            exemptions.map((_, p) => p),
            UNTIL_MS - 1,
          );
          const held = specs.map((s) => s.exempt && !s.ended);
          const counted = specs.filter((_, i) => !held[i]);
          expect(report.exempted?.map((e) => e.ruleId) ?? []).toEqual(specs.flatMap((_, i) => (held[i] ? [`r${i}`] : [])));
          expect(report.score).toBe(score(counted.map((s) => ({ severity: s.severity, passed: s.passes }))));
          const { errors, warnings, infos, passes } = report.totals;
          expect(errors + warnings + infos + passes + (report.exempted?.length ?? 0)).toBe(specs.length);
          expect(passes).toBe(counted.filter((s) => s.passes).length);
          expect(report.issues.map((i) => i.ruleId)).toEqual(specs.flatMap((s, i) => (!held[i] && !s.passes ? [`r${i}`] : [])));
          checked++;
        },
      ),
      { numRuns: 200 },
    );
    expect(checked).toBe(200);
  });
});

describe("a report's exempted rules", () => {
  const rule = (i: number, reason: string): ExemptedRule => ({
    ruleId: `r${i}`,
    node: 'base',
    severity: 'error',
    outcome: 'fail',
    exemption: { ...frozen(String(i), `r${i}`), reason },
  });

  it('are kept in order while they fit, the rest counted', () => {
    expect(boundedExempted([])).toEqual({});
    const few = [rule(0, 'a'), rule(1, 'b')];
    expect(boundedExempted(few)).toEqual({ exempted: few });
    const many = Array.from({ length: 100 }, (_, i) => rule(i, 'é'.repeat(1000)));
    const bounded = boundedExempted(many);
    const size = Buffer.byteLength(JSON.stringify(many[0]), 'utf8');
    expect(bounded.exempted).toEqual(many.slice(0, Math.floor(MAX_EXEMPTED_BYTES / size)));
    expect(bounded.exemptedOmitted).toBe(100 - bounded.exempted!.length);
  });

  it('fit in a stored report beside the most issues one keeps', () => {
    expect(MAX_ISSUE_BYTES + MAX_EXEMPTED_BYTES + 10_000).toBeLessThanOrEqual(MAX_REPORT_BYTES);
  });
});
