/**
 * Template assertions for the signals platform engineers rely on: alarms (API 5xx rate and
 * p99 latency, function errors and throttles, DynamoDB errors and throttles), the dashboard,
 * alarm actions, X-Ray tracing on the stage and the functions, and log retention everywhere.
 */
import { App, Aspects, Stack } from 'aws-cdk-lib';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { AwsSolutionsChecks } from 'cdk-nag';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/shared/routes.js';
import { tableSpecs } from '../../infra/tables.js';
import { Observability } from '../../infra/constructs/observability.js';
import { ServiceFunction } from '../../infra/constructs/service-function.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { NetconfigStack } from '../../infra/stack.js';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/** A small stack around the construct alone: two functions, two tables, one API. */
const small = (context: Record<string, unknown> = {}, nag = false) => {
  const app = new App({ context: { ...NO_BUNDLING, ...context } });
  const stack = new Stack(app, 'Obs');
  if (nag) Aspects.of(app).add(new AwsSolutionsChecks());
  const api = new RestApi(stack, 'Api', { deployOptions: { stageName: 'v1', tracingEnabled: true } });
  api.root.addResource('status').addMethod('GET', new MockIntegration());
  const functions = {
    getStatus: new ServiceFunction(stack, 'GetStatus', { handler: 'health/status', description: 'status' }),
    getServerHealth: new ServiceFunction(stack, 'GetServerHealth', { handler: 'health/server', description: 'server' }),
  };
  const tables = {
    trees: new TableV2(stack, 'Trees', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
    adapters: new TableV2(stack, 'Adapters', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
  };
  const obs = new Observability(stack, 'Observability', { api, functions, tables, serviceName: 'netconfig' });
  return { stack, obs, template: Template.fromStack(stack) };
};

const alarms = (template: Template) =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm') as Record<string, Resource>).map((r) => r.Properties);
const byName = (template: Template, suffix: string) => {
  const found = alarms(template).find((a) => JSON.stringify(a['AlarmName']).includes(suffix));
  expect(found, suffix).toBeDefined();
  return found!;
};

describe('Observability construct', () => {
  it('alarms on the API stage’s 5xx rate, ignoring minutes with few requests', () => {
    const { template } = small();
    const alarm = byName(template, '-api-5xx-rate');
    expect(alarm).toMatchObject({ Threshold: 5, EvaluationPeriods: 5, DatapointsToAlarm: 3, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    const metrics = alarm['Metrics'] as any[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 10, 100 * errors / requests, 0)');
    const names = metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat.Metric.MetricName).sort();
    expect(names).toEqual(['5XXError', 'Count']);
    for (const m of metrics.filter((x) => x.MetricStat)) {
      expect(m.MetricStat.Metric.Dimensions.map((d: { Name: string }) => d.Name).sort()).toEqual(['ApiName', 'Stage']);
    }
  });

  it('alarms on the API’s p99 latency', () => {
    const { template } = small();
    expect(byName(template, '-api-latency-p99')).toMatchObject({
      MetricName: 'Latency',
      Namespace: 'AWS/ApiGateway',
      ExtendedStatistic: 'p99',
      Threshold: 5000,
      Period: 300,
    });
  });

  it('alarms on every function’s errors and throttles', () => {
    const { template } = small();
    for (const op of ['getStatus', 'getServerHealth']) {
      expect(byName(template, `-fn-${op}-errors`)).toMatchObject({ MetricName: 'Errors', Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 1 });
      expect(byName(template, `-fn-${op}-throttles`)).toMatchObject({ MetricName: 'Throttles', Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 1 });
    }
  });

  it('alarms on DynamoDB system errors and throttled requests per table (summed over at most 10 operations) and user errors', () => {
    const { template } = small();
    for (const key of ['trees', 'adapters']) {
      for (const [suffix, metricName] of [
        ['system-errors', 'SystemErrors'],
        ['throttled-requests', 'ThrottledRequests'],
      ] as const) {
        const alarm = byName(template, `-ddb-${key}-${suffix}`);
        const metrics = alarm['Metrics'] as any[];
        const stats = metrics.filter((m) => m.MetricStat);
        expect(stats.length).toBeGreaterThan(0);
        expect(metrics.length).toBeLessThanOrEqual(11);
        expect(new Set(stats.map((m) => m.MetricStat.Metric.MetricName))).toEqual(new Set([metricName]));
        expect(metrics.find((m) => m.Expression)?.Expression).toMatch(/^SUM\(\[/);
      }
    }
    expect(byName(template, '-ddb-user-errors')).toMatchObject({ MetricName: 'UserErrors', Namespace: 'AWS/DynamoDB', Threshold: 5 });
  });

  it('takes thresholds from context, and refuses one that is not a positive number', () => {
    const { template } = small({ alarmApiLatencyP99Ms: '8000', alarmApi5xxRatePercent: 2 });
    expect(byName(template, '-api-latency-p99')['Threshold']).toBe(8000);
    expect(byName(template, '-api-5xx-rate')['Threshold']).toBe(2);
    expect(() => small({ alarmApiLatencyP99Ms: 'fast' })).toThrow(/alarmApiLatencyP99Ms must be a positive number/);
  });

  it('builds a dashboard with the service’s own metrics', () => {
    const { template } = small();
    const dashboards = template.findResources('AWS::CloudWatch::Dashboard');
    expect(Object.keys(dashboards)).toHaveLength(1);
    const body = JSON.stringify(Object.values(dashboards)[0]!.Properties['DashboardBody']);
    for (const metric of ['RelayCalls', 'RelayLatency', 'AuthorizerDenials', 'ValidationFailures', '5XXError', 'Latency', 'Throttles', 'SystemErrors']) {
      expect(body).toContain(metric);
    }
    expect(body).toContain('Netconfig');
  });

  it('has no alarm actions unless a topic is configured', () => {
    const { template } = small();
    for (const alarm of alarms(template)) expect(alarm['AlarmActions']).toBeUndefined();
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('creates an SSL-only topic for alarmEmail and notifies it on alarm and recovery', () => {
    const { template } = small({ alarmEmail: 'noc@example.net' });
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'noc@example.net' });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    for (const alarm of alarms(template)) {
      expect(alarm['AlarmActions']).toHaveLength(1);
      expect(alarm['OKActions']).toHaveLength(1);
    }
  });

  it('passes the cdk-nag AwsSolutions checks, alarm topic included', () => {
    const { stack } = small({ alarmEmail: 'noc@example.net' }, true);
    const errors = Annotations.fromStack(stack)
      .findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))
      .filter((e) => e.id.startsWith('/Obs/Observability'));
    expect(errors.map((e) => e.entry.data)).toEqual([]);
  });

  it('uses an existing topic from alarmTopicArn', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops';
    const { template } = small({ alarmTopicArn: arn });
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const alarm of alarms(template)) expect(alarm['AlarmActions']).toEqual([arn]);
  });

  it('gives the API Gateway execution log group a retention, created before the stage', () => {
    const { template } = small();
    const groups = template.findResources('AWS::Logs::LogGroup') as Record<string, Resource>;
    const [id, group] = Object.entries(groups).find(([, g]) => JSON.stringify(g.Properties['LogGroupName'] ?? '').includes('API-Gateway-Execution-Logs_'))!;
    expect(group.Properties['RetentionInDays']).toBe(30);
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage') as Record<string, Resource>)[0]!;
    expect(stage.DependsOn).toContain(id);
  });
});

describe('NetconfigStack signals', () => {
  it('has every route handler file to synthesize the stack from (a renamed handler fails here, it is never skipped)', () => {
    const missing = liveRoutes.map((r) => `functions/${r.handler}.ts`).filter((file) => !existsSync(path.join(PROJECT_ROOT, file)));
    expect(missing).toEqual([]);
  });

  const synth = () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new NetconfigStack(app, 'Netconfig');
    addNagSuppressions(stack);
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    return { stack, template: Template.fromStack(stack) };
  };

  it('traces the API stage and every function with X-Ray', () => {
    const { template } = synth();
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    const fns = Object.values(template.findResources('AWS::Lambda::Function') as Record<string, Resource>);
    expect(fns.length).toBeGreaterThanOrEqual(liveRoutes.length + 1);
    for (const fn of fns) expect(fn.Properties['TracingConfig']).toEqual({ Mode: 'Active' });
  });

  it('sends every function’s logs to a log group with a retention, as JSON lines at the configured level', () => {
    const { template } = synth();
    const resources = template.toJSON().Resources as Record<string, Resource>;
    const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of fns) {
      const ref = fn.Properties['LoggingConfig']?.LogGroup?.Ref as string;
      expect(ref, fn.Properties['Description']).toBeDefined();
      expect(resources[ref]!.Type).toBe('AWS::Logs::LogGroup');
      expect(resources[ref]!.Properties['RetentionInDays']).toEqual(expect.any(Number));
      expect(fn.Properties['Environment'].Variables['LOG_LEVEL']).toBe('info');
    }
    for (const group of Object.values(resources).filter((r) => r.Type === 'AWS::Logs::LogGroup')) {
      expect(group.Properties['RetentionInDays']).toEqual(expect.any(Number));
    }
  });

  it('alarms on each function (the authorizer too) and each table, and its alarms pass cdk-nag', () => {
    const { stack, template } = synth();
    const count = Object.keys(template.findResources('AWS::CloudWatch::Alarm')).length;
    // API 5xx rate + p99, errors and throttles per function (routes, authorizer, compliance
    // batch), two per table, DynamoDB user errors, failed compliance batches.
    expect(count).toBe(2 + 2 * (liveRoutes.length + 2) + 2 * Object.keys(tableSpecs).length + 1 + 1);
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).toContain('compliance-batch-failed');
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).toContain('fn-authorizer-errors');
    const errors = Annotations.fromStack(stack)
      .findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))
      .filter((e) => e.id.startsWith('/Netconfig/Observability'));
    expect(errors.map((e) => e.entry.data)).toEqual([]);
  });
});
