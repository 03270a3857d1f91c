/**
 * The housekeeping of the durable functions (the batch function, the remediation function), run
 * on a schedule. For each function: (1) ends `failed` the work (a batch, a remediation run or
 * rollback) whose durable execution ended (timed out, failed, stopped) without its own end step,
 * and (2) deletes the function's published versions that no execution can use any more.
 *
 * Versions are kept by every deploy (the stack retains them) because a durable execution
 * stays on the version it started on for up to a day, and replays on it after every wait:
 * deleting that version under it would strand the work. A version is deleted only when none
 * of the keep rules of {@link planPruning} holds.
 *
 * What Lambda is asked goes through {@link DurableFunctionApi}, and what ends an execution's work
 * through {@link SweptFunction.endWork}, so the rules are tested against listings and the sweep
 * against fakes of both. The functions share one execution timeout (deadline.ts), so one grace
 * and one look-back serve them all.
 */
import { BATCH_EXECUTION_TIMEOUT_SECONDS, endedReason, INVOCATION_SECONDS, START_DELAY_SECONDS } from './deadline.js';
import { endBatchFailed } from './ended.js';
import type { ComplianceStore } from './store.js';

/** A published version of a durable function. */
export interface FunctionVersion {
  /** `1`, `2`, …; `$LATEST` is never listed here. */
  readonly version: string;
  /** When it was published. */
  readonly published: Date;
}

/** A durable execution, as Lambda lists it. */
export interface DurableExecution {
  readonly name: string;
  readonly arn: string;
  readonly status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'STOPPED';
  readonly started: Date;
  readonly ended?: Date;
}

/** What the housekeeping asks of Lambda about one durable function. */
export interface DurableFunctionApi {
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
 * How far back the sweep looks: executions that ended without their work started at most an
 * execution timeout (plus the queue and the last invocation) before they ended; two days more
 * cover sweeps that did not run. Work missed even so is ended by the next read of it.
 */
export const SWEEP_LOOKBACK_MS = SUPERSEDED_GRACE_MS + 2 * 24 * 3600 * 1000;

/** An execution that ended without success, as {@link SweptFunction.endWork} is given it. */
export interface EndedExecution {
  readonly name: string;
  readonly status: 'TIMED_OUT' | 'FAILED' | 'STOPPED';
  /** When it ended (ISO 8601): the end time the work gets. */
  readonly ended: string;
}

/** A durable function the housekeeping sweeps. */
export interface SweptFunction {
  /** The function's logical name, for the log line (`ComplianceBatch`, `RemediationRun`). */
  readonly name: string;
  readonly lambda: DurableFunctionApi;
  /**
   * Ends `failed` the work of an execution that ended without it: the ids of the work it ended,
   * none when the name is not one of this function's or the work had already ended.
   */
  endWork(execution: EndedExecution): Promise<readonly string[]>;
}

/** What one sweep of one function did: the work it ended, the versions it deleted and those it kept (with why). */
export interface FunctionHousekeeping {
  readonly ended: readonly string[];
  readonly deleted: readonly string[];
  readonly kept: readonly PruneDecision[];
}

const ENDED_STATUSES = ['TIMED_OUT', 'FAILED', 'STOPPED'] as const;

/**
 * One sweep of one function, version by version (the listings are asked with the version as
 * qualifier): ends the work of the executions that ended without it, notes the versions with
 * running executions, then deletes what {@link planPruning} does not keep. A version published
 * after the listing is not considered; an execution that starts after its version's listing does
 * so through the alias (its target is kept) or from an invoke queued before the switch (the grace
 * keeps its version).
 */
export const sweepFunction = async (fn: SweptFunction, now: Date): Promise<FunctionHousekeeping> => {
  const versions = await fn.lambda.listVersions();
  const aliasTargets = await fn.lambda.aliasTargets();
  const ended: string[] = [];
  const running: string[] = [];
  const startedAfter = new Date(now.getTime() - SWEEP_LOOKBACK_MS);
  for (const { version } of versions) {
    for (const execution of await fn.lambda.listExecutions(version, ENDED_STATUSES, startedAfter)) {
      if (execution.status === 'RUNNING' || execution.status === 'SUCCEEDED') continue;
      ended.push(...(await fn.endWork({ name: execution.name, status: execution.status, ended: (execution.ended ?? now).toISOString() })));
    }
    if ((await fn.lambda.listExecutions(version, ['RUNNING'])).length > 0) running.push(version);
  }
  const plan = planPruning({ versions, aliasTargets, running, now });
  const deleted: string[] = [];
  for (const { version } of plan.delete) {
    await fn.lambda.deleteVersion(version);
    deleted.push(version);
  }
  return { ended, deleted, kept: plan.keep };
};

/**
 * Sweeps every function ({@link sweepFunction}), each whatever the others' outcome: a function
 * Lambda refuses to list must not leave the others' work running. The outcome by function name;
 * rejects (after all have run) with the first failure.
 */
export const runHousekeeping = async (functions: readonly SweptFunction[], now: Date): Promise<Record<string, FunctionHousekeeping>> => {
  const settled = await Promise.allSettled(functions.map((fn) => sweepFunction(fn, now)));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  return Object.fromEntries(functions.map((fn, i) => [fn.name, (settled[i] as PromiseFulfilledResult<FunctionHousekeeping>).value]));
};

/** The batch function's {@link SweptFunction.endWork}: ends the batch of a `batch-<batchId>` execution if it is still running. */
export const endBatchOfExecution =
  (store: Pick<ComplianceStore, 'failIfRunning'>): SweptFunction['endWork'] =>
  async (execution) => {
    const batchId = executionBatchId(execution.name);
    if (!batchId) return [];
    const ended = await endBatchFailed(store, { batchId, finished: execution.ended, reason: endedReason(execution.status), foundBy: 'sweep' });
    return ended ? [batchId] : [];
  };
