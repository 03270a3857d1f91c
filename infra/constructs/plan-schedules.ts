/**
 * Where compliance plans' schedules live on AWS: an EventBridge Scheduler schedule group of the
 * stack's own, the role its schedules run with (it may invoke the scheduled-run function and
 * nothing else), and the queue a schedule's invocation lands in when Lambda refused it after the
 * retries (functions/plans/schedules.ts, SCHEDULE_RETRY). The schedules themselves are made at run time by the plan routes
 * (functions/plans/schedules.ts), one per plan, named after it.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FunctionPermission } from './service-function.js';

/** How long a failed invocation waits in the dead-letter queue to be looked at: SQS's longest. */
const DEAD_LETTER_RETENTION = Duration.days(14);

/** The ARN pattern of a group's schedules (and of no other group's). */
const groupSchedulesArn = (scope: Construct, group: string): string =>
  Stack.of(scope).formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${group}/*` });

/**
 * Deleting the group's schedules, nothing else: what the scheduled-run function needs to remove
 * the schedule of a plan that is gone. It names the group by name, since the function is made
 * before the group (the group's role invokes it).
 */
export const removesSchedules = (scope: Construct, group: string): FunctionPermission => ({
  key: `schedules-remove:${group}`,
  grant: (grantee) => {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['scheduler:DeleteSchedule'], resources: [groupSchedulesArn(scope, group)] }));
  },
});

export interface PlanSchedulesProps {
  /** The schedule group's name: derived from the stack name, so each deployment has its own. */
  readonly groupName: string;
  /** What every schedule invokes with `{ "planId": … }`: the scheduled-run function. */
  readonly target: IFunction;
}

export class PlanSchedules extends Construct {
  readonly group: ScheduleGroup;
  /** The role schedules run as: assumed by EventBridge Scheduler for this group's schedules only. */
  readonly role: Role;
  /** Invocations that failed after their retries. */
  readonly deadLetters: Queue;
  readonly #target: IFunction;

  constructor(scope: Construct, id: string, props: PlanSchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.#target = props.target;
    // Kept with the stack's life: the schedules in it are the plans' (their source of truth is the
    // compliance table), and a deleted stack has no scheduled-run function left for them to invoke.
    this.group = new ScheduleGroup(this, 'Group', { scheduleGroupName: props.groupName, removalPolicy: RemovalPolicy.DESTROY });
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    // The confused-deputy guard AWS documents for Scheduler: only this account's schedules of this group.
    this.role = new Role(this, 'Role', {
      description: `Runs the compliance plans' schedules of group ${props.groupName}: invokes the scheduled-run function, sends failures to the dead-letter queue`,
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.group.scheduleGroupArn },
        },
      }),
    });
    this.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.target.functionArn] }));
    this.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetters.queueArn] }));
  }

  /** What the functions that manage schedules are told: the group, the target, the role and the dead-letter queue. */
  environment(): Record<string, string> {
    return {
      PLAN_SCHEDULE_GROUP: this.group.scheduleGroupName,
      PLAN_RUN_FUNCTION_ARN: this.#target.functionArn,
      PLAN_SCHEDULER_ROLE_ARN: this.role.roleArn,
      PLAN_SCHEDULE_DLQ_ARN: this.deadLetters.queueArn,
    };
  }

  /**
   * Managing the group's schedules (create, update, delete, get) and handing them the role,
   * to EventBridge Scheduler only: nothing on other groups, no other role.
   */
  permission(): FunctionPermission {
    const schedules = groupSchedulesArn(this, this.group.scheduleGroupName);
    return {
      key: `schedules:${this.node.path}`,
      grant: (grantee) => {
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
            resources: [schedules],
          }),
        );
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({
            effect: Effect.ALLOW,
            actions: ['iam:PassRole'],
            resources: [this.role.roleArn],
            conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
          }),
        );
      },
    };
  }
}
