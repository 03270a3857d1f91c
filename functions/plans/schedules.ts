/**
 * Plans' schedules as EventBridge Scheduler schedules: one per plan, named `plan-<planId>`, in
 * the stack's schedule group (`PLAN_SCHEDULE_GROUP`), whose target is the scheduled-run function
 * (`PLAN_RUN_FUNCTION_ARN`, invoked with `{"planId": …}` by the role `PLAN_SCHEDULER_ROLE_ARN`).
 * A disabled plan's schedule is kept `DISABLED`; a plan without `schedule` has none.
 *
 * The endpoint comes from the SDK's own configuration (`AWS_ENDPOINT_URL_SCHEDULER` locally, the
 * local scheduler), so the code never branches on local mode. The client is made on first use.
 */
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { requiredEnv } from '../platform/env.js';
import type { Plan, PlanSchedules, ScheduledRunEvent } from './model.js';

type Sdk = typeof import('@aws-sdk/client-scheduler');

/** The Scheduler's name of a plan's schedule (at most 64 characters: 5 + 24). */
export const scheduleName = (planId: string): string => `plan-${planId}`;

const notFound = (error: unknown): boolean => (error as { name?: string }).name === 'ResourceNotFoundException';

let loaded: Promise<{ client: SchedulerClient; sdk: Sdk }> | undefined;
const scheduler = (): Promise<{ client: SchedulerClient; sdk: Sdk }> =>
  (loaded ??= import('@aws-sdk/client-scheduler').then((sdk) => ({ client: new sdk.SchedulerClient({ maxAttempts: 3 }), sdk })));

/** The schedule of a plan as the Scheduler takes it (Create and Update take the same fields). */
const scheduleInput = (plan: Pick<Plan, 'planId' | 'schedule' | 'timezone' | 'enabled'>, schedule: string) => {
  const input: ScheduledRunEvent = { planId: plan.planId };
  return {
    Name: scheduleName(plan.planId),
    GroupName: requiredEnv('PLAN_SCHEDULE_GROUP'),
    ScheduleExpression: schedule,
    ScheduleExpressionTimezone: plan.timezone ?? 'UTC',
    State: plan.enabled ? ('ENABLED' as const) : ('DISABLED' as const),
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    Target: { Arn: requiredEnv('PLAN_RUN_FUNCTION_ARN'), RoleArn: requiredEnv('PLAN_SCHEDULER_ROLE_ARN'), Input: JSON.stringify(input) },
  };
};

/** The plans' schedules in EventBridge Scheduler (or the local scheduler, which speaks its protocol). */
export const planSchedules = (): PlanSchedules => ({
  async put(plan) {
    if (!plan.schedule) return this.remove(plan.planId);
    const { client, sdk } = await scheduler();
    const input = scheduleInput(plan, plan.schedule);
    try {
      await client.send(new sdk.UpdateScheduleCommand(input));
    } catch (error) {
      if (!notFound(error)) throw error;
      try {
        await client.send(new sdk.CreateScheduleCommand(input));
      } catch (raced) {
        // A write of the same plan created it meanwhile: this one's fields are the newer.
        if ((raced as { name?: string }).name !== 'ConflictException') throw raced;
        await client.send(new sdk.UpdateScheduleCommand(input));
      }
    }
  },
  async remove(planId) {
    const { client, sdk } = await scheduler();
    try {
      await client.send(new sdk.DeleteScheduleCommand({ Name: scheduleName(planId), GroupName: requiredEnv('PLAN_SCHEDULE_GROUP') }));
    } catch (error) {
      if (!notFound(error)) throw error;
    }
  },
});
