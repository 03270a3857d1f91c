/**
 * The pure part of a plan's history: how a device's grade moved between two completed batches
 * (its delta class), and how its rules' states follow from one more check. The history steps
 * (engine.ts) and their store (history-store.ts) do the reading and writing around these.
 */
import type { Grade } from './grading.js';
import type { DeltaChange, DeltaCounts, DevicePoint, DeviceRuleState } from './history-model.js';
import type { Report } from './model.js';

/** The grades under which no rule was evaluated: they leave the rules' states as they were. */
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

/** The device's state as stored: what the batch that wrote it found, and what was there before. */
export interface StoredState extends DeviceState {
  /** The state this one replaced (absent: the device had none). */
  readonly before?: DeviceState;
}

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
 * evaluated, nothing changes). A rule seen for the first time starts its state; a known rule
 * not in `failing` passed. Rules that never failed are not known: a report names failed rules only.
 */
export const nextRules = (rules: Readonly<Record<string, RuleState>>, failing: readonly string[] | undefined, at: string): Record<string, RuleState> => {
  if (failing === undefined) return { ...rules };
  const failed = new Set(failing);
  const out: Record<string, RuleState> = {};
  for (const id of new Set([...Object.keys(rules), ...failed])) {
    const was = rules[id];
    const now = failed.has(id);
    // A rule not known before is in `failing`: it starts failing now.
    if (was?.failing === now) out[id] = was;
    else out[id] = now ? { failing: true, firstFailedAt: at, lastChangedAt: at } : { failing: false, lastChangedAt: at };
  }
  return out;
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
 * when the step runs again: then the state before it counts) and the check of this batch. The
 * previous grade is the stored one only when the plan's previous completed batch wrote it; a
 * device that batch did not check is `new`. Running it again on its own output gives the same.
 */
export const deviceStep = (stored: StoredState | undefined, checked: CheckedDevice, previousBatchId: string | undefined): DeviceStep => {
  const prior: DeviceState | undefined = stored?.batchId === checked.batchId ? stored.before : stored;
  const base = prior ? { batchId: prior.batchId, grade: prior.grade, at: prior.at, rules: prior.rules } : undefined;
  const state: StoredState = {
    batchId: checked.batchId,
    grade: checked.grade,
    at: checked.at,
    rules: nextRules(prior?.rules ?? {}, checked.failing, checked.at),
    ...(base ? { before: base } : {}),
  };
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
