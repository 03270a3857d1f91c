/**
 * Deploys never break a running compliance batch or remediation run: the durable functions'
 * versions are retained by every deploy, an hourly housekeeping function may read them and
 * delete them (and nothing else of Lambda), and executions that fail or time out alarm, on the
 * alarm topic.
 */
import { Aspects, type CfnElement, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { BATCH_EXECUTION_TIMEOUT_SECONDS } from '../../functions/compliance/deadline.js';
import { addNagSuppressions } from '../../infra/nag.js';
import type { NetconfigService } from '../../infra/stack.js';
import type { Resources } from './api-template.js';
import { logicalIdOf, serviceTemplate, synthService } from './service-template.js';

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };

describe('compliance batches across deploys', () => {
  let template: Template;
  let service: NetconfigService;
  let resources: Resources;
  let app: ReturnType<typeof synthService>['app'];
  const batchId = () => logicalIdOf(service.api.functions['complianceBatch']!.function);
  const remediationId = () => logicalIdOf(service.api.functions['remediationRun']!.function);
  const housekeepingId = () => logicalIdOf(service.api.functions['complianceHousekeeping']!.function);
  const statementsOfRole = (roleRef: unknown): Statement[] =>
    Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(JSON.stringify(roleRef)))
      .flatMap((p) => p.Properties['PolicyDocument']['Statement']);
  const lambdaStatements = (statements: Statement[]) => statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('lambda:')));

  beforeAll(() => {
    ({ app, service } = synthService());
    addNagSuppressions(service);
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    template = serviceTemplate(service);
    resources = template.toJSON().Resources as Resources;
  });

  it('retains every published version of the batch function, and the live alias points at the current one', () => {
    const versions = Object.entries(resources).filter(
      ([, r]) => r.Type === 'AWS::Lambda::Version' && JSON.stringify(r.Properties['FunctionName']).includes(batchId()),
    );
    expect(versions).toHaveLength(1);
    const [versionId, version] = versions[0]!;
    expect(version).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    template.hasResourceProperties('AWS::Lambda::Alias', { Name: 'live', FunctionVersion: { 'Fn::GetAtt': [versionId, 'Version'] } });
    expect(resources[batchId()]!.Properties['DurableConfig']).toMatchObject({ ExecutionTimeout: BATCH_EXECUTION_TIMEOUT_SECONDS });
  });

  it('runs the housekeeping every hour against both durable functions by name', () => {
    const fn = resources[housekeepingId()]!;
    // The runs live in the compliance table; a run it ends gets its end entry in the changelog.
    expect(fn.Properties['Environment']['Variables']).toMatchObject({
      COMPLIANCE_FUNCTION_NAME: { Ref: batchId() },
      REMEDIATION_FUNCTION_NAME: { Ref: remediationId() },
      COMPLIANCE_TABLE: { Ref: logicalIdOf(service.data.tables.compliance) },
      CHANGELOG_TABLE: { Ref: logicalIdOf(service.data.tables.changelog) },
    });
    const rules = Object.values(resources).filter((r) => r.Type === 'AWS::Events::Rule');
    const schedule = rules.find((r) => JSON.stringify(r.Properties['Targets']).includes(housekeepingId()));
    expect(schedule?.Properties).toMatchObject({ ScheduleExpression: 'rate(1 hour)', State: 'ENABLED' });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [housekeepingId(), 'Arn'] },
    });
  });

  it('lets the housekeeping list and delete only the durable functions’ versions, and no other function delete any', () => {
    const role = resources[housekeepingId()]!.Properties['Role'];
    const roleRef = { Ref: role['Fn::GetAtt'][0] };
    const allows = lambdaStatements(statementsOfRole(roleRef)).flatMap((s) =>
      [s.Action].flat().flatMap((a) => [s.Resource].flat().map((r) => JSON.stringify([a, r]))),
    );
    expect(allows.sort()).toEqual(
      [batchId(), remediationId()]
        .flatMap((id) => {
          const arn = { 'Fn::GetAtt': [id, 'Arn'] };
          const qualified = { 'Fn::Join': ['', [arn, ':*']] };
          return [
            ['lambda:ListVersionsByFunction', arn],
            ['lambda:ListAliases', arn],
            ['lambda:ListDurableExecutionsByFunction', qualified],
            ['lambda:DeleteFunction', qualified],
          ];
        })
        .map((x) => JSON.stringify(x))
        .sort(),
    );
    const deleters = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((p) => lambdaStatements(p.Properties['PolicyDocument']['Statement']).some((s) => [s.Action].flat().includes('lambda:DeleteFunction')));
    expect(deleters).toHaveLength(1);
    expect(JSON.stringify(deleters[0]!.Properties['Roles'])).toBe(JSON.stringify([roleRef]));
  });

  it('lets both batch starts, compliance and backups, start executions of the live alias; the backups start reads NSO with the relay timeout', () => {
    for (const operation of ['startComplianceBatch', 'startBackupBatch']) {
      const fn = service.api.functions[operation]!.function;
      const part = Template.fromStack(Stack.of(fn));
      const own = (part.toJSON().Resources as Resources)[Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnElement)]!;
      expect(Object.keys(own.Properties['Environment']['Variables']), operation).toContain('COMPLIANCE_FUNCTION');
      const invokes = Object.values(part.toJSON().Resources as Resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(JSON.stringify(own.Properties['Role']['Fn::GetAtt'][0])))
        .flatMap((p) => p.Properties['PolicyDocument']['Statement'] as Statement[])
        .filter((st) => [st.Action].flat().includes('lambda:InvokeFunction'));
      expect(invokes, operation).toHaveLength(1);
    }
    const backups = service.api.functions['startBackupBatch']!.function;
    const own = (Template.fromStack(Stack.of(backups)).toJSON().Resources as Resources)[
      Stack.of(backups).getLogicalId(backups.node.defaultChild as CfnElement)
    ]!;
    expect(own.Properties['Timeout']).toBe(28);
  });

  it('alarms on the topic when a durable execution fails or times out, and when a batch ends failed', () => {
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    for (const metricName of ['DurableExecutionFailed', 'DurableExecutionTimedOut']) {
      const alarm = alarms.find((a) => a.Properties['MetricName'] === metricName);
      expect(alarm?.Properties, metricName).toMatchObject({
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: batchId() } }],
      });
      expect(alarm!.Properties['AlarmActions']).toHaveLength(1);
    }
    const batchFailed = alarms.find((a) => a.Properties['MetricName'] === 'ComplianceBatches');
    expect(batchFailed?.Properties['Dimensions']).toEqual(expect.arrayContaining([{ Name: 'Status', Value: 'failed' }]));
    expect(batchFailed!.Properties['AlarmActions']).toHaveLength(1);
  });

  it('raises no cdk-nag AwsSolutions finding', () => {
    // The nested stacks' findings are reported on their parent's.
    const findings = [service.data, service.api].flatMap((top) => [
      ...Annotations.fromStack(top).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
      ...Annotations.fromStack(top).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ]);
    expect(findings.map((f) => `${f.id}: ${String(f.entry.data).split('\n')[0]}`)).toEqual([]);
  });
});
