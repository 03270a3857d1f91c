/**
 * When a batch can no longer be running. Its durable execution is cut off by Lambda after the
 * execution timeout (the stack sets `durableConfig.executionTimeout` from
 * {@link BATCH_EXECUTION_TIMEOUT_SECONDS}), counted from the execution's start, which comes
 * after the batch record's `started`: the start is an asynchronous `Invoke`, which Lambda's
 * queue may hold up to {@link START_DELAY_SECONDS}. The invocation running at the cut-off may
 * still write for up to {@link INVOCATION_SECONDS}. A batch still `running` after all three is
 * one whose execution ended without telling it: it timed out, or died before its end step.
 */

/** The durable execution timeout of the batch function (24 h): the stack's `executionTimeout`. */
export const BATCH_EXECUTION_TIMEOUT_SECONDS = 24 * 3600;
/** How long Lambda may hold an asynchronous invoke before running it (its default maximum event age, 6 h). */
export const START_DELAY_SECONDS = 6 * 3600;
/** The longest invocation of the batch function (its Lambda timeout, 15 min). */
export const INVOCATION_SECONDS = 15 * 60;

/** The time (epoch ms) after which a batch that started at `started` (ISO 8601) is certainly not running. */
export const batchDeadline = (started: string): number =>
  Date.parse(started) + (BATCH_EXECUTION_TIMEOUT_SECONDS + START_DELAY_SECONDS + INVOCATION_SECONDS) * 1000;

/** The reason a batch gets when its execution ended without the batch's own end step, by the execution's status. */
export const endedReason = (status: 'TIMED_OUT' | 'FAILED' | 'STOPPED'): string =>
  ({
    TIMED_OUT: `the batch did not end within its execution timeout (${BATCH_EXECUTION_TIMEOUT_SECONDS / 3600} hours) and was stopped by Lambda; the reports written so far are kept.`,
    FAILED: 'the batch’s durable execution failed before the batch could record its end; the reports written so far are kept.',
    STOPPED: 'the batch’s durable execution was stopped (StopDurableExecution); the reports written so far are kept.',
  })[status];

/** The reason of a batch found running past its deadline ({@link batchDeadline}). */
export const PAST_DEADLINE_REASON = `the batch did not end within its execution timeout (${BATCH_EXECUTION_TIMEOUT_SECONDS / 3600} hours, counted from its start) and can no longer run; the reports written so far are kept.`;
