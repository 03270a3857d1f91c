/**
 * Template assertions for the signals platform engineers rely on: alarms (API 5xx rate, p99
 * latency of the requests that do not wait on an orchestrator in groups of methods, relay p99, function errors and
 * throttles in groups, the authorizer's own failures and crashes, DynamoDB errors and throttles per
 * table), the dashboard, alarm actions, names per deployment, X-Ray tracing on the stage and
 * the functions, and log retention everywhere.
 */
import { App, Aspects, Stack } from 'aws-cdk-lib';
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
import { METHODS_PER_LATENCY_ALARM, Observability, RUNTIME_FAILURE_TERMS, type ObservabilityProps } from '../../infra/constructs/observability.js';
import { ServiceFunction } from '../../infra/constructs/service-function.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { partSlug } from '../../infra/stack.js';
import { logicalIdOf, NO_BUNDLING, serviceTemplate, synthService } from './service-template.js';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
type AlarmMetric = {
  Id: string;
  Expression?: string;
  MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] }; Stat: string };
};

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
  expect(
    found.map((a) => a['AlarmName']),
    suffix,
  ).toHaveLength(1);
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

/** Latency samples of one five-minute period: per API method (`GET /path`), how many requests, how many over the threshold. */
type Traffic = Readonly<Record<string, { count: number; slow: number }>>;

/** What an API latency alarm computes for `traffic`. */
const latencyAlarmValue = (alarm: Record<string, any>, traffic: Traffic): number | undefined => {
  const metrics = alarm['Metrics'] as AlarmMetric[];
  const values: Record<string, number | undefined> = {};
  for (const m of metrics.filter((x) => x.MetricStat)) {
    const d = dimensionsOf(m);
    const t = traffic[`${d['Method']} ${d['Resource']}`];
    const data = t && t.count > 0 ? t : undefined; // no request: no data point
    values[m.Id] = data === undefined ? undefined : m.MetricStat!.Stat === 'SampleCount' ? data.count : (100 * (data.count - data.slow)) / data.count;
  }
  const top = metrics.find((m) => m.Expression && !metrics.some((o) => o.Expression?.includes(m.Id)))!;
  return evaluate(top.Expression!, values);
};

const RELAY = '/orch_manager/restAction/{adapterId}';
const orchestratorPaths = liveRoutes.filter((r) => r.needs.orchestrator).map((r) => r.path);
const LATENCY_ALARM = /-api-latency-p99-(?:[a-z-]+-)?\d+$/;
const latencyAlarms = (template: Template) => alarms(template).filter((a) => LATENCY_ALARM.test(a['AlarmName']));
/** The methods (`GET /path`) each latency alarm reads. */
const latencyMethods = (alarm: Record<string, any>) => [
  ...new Set(
    (alarm['Metrics'] as AlarmMetric[])
      .filter((m) => m.MetricStat)
      .map((m) => dimensionsOf(m))
      .map((d) => `${d['Method']} ${d['Resource']}`),
  ),
];
/** The highest value the latency alarms compute for `traffic`: the alarm that fires first. */
const worstLatency = (template: Template, traffic: Traffic) => Math.max(...latencyAlarms(template).map((a) => latencyAlarmValue(a, traffic)!));

describe('Observability construct', () => {
  it('alarms on the API stage’s 5xx rate, ignoring minutes with few requests', () => {
    const { template } = small();
    const alarm = byName(template, '-api-5xx-rate');
    expect(alarm).toMatchObject({
      Threshold: 5,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    const metrics = alarm['Metrics'] as AlarmMetric[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 10, 100 * errors / requests, 0)');
    const names = metrics
      .filter((m) => m.MetricStat)
      .map((m) => m.MetricStat!.Metric.MetricName)
      .sort();
    expect(names).toEqual(['5XXError', 'Count']);
    for (const m of metrics.filter((x) => x.MetricStat)) expect(Object.keys(dimensionsOf(m)).sort()).toEqual(['ApiName', 'Stage']);
  });

  it('alarms on the p99 latency of the requests that do not wait on an orchestrator, in groups of methods within CloudWatch’s 10 metrics', () => {
    const { template } = small();
    const all = latencyAlarms(template);
    const counted = liveRoutes.filter((r) => !r.needs.orchestrator).map((r) => `${r.method} ${r.path}`);
    expect(all).toHaveLength(Math.ceil(counted.length / METHODS_PER_LATENCY_ALARM));
    const read: string[] = [];
    for (const alarm of all) {
      expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
      const metrics = (alarm['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat);
      expect(metrics.length).toBeLessThanOrEqual(10);
      for (const m of metrics) {
        expect(m.MetricStat!.Metric).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: 'Latency' });
        expect(['SampleCount', 'PR(:5000)']).toContain(m.MetricStat!.Stat);
        expect(Object.keys(dimensionsOf(m)).sort()).toEqual(['ApiName', 'Method', 'Resource', 'Stage']);
      }
      // The description names the methods it reads.
      for (const m of latencyMethods(alarm)) expect(alarm['AlarmDescription']).toContain(m);
      read.push(...latencyMethods(alarm));
    }
    // Every method of the route table that does not wait on an orchestrator, in exactly one group; no orchestrator method in any.
    expect(read.sort()).toEqual([...counted].sort());
    expect(orchestratorPaths).toContain(RELAY);
    expect(orchestratorPaths).toContain('/health/adapters/{name}');
  });

  it('does not fire because the relay is slow, and fires when the other requests are', () => {
    const { template } = small();
    const TREE = 'GET /configuration_manager/configs/{treeId}';
    const fast = { [TREE]: { count: 900, slow: 0 }, 'GET /adapters': { count: 100, slow: 0 } };
    // Every relayed call and every adapter probe slow: the API alarms stay quiet.
    const slowOrchestrators = { ...fast, [`POST ${RELAY}`]: { count: 300, slow: 300 }, 'GET /health/adapters/{name}': { count: 50, slow: 50 } };
    expect(worstLatency(template, slowOrchestrators)).toBeCloseTo(0, 6);
    // 3 % of the other requests slow: 3 > 1, whatever the relay does.
    const slowTrees = { ...fast, [TREE]: { count: 1000, slow: 30 } };
    expect(worstLatency(template, slowTrees)).toBeCloseTo(3, 6);
    expect(worstLatency(template, { ...slowTrees, [`POST ${RELAY}`]: { count: 300, slow: 0 } })).toBeCloseTo(3, 6);
    // A group's share: 3 % of the requests of the methods it reads (here two of one group).
    const group = latencyAlarms(template).find((a) => latencyMethods(a).includes(TREE))!;
    const other = latencyMethods(group).find((m) => m !== TREE)!;
    expect(latencyAlarmValue(group, { [TREE]: { count: 500, slow: 30 }, [other]: { count: 500, slow: 0 } })).toBeCloseTo(3, 6);
    // 0.5 % slow stays under the p99 line.
    expect(worstLatency(template, { ...fast, 'GET /adapters': { count: 1000, slow: 5 } })).toBeCloseTo(0.5, 6);
    // Only orchestrator requests, or none at all: nothing to judge.
    expect(worstLatency(template, { [`POST ${RELAY}`]: { count: 10, slow: 10 } })).toBe(0);
    expect(worstLatency(template, {})).toBe(0);
  });

  it('gives the relay its own p99 latency alarm at the relay’s default orchestrator timeout', () => {
    const { template } = small();
    const alarm = byName(template, '-relay-latency-p99');
    expect(alarm).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: 'Latency', ExtendedStatistic: 'p99', Threshold: 10_000, Period: 300 });
    const dims = Object.fromEntries((alarm['Dimensions'] as { Name: string; Value: unknown }[]).map((d) => [d.Name, d.Value]));
    expect(dims).toMatchObject({ ApiName: 'netconfig-test', Method: 'POST', Resource: RELAY });
    expect(Object.keys(dims).sort()).toEqual(['ApiName', 'Method', 'Resource', 'Stage']);
  });

  it('leaves out any number of orchestrator methods, no alarm reading more than 10 metrics', () => {
    const waiting = liveRoutes.slice(0, 12).map((r) => ({ method: r.method, path: r.path }));
    const { template } = small({ orchestratorMethods: waiting });
    const read = latencyAlarms(template).flatMap(latencyMethods);
    expect(read.sort()).toEqual(
      liveRoutes
        .slice(12)
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    );
    for (const a of alarms(template)) expect(((a['Metrics'] as AlarmMetric[] | undefined) ?? []).filter((m) => m.MetricStat).length).toBeLessThanOrEqual(10);
  });

  it('alarms on the functions’ errors and throttles in groups summed by metric math, the authorizer’s throttles apart and its errors never', () => {
    const { template } = small();
    const lambdaMetrics = (a: Record<string, any>) => (a['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat);
    for (const [suffix, metricName] of [
      ['-fn-errors-1', 'Errors'],
      ['-fn-throttles-1', 'Throttles'],
    ] as const) {
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
      const read = a['MetricName']
        ? [{ name: a['MetricName'], dims: a['Dimensions'] }]
        : ((a['Metrics'] as AlarmMetric[]) ?? [])
            .filter((m) => m.MetricStat)
            .map((m) => ({ name: m.MetricStat!.Metric.MetricName, dims: m.MetricStat!.Metric.Dimensions }));
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
    expect(byName(template, '-fn-authorizer-crashes')).toMatchObject({
      Namespace: 'Netconfig/netconfig-test',
      MetricName: 'AuthorizerCrashes',
      Statistic: 'Sum',
      Threshold: 1,
    });

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
      ...((a['Metrics'] as AlarmMetric[] | undefined) ?? [])
        .filter((m) => m.MetricStat?.Metric.Namespace === 'AWS/DynamoDB')
        .map((m) => m.MetricStat!.Metric.Dimensions),
    ]);
    expect(dynamo.length).toBe(2 * 2 * 10);
    const tableRefs = Object.keys(template.findResources('AWS::DynamoDB::GlobalTable')).map((id) => JSON.stringify({ Ref: id }));
    for (const dims of dynamo) expect(tableRefs).toContain(JSON.stringify(dims.find((d) => d.Name === 'TableName')?.Value));
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain('UserErrors');
  });

  it('takes thresholds as props, and refuses one that is not a positive number', () => {
    const { template } = small({ thresholds: { apiLatencyP99Ms: 8000, api5xxRatePercent: 2, relayLatencyP99Ms: 25_000, authorizerFailures: 3 } });
    for (const alarm of latencyAlarms(template)) {
      expect(alarm['Metrics']).toEqual(expect.arrayContaining([expect.objectContaining({ MetricStat: expect.objectContaining({ Stat: 'PR(:8000)' }) })]));
    }
    expect(byName(template, '-api-5xx-rate')['Threshold']).toBe(2);
    expect(byName(template, '-relay-latency-p99')['Threshold']).toBe(25_000);
    expect(byName(template, '-fn-authorizer-failures')['Threshold']).toBe(3);
    expect(() => small({ thresholds: { apiLatencyP99Ms: -1 } })).toThrow(/thresholds.apiLatencyP99Ms must be a positive number, got -1/);
    expect(() => small({ thresholds: { relayLatencyP99Ms: Number.NaN } })).toThrow(/thresholds.relayLatencyP99Ms must be a positive number/);
    // DynamoDB's account-wide user errors are no longer alarmed on: a threshold for them is refused, not ignored.
    expect(() => small({ thresholds: { dynamoUserErrors: 5 } as never })).toThrow(
      /unknown threshold dynamoUserErrors \(known: api5xxRatePercent, .*authorizerFailures\)/,
    );
  });

  it('reads no CDK context: alarm settings come as props only', () => {
    const { template } = small({}, { context: { alarmEmail: 'noc@example.net', alarmApiLatencyP99Ms: '8000' } });
    template.resourceCountIs('AWS::SNS::Topic', 0);
    expect(JSON.stringify(latencyAlarms(template)[0])).toContain('PR(:5000)');
  });

  it('builds a dashboard with the service’s own metrics', () => {
    const { template } = small();
    const dashboards = template.findResources('AWS::CloudWatch::Dashboard');
    expect(Object.keys(dashboards)).toHaveLength(1);
    const dashboard = Object.values(dashboards)[0]!.Properties;
    expect(dashboard['DashboardName']).toBe('netconfig-test-operations');
    const body = JSON.stringify(dashboard['DashboardBody']);
    for (const metric of [
      'RelayCalls',
      'RelayLatency',
      'AuthorizerDenials',
      'AuthorizerFailures',
      'AuthorizerCrashes',
      'ValidationFailures',
      '5XXError',
      'Latency',
      'Throttles',
      'SystemErrors',
    ]) {
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
      const own = alarmResources(template)
        .filter(([id]) => id.startsWith(prefix))
        .map(([, r]) => r.Properties);
      const streams = own.flatMap((a) =>
        a['MetricName']
          ? [JSON.stringify([a['Namespace'], a['MetricName'], a['Dimensions']])]
          : (a['Metrics'] as AlarmMetric[])
              .filter((m) => m.MetricStat)
              .map((m) => JSON.stringify([m.MetricStat!.Metric.Namespace, m.MetricStat!.Metric.MetricName, m.MetricStat!.Metric.Dimensions])),
      );
      const dimensionValues = own.flatMap((a) =>
        [
          ...((a['Dimensions'] as { Name: string; Value: unknown }[] | undefined) ?? []),
          ...((a['Metrics'] as AlarmMetric[] | undefined) ?? []).flatMap((m) => m.MetricStat?.Metric.Dimensions ?? []),
        ].map((d) => `${d.Name}=${JSON.stringify(d.Value)}`),
      );
      const dashboards = Object.entries(template.findResources('AWS::CloudWatch::Dashboard')).filter(([id]) => id.startsWith(prefix));
      return {
        names: own.map((a) => a['AlarmName'] as string),
        streams,
        dimensionValues,
        dashboards: dashboards.map(([, d]) => d['Properties']['DashboardName'] as string),
      };
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
    const namespaces = Object.values(template.findResources('AWS::Logs::MetricFilter')).map(
      (f) => f['Properties']['MetricTransformations'][0]['MetricNamespace'],
    );
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

  it('creates the API Gateway execution log group (so the deployment’s log policy applies to it) before the stage', () => {
    const { template } = small();
    const groups = template.findResources('AWS::Logs::LogGroup') as Record<string, Resource>;
    const [id, group] = Object.entries(groups).find(([, g]) => JSON.stringify(g.Properties['LogGroupName'] ?? '').includes('API-Gateway-Execution-Logs_'))!;
    // Its retention is the deployment's (LogPolicy, test/infra/audit.test.ts), not the construct's.
    expect(group.Properties['LogGroupName']).toBeDefined();
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage') as Record<string, Resource>)[0]!;
    expect(stage.DependsOn).toContain(id);
  });
});

describe('service signals', () => {
  it('has every route handler file to synthesize the stack from (a renamed handler fails here, it is never skipped)', () => {
    const missing = liveRoutes.map((r) => `functions/${r.handler}.ts`).filter((file) => !existsSync(path.join(PROJECT_ROOT, file)));
    expect(missing).toEqual([]);
  });

  /** The service's stacks read as one template (service-template.ts), cdk-nag run over them. */
  const synth = () => {
    const { app, service } = synthService();
    addNagSuppressions(service);
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    return { stack: service, template: serviceTemplate(service) };
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
    // API 5xx rate, relay p99; per API part, errors and throttles per group of at most 10 of its
    // functions (routes, compliance batch) and p99 latency per group of at most 5 of its methods
    // that do not wait on an orchestrator; the authorizer's throttles, failures and crashes;
    // two per table; failed compliance batches; durable executions of the batch function that
    // fail or time out.
    const parts = Object.entries(stack.api.parts);
    const fnGroups = parts.reduce((n, [, part]) => n + Math.ceil(Object.keys(part.functions).length / 10), 0);
    const waits = new Set(liveRoutes.filter((r) => r.needs.orchestrator).map((r) => `${r.method} ${r.path}`));
    const latencyGroups = parts.reduce(
      (n, [, part]) => n + Math.ceil(part.methods.filter((m) => !waits.has(`${m.method} ${m.path}`)).length / METHODS_PER_LATENCY_ALARM),
      0,
    );
    // The durable alarms of the batch and remediation functions (2 each), and the canary releases' rollback alarms of the relay and the authorizer (2).
    expect(all).toHaveLength(2 + 2 * fnGroups + latencyGroups + 3 + 2 * Object.keys(tableSpecs).length + 1 + 2 * 2 + 2);
    const grouped = all.filter((a) => /-fn-(errors|throttles)-[a-z-]+-\d+$/.test(a['AlarmName']));
    expect(grouped).toHaveLength(2 * fnGroups);
    // Every route function, the batch function and its housekeeping in exactly one errors group, named in its description.
    const errorGroups = grouped.filter((a) => a['AlarmName'].includes('-fn-errors-'));
    for (const op of [...liveRoutes.map((r) => r.operationId), 'complianceBatch', 'complianceHousekeeping', 'remediationRun']) {
      const fnId = logicalIdOf(stack.functions[op]!.function);
      const containing = errorGroups.filter((a) => JSON.stringify(a['Metrics']).includes(`"${fnId}"`));
      expect(containing, op).toHaveLength(1);
      expect(containing[0]!['AlarmDescription'], op).toMatch(new RegExp(`[:,] ${op}[,.]`));
    }
    // Each part's function and latency alarms live in its nested stack, named after it.
    for (const [name, part] of parts) {
      // The relay's canary release alarms (unnamed, described as the alias') are counted above.
      const own = alarms(Template.fromStack(part))
        .filter((a) => !String(a['AlarmDescription']).includes('of its live alias'))
        .map((a) => a['AlarmName'] as string);
      expect(own.length, name).toBeGreaterThan(0);
      for (const n of own)
        expect(n, name).toMatch(
          new RegExp(`-(fn-errors|fn-throttles|api-latency-p99)-${partSlug(name)}-\\d+$|-fn-(complianceBatch|remediationRun)-durable-(failed|timed-out)$`),
        );
    }
    expect(alarms(Template.fromStack(stack.api)).filter((a) => /-(fn-errors|fn-throttles|api-latency-p99)-/.test(a['AlarmName']))).toEqual([]);
    // Every method of the route table that does not wait on an orchestrator, in exactly one latency alarm of its part, of at most 10 metrics.
    const latency = latencyAlarms(template);
    expect(latency).toHaveLength(latencyGroups);
    for (const a of latency) expect((a['Metrics'] as AlarmMetric[]).filter((m) => m.MetricStat).length).toBeLessThanOrEqual(10);
    expect(latency.flatMap(latencyMethods).sort()).toEqual(
      liveRoutes
        .filter((r) => !r.needs.orchestrator)
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    );
    const names = all.map((a) => a['AlarmName'] as string);
    for (const suffix of [
      '-fn-errors-runtime-1',
      '-fn-throttles-runtime-1',
      '-api-latency-p99-runtime-1',
      '-compliance-batch-failed',
      '-fn-complianceBatch-durable-failed',
      '-fn-complianceBatch-durable-timed-out',
      '-fn-authorizer-failures',
      '-fn-authorizer-crashes',
      '-fn-authorizer-throttles',
      '-relay-latency-p99',
    ]) {
      expect(
        names.filter((n) => n.endsWith(suffix)),
        suffix,
      ).toHaveLength(1);
    }
    expect(names.filter((n) => n.endsWith('-fn-authorizer-errors'))).toEqual([]);
    // One prefix for them all: the Service the authorizer's failures are read by.
    const service = byName(template, '-fn-authorizer-failures')['Dimensions'][0].Value as string;
    for (const n of names) expect(n.startsWith(`${service}-`), n).toBe(true);
    expect(JSON.stringify(all)).not.toContain('UserErrors');
    const errors = Annotations.fromStack(stack.api)
      .findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))
      .filter((e) => e.id.includes('/Observability'));
    expect(errors.map((e) => e.entry.data)).toEqual([]);
  });
});
