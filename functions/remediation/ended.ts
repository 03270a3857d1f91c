/**
 * A remediation run (or its rollback) ended `failed` from outside its durable execution, as a
 * compliance batch is (compliance/ended.ts): by the housekeeping's sweep, which finds its
 * execution timed out, failed or stopped without the end step, or by a read that finds it
 * `running` past the longest its execution can take. The remediation function has the batch
 * function's execution timeout (infra/stack.ts), so a run's deadline is a batch's
 * (compliance/deadline.ts `batchDeadline`).
 *
 * Only work still `running` is ended (the store is read first): a run that ended by itself keeps
 * its end. Once its execution has ended nothing else writes the run, so the read and the write
 * do not race the engine; a sweep and a read that end the same run at once both write `failed`.
 * Each end is one `error` log line and, like the engine's own end, the `onEnd` hook (the
 * audit's end entry).
 */
import { batchDeadline, BATCH_EXECUTION_TIMEOUT_SECONDS } from '../compliance/deadline.js';
import type { SweptFunction } from '../compliance/housekeeping.js';
import { logger } from '../platform/logger.js';
import type { Remediation, RemediationEvent, RemediationStore } from './model.js';

/** The store's part the ending needs. */
export type EndingStore = Pick<RemediationStore, 'get' | 'finish' | 'finishRollback'>;

/** What ends a run (or rollback) from outside: the store, and what else the engine's end does (the audit entry). */
export interface EndingDeps {
  readonly store: EndingStore;
  readonly onEnd?: (end: { readonly remediationId: string; readonly action: RemediationEvent['action']; readonly status: 'failed' }) => Promise<void>;
}

/** The run and action of a durable execution, from its name (service.ts `remediationExecutionName`); none for another name. */
export const remediationExecution = (name: string): RemediationEvent | undefined => {
  const match = /^([0-9a-f]{24})(-rollback(?:-([1-9][0-9]{0,5}))?)?$/.exec(name);
  if (!match) return undefined;
  if (!match[2]) return { remediationId: match[1]!, action: 'run' };
  const attempt = Number(match[3] ?? 1);
  return { remediationId: match[1]!, action: 'rollback', ...(attempt > 1 ? { attempt } : {}) };
};

const WHAT = { run: 'the run', rollback: 'the rollback' } as const;
const KEPT = 'the devices’ records written so far are kept; a device left `committing` or `applying` may have been changed in NSO.';

/** Why a run (or rollback) ended when its execution ended without it, by the execution's status. */
export const remediationEndedReason = (action: RemediationEvent['action'], status: 'TIMED_OUT' | 'FAILED' | 'STOPPED'): string =>
  ({
    TIMED_OUT: `${WHAT[action]} did not end within its execution timeout (${BATCH_EXECUTION_TIMEOUT_SECONDS / 3600} hours) and was stopped by Lambda; ${KEPT}`,
    FAILED: `${WHAT[action]}’s durable execution failed before it could record its end; ${KEPT}`,
    STOPPED: `${WHAT[action]}’s durable execution was stopped (StopDurableExecution); ${KEPT}`,
  })[status];

/** Why a run (or rollback) found `running` past its deadline ended. */
export const remediationPastDeadlineReason = (action: RemediationEvent['action']): string =>
  `${WHAT[action]} did not end within its execution timeout (${BATCH_EXECUTION_TIMEOUT_SECONDS / 3600} hours, counted from its start) and can no longer run; ${KEPT}`;

/**
 * Ends the run (`finish`, with the reason) or its rollback (`finishRollback`) `failed` at `at`
 * when it is still running; whether it did.
 */
export const endRemediationFailed = async (
  deps: EndingDeps,
  end: {
    readonly remediationId: string;
    readonly action: RemediationEvent['action'];
    /** The rollback's attempt the execution ran (1 when absent): an earlier attempt's end leaves a later one alone. */
    readonly attempt?: number;
    readonly at: string;
    readonly reason: string;
    readonly foundBy: 'read' | 'sweep';
  },
): Promise<boolean> => {
  const run = await deps.store.get(end.remediationId);
  const running = end.action === 'run' ? run?.status === 'running' : run?.rollback?.status === 'running' && (run.rollback.attempt ?? 1) === (end.attempt ?? 1);
  if (!running) return false;
  if (end.action === 'run') await deps.store.finish(end.remediationId, 'failed', end.at, end.reason);
  else await deps.store.finishRollback(end.remediationId, 'failed', end.at);
  logger.error('remediation ended failed outside its execution', {
    remediationId: end.remediationId,
    action: end.action,
    foundBy: end.foundBy,
    reason: end.reason,
  });
  await deps.onEnd?.({ remediationId: end.remediationId, action: end.action, status: 'failed' });
  return true;
};

/**
 * The remediation function's {@link SweptFunction.endWork}: ends the run or rollback of an
 * execution that ended without it (`<id>` or `<id>-rollback`); `<id>` or `<id>-rollback` when it did.
 */
export const endRemediationOfExecution =
  (deps: EndingDeps): SweptFunction['endWork'] =>
  async (execution) => {
    const event = remediationExecution(execution.name);
    if (!event) return [];
    const ended = await endRemediationFailed(deps, {
      ...event,
      at: execution.ended,
      reason: remediationEndedReason(event.action, execution.status),
      foundBy: 'sweep',
    });
    return ended ? [execution.name] : [];
  };

/**
 * The run as a read should show it: a run or rollback still `running` past its deadline
 * (`batchDeadline` of its start) is ended `failed` at `now` first, so no reader sees it running
 * after it can no longer run.
 */
export const onTime = async (deps: EndingDeps, run: Remediation, now: Date): Promise<Remediation> => {
  const overdue = (started: string) => now.getTime() > batchDeadline(started);
  const actions: RemediationEvent['action'][] = [
    ...(run.status === 'running' && overdue(run.started) ? (['run'] as const) : []),
    ...(run.rollback?.status === 'running' && overdue(run.rollback.started) ? (['rollback'] as const) : []),
  ];
  if (actions.length === 0) return run;
  for (const action of actions) {
    await endRemediationFailed(deps, {
      remediationId: run.remediationId,
      action,
      at: now.toISOString(),
      reason: remediationPastDeadlineReason(action),
      foundBy: 'read',
    });
  }
  return (await deps.store.get(run.remediationId)) ?? run;
};
