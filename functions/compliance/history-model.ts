/**
 * A plan's history: what its batches found over time, kept apart from the batches so that it
 * outlives any one of them (a batch and its reports expire after `reportRetentionDays`; the
 * history after `historyRetentionDays`, both settings of the active profile).
 *
 * - the **trend**: one point per batch of the plan (time, status, counts by grade, delta counts);
 * - a **device's history**: one point per batch that graded it (grade, score, failing rules),
 *   and per rule when it first failed in its current failing streak and when it last changed;
 * - the **delta** of a completed batch against the plan's previous completed batch: devices newly
 *   failing, fixed, with another grade change, new and gone;
 * - **events** on EventBridge: one per completed or failed batch, one per device whose grade changed.
 *
 * This module is the contract between the engine's history steps, the history store, the routes
 * that read it (batch list, delta, trend, device history) and the event publisher.
 */
import type { Grade, RuleTotals } from './grading.js';
import type { BatchKind, BatchStatus, GradeCounts } from './model.js';

/**
 * How a device's grade moved from the previous completed batch of its plan to this one. Each
 * device of either batch is in one class at most:
 * - `newly-failing`: graded `fail` now, any other grade before;
 * - `fixed`: graded `fail` before, `pass` or `review` now;
 * - `changed`: any other change of grade (`pass` → `review`, `review` → `error`, `fail` → `out-of-sync`…);
 * - `new`: in this batch, not in the previous one;
 * - `gone`: in the previous batch, not in this one.
 * A device with the same grade in both is in none.
 */
export const DELTA_CHANGES = ['newly-failing', 'fixed', 'changed', 'new', 'gone'] as const;
export type DeltaChange = (typeof DELTA_CHANGES)[number];

/** Devices of a delta by class. */
export type DeltaCounts = Readonly<Record<DeltaChange, number>>;

/** One device of a delta. */
export interface DeltaRow {
  readonly device: string;
  readonly change: DeltaChange;
  /** The grade in the previous batch (absent for `new`). */
  readonly from?: Grade;
  /** The grade in this batch (absent for `gone`). */
  readonly to?: Grade;
  /** This batch's report of the device (absent for `gone`). */
  readonly reportId?: string;
}

/** What `GET …/batches/{batchId}/delta` answers besides its rows. */
export interface BatchDelta {
  readonly batchId: string;
  readonly planId: string;
  /** The plan's completed batch before this one; absent when this is the plan's first. */
  readonly previousBatchId?: string;
  readonly counts: DeltaCounts;
  /**
   * The previous batch had expired when this one was compared, so `gone` devices are not known
   * (the other classes come from the devices' own history and are exact).
   */
  readonly goneUnknown?: true;
}

/** One batch of a plan in its trend. */
export interface TrendPoint {
  readonly batchId: string;
  readonly kind: BatchKind;
  readonly status: BatchStatus;
  readonly started: string;
  readonly finished?: string;
  /** Devices in the batch. */
  readonly total: number;
  readonly grades: GradeCounts;
  readonly totals: RuleTotals;
  /** Completed batches: against the plan's previous completed batch. */
  readonly delta?: DeltaCounts;
}

/** One batch's grade of a device in its history. */
export interface DevicePoint {
  readonly batchId: string;
  /** When the device was checked. */
  readonly at: string;
  readonly grade: Grade;
  readonly score?: number;
  /** Ids of the rules that failed (absent for `error` and `out-of-sync`: no rule was evaluated). */
  readonly failing?: readonly string[];
  readonly reportId?: string;
}

/** A rule's state on a device, over the plan's completed batches. */
export interface DeviceRuleState {
  readonly ruleId: string;
  readonly failing: boolean;
  /** When the rule began failing in its current streak (failing rules only). */
  readonly firstFailedAt?: string;
  /** When the rule last went from passing to failing or back; when it was first seen, if never. */
  readonly lastChangedAt: string;
}

/** `GET …/compliance_plans/{planId}/devices/{device}`. */
export interface DeviceHistory {
  readonly planId: string;
  readonly device: string;
  /** Newest first. */
  readonly points: readonly DevicePoint[];
  readonly rules: readonly DeviceRuleState[];
  readonly next?: string;
}

/** The `source` of every event the service puts on EventBridge. */
export const EVENT_SOURCE = 'netconfig.compliance';

/** One per batch (compliance or backup, of a plan or not) that ended. */
export interface BatchEndedEvent {
  readonly detailType: 'Compliance Batch Completed' | 'Compliance Batch Failed';
  readonly detail: {
    readonly batchId: string;
    readonly kind: BatchKind;
    readonly planId?: string;
    readonly treeId?: string;
    readonly version?: string;
    readonly adapterId: string;
    readonly status: 'completed' | 'failed';
    readonly started: string;
    readonly finished: string;
    readonly total: number;
    readonly grades: GradeCounts;
    readonly totals: RuleTotals;
    /** A completed batch of a plan: its delta's counts, against `previousBatchId`. */
    readonly delta?: DeltaCounts;
    readonly previousBatchId?: string;
    readonly reason?: string;
  };
}

/** One per device of a plan's completed batch whose grade differs from the previous completed batch's. */
export interface DeviceChangedEvent {
  readonly detailType: 'Device Compliance Changed';
  readonly detail: {
    /** `<batchId>:<device>`: the same for a redelivery, so consumers can drop repeats. */
    readonly eventId: string;
    readonly planId: string;
    readonly batchId: string;
    readonly device: string;
    readonly change: Exclude<DeltaChange, 'gone'>;
    readonly from?: Grade;
    readonly to: Grade;
    readonly reportId?: string;
    readonly at: string;
  };
}

export type ComplianceEvent = BatchEndedEvent | DeviceChangedEvent;

/**
 * Where events go: EventBridge's `PutEvents` on the configured bus on AWS, the local event
 * simulator locally. Delivery is at least once: a step that runs again may publish again.
 */
export interface ComplianceEvents {
  /** Publishes the events in order (in requests of up to 10); rejects when some could not be put after retries. */
  publish(events: readonly ComplianceEvent[]): Promise<void>;
}
