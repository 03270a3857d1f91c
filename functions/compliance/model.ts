/**
 * What a compliance batch is made of: the batch record, the frozen plan (which rules each
 * device is checked against), the chunks of devices the engine walks, and one report per
 * device. Plain data; `store.ts` keeps it in DynamoDB.
 */
import type { JsonValue, Rule } from '../trees/config-model.js';
import type { Grade, RuleSeverity, RuleTotals } from './grading.js';

/** Batch ids: 24 lowercase hex digits (96 random bits). */
export const BATCH_ID_PATTERN = '^[0-9a-f]{24}$';
/**
 * Report ids: the batch id, `-`, the grade's initial, the chunk (6 digits), the chunk's run
 * (attempt across its parts) that stored the report (2), and the positions in the chunk of the first device of the
 * report's pack and of its own device (4 each). Reports stored before packs have 32 hex digits
 * (of the device name's SHA-256) after the `-`.
 */
export const REPORT_ID_PATTERN = '^[0-9a-f]{24}-([efpr][0-9]{16}|[0-9a-f]{32})$';

/** A rule as a tree version holds it, with the path of the node that defines it. */
export interface PlanRule extends Rule {
  /** Path of the node the rule is written on (`base`, `base/wan`…); a device inherits from every node above its own. */
  readonly node: string;
}

/**
 * Each node's own rules (a device on `base/wan` is checked against `base`'s, then
 * `base/wan`'s: see `rulesFor`), and the version's variables. Frozen when the batch starts, so
 * that a version edited while a batch runs never grades half the fleet against one content and
 * half against another. Stored in one item no larger than the version (see plan.ts).
 */
export interface BatchPlan {
  readonly variables: Readonly<Record<string, string>>;
  readonly rulesByNode: Readonly<Record<string, readonly PlanRule[]>>;
  /**
   * The paths of the nodes the batch's devices are on and of their ancestors, parents first:
   * the stored chunks name a device's node by its place in this list.
   */
  readonly nodes: readonly string[];
}

/** One device to check and the node it is assigned to. */
export interface DeviceAssignment {
  readonly device: string;
  readonly node: string;
}

export const BATCH_STATUSES = ['running', 'completed', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Device counts by grade. */
export type GradeCounts = Readonly<Record<Grade, number>>;

/** What one chunk (or a whole batch) adds up to: the only thing the checkpoint log holds. */
export interface ChunkCounts {
  readonly devices: number;
  readonly grades: GradeCounts;
  readonly totals: RuleTotals;
}

export const emptyCounts = (): ChunkCounts => ({
  devices: 0,
  grades: { pass: 0, review: 0, fail: 0, error: 0 },
  totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
});

export const addCounts = (a: ChunkCounts, b: ChunkCounts): ChunkCounts => ({
  devices: a.devices + b.devices,
  grades: {
    pass: a.grades.pass + b.grades.pass,
    review: a.grades.review + b.grades.review,
    fail: a.grades.fail + b.grades.fail,
    error: a.grades.error + b.grades.error,
  },
  totals: {
    errors: a.totals.errors + b.totals.errors,
    warnings: a.totals.warnings + b.totals.warnings,
    infos: a.totals.infos + b.totals.infos,
    passes: a.totals.passes + b.totals.passes,
  },
});

/** The batch as `GET …/batches/{batchId}` shows it. */
export interface Batch {
  readonly batchId: string;
  readonly treeId: string;
  readonly version: string;
  readonly adapterId: string;
  readonly status: BatchStatus;
  readonly total: number;
  readonly done: number;
  readonly totals: RuleTotals;
  readonly grades: GradeCounts;
  readonly started: string;
  readonly finished?: string;
  /** Why a failed batch failed (no internals: a sentence for people). */
  readonly reason?: string;
}

/** One failed rule in a report. */
export interface ReportIssue {
  readonly ruleId: string;
  /** Node whose rule it is. */
  readonly node: string;
  readonly path: string;
  readonly severity: RuleSeverity;
  readonly mode: PlanRule['mode'];
  readonly message: string;
  /** JSON Pointer of where the check failed (the rule's path or below it). */
  readonly at?: string;
  readonly expected?: JsonValue;
  /** An excerpt of what the device has there (long values are cut, see `truncated`). */
  readonly actual?: JsonValue;
  readonly truncated?: readonly string[];
}

/** One device's result. */
export interface Report {
  readonly reportId: string;
  readonly batchId: string;
  readonly device: string;
  readonly treeId: string;
  readonly version: string;
  readonly node: string;
  readonly grade: Grade;
  /** Absent for grade `error`. */
  readonly score?: number;
  readonly totals: RuleTotals;
  readonly issues: readonly ReportIssue[];
  /** Failed rules left out of `issues` to keep the report within DynamoDB's item size. */
  readonly issuesOmitted?: number;
  /** Grade `error` only: why the configuration could not be checked. */
  readonly reason?: string;
  /** The configuration graded, in the device's history (absent when none was fetched, or none is kept). */
  readonly configId?: string;
  readonly checkedAt: string;
}
