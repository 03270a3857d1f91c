/**
 * Compliance plans' schedules on AWS: a schedule group per stack (named after it), the role the
 * schedules run as (assumed by EventBridge Scheduler only, for this account's schedules of this
 * group; it may invoke the scheduled-run function and send to the dead-letter queue, nothing
 * else), the encrypted TLS-only dead-letter queue, the scheduled-run function's grants (it starts
 * batches), and what a route that manages schedules gets: the group's schedules and PassRole of
 * that role to Scheduler, with the four variables it needs. A route without `needs.schedules`
 * gets none of it. cdk-nag (AwsSolutions, NIST 800-53 R5) has nothing open on either variant.
 */
import { App } from 'aws-cdk-lib';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import type { LiveRoute } from '../../functions/platform/route.js';
import { loadDeployConfig } from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import type { Resources } from './api-template.js';
import { checkNag, logicalIdOf, NO_BUNDLING, nagFindings, serviceTemplate } from './service-template.js';

type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown; Principal?: unknown };

/** A route that manages schedules, beside the route table's (whatever it holds). */
const MANAGER: LiveRoute = {
  ...liveRoutes.find((r) => r.operationId === 'getTree')!,
  operationId: 'scheduleProbe',
  path: '/configuration_manager/schedule_probe/{planId}',
  needs: { tables: { compliance: 'write' }, schedules: true },
};
const routes = [...liveRoutes.filter((r) => !r.needs.schedules), MANAGER];

const build = (variant: 'default' | 'private') => {
  const app = new App({ context: NO_BUNDLING });
  let service: NetconfigService;
  if (variant === 'default') service = new NetconfigService(app, 'Netconfig', { routes });
  else {
    const { stackName, ...settings } = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy/config.private.example.json'));
    service = new NetconfigService(app, stackName, { settings, routes });
  }
  checkNag(service);
  const resources = serviceTemplate(service).toJSON().Resources as Resources;
  const nag = nagFindings(service);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const policiesOfRole = (roleId: string): Statement[] =>
    ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties['Roles']).includes(`"${roleId}"`))
      .flatMap(([, p]) => p.Properties['PolicyDocument']['Statement'] as Statement[]);
  const fnOf = (operation: string) => resources[logicalIdOf(service.api.functions[operation]!.function)]!;
  const statementsOf = (operation: string): Statement[] => policiesOfRole(fnOf(operation).Properties['Role']['Fn::GetAtt'][0] as string);
  const env = (operation: string): Record<string, unknown> => fnOf(operation).Properties['Environment']['Variables'];
  return { service, resources, nag, ofType, policiesOfRole, statementsOf, env, fnOf };
};

const actionsOf = (statements: readonly Statement[]) => statements.flatMap((s) => [s.Action].flat()).sort();

describe.each(['default', 'private'] as const)('plan schedules (%s config)', (variant) => {
  const t = build(variant);
  const groups = t.ofType('AWS::Scheduler::ScheduleGroup');
  const [groupId, group] = groups[0]!;
  const [queueId, queue] = t.ofType('AWS::SQS::Queue').find(([id]) => id.includes('PlanSchedules'))!;
  const schedulerRoles = t
    .ofType('AWS::IAM::Role')
    .filter(([, r]) => JSON.stringify(r.Properties['AssumeRolePolicyDocument']).includes('scheduler.amazonaws.com'));

  it('has one schedule group, named after the stack', () => {
    expect(groups).toHaveLength(1);
    expect(group.Properties['Name']).toBe(
      variant === 'default'
        ? 'netconfig-plans'
        : `${t.service.api.stackName
            .replace(/Api$/, '')
            .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
            .toLowerCase()}-plans`,
    );
  });

  it('runs schedules with a role only Scheduler assumes, for this account and this group', () => {
    expect(schedulerRoles).toHaveLength(1);
    const [roleId, role] = schedulerRoles[0]!;
    const trust = role.Properties['AssumeRolePolicyDocument']['Statement'] as Statement[];
    expect(trust).toHaveLength(1);
    expect(trust[0]!.Principal).toEqual({ Service: 'scheduler.amazonaws.com' });
    expect(trust[0]!.Action).toBe('sts:AssumeRole');
    const condition = JSON.stringify(trust[0]!.Condition);
    const { StringEquals, ArnEquals } = trust[0]!.Condition as Record<string, Record<string, unknown>>;
    expect(StringEquals).toEqual({ 'aws:SourceAccount': variant === 'default' ? { Ref: 'AWS::AccountId' } : '123456789012' });
    expect(Object.keys(ArnEquals!)).toEqual(['aws:SourceArn']);
    expect(condition).toContain(`"${groupId}","Arn"`);
    // It may invoke the scheduled-run function (that function, unqualified) and send to the dead-letter queue.
    const statements = t.policiesOfRole(roleId);
    expect(actionsOf(statements)).toEqual(['lambda:InvokeFunction', 'sqs:SendMessage']);
    const runId = logicalIdOf(t.service.api.functions['planScheduledRun']!.function);
    expect(statements.find((s) => s.Action === 'lambda:InvokeFunction')!.Resource).toEqual({ 'Fn::GetAtt': [runId, 'Arn'] });
    expect(statements.find((s) => s.Action === 'sqs:SendMessage')!.Resource).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
  });

  it('keeps failed invocations in an encrypted, TLS-only queue for 14 days', () => {
    expect(queue.Properties['SqsManagedSseEnabled']).toBe(true);
    expect(queue.Properties['MessageRetentionPeriod']).toBe(14 * 24 * 3600);
    const policy = t.ofType('AWS::SQS::QueuePolicy').find(([, p]) => JSON.stringify(p.Properties['Queues']).includes(queueId))!;
    expect(JSON.stringify(policy[1].Properties['PolicyDocument'])).toContain('"aws:SecureTransport":"false"');
  });

  it('gives the scheduled-run function what starting a batch needs, and of the schedules only removing one', () => {
    const statements = t.statementsOf('planScheduledRun');
    const actions = actionsOf(statements);
    expect(actions).toContain('lambda:InvokeFunction');
    expect(actions).toContain('dynamodb:PutItem');
    expect(actions.filter((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')).toEqual(['scheduler:DeleteSchedule']);
    expect(JSON.stringify(statements.find((s) => s.Action === 'scheduler:DeleteSchedule')!.Resource)).toContain(`:schedule/${group.Properties['Name']}/*`);
    const env = t.env('planScheduledRun');
    for (const name of ['COMPLIANCE_TABLE', 'TREES_TABLE', 'ADAPTERS_TABLE', 'PROFILES_TABLE', 'CHANGELOG_TABLE', 'COMPLIANCE_FUNCTION'])
      expect(env).toHaveProperty(name);
    expect(env['PLAN_SCHEDULE_GROUP']).toBe(group.Properties['Name']);
    expect(env).not.toHaveProperty('PLAN_SCHEDULER_ROLE_ARN');
  });

  it('lets every batch start read NSO’s inventory: the relay’s secrets (read only) and network', () => {
    for (const operation of ['planScheduledRun', 'startComplianceBatch', 'runCompliancePlan']) {
      const env = t.env(operation);
      expect(env['SECRETS_ACCESS']).toBe('read');
      expect(env).toHaveProperty('SECRETS_BACKEND');
      if (variant === 'private') {
        expect(env).toHaveProperty('VAULT_CREDENTIALS_SECRET_ARN');
        expect(t.fnOf(operation).Properties['VpcConfig']).toBeDefined();
      }
    }
  });

  it('lets a route with needs.schedules manage the group’s schedules and pass the role to Scheduler only', () => {
    const statements = t.statementsOf('scheduleProbe');
    const scheduler = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('scheduler:')));
    expect(actionsOf(scheduler)).toEqual(['scheduler:CreateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule', 'scheduler:UpdateSchedule']);
    const resource = JSON.stringify(scheduler.map((s) => s.Resource));
    expect(resource).toContain(`:schedule/${group.Properties['Name']}/*`);
    const pass = statements.filter((s) => [s.Action].flat().includes('iam:PassRole'));
    expect(pass).toHaveLength(1);
    expect(pass[0]!.Resource).toEqual({ 'Fn::GetAtt': [schedulerRoles[0]![0], 'Arn'] });
    expect(pass[0]!.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    const env = t.env('scheduleProbe');
    expect(env['PLAN_SCHEDULE_GROUP']).toBe(group.Properties['Name']);
    expect(env['PLAN_RUN_FUNCTION_ARN']).toEqual({ 'Fn::GetAtt': [logicalIdOf(t.service.api.functions['planScheduledRun']!.function), 'Arn'] });
    expect(env['PLAN_SCHEDULER_ROLE_ARN']).toEqual({ 'Fn::GetAtt': [schedulerRoles[0]![0], 'Arn'] });
    expect(env['PLAN_SCHEDULE_DLQ_ARN']).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
  });

  it('gives routes without needs.schedules none of it', () => {
    const actions = actionsOf(t.statementsOf('getTree'));
    expect(actions.filter((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')).toEqual([]);
    expect(t.env('getTree')).not.toHaveProperty('PLAN_SCHEDULE_GROUP');
  });

  it('leaves no cdk-nag finding open', () => {
    expect(t.nag).toEqual([]);
  });
});
