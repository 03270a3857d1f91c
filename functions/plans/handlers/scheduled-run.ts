/**
 * The target of plans' schedules (EventBridge Scheduler, or the local scheduler): runs the plan
 * named in the event as the caller `schedule`. A plan that is broken, disabled, still running its
 * last batch or whose adapter is stopped is skipped, the reason kept in its `lastRun` (and the
 * changelog); a skip is an answer, not an error, so nothing retries it. A schedule
 * whose plan is gone is removed. Only a failure to read or write (the store, the compliance
 * engine) throws; Scheduler invokes asynchronously, so Lambda's retries then run the plan at most
 * once (a retry finds the batch running and skips).
 *
 * Configuration: `COMPLIANCE_TABLE`, `TREES_TABLE`, `ADAPTERS_TABLE`, `CHANGELOG_TABLE`,
 * `PROFILES_TABLE`, `COMPLIANCE_FUNCTION` (the batch function's alias), and the schedules'
 * `PLAN_SCHEDULE_GROUP` (to remove an orphan).
 */
import { logger } from '../../platform/logger.js';
import { NotFound } from '../../platform/problem.js';
import { PLAN_ID_PATTERN, type PlanRun, type ScheduledRunEvent } from '../model.js';
import { type PlanDeps, runPlan } from '../service.js';
import { planDeps } from './deps.js';

const PLAN_ID = new RegExp(PLAN_ID_PATTERN);

/** What the scheduled run did: the run recorded, or why none was (`no-plan`, `bad-event`). */
export type ScheduledRunResult = PlanRun | { readonly outcome: 'no-plan' | 'bad-event' };

/** Runs the plan of a schedule's event with `deps` (tests pass their own). */
export const runScheduled = async (event: ScheduledRunEvent, deps: PlanDeps): Promise<ScheduledRunResult> => {
  if (typeof event?.planId !== 'string' || !PLAN_ID.test(event.planId)) {
    logger.error('a scheduled run came without a plan id', { event });
    return { outcome: 'bad-event' };
  }
  try {
    const { run } = await runPlan(event.planId, { trigger: 'schedule' }, deps);
    logger.info('scheduled run of a compliance plan', { planId: event.planId, ...run });
    return run;
  } catch (error) {
    if (!(error instanceof NotFound) || !/compliance plan/.test(error.detail)) throw error;
    logger.warn('the schedule of a deleted compliance plan fired; removing it', { planId: event.planId });
    await deps.schedules.remove(event.planId);
    return { outcome: 'no-plan' };
  }
};

export const handler = (event: ScheduledRunEvent): Promise<ScheduledRunResult> => runScheduled(event, planDeps());
