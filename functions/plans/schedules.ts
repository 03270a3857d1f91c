/**
 * Compliance plans' schedules in EventBridge Scheduler: one schedule per plan, named after its
 * id, in the stack's schedule group (`PLAN_SCHEDULE_GROUP`), invoking the scheduled-run function
 * (`PLAN_RUN_FUNCTION_ARN`) as the schedules' role (`PLAN_SCHEDULER_ROLE_ARN`) with
 * `{"planId":…}`; what Lambda still refuses after the retries goes to the dead-letter queue
 * (`PLAN_SCHEDULE_DLQ_ARN`). Locally `SCHEDULER_ENDPOINT` names the local scheduler, which
 * speaks the same API and fires the same schedules (tools/simulators/scheduler-simulator.ts).
 */
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
  type CreateScheduleInput,
} from '@aws-sdk/client-scheduler';
import { requiredEnv } from '../platform/env.js';
import type { Plan, PlanSchedules, ScheduledRunEvent } from './model.js';

/**
 * The retries EventBridge Scheduler makes of an invocation Lambda refused (throttled, or the
 * service unavailable), and for how long: a run an hour late is worth little when the next of an
 * hourly plan is due. Then the invocation goes to the dead-letter queue.
 */
export const SCHEDULE_RETRY = { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 } as const;

/** Fail fast, as the other clients do: a second to connect, five to answer, three attempts. */
const CLIENT_LIMITS = { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 5_000 } as const;

/** Where the schedules go and what they invoke, from the function's environment. */
export interface ScheduleTarget {
  readonly group: string;
  readonly functionArn: string;
  readonly roleArn: string;
  /** Absent: failed invocations are dropped after the retries. */
  readonly deadLetterArn?: string;
}

/** The {@link ScheduleTarget} the stack gives a function whose route manages schedules. */
export const scheduleTargetFromEnv = (env: NodeJS.ProcessEnv = process.env): ScheduleTarget => ({
  group: requiredEnv('PLAN_SCHEDULE_GROUP', env),
  functionArn: requiredEnv('PLAN_RUN_FUNCTION_ARN', env),
  roleArn: requiredEnv('PLAN_SCHEDULER_ROLE_ARN', env),
  ...(env['PLAN_SCHEDULE_DLQ_ARN'] ? { deadLetterArn: env['PLAN_SCHEDULE_DLQ_ARN'] } : {}),
});

/** A Scheduler client with those limits; `endpoint` (or `SCHEDULER_ENDPOINT`) names the local scheduler. */
export const createSchedulerClient = (endpoint = process.env['SCHEDULER_ENDPOINT']): SchedulerClient =>
  new SchedulerClient({
    maxAttempts: CLIENT_LIMITS.maxAttempts,
    ...(endpoint ? { endpoint } : {}),
    requestHandler: { connectionTimeout: CLIENT_LIMITS.connectionTimeoutMs, requestTimeout: CLIENT_LIMITS.requestTimeoutMs, throwOnRequestTimeout: true },
  });

/** The schedule of a plan with a `schedule`, as CreateSchedule and UpdateSchedule take it. */
export const scheduleInput = (plan: Pick<Plan, 'planId' | 'schedule' | 'timezone' | 'enabled'>, target: ScheduleTarget): CreateScheduleInput => {
  if (!plan.schedule) throw new Error(`plan ${plan.planId} has no schedule`);
  const input: ScheduledRunEvent = { planId: plan.planId };
  return {
    Name: plan.planId,
    GroupName: target.group,
    ScheduleExpression: plan.schedule,
    ScheduleExpressionTimezone: plan.timezone ?? 'UTC',
    State: plan.enabled ? 'ENABLED' : 'DISABLED',
    FlexibleTimeWindow: { Mode: 'OFF' },
    Description: `Compliance plan ${plan.planId}`,
    Target: {
      Arn: target.functionArn,
      RoleArn: target.roleArn,
      Input: JSON.stringify(input),
      RetryPolicy: { ...SCHEDULE_RETRY },
      ...(target.deadLetterArn ? { DeadLetterConfig: { Arn: target.deadLetterArn } } : {}),
    },
  };
};

const isNotFound = (error: unknown): boolean => error instanceof ResourceNotFoundException || (error as { name?: string }).name === 'ResourceNotFoundException';

/** Deletes a plan's schedule from the group; a schedule already gone is no error. */
const removeSchedule = async (client: SchedulerClient, group: string, planId: string): Promise<void> => {
  try {
    await client.send(new DeleteScheduleCommand({ Name: planId, GroupName: group }));
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
};

/**
 * {@link PlanSchedules} on EventBridge Scheduler. `put` updates the plan's schedule, and creates
 * it when Scheduler has none (UpdateSchedule replaces every field, so the result is the same
 * whichever existed); `remove` deletes it, and a schedule already gone is no error.
 */
export const schedulerPlanSchedules = (client: SchedulerClient, target: ScheduleTarget): PlanSchedules => ({
  put: async (plan) => {
    if (!plan.schedule) return removeSchedule(client, target.group, plan.planId);
    const input = scheduleInput(plan, target);
    try {
      await client.send(new UpdateScheduleCommand(input));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await client.send(new CreateScheduleCommand(input));
    }
  },
  remove: (planId) => removeSchedule(client, target.group, planId),
});

let client: SchedulerClient | undefined;

/**
 * The container's plan schedules, on one client. The environment is read when a schedule is
 * written, not before: every plan function holds them, and only the routes that manage schedules
 * get the target's variables; the scheduled-run function (which removes the schedule of a plan
 * that is gone) gets the group only, since its own ARN in its environment would be a cycle.
 */
export const planSchedules = (): PlanSchedules => {
  const sdk = () => (client ??= createSchedulerClient());
  return {
    put: (plan) => schedulerPlanSchedules(sdk(), scheduleTargetFromEnv()).put(plan),
    remove: (planId) => removeSchedule(sdk(), requiredEnv('PLAN_SCHEDULE_GROUP'), planId),
  };
};
