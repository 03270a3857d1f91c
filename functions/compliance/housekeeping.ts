/**
 * The batch function's housekeeping, run on a schedule: (1) ends `failed` the batches whose
 * durable execution ended (timed out, failed, stopped) without their own end step, and
 * (2) deletes the function's published versions that no execution can use any more.
 *
 * Versions are kept by every deploy (the stack retains them) because a durable execution
 * stays on the version it started on for up to a day, and replays on it after every wait:
 * deleting that version under it would strand the batch. A version is deleted only when none
 * of the keep rules of {@link planPruning} holds.
 *
 * What Lambda is asked goes through {@link BatchFunctionApi}, so the rules are tested against
 * listings and the handler against a fake of it.
 */
import { BATCH_EXECUTION_TIMEOUT_SECONDS, endedReason, INVOCATION_SECONDS, START_DELAY_SECONDS } from './deadline.js';
import { endBatchFailed } from './ended.js';
import type { ComplianceStore } from './store.js';

/** A published version of the batch function. */
export interface FunctionVersion {
  /** `1`, `2`, …; `$LATEST` is never listed here. */
  readonly version: string;
  /** When it was published. */
  readonly published: Date;
}

/** A durable execution of the batch function, as Lambda lists it. */
export interface DurableExecution {
  readonly name: string;
  readonly arn: string;
  readonly status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'STOPPED';
  readonly started: Date;
  readonly ended?: Date;
}

/** What the housekeeping asks of Lambda about the batch function. */
export interface BatchFunctionApi {
  /** Every published version (not `$LATEST`). */
  listVersions(): Promise<FunctionVersion[]>;
  /** The versions the function's aliases point at, routing weights included. */
  aliasTargets(): Promise<string[]>;
  /** Executions in these statuses that started after `startedAfter` (every page). */
  listExecutions(statuses: readonly DurableExecution['status'][], startedAfter?: Date): Promise<DurableExecution[]>;
  deleteVersion(version: string): Promise<void>;
}

/** Why a version is kept, or that it is deleted. */
export type PruneReason = 'alias-target' | 'running-executions' | 'executions-unknown' | 'newest' | 'recently-superseded' | 'unused';

export interface PruneDecision {
  readonly version: string;
  readonly reason: PruneReason;
}

/**
 * How long after its successor was published a version may still start or run an execution:
 * an invoke of the alias queued just before the switch (up to {@link START_DELAY_SECONDS}),
 * then the execution timeout, then the invocation running at its end.
 */
export const SUPERSEDED_GRACE_MS = (START_DELAY_SECONDS + BATCH_EXECUTION_TIMEOUT_SECONDS + INVOCATION_SECONDS) * 1000;

/** The version an execution runs on, from its ARN (`…:function:<name>:<version>/durable-execution/…`). */
export const executionVersion = (arn: string): string | undefined => /:function:[^:/]+:([^:/]+)\/durable-execution\//.exec(arn)?.[1];

/**
 * Which versions to keep and which to delete. Kept: an alias's target; a version with a running
 * execution; every version when the running executions' versions are not all known (an ARN
 * that names none); the newest; a version whose successor was published less than
 * {@link SUPERSEDED_GRACE_MS} ago (an execution started on it may still be queued or running,
 * even if the listing has not shown it yet). The rest is deleted.
 */
export const planPruning = (input: {
  readonly versions: readonly FunctionVersion[];
  readonly aliasTargets: readonly string[];
  readonly running: readonly DurableExecution[];
  readonly now: Date;
}): { readonly keep: readonly PruneDecision[]; readonly delete: readonly PruneDecision[] } => {
  const ordered = [...input.versions].sort((a, b) => Number(a.version) - Number(b.version));
  const targets = new Set(input.aliasTargets);
  const runningOn = input.running.map((e) => executionVersion(e.arn));
  const unknown = runningOn.includes(undefined);
  const inUse = new Set(runningOn);
  const decisions = ordered.map((v, i): PruneDecision => {
    const successor = ordered[i + 1];
    const reason: PruneReason = targets.has(v.version)
      ? 'alias-target'
      : inUse.has(v.version)
        ? 'running-executions'
        : unknown
          ? 'executions-unknown'
          : !successor
            ? 'newest'
            : input.now.getTime() - successor.published.getTime() < SUPERSEDED_GRACE_MS
              ? 'recently-superseded'
              : 'unused';
    return { version: v.version, reason };
  });
  return { keep: decisions.filter((d) => d.reason !== 'unused'), delete: decisions.filter((d) => d.reason === 'unused') };
};

/** The batch of an execution, from its name (`batch-<batchId>`, `executionName` in durable-start.ts). */
export const executionBatchId = (name: string): string | undefined => /^batch-([0-9a-f]{24})$/.exec(name)?.[1];

/**
 * How far back the sweep looks: executions that ended without their batch started at most an
 * execution timeout (plus the queue and the last invocation) before they ended; two days more
 * cover sweeps that did not run. A batch missed even so is ended by the next read of it.
 */
export const SWEEP_LOOKBACK_MS = SUPERSEDED_GRACE_MS + 2 * 24 * 3600 * 1000;

/** What one run did: the batches it ended, the versions it deleted and those it kept (with why). */
export interface HousekeepingOutcome {
  readonly endedBatches: readonly string[];
  readonly deleted: readonly string[];
  readonly kept: readonly PruneDecision[];
}

/**
 * One run: ends the batches of executions that ended without them, then prunes the versions.
 * A version is listed before the running executions are, so a version published in between
 * is not considered, and one whose execution started in between is newer than its successor's
 * grace (see {@link planPruning}).
 */
export const runHousekeeping = async (deps: {
  readonly lambda: BatchFunctionApi;
  readonly store: Pick<ComplianceStore, 'failIfRunning'>;
  readonly now: () => Date;
}): Promise<HousekeepingOutcome> => {
  const now = deps.now();
  const endedBatches: string[] = [];
  for (const execution of await deps.lambda.listExecutions(['TIMED_OUT', 'FAILED', 'STOPPED'], new Date(now.getTime() - SWEEP_LOOKBACK_MS))) {
    if (execution.status === 'RUNNING' || execution.status === 'SUCCEEDED') continue;
    const batchId = executionBatchId(execution.name);
    if (!batchId) continue;
    const ended = await endBatchFailed(deps.store, {
      batchId,
      finished: (execution.ended ?? now).toISOString(),
      reason: endedReason(execution.status),
      foundBy: 'sweep',
    });
    if (ended) endedBatches.push(batchId);
  }
  const versions = await deps.lambda.listVersions();
  const aliasTargets = await deps.lambda.aliasTargets();
  const running = await deps.lambda.listExecutions(['RUNNING']);
  const plan = planPruning({ versions, aliasTargets, running, now });
  const deleted: string[] = [];
  for (const { version } of plan.delete) {
    await deps.lambda.deleteVersion(version);
    deleted.push(version);
  }
  return { endedBatches, deleted, kept: plan.keep };
};
