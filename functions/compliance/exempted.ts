/**
 * Grading with exemptions: which of a device's rules an exemption frozen in the batch's plan
 * holds for at the device's check time, and how such a rule is listed in its report. An
 * exempted rule is evaluated as any other, then listed in `exempted` with its outcome and the
 * exemption, and left out of the issues, the score and the totals (so of the batch's totals
 * too); from the exemption's `until` on, it counts again.
 */
import type { ExemptedRule, FrozenExemption } from '../exemptions/model.js';
import type { RuleResult } from '../trees/rules.js';
import type { BatchPlan, PlanRule } from './model.js';

/** The exempted rules of one report, as UTF-8 bytes of JSON at most (beside its issues, inside DynamoDB's 400 KB item); the rest are counted. */
export const MAX_EXEMPTED_BYTES = 60_000;

/** Each plan's exemptions' `until` in epoch milliseconds, parsed once per plan. */
const untilByPlan = new WeakMap<BatchPlan, readonly number[]>();

const untilOf = (plan: BatchPlan): readonly number[] => {
  let until = untilByPlan.get(plan);
  if (!until) untilByPlan.set(plan, (until = (plan.exemptions ?? []).map((e) => Date.parse(e.until))));
  return until;
};

/**
 * The exemptions that hold at `at` for a device whose chunk entry names `places` (in the plan's
 * `exemptions`), by rule id; of two for one rule, the one that holds longer.
 */
export const exemptionsAt = (plan: BatchPlan, places: readonly number[] | undefined, at: Date): ReadonlyMap<string, FrozenExemption> => {
  const held = new Map<string, FrozenExemption>();
  if (!places?.length || !plan.exemptions) return held;
  const until = untilOf(plan);
  const now = at.getTime();
  for (const place of places) {
    const exemption = plan.exemptions[place];
    const ends = until[place]!;
    if (!exemption || !(now < ends)) continue;
    const other = held.get(exemption.ruleId);
    if (!other || Date.parse(other.until) < ends) held.set(exemption.ruleId, exemption);
  }
  return held;
};

/** An exempted rule as its report lists it. */
export const exemptedRule = (rule: PlanRule, verdict: RuleResult, exemption: FrozenExemption): ExemptedRule => ({
  ruleId: verdict.id,
  node: rule.node,
  severity: verdict.severity,
  outcome: verdict.status,
  exemption,
});

/** The exempted rules kept in order while they fit in {@link MAX_EXEMPTED_BYTES}, and how many were left out. */
export const boundedExempted = (exempted: readonly ExemptedRule[]): { readonly exempted?: readonly ExemptedRule[]; readonly exemptedOmitted?: number } => {
  if (exempted.length === 0) return {};
  const kept: ExemptedRule[] = [];
  let bytes = 0;
  for (const rule of exempted) {
    const size = Buffer.byteLength(JSON.stringify(rule), 'utf8');
    if (bytes + size > MAX_EXEMPTED_BYTES) continue;
    bytes += size;
    kept.push(rule);
  }
  const omitted = exempted.length - kept.length;
  return { exempted: kept, ...(omitted ? { exemptedOmitted: omitted } : {}) };
};
