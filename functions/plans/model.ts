/**
 * Compliance plans: a named, saved compliance batch (a tree version, an adapter, its devices and
 * sync mode) that runs on demand (`POST …/compliance_plans/{planId}/run`) or on a schedule. On
 * AWS a plan's schedule is an EventBridge Scheduler schedule in the stack's schedule group, whose
 * target is the scheduled-run function; locally the local stack fires the same schedules.
 *
 * This module is the contract between the plan routes, the plan store, the schedules (AWS
 * Scheduler, or the local scheduler) and the scheduled run. A plan's batches, its trend and its
 * devices' history are compliance data (functions/compliance/history-model.ts).
 */
import type { SyncMode } from '../compliance/model.js';

/** Plan ids: 24 lowercase hex digits (96 random bits), as batch ids. */
export const PLAN_ID_PATTERN = '^[0-9a-f]{24}$';

/** What a user writes: `POST` creates a plan from it, `PUT` replaces a plan's with it. */
export interface PlanInput {
  /**
   * For people: 1 to 128 characters under the rule of every stored name (functions/platform/names.ts:
   * no invisible characters, NFC), unique among plans without regard to case.
   */
  readonly name: string;
  readonly treeId: string;
  /** A version label of the tree. */
  readonly version: string;
  readonly adapterId: string;
  /** Only these devices of the version; absent: every device assigned to one of its nodes (as a batch). */
  readonly devices?: readonly string[];
  /** What NSO is asked before each device is graded; default `check` (as a batch). */
  readonly sync?: SyncMode;
  /**
   * An EventBridge Scheduler expression, `cron(minutes hours day-of-month month day-of-week year)`
   * or `rate(value unit)`, checked on write; absent: the plan runs only when asked.
   */
  readonly schedule?: string;
  /** IANA time zone the `cron` expression is read in; default `UTC`. */
  readonly timezone?: string;
  /** A disabled plan keeps its schedule but is not run by it (a run asked for by a user still runs). */
  readonly enabled: boolean;
}

/** Why a plan cannot run: what it names is gone (a tree, its version, the adapter, or devices the version no longer assigns). */
export const PLAN_BROKEN_REASONS = ['tree-missing', 'version-missing', 'adapter-missing', 'devices-missing'] as const;
export type PlanBrokenReason = (typeof PLAN_BROKEN_REASONS)[number];

export interface PlanBroken {
  readonly reason: PlanBrokenReason;
  /** A sentence for people. */
  readonly detail: string;
}

/** How a plan's last run went: started a batch, or was skipped (and why). */
export interface PlanRun {
  readonly at: string;
  readonly trigger: 'user' | 'schedule';
  readonly outcome: 'started' | 'skipped';
  readonly batchId?: string;
  /** Why a run was skipped: the plan is broken or disabled, a batch of it is still running, the adapter is stopped… */
  readonly reason?: string;
}

/** A batch a run of a plan started, and when. */
export interface PlanBatch {
  readonly batchId: string;
  readonly at: string;
}

/** A plan as the routes show it. */
export interface Plan extends PlanInput {
  readonly planId: string;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly updatedAt: string;
  readonly updatedBy: string;
  /** The last run (by a user or the schedule), started or skipped. */
  readonly lastRun?: PlanRun;
  /**
   * The last batch a run of the plan started (kept when later runs are skipped): the plan's
   * running lease. While the batch runs (or, before its record exists, for the start window),
   * the plan is not run again.
   */
  readonly lastBatch?: PlanBatch;
  /** The next time the schedule fires (enabled plans with a schedule), ISO 8601 UTC. */
  readonly nextRunAt?: string;
  /**
   * Present when the plan's tree, version or adapter is gone, or the version no longer assigns
   * some of its devices: it is not run, by a user or the schedule.
   */
  readonly broken?: PlanBroken;
  /**
   * Present when the plan was written but its schedule could not be (the write answered 503):
   * the Scheduler may still hold the schedule before it, or none. Writing the plan again (`PUT`)
   * writes its schedule.
   */
  readonly schedulePending?: boolean;
}

/**
 * The schedules of plans, kept where the scheduler reads them: EventBridge Scheduler on AWS
 * (one schedule per plan, named after it, in the stack's group), the local scheduler locally.
 * A schedule's target is the scheduled-run function with {@link ScheduledRunEvent}.
 */
export interface PlanSchedules {
  /** Creates or replaces the plan's schedule; a plan without `schedule` has its schedule removed. */
  put(plan: Pick<Plan, 'planId' | 'schedule' | 'timezone' | 'enabled'>): Promise<void>;
  /** Removes the plan's schedule; nothing when it has none. */
  remove(planId: string): Promise<void>;
}

/** What a schedule sends the scheduled-run function. */
export interface ScheduledRunEvent {
  readonly planId: string;
}
