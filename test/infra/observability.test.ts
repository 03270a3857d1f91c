/**
 * Template assertions for the signals platform engineers rely on: alarms (API 5xx rate, p99
 * latency of the requests that do not wait on an orchestrator, relay p99, function errors and
 * throttles in groups, the authorizer's own failures and crashes, DynamoDB errors and throttles per
 * table), the dashboard, alarm actions, names per deployment, X-Ray tracing on the stage and
 * the functions, and log retention everywhere.
 */
import { App, Aspects, Stack, type CfnElement } from 'aws-cdk-lib';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { tableSpecs } from '../../functions/platform/tables.js';
import { Observability, RUNTIME_FAILURE_TERMS, type ObservabilityProps } from '../../infra/constructs/observability.js';
import { ServiceFunction } from '../../infra/constructs/service-function.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { NetconfigStack } from '../../infra/stack.js';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
type AlarmMetric = { Id: string; Expression?: string; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] }; Stat: string } };
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/** API, functions (the authorizer among them) and tables of one deployment, under `scope`. */
const deployment = (scope: Construct, serviceName: string, props: Partial<ObservabilityProps> = {}) => {
  const api = new RestApi(scope, 'Api', { restApiName: serviceName, deployOptions: { stageName: 'v1', tracingEnabled: true, metricsEnabled: true } });
  api.root.addResource('status').addMethod('GET', new MockIntegration());
  const functions = {
    getStatus: new ServiceFunction(scope, 'GetStatus', { handler: 'health/handlers/status', description: 'status' }),
    getServerHealth: new ServiceFunction(scope, 'GetServerHealth', { handler: 'health/handlers/server', description: 'server' }),
    authorizer: new ServiceFunction(scope, 'Authorizer', { handler: 'authorizer/handlers/authorize', description: 'authorizer' }),
  };
  const tables = {
    trees: new TableV2(scope, 'Trees', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
    adapters: new TableV2(scope, 'Adapters', { partitionKey: { name: 'pk', type: AttributeType.STRING } }),
  };
  return new Observability(scope, 'Observability', { api, functions, tables, serviceName, ...props });
};

/** A small stack around the construct alone. */
const small = (props: Partial<ObservabilityProps> = {}, options: { nag?: boolean; context?: Record<string, unknown> } = {}) => {
  const app = new App({ context: { ...NO_BUNDLING, ...options.context } });
  const stack = new Stack(app, 'Obs');
  if (options.nag) Aspects.of(app).add(new AwsSolutionsChecks());
  const obs = deployment(stack, 'netconfig-test', props);
  return { stack, obs, template: Template.fromStack(stack) };
};

const alarmResources = (template: Template) => Object.entries(template.findResources('AWS::CloudWatch::Alarm') as Record<string, Resource>);
const alarms = (template: Template) => alarmResources(template).map(([, r]) => r.Properties);
const byName = (template: Template, suffix: string) => {
  const found = alarms(template).filter((a) => typeof a['AlarmName'] === 'string' && (a['AlarmName'] as string).endsWith(suffix));
  expect(found.map((a) => a['AlarmName']), suffix).toHaveLength(1);
  return found[0]!;
};
const dimensionsOf = (m: AlarmMetric) => Object.fromEntries(m.MetricStat!.Metric.Dimensions.map((d) => [d.Name, d.Value]));

/**
 * CloudWatch metric math, as far as the alarms use it: numbers, ids, + - * /, comparisons,
 * IF and FILL. A missing value (no data in the period) makes every arithmetic result missing;
 * FILL replaces it.
 */
const evaluate = (expression: string, values: Readonly<Record<string, number | undefined>>): number | undefined => {
  const tokens = expression.match(/\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|>=|<=|[-+*/(),<>]/g)!;
  expect(tokens.join(''), 'expression has characters the evaluator does not know').toBe(expression.replace(/\s+/g, ''));
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (expected !== undefined && token !== expected) throw new Error(`expected ${expected}, got ${token}`);
    return token!;
  };
  type V = number | undefined;
  const arith = (a: V, b: V, f: (x: number, y: number) => number): V => (a === undefined || b === undefined ? undefined : f(a, b));
  const primary = (): V => {
    const token = take();
    if (token === '(') {
      const v = comparison();
      take(')');
      return v;
    }
    if (/^\d/.test(token)) return Number(token);
    if (peek() === '(') {
      take('(');
      const args = [comparison()];
      while (peek() === ',') {
        take(',');
        args.push(comparison());
      }
      take(')');
      if (token === 'IF') return args[0] === undefined ? undefined : args[0] !== 0 ? args[1] : args[2];
      if (token === 'FILL') return args[0] ?? args[1];
      throw new Error(`unknown function ${token}`);
    }
    if (!(token in values)) throw new Error(`no value for ${token}`);
    return values[token];
  };
  const product = (): V => {
    let v = primary();
    while (peek() === '*' || peek() === '/') v = take() === '*' ? arith(v, primary(), (x, y) => x * y) : arith(v, primary(), (x, y) => x / y);
    return v;
  };
  const sum = (): V => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = take() === '+' ? arith(v, product(), (x, y) => x + y) : arith(v, product(), (x, y) => x - y);
    return v;
  };
  const comparison = (): V => {
    const v = sum();
    const op = peek();
    if (op !== '>' && op !== '>=' && op !== '<' && op !== '<=') return v;
    take();
    const w = sum();
    return arith(v, w, (x, y) => Number(op === '>' ? x > y : op === '>=' ? x >= y : op === '<' ? x < y : x <= y));
  };
  const result = comparison();
  expect(at, 'expression not fully read').toBe(tokens.length);
  return result;
};

/** Latency samples of one five-minute period: per API resource, how many requests, how many over the threshold. */
type Traffic = Readonly<Record<string, { count: number; slow: number }>>;

/** What the API latency alarm computes for `traffic` (the stage total is the sum of all resources). */
const latencyAlarmValue = (alarm: Record<string, any>, traffic: Traffic): number | undefined => {
  const metrics = alarm['Metrics'] as AlarmMetric[];
  const total = Object.values(traffic).reduce((a, t) => ({ count: a.count + t.count, slow: a.slow + t.slow }), { count: 0, slow: 0 });
  const values: Record<string, number | undefined> = {};
  for (const m of metrics.filter((x) => x.MetricStat)) {
    const resource = dimensionsOf(m)['Resource'] as string | undefined;
    const t = resource === undefined ? total : traffic[resource];
    const data = t && t.count > 0 ? t : undefined; // no request: no data point
    values[m.Id] = data === undefined ? undefined : m.MetricStat!.Stat === 'SampleCount' ? data.count : (100 * (data.count - data.slow)) / data.count;
  }
  const top = metrics.find((m) => m.Expression && !metrics.some((o) => o.Expression?.includes(m.Id)))!;
  return evaluate(top.Expression!, values);
};

const RELAY = '/orch_manager/restAction/{adapterId}';
const orchestratorPaths = liveRoutes.filter((r) => r.needs.orchestrator).map((r) => r.path);

describe('Observability construct', () => {
  it('alarms on the API stage’s 5xx rate, ignoring minutes with few requests', () => {
    const { template } = small();
    const alarm = byName(template, '-api-5xx-rate');
    expect(alarm).toMatchObject({ Threshold: 5, EvaluationPeriods: 5, DatapointsToAlarm: 3, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    const metrics = alarm['Metrics'] as AlarmMetric[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 10, 100 * errors / requests, 0)');
    const names = metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat!.Metric.MetricName).sort();
    expect(names).toEqual(['5XXError', 'Count']);
    for (const m of metrics.filter((x) => x.MetricStat)) expect(Object.keys(dimensionsOf(m)).sort()).toEqual(['ApiName', 'Stage']);
  });

  it('alarms on the p99 latency of the requests that do not wait on an orchestrator, within CloudWatch’s 10 metrics', () => {
    const { template } = small();
    const alarm = byName(template, '-api-latency-p99');
    expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    const metrics = (alarm['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat);
    expect(metrics.length).toBeLessThanOrEqual(10);
    for (const m of metrics) {
      expect(m.MetricStat!.Metric).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: 'Latency' });
      expect(['SampleCount', 'PR(:5000)']).toContain(m.MetricStat!.Stat);
    }
    // The stage, and each orchestrator route of the route table by method and resource.
    const resources = metrics.map((m) => dimensionsOf(m)).filter((d) => 'Resource' in d);
    expect(new Set(resources.map((d) => `${d['Method']} ${d['Resource']}`))).toEqual(
      new Set(liveRoutes.filter((r) => r.needs.orchestrator).map((r) => `${r.method} ${r.path}`)),
    );
    expect(orchestratorPaths).toContain(RELAY);
    expect(orchestratorPaths).toContain('/health/adapters/{name}');
  });

  it('does not fire because the relay is slow, and fires when the other requests are', () => {
    const { template } = small();
    const alarm = byName(template, '-api-latency-p99');
    const fast = { '/configuration_manager/configs/{treeId}': { count: 900, slow: 0 }, '/adapters': { count: 100, slow: 0 } };
    // Every relayed call and every adapter probe slow: the API alarm stays quiet.
    const slowOrchestrators = { ...fast, [RELAY]: { count: 300, slow: 300 }, '/health/adapters/{name}': { count: 50, slow: 50 } };
    expect(latencyAlarmValue(alarm, slowOrchestrators)).toBeCloseTo(0, 6);
    // 3 % of the other requests slow: 3 > 1, whatever the relay does.
    const slowTrees = { ...fast, '/configuration_manager/configs/{treeId}': { count: 900, slow: 30 } };
    expect(latencyAlarmValue(alarm, slowTrees)).toBeCloseTo(3, 6);
    expect(latencyAlarmValue(alarm, { ...slowTrees, [RELAY]: { count: 300, slow: 0 } })).toBeCloseTo(3, 6);
    // 0.5 % slow stays under the p99 line.
    expect(latencyAlarmValue(alarm, { ...fast, '/adapters': { count: 100, slow: 5 } })).toBeCloseTo(0.5, 6);
    // Only orchestrator requests, or none at all: nothing to judge.
    expect(latencyAlarmValue(alarm, { [RELAY]: { count: 10, slow: 10 } })).toBe(0);
    expect(latencyAlarmValue(alarm, {})).toBeUndefined();
  });

  it('gives the relay its own p99 latency alarm at the relay’s default orchestrator timeout', () => {
    const { template } = small();
    const alarm = byName(template, '-relay-latency-p99');
    expect(alarm).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: 'Latency', ExtendedStatistic: 'p99', Threshold: 10_000, Period: 300 });
    const dims = Object.fromEntries((alarm['Dimensions'] as { Name: string; Value: unknown }[]).map((d) => [d.Name, d.Value]));
    expect(dims).toMatchObject({ ApiName: 'netconfig-test', Method: 'POST', Resource: RELAY });
    expect(Object.keys(dims).sort()).toEqual(['ApiName', 'Method', 'Resource', 'Stage']);
  });

  it('refuses more orchestrator methods than one alarm can read', () => {
    const methods = Array.from({ length: 5 }, (_, i) => ({ method: 'GET', path: `/slow/${i}` }));
    expect(() => small({ orchestratorMethods: methods })).toThrow(/would read 12 metrics.*CloudWatch allows 10/);
    expect(() => small({ orchestratorMethods: methods.slice(0, 4) })).not.toThrow();
  });

  it('alarms on the functions’ errors and throttles in groups summed by metric math, the authorizer’s throttles apart and its errors never', () => {
    const { template } = small();
    const lambdaMetrics = (a: Record<string, any>) => (a['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat);
    for (const [suffix, metricName] of [['-fn-errors-1', 'Errors'], ['-fn-throttles-1', 'Throttles']] as const) {
      const group = byName(template, suffix);
      expect(group).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1 });
      const metrics = lambdaMetrics(group);
      expect(metrics.map((m) => [m.MetricStat!.Metric.Namespace, m.MetricStat!.Metric.MetricName, m.MetricStat!.Stat])).toEqual([
        ['AWS/Lambda', metricName, 'Sum'],
        ['AWS/Lambda', metricName, 'Sum'],
      ]);
      const top = (group['Metrics'] as AlarmMetric[]).find((m) => m.Expression)!;
      expect(top.Expression).toBe(`SUM([${metrics.map((m) => m.Id).join(',')}])`);
      // The description names the group's functions, in the group's order (by key here: no route tags).
      expect(group['AlarmDescription']).toContain(': getServerHealth, getStatus.');
    }
    expect(byName(template, '-fn-authorizer-throttles')).toMatchObject({ MetricName: 'Throttles', Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 1 });
    expect(alarms(template).filter((a) => /-fn-(errors|throttles)-2$/.test(a['AlarmName']))).toEqual([]);
    expect(alarms(template).filter((a) => a['AlarmName'].includes('authorizer-errors'))).toEqual([]);
    // No alarm reads the authorizer's Errors at all (every refused token is one), and no group reads the authorizer.
    const authorizerFn = Object.entries(template.findResources('AWS::Lambda::Function')).find(([, r]) => r['Properties']['Description'] === 'authorizer')![0];
    for (const a of alarms(template)) {
      const read = a['MetricName'] ? [{ name: a['MetricName'], dims: a['Dimensions'] }] : ((a['Metrics'] as AlarmMetric[]) ?? []).filter((m) => m.MetricStat).map((m) => ({ name: m.MetricStat!.Metric.MetricName, dims: m.MetricStat!.Metric.Dimensions }));
      for (const r of read) if (r.name === 'Errors') expect(JSON.stringify(r.dims)).not.toContain(authorizerFn);
      if (/-fn-(errors|throttles)-\d+$/.test(a['AlarmName'])) expect(JSON.stringify(a['Metrics'])).not.toContain(authorizerFn);
    }
  });

  it('cuts the function alarms into groups of at most 10, ordered by application then key, every function in exactly one group', () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Many');
    const api = new RestApi(stack, 'Api', { restApiName: 'many', deployOptions: { stageName: 'v1', metricsEnabled: true } });
    api.root.addResource('status').addMethod('GET', new MockIntegration());
    const keys = Array.from({ length: 23 }, (_, i) => `fn${String(i).padStart(2, '0')}`);
    // Two applications: the odd keys are "a", the even ones "b".
    const groupOf = (key: string) => (Number(key.slice(2)) % 2 ? 'a' : 'b');
    const functions = Object.fromEntries(keys.map((k) => [k, new ServiceFunction(stack, k, { handler: 'health/handlers/status', description: k })]));
    new Observability(stack, 'Observability', { api, functions, tables: {}, serviceName: 'many', groupOf });
    const template = Template.fromStack(stack);
    const fnIds = Object.fromEntries(
      Object.entries(template.findResources('AWS::Lambda::Function')).map(([id, r]) => [r['Properties']['Description'] as string, id]),
    );
    const expected = [...keys.filter((k) => groupOf(k) === 'a'), ...keys.filter((k) => groupOf(k) === 'b')];
    for (const what of ['errors', 'throttles']) {
      const seen: string[] = [];
      for (const n of [1, 2, 3]) {
        const a = byName(template, `many-fn-${what}-${n}`);
        const read = (a['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat);
        expect(read.length).toBeLessThanOrEqual(10);
        const members = read.map((m) => keys.find((k) => JSON.stringify(m.MetricStat!.Metric.Dimensions).includes(`"${fnIds[k]}"`))!);
        expect(a['AlarmDescription']).toContain(members.join(', '));
        seen.push(...members);
      }
      expect(seen).toEqual(expected);
      expect(alarms(template).filter((a) => a['AlarmName'] === `many-fn-${what}-4`)).toEqual([]);
    }
    // The dashboard graphs each function of each group on its own line.
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]!['Properties']['DashboardBody']);
    for (const n of [1, 2, 3]) expect(body).toContain(`Function group ${n}: errors (left), throttles (right)`);
    for (const k of keys) expect(body).toContain(`${k} errors`);
  });

  it('alarms on the authorizer’s own failures (not its refused tokens), by the deployment’s Service dimension', () => {
    const { template } = small();
    expect(byName(template, '-fn-authorizer-failures')).toMatchObject({
      Namespace: 'Netconfig',
      MetricName: 'AuthorizerFailures',
      Dimensions: [{ Name: 'Service', Value: 'netconfig-test' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on the authorizer’s timeouts and crashes from the runtime’s lines in its log group, not on a refused token’s', () => {
    const { template } = small();
    const filters = Object.values(template.findResources('AWS::Logs::MetricFilter') as Record<string, Resource>);
    expect(filters).toHaveLength(1);
    const filter = filters[0]!.Properties;
    const authorizerLogs = Object.entries(template.findResources('AWS::Logs::LogGroup')).find(([id]) => id.startsWith('AuthorizerLogs'))![0];
    expect(filter['LogGroupName']).toEqual({ Ref: authorizerLogs });
    expect(filter['MetricTransformations']).toEqual([{ MetricNamespace: 'Netconfig/netconfig-test', MetricName: 'AuthorizerCrashes', MetricValue: '1' }]);
    expect(byName(template, '-fn-authorizer-crashes')).toMatchObject({ Namespace: 'Netconfig/netconfig-test', MetricName: 'AuthorizerCrashes', Statistic: 'Sum', Threshold: 1 });

    // CloudWatch Logs semantics of `?"a" ?"b"`: the event contains any of the quoted terms (case-sensitive).
    const pattern = filter['FilterPattern'] as string;
    const terms = [...pattern.matchAll(/\?"([^"]+)"/g)].map((m) => m[1]!);
    expect(terms).toEqual(RUNTIME_FAILURE_TERMS);
    expect(pattern).toBe(terms.map((t) => `?"${t}"`).join(' '));
    const matches = (line: string) => terms.some((t) => line.includes(t));
    const id = '4c1f2a7e-0d7b-4f55-9d1a-5b4c2f1e9a01';
    // Lambda's text log lines of a refused token, of the authorizer's own logs and metrics, and of a normal end.
    for (const line of [
      `2026-11-25T08:00:00.000Z\t${id}\tERROR\tInvoke Error \t{"errorType":"Error","errorMessage":"Unauthorized","stack":["Error: Unauthorized","    at authorize (file:///var/task/index.mjs:1:2)"]}`,
      '{"level":"info","timestamp":"2026-11-25T08:00:00.000Z","service":"netconfig","message":"bearer token rejected","reason":"expired"}',
      '{"level":"error","timestamp":"2026-11-25T08:00:00.000Z","service":"netconfig","message":"bearer token not verifiable: the issuer keys could not be fetched"}',
      '{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"Netconfig","Dimensions":[["Service","Reason"],["Service"]],"Metrics":[{"Name":"AuthorizerDenials","Unit":"Count"}]}]},"Service":"netconfig","Reason":"expired","AuthorizerDenials":1}',
      `END RequestId: ${id}`,
      `REPORT RequestId: ${id}\tDuration: 12.31 ms\tBilled Duration: 13 ms\tMemory Size: 256 MB\tMax Memory Used: 80 MB`,
    ]) {
      expect(matches(line), line).toBe(false);
    }
    // A timeout, the runtime killed (out of memory), an exception at module load, a bundle that does not load.
    for (const line of [
      `2026-11-25T08:00:05.012Z ${id} Task timed out after 5.01 seconds`,
      `RequestId: ${id} Error: Runtime exited with error: signal: killed\nRuntime.ExitError`,
      `2026-11-25T08:00:00.000Z\tundefined\tERROR\tUncaught Exception \t{"errorType":"Error","errorMessage":"configuration error: JWKS_URL is not a URL","stack":[]}`,
      'INIT_REPORT Init Duration: 250.00 ms\tPhase: init\tStatus: error\tError Type: Runtime.ImportModuleError',
    ]) {
      expect(matches(line), line).toBe(true);
    }
  });

  it('alarms on DynamoDB system errors and throttled requests of its own tables only (summed over at most 10 operations)', () => {
    const { template } = small();
    for (const key of ['trees', 'adapters']) {
      for (const [suffix, metricName] of [
        ['system-errors', 'SystemErrors'],
        ['throttled-requests', 'ThrottledRequests'],
      ] as const) {
        const alarm = byName(template, `-ddb-${key}-${suffix}`);
        const metrics = alarm['Metrics'] as AlarmMetric[];
        const stats = metrics.filter((m) => m.MetricStat);
        expect(stats.length).toBeGreaterThan(0);
        expect(stats.length).toBeLessThanOrEqual(10);
        expect(new Set(stats.map((m) => m.MetricStat!.Metric.MetricName))).toEqual(new Set([metricName]));
        expect(metrics.find((m) => m.Expression)?.Expression).toMatch(/^SUM\(\[/);
      }
    }
    // Every DynamoDB metric any alarm reads names one of this stack's tables.
    const dynamo = alarms(template).flatMap((a) => [
      ...(a['Namespace'] === 'AWS/DynamoDB' ? [a['Dimensions'] as { Name: string; Value: unknown }[]] : []),
      ...((a['Metrics'] as AlarmMetric[] | undefined) ?? []).filter((m) => m.MetricStat?.Metric.Namespace === 'AWS/DynamoDB').map((m) => m.MetricStat!.Metric.Dimensions),
    ]);
    expect(dynamo.length).toBe(2 * 2 * 10);
    const tableRefs = Object.keys(template.findResources('AWS::DynamoDB::GlobalTable')).map((id) => JSON.stringify({ Ref: id }));
    for (const dims of dynamo) expect(tableRefs).toContain(JSON.stringify(dims.find((d) => d.Name === 'TableName')?.Value));
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain('UserErrors');
  });

  it('takes thresholds as props, and refuses one that is not a positive number', () => {
    const { template } = small({ thresholds: { apiLatencyP99Ms: 8000, api5xxRatePercent: 2, relayLatencyP99Ms: 25_000, authorizerFailures: 3 } });
    expect(byName(template, '-api-latency-p99')['Metrics']).toEqual(
      expect.arrayContaining([expect.objectContaining({ MetricStat: expect.objectContaining({ Stat: 'PR(:8000)' }) })]),
    );
    expect(byName(template, '-api-5xx-rate')['Threshold']).toBe(2);
    expect(byName(template, '-relay-latency-p99')['Threshold']).toBe(25_000);
    expect(byName(template, '-fn-authorizer-failures')['Threshold']).toBe(3);
    expect(() => small({ thresholds: { apiLatencyP99Ms: -1 } })).toThrow(/thresholds.apiLatencyP99Ms must be a positive number, got -1/);
    expect(() => small({ thresholds: { relayLatencyP99Ms: Number.NaN } })).toThrow(/thresholds.relayLatencyP99Ms must be a positive number/);
    // DynamoDB's account-wide user errors are no longer alarmed on: a threshold for them is refused, not ignored.
    expect(() => small({ thresholds: { dynamoUserErrors: 5 } as never })).toThrow(/unknown threshold dynamoUserErrors \(known: api5xxRatePercent, .*authorizerFailures\)/);
  });

  it('reads no CDK context: alarm settings come as props only', () => {
    const { template } = small({}, { context: { alarmEmail: 'noc@example.net', alarmApiLatencyP99Ms: '8000' } });
    template.resourceCountIs('AWS::SNS::Topic', 0);
    expect(JSON.stringify(byName(template, '-api-latency-p99'))).toContain('PR(:5000)');
  });

  it('builds a dashboard with the service’s own metrics', () => {
    const { template } = small();
    const dashboards = template.findResources('AWS::CloudWatch::Dashboard');
    expect(Object.keys(dashboards)).toHaveLength(1);
    const dashboard = Object.values(dashboards)[0]!.Properties;
    expect(dashboard['DashboardName']).toBe('netconfig-test-operations');
    const body = JSON.stringify(dashboard['DashboardBody']);
    for (const metric of ['RelayCalls', 'RelayLatency', 'AuthorizerDenials', 'AuthorizerFailures', 'AuthorizerCrashes', 'ValidationFailures', '5XXError', 'Latency', 'Throttles', 'SystemErrors']) {
      expect(body).toContain(metric);
    }
    expect(body).toContain('Netconfig');
    expect(body).not.toContain('UserErrors');
  });

  it('names every alarm, the dashboard and the metrics it reads after the service: two deployments in one app share none', () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Shared');
    for (const serviceName of ['netconfig-staging', 'netconfig-prod']) deployment(new Construct(stack, serviceName.replace('-', '')), serviceName);
    const template = Template.fromStack(stack);
    const of = (prefix: string) => {
      const own = alarmResources(template).filter(([id]) => id.startsWith(prefix)).map(([, r]) => r.Properties);
      const streams = own.flatMap((a) =>
        a['MetricName']
          ? [JSON.stringify([a['Namespace'], a['MetricName'], a['Dimensions']])]
          : (a['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat).map((m) => JSON.stringify([m.MetricStat!.Metric.Namespace, m.MetricStat!.Metric.MetricName, m.MetricStat!.Metric.Dimensions])),
      );
      const dimensionValues = own.flatMap((a) =>
        [...((a['Dimensions'] as { Name: string; Value: unknown }[] | undefined) ?? []), ...((a['Metrics'] as AlarmMetric[] | undefined) ?? []).flatMap((m) => m.MetricStat?.Metric.Dimensions ?? [])].map(
          (d) => `${d.Name}=${JSON.stringify(d.Value)}`,
        ),
      );
      const dashboards = Object.entries(template.findResources('AWS::CloudWatch::Dashboard')).filter(([id]) => id.startsWith(prefix));
      return { names: own.map((a) => a['AlarmName'] as string), streams, dimensionValues, dashboards: dashboards.map(([, d]) => d['Properties']['DashboardName'] as string) };
    };
    const staging = of('netconfigstaging');
    const prod = of('netconfigprod');
    expect(staging.names.length).toBeGreaterThan(10);
    expect(staging.names.length).toBe(prod.names.length);
    for (const n of staging.names) expect(n.startsWith('netconfig-staging-')).toBe(true);
    for (const n of prod.names) expect(n.startsWith('netconfig-prod-')).toBe(true);
    expect(staging.names.filter((n) => prod.names.includes(n))).toEqual([]);
    expect(staging.dashboards).toEqual(['netconfig-staging-operations']);
    expect(prod.dashboards).toEqual(['netconfig-prod-operations']);
    expect(staging.streams.filter((s) => prod.streams.includes(s))).toEqual([]);
    // Not one value in common of a dimension that says whose metric it is. Method, Resource,
    // Operation and Status values recur, always beside one of those.
    const identity = /^(Service|ApiName|Stage|FunctionName|TableName)=/;
    const shared = staging.dimensionValues.filter((v) => prod.dimensionValues.includes(v));
    expect(shared.filter((v) => identity.test(v))).toEqual([]);
    expect(shared.length).toBeGreaterThan(0);
    for (const v of shared) expect(v).toMatch(/^(Method|Resource|Operation|Status)=/);
    expect(staging.dimensionValues).toContain('Service="netconfig-staging"');
    expect(staging.dimensionValues).toContain('ApiName="netconfig-staging"');
    expect(prod.dimensionValues).toContain('Service="netconfig-prod"');
    const namespaces = Object.values(template.findResources('AWS::Logs::MetricFilter')).map((f) => f['Properties']['MetricTransformations'][0]['MetricNamespace']);
    expect(namespaces.sort()).toEqual(['Netconfig/netconfig-prod', 'Netconfig/netconfig-staging']);
  });

  it('refuses a service name that cannot name a dashboard', () => {
    expect(() => small({ serviceName: 'net config' })).toThrow(/serviceName must be 1 to 200 letters, digits/);
    expect(() => small({ serviceName: '' })).toThrow(/serviceName/);
  });

  it('has no alarm actions unless a topic is configured', () => {
    const { template } = small();
    for (const alarm of alarms(template)) expect(alarm['AlarmActions']).toBeUndefined();
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('creates an SSL-only topic for alarmEmail and notifies it on alarm and recovery', () => {
    const { template } = small({ alarmEmail: 'noc@example.net' });
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Topic', { DisplayName: 'netconfig-test alarms' });
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
    const { stack } = small({ alarmEmail: 'noc@example.net' }, { nag: true });
    const errors = Annotations.fromStack(stack)
      .findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))
      .filter((e) => e.id.startsWith('/Obs/Observability'));
    expect(errors.map((e) => e.entry.data)).toEqual([]);
  });

  it('uses an existing topic from alarmTopicArn, or a topic given as such', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops';
    const { template } = small({ alarmTopicArn: arn });
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const alarm of alarms(template)) expect(alarm['AlarmActions']).toEqual([arn]);
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'WithTopic');
    deployment(stack, 'netconfig-test', { alarmTopic: Topic.fromTopicArn(stack, 'Ops', arn) });
    for (const alarm of alarms(Template.fromStack(stack))) expect(alarm['AlarmActions']).toEqual([arn]);
  });

  it('refuses two alarm destinations at once', () => {
    expect(() => small({ alarmEmail: 'noc@example.net', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' })).toThrow(
      /at most one of alarmTopic, alarmTopicArn and alarmEmail, got alarmTopicArn, alarmEmail/,
    );
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

  it('alarms on each function, the authorizer by its own failures and crashes, and each table; its alarms pass cdk-nag', () => {
    const { stack, template } = synth();
    const all = alarms(template);
    // API 5xx rate, API p99, relay p99; errors and throttles per group of at most 10 functions
    // (routes, compliance batch); the authorizer's throttles, failures and crashes; two per
    // table; failed compliance batches.
    const groups = Math.ceil((liveRoutes.length + 1) / 10);
    expect(all).toHaveLength(3 + 2 * groups + 3 + 2 * Object.keys(tableSpecs).length + 1);
    const grouped = all.filter((a) => /-fn-(errors|throttles)-\d+$/.test(a['AlarmName']));
    expect(grouped).toHaveLength(2 * groups);
    // Every route function and the batch function in exactly one errors group, named in its description.
    const errorGroups = grouped.filter((a) => a['AlarmName'].includes('-fn-errors-'));
    for (const op of [...liveRoutes.map((r) => r.operationId), 'complianceBatch']) {
      const fnId = stack.getLogicalId(stack.functions[op]!.function.node.defaultChild as CfnElement);
      const containing = errorGroups.filter((a) => JSON.stringify(a['Metrics']).includes(`"${fnId}"`));
      expect(containing, op).toHaveLength(1);
      expect(containing[0]!['AlarmDescription'], op).toMatch(new RegExp(`[:,] ${op}[,.]`));
    }
    const names = all.map((a) => a['AlarmName'] as string);
    for (const suffix of ['-fn-errors-1', '-fn-throttles-1', '-compliance-batch-failed', '-fn-authorizer-failures', '-fn-authorizer-crashes', '-fn-authorizer-throttles', '-relay-latency-p99', '-api-latency-p99']) {
      expect(names.filter((n) => n.endsWith(suffix)), suffix).toHaveLength(1);
    }
    expect(names.filter((n) => n.endsWith('-fn-authorizer-errors'))).toEqual([]);
    // One prefix for them all: the Service the authorizer's failures are read by.
    const service = byName(template, '-fn-authorizer-failures')['Dimensions'][0].Value as string;
    for (const n of names) expect(n.startsWith(`${service}-`), n).toBe(true);
    // The orchestrator routes of the real route table fit one alarm.
    const latency = (byName(template, '-api-latency-p99')['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat);
    expect(latency.length).toBe(2 + 2 * orchestratorPaths.length);
    expect(latency.length).toBeLessThanOrEqual(10);
    expect(JSON.stringify(all)).not.toContain('UserErrors');
    const errors = Annotations.fromStack(stack)
      .findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))
      .filter((e) => e.id.startsWith('/Netconfig/Observability'));
    expect(errors.map((e) => e.entry.data)).toEqual([]);
  });
});
