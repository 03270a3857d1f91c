/**
 * What a compliance batch is made of: the batch record, the frozen plan (which rules each
 * device is checked against), the chunks of devices the engine walks, and one report per
 * device. Plain data; `store.ts` keeps it in DynamoDB.
 */
import type { ExemptedRule, FrozenExemption } from '../exemptions/model.js';
import type { JsonValue, Rule, Selector } from '../trees/config-model.js';
import type { MatchFailure } from '../trees/rules.js';
import type { Grade, RuleSeverity, RuleTotals } from './grading.js';

/** Batch ids: 24 lowercase hex digits (96 random bits). */
export const BATCH_ID_PATTERN = '^[0-9a-f]{24}$';
/**
 * Report ids: the batch id, `-`, the grade's initial, the chunk (6 digits), the chunk's run
 * (attempt across its parts) that stored the report (2), and the positions in the chunk of the first device of the
 * report's pack and of its own device (4 each). Reports stored before packs have 32 hex digits
 * (of the device name's SHA-256) after the `-`.
 */
export const REPORT_ID_PATTERN = '^[0-9a-f]{24}-([efkopr][0-9]{16}|[0-9a-f]{32})$';

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
  /** The tree's exemptions that held when the batch started; chunk entries name those of their device by place. */
  readonly exemptions?: readonly FrozenExemption[];
}

/** What a batch's node selectors chose when it started (shown on the batch). */
export interface NodeSelection {
  readonly node: string;
  readonly select: readonly Selector[];
  /** Devices the selectors chose for the node (listed devices not counted). */
  readonly devices: number;
}

/** One device to check and the node it is assigned to. */
export interface DeviceAssignment {
  readonly device: string;
  readonly node: string;
}

/** A device of a chunk: a compliance batch's is on a node of its plan, a backup's on none. */
export interface ChunkDevice {
  readonly device: string;
  readonly node?: string;
  /** Places in the plan's `exemptions` of the exemptions that apply to the device. */
  readonly exemptions?: readonly number[];
}

/** Devices one batch takes at most (compliance and backup alike): name more in several batches. */
export const MAX_BATCH_DEVICES = 50_000;

/** What a batch does: grade configurations against a tree version, or only keep them. */
export const BATCH_KINDS = ['compliance', 'backup'] as const;
export type BatchKind = (typeof BATCH_KINDS)[number];

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
  grades: { pass: 0, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: 0 },
  totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
});

export const addCounts = (a: ChunkCounts, b: ChunkCounts): ChunkCounts => ({
  devices: a.devices + b.devices,
  grades: {
    pass: a.grades.pass + b.grades.pass,
    review: a.grades.review + b.grades.review,
    fail: a.grades.fail + b.grades.fail,
    error: a.grades.error + b.grades.error,
    'out-of-sync': a.grades['out-of-sync'] + b.grades['out-of-sync'],
    kept: a.grades.kept + b.grades.kept,
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
  readonly kind: BatchKind;
  /** The tree version a compliance batch checks against (a backup has none). */
  readonly treeId?: string;
  readonly version?: string;
  /** The compliance plan the batch ran for, if any. */
  readonly planId?: string;
  readonly adapterId: string;
  readonly status: BatchStatus;
  readonly total: number;
  readonly done: number;
  readonly totals: RuleTotals;
  readonly grades: GradeCounts;
  /** Whether NSO's copy is checked against each device before grading (see sync.ts). */
  readonly sync: SyncMode;
  readonly started: string;
  readonly finished?: string;
  /** Why a failed batch failed (no internals: a sentence for people). */
  readonly reason?: string;
  /** What the nodes' selectors chose when the batch started (a version without selectors: absent). */
  readonly selections?: readonly NodeSelection[];
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
  /** A rule over several places: how many the path matched, and the failing ones by concrete pointer (bounded). */
  readonly matches?: number;
  readonly failures?: readonly MatchFailure[];
  readonly failuresOmitted?: number;
}

/** One device's result. */
export interface Report {
  readonly reportId: string;
  readonly batchId: string;
  readonly device: string;
  /** The tree version and node the device was checked against (compliance batches). */
  readonly treeId?: string;
  readonly version?: string;
  readonly node?: string;
  readonly grade: Grade;
  /** Absent for grades `error` and `out-of-sync`. */
  readonly score?: number;
  readonly totals: RuleTotals;
  readonly issues: readonly ReportIssue[];
  /** Failed rules left out of `issues` to keep the report within DynamoDB's item size. */
  readonly issuesOmitted?: number;
  /** Rules an exemption took out of the score (passing or not). */
  readonly exempted?: readonly ExemptedRule[];
  /** Exempted rules left out of `exempted` to keep the report within DynamoDB's item size. */
  readonly exemptedOmitted?: number;
  /** Grade `error` only: why the configuration could not be checked. */
  readonly reason?: string;
  /** Whether NSO's copy was checked against the device before grading, and what came of it. */
  readonly sync?: ReportSync;
  /** Grade `out-of-sync` only: NSO's diff of the device against its copy (secrets masked, bounded). */
  readonly diff?: string;
  /** The diff was cut to {@link MAX_DIFF_BYTES}. */
  readonly diffTruncated?: true;
  /** The configuration graded or kept, in the device's history (absent when none was fetched, or none is kept). */
  readonly configId?: string;
  readonly checkedAt: string;
}

/**
 * What a batch asks NSO before grading a device: `check` (default) whether NSO's copy matches
 * the device, `sync-from` to take the device's configuration first, `none` nothing.
 */
export const SYNC_MODES = ['check', 'sync-from', 'none'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

/**
 * What came of the sync step: `in-sync` / `out-of-sync` (mode `check`), `synced` (mode
 * `sync-from`), `not-checked` (mode `none`, or an orchestrator without the actions: `note` says so).
 */
export const SYNC_RESULTS = ['in-sync', 'out-of-sync', 'synced', 'not-checked'] as const;
export type SyncResult = (typeof SYNC_RESULTS)[number];

export interface ReportSync {
  readonly mode: SyncMode;
  readonly result: SyncResult;
  readonly note?: string;
}

/** UTF-8 bytes of a report's diff at most: with the rest of the report, inside DynamoDB's item. */
export const MAX_DIFF_BYTES = 60_000;
