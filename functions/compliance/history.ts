/**
 * The pure part of a plan's history: how a device's grade moved between two completed batches
 * (its delta class), and how its rules' states follow from one more check. The history steps
 * (engine.ts) and their store (history-store.ts) do the reading and writing around these.
 */
import type { Grade } from './grading.js';
import type { DeltaChange, DeltaCounts, DevicePoint, DeviceRuleState } from './history-model.js';
import type { Report } from './model.js';
import { CONFIG_LIMITS } from '../trees/config-checks.js';

/** The grades under which no rule was evaluated: they leave the rules' states as they were (but drop those the version no longer gives). */
const UNEVALUATED: ReadonlySet<Grade> = new Set<Grade>(['error', 'out-of-sync', 'kept']);

/** A rule's state as the device's `STATE` item keeps it (by rule id). */
export type RuleState = Omit<DeviceRuleState, 'ruleId'>;

/** A device's state after the plan's last completed batch that checked it. */
export interface DeviceState {
  /** The batch that wrote it. */
  readonly batchId: string;
  readonly grade: Grade;
  /** When that batch checked the device. */
  readonly at: string;
  readonly rules: Readonly<Record<string, RuleState>>;
}

/**
 * What a step keeps of the state it replaced: enough to compute the step again from its own
 * output. The replaced state's batch, grade and time, and each rule the step changed as it was
 * before (`null`: the rule was not known). Rules the step did not change, and rules it dropped
 * because the batch could not evaluate them, are left out: computing the step again drops them too.
 */
export interface PriorState {
  readonly batchId: string;
  readonly grade: Grade;
  readonly at: string;
  readonly changed: Readonly<Record<string, RuleState | null>>;
}

/** The device's state as stored: what the batch that wrote it found, and what it replaced. */
export interface StoredState extends DeviceState {
  /** What the state this one replaced was (absent: the device had none); a whole state when written by an earlier release. */
  readonly before?: PriorState | DeviceState;
}

/**
 * Rules one device's check may evaluate at most: the rules of its node and of each node above it
 * (`rulesFor`), each node holding at most `rulesPerNode`. A `STATE` item keeps no other rule, so
 * this bounds its size (test/unit/compliance-history.test.ts measures the largest one).
 */
export const MAX_DEVICE_RULES = CONFIG_LIMITS.nodeDepth * CONFIG_LIMITS.rulesPerNode;

/** A record by rule id with no prototype: `__proto__` is a valid rule id, and must stay a key. */
const byRuleId = <T>(from: Readonly<Record<string, T>> = {}): Record<string, T> => Object.assign(Object.create(null) as Record<string, T>, from);
/** A rule's own entry (never one inherited from `Object.prototype`). */
const ruleOf = <T>(rules: Readonly<Record<string, T>>, id: string): T | undefined => (Object.hasOwn(rules, id) ? rules[id] : undefined);

/** The delta class of a device graded `from` in the previous completed batch and `to` in this one (see `DELTA_CHANGES`). */
export const deltaChange = (from: Grade | undefined, to: Grade | undefined): DeltaChange | undefined => {
  if (from === undefined) return to === undefined ? undefined : 'new';
  if (to === undefined) return 'gone';
  if (from === to) return undefined;
  if (to === 'fail') return 'newly-failing';
  if (from === 'fail' && (to === 'pass' || to === 'review')) return 'fixed';
  return 'changed';
};

/** The ids of the rules a report failed; `undefined` when no rule was evaluated (grades `error`, `out-of-sync`, `kept`). */
export const failingRules = (report: Pick<Report, 'grade' | 'issues'>): string[] | undefined =>
  UNEVALUATED.has(report.grade) ? undefined : [...new Set(report.issues.map((i) => i.ruleId))].sort();

/**
 * The rules' states after a check at `at` that failed `failing` (`undefined`: no rule was
 * evaluated), by a batch whose tree version gives the device the rules `evaluable`. A rule
 * seen failing for the first time starts its state; a known rule not in `failing` passed; a rule
 * not in `evaluable` is dropped (removed from the tree, or not on the device's node any more),
 * whatever was evaluated. Rules that never failed are not known: a report names failed rules only.
 */
export const nextRules = (
  rules: Readonly<Record<string, RuleState>>,
  failing: readonly string[] | undefined,
  at: string,
  evaluable: ReadonlySet<string>,
): Record<string, RuleState> => {
  const failed = new Set(failing);
  const out = byRuleId<RuleState>();
  for (const id of new Set([...Object.keys(rules), ...failed])) {
    if (!evaluable.has(id)) continue;
    const was = ruleOf(rules, id);
    const now = failed.has(id);
    // A rule not known before is in `failing`: it starts failing now.
    if (failing === undefined || was?.failing === now) {
      if (was) out[id] = was;
    } else out[id] = now ? { failing: true, firstFailedAt: at, lastChangedAt: at } : { failing: false, lastChangedAt: at };
  }
  return out;
};

const sameRule = (a: RuleState | undefined, b: RuleState | undefined): boolean =>
  a?.failing === b?.failing && a?.firstFailedAt === b?.firstFailedAt && a?.lastChangedAt === b?.lastChangedAt;

/** The rules of `before` that `after` changed, as they were in `before` (`null`: not there). */
const changedRules = (before: Readonly<Record<string, RuleState>>, after: Readonly<Record<string, RuleState>>, evaluable: ReadonlySet<string>) => {
  const changed = byRuleId<RuleState | null>();
  for (const id of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = ruleOf(before, id);
    if (evaluable.has(id) && !sameRule(was, ruleOf(after, id))) changed[id] = was ?? null;
  }
  return changed;
};

/**
 * The state a stored state replaced, as far as computing its step again needs it: its rules are
 * the stored ones with the changed rules put back (a whole state written by an earlier release is
 * taken as it is).
 */
const replaced = (stored: StoredState): DeviceState | undefined => {
  const before = stored.before;
  if (!before || 'rules' in before) return before;
  const rules = byRuleId(stored.rules);
  for (const [id, was] of Object.entries(before.changed)) {
    if (was) rules[id] = was;
    else delete rules[id];
  }
  return { batchId: before.batchId, grade: before.grade, at: before.at, rules };
};

/** What a history step knows of one checked device. */
export type CheckedDevice = Required<Pick<DevicePoint, 'batchId' | 'at' | 'grade' | 'reportId'>> &
  Pick<DevicePoint, 'score' | 'failing'> & { readonly device: string };

/** One device's history after a batch: its new stored state, and its delta class against the previous completed batch. */
export interface DeviceStep {
  readonly state: StoredState;
  readonly change?: DeltaChange;
  readonly from?: Grade;
}

/**
 * A device's step of history: from its stored state (which this batch may have written already,
 * when the step runs again: then the state it replaced counts), the check of this batch, and the
 * ids of the rules the batch's version gives the device (`evaluable`: any other rule is dropped).
 * The previous grade is the stored one only when the plan's previous completed batch wrote it; a
 * device that batch did not check is `new`. Running it again on its own output gives the same.
 */
export const deviceStep = (
  stored: StoredState | undefined,
  checked: CheckedDevice,
  previousBatchId: string | undefined,
  evaluable: ReadonlySet<string>,
): DeviceStep => {
  const prior = stored?.batchId === checked.batchId ? replaced(stored) : stored;
  const rules = nextRules(prior?.rules ?? {}, checked.failing, checked.at, evaluable);
  const before: PriorState | undefined = prior && {
    batchId: prior.batchId,
    grade: prior.grade,
    at: prior.at,
    changed: changedRules(prior.rules, rules, evaluable),
  };
  const state: StoredState = { batchId: checked.batchId, grade: checked.grade, at: checked.at, rules, ...(before ? { before } : {}) };
  const from = prior && prior.batchId === previousBatchId ? prior.grade : undefined;
  const change = deltaChange(from, checked.grade);
  return { state, ...(change ? { change } : {}), ...(from ? { from } : {}) };
};

/** Counts with every class at zero. */
export const emptyDelta = (): Record<DeltaChange, number> => ({ 'newly-failing': 0, fixed: 0, changed: 0, new: 0, gone: 0 });

/** The sum of two deltas' counts. */
export const addDelta = (a: DeltaCounts, b: DeltaCounts): DeltaCounts => {
  const out = emptyDelta();
  for (const k of Object.keys(out) as DeltaChange[]) out[k] = a[k] + b[k];
  return out;
};

/** The rules of a stored state as the device history shows them: failing first, then by id. */
export const shownRules = (rules: Readonly<Record<string, RuleState>>): DeviceRuleState[] =>
  Object.entries(rules)
    .map(([ruleId, r]) => ({ ruleId, ...r }))
    .sort((a, b) => Number(b.failing) - Number(a.failing) || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0));
