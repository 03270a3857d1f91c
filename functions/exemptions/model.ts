/**
 * Exemptions: a dated permission for some devices not to meet one rule of a tree. While it
 * holds, a batch lists the rule on those devices' reports as `exempted` (with the exemption)
 * and leaves it out of the score and the totals; from `until` on the rule counts again.
 *
 * An exemption names its devices by name or by a {@link Selector} (resolved through NSO when
 * a batch starts, as nodes' selectors are). Exemptions are stored per tree, apply to every
 * version of it, and name a rule by id (an id no version holds exempts nothing). Every change
 * is in the tree's changelog.
 */
import type { Selector } from '../trees/config-model.js';

/** Exemption ids: 24 lowercase hex digits, the creation time in milliseconds (12) then 48 random bits: ids sort by creation. */
export const EXEMPTION_ID_PATTERN = '^[0-9a-f]{24}$';

export const EXEMPTION_LIMITS = {
  /** Exemptions one tree holds at most (a batch reads them all when it starts). */
  perTree: 500,
  /** Devices one exemption lists at most (more: use a selector). */
  devices: 1000,
  reason: 1024,
} as const;

/** What a writer sends (POST, PUT): exactly one of `devices` and `selector`. */
export interface ExemptionInput {
  readonly ruleId: string;
  readonly devices?: readonly string[];
  readonly selector?: Selector;
  /** ISO 8601 date-time (with offset): the rule counts again from then on. */
  readonly until: string;
  /** Why: shown on every report the exemption applies to. */
  readonly reason: string;
}

/** An exemption as the routes show it. */
export interface Exemption extends ExemptionInput {
  readonly exemptionId: string;
  readonly treeId: string;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly updatedAt: string;
  readonly updatedBy: string;
}

/** Reads a tree's exemptions (what a batch start freezes). */
export interface ExemptionSource {
  /** Every exemption of the tree whose `until` is after `at`, at most {@link EXEMPTION_LIMITS.perTree}. */
  active(treeId: string, at: Date): Promise<readonly Exemption[]>;
}

/** An exemption as a batch freezes it in its plan: no device list (each chunk entry names the exemptions of its device). */
export interface FrozenExemption {
  readonly exemptionId: string;
  readonly ruleId: string;
  readonly until: string;
  readonly reason: string;
  /** Who made (or last changed) it. */
  readonly by: string;
}

/** A rule a report lists as exempted: the rule, how it came out, and the exemption. */
export interface ExemptedRule {
  readonly ruleId: string;
  /** Node whose rule it is. */
  readonly node: string;
  readonly severity: string;
  /** What the rule gave: an exempted rule that passes is listed too. */
  readonly outcome: 'pass' | 'fail' | 'invalid';
  readonly exemption: FrozenExemption;
}
