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
  /** The executions on one version in these statuses, started after `startedAfter` when given (every page). */
  listExecutions(version: string, statuses: readonly DurableExecution['status'][], startedAfter?: Date): Promise<DurableExecution[]>;
  deleteVersion(version: string): Promise<void>;
}

/** Why a version is kept, or that it is deleted. */
export type PruneReason = 'alias-target' | 'running-executions' | 'newest' | 'recently-superseded' | 'unused';

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

/**
 * Which versions to keep and which to delete. Kept: an alias's target; a version with a running
 * execution; the newest; a version whose successor was published less than
 * {@link SUPERSEDED_GRACE_MS} ago (an execution started on it may still be queued or running,
 * even if the listing has not shown it yet). The rest is deleted.
 */
export const planPruning = (input: {
  readonly versions: readonly FunctionVersion[];
  readonly aliasTargets: readonly string[];
  /** The versions with at least one running execution. */
  readonly running: readonly string[];
  readonly now: Date;
}): { readonly keep: readonly PruneDecision[]; readonly delete: readonly PruneDecision[] } => {
  const ordered = [...input.versions].sort((a, b) => Number(a.version) - Number(b.version));
  const targets = new Set(input.aliasTargets);
  const inUse = new Set(input.running);
  const decisions = ordered.map((v, i): PruneDecision => {
    const successor = ordered[i + 1];
    const reason: PruneReason = targets.has(v.version)
      ? 'alias-target'
      : inUse.has(v.version)
        ? 'running-executions'
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
 * One run, version by version (the listings are asked with the version as qualifier): ends the
 * batches of the executions that ended without them, notes the versions with running
 * executions, then deletes what {@link planPruning} does not keep. A version published after
 * the listing is not considered; an execution that starts after its version's listing does so
 * through the alias (its target is kept) or from an invoke queued before the switch (the grace
 * keeps its version).
 */
export const runHousekeeping = async (deps: {
  readonly lambda: BatchFunctionApi;
  readonly store: Pick<ComplianceStore, 'failIfRunning'>;
  readonly now: () => Date;
}): Promise<HousekeepingOutcome> => {
  const now = deps.now();
  const versions = await deps.lambda.listVersions();
  const aliasTargets = await deps.lambda.aliasTargets();
  const endedBatches: string[] = [];
  const running: string[] = [];
  for (const { version } of versions) {
    endedBatches.push(...(await endBatchesOfEnded(deps, version, new Date(now.getTime() - SWEEP_LOOKBACK_MS))));
    if ((await deps.lambda.listExecutions(version, ['RUNNING'])).length > 0) running.push(version);
  }
  const plan = planPruning({ versions, aliasTargets, running, now });
  const deleted: string[] = [];
  for (const { version } of plan.delete) {
    await deps.lambda.deleteVersion(version);
    deleted.push(version);
  }
  return { endedBatches, deleted, kept: plan.keep };
};

/** Ends the batches of the executions on `version` that timed out, failed or were stopped; the batches it ended. */
const endBatchesOfEnded = async (
  deps: Pick<Parameters<typeof runHousekeeping>[0], 'lambda' | 'store' | 'now'>,
  version: string,
  startedAfter: Date,
): Promise<string[]> => {
  const ended: string[] = [];
  for (const execution of await deps.lambda.listExecutions(version, ['TIMED_OUT', 'FAILED', 'STOPPED'], startedAfter)) {
    const batchId = executionBatchId(execution.name);
    if (!batchId || execution.status === 'RUNNING' || execution.status === 'SUCCEEDED') continue;
    const finished = (execution.ended ?? deps.now()).toISOString();
    if (await endBatchFailed(deps.store, { batchId, finished, reason: endedReason(execution.status), foundBy: 'sweep' })) ended.push(batchId);
  }
  return ended;
};
