/**
 * What platform engineers watch: CloudWatch alarms, a dashboard, and the API Gateway execution
 * log group (created here, else API Gateway creates it outside the stack with no expiry; its
 * retention, like every log group's, is the deployment's log policy, `LogPolicy`). docs/operations.md lists every alarm,
 * what it means and what to do.
 *
 * Each alarm says one thing, and only this deployment feeds it:
 * - API 5xx rate, and the p99 latency of the requests that do not wait on an orchestrator, per
 *   group of at most 5 methods (two metrics each, within CloudWatch's 10 per metric-math alarm):
 *   a slow orchestrator makes its own alarm (relay p99), not the API's.
 * - Functions, in groups of at most 10 (CloudWatch's limit on the metrics of one metric-math
 *   alarm), ordered by application then key: one alarm on the sum of the group's errors
 *   (crashes, timeouts, out of memory; the route functions answer their own failures) and one on
 *   the sum of its throttles. Each description names the group's functions and the dashboard
 *   graphs each function of each group, so the alarm says which group and the graph which
 *   function. One alarm per function would cost two CloudFormation resources per route.
 * - The authorizer apart: its throttles; never its `Errors`, since Lambda counts every refused
 *   token as one (the thrown `Unauthorized` that API Gateway turns into 401). It alarms on its
 *   own `AuthorizerFailures` metric (requests it could not decide) and on the runtime's timeout
 *   and crash lines in its log group.
 * - DynamoDB: system errors and throttled requests of this stack's tables (per-table metrics
 *   only; DynamoDB publishes `UserErrors` for the whole account and region, so it is not used).
 * - Failed compliance batches.
 *
 * Parts: the per-function and per-method alarms are made per part (`parts`: an API part's nested
 * stack, its functions and methods), in the part's scope, so that they grow with the part and
 * not with the stack that holds the API; the rest (API, relay, authorizer, tables, dashboard)
 * stays here.
 *
 * Names: every alarm, the dashboard and the log-derived metric are named after `serviceName`,
 * and the service's own metrics are read with `Service = serviceName`, so two deployments with
 * different service names (staging and prod in one account) never share an alarm, a dashboard
 * or a metric stream. API Gateway metrics are read by the API's name (`ApiName`), which the
 * stack must make distinct per deployment too.
 *
 * Alarm actions: `alarmTopic` / `alarmTopicArn` (an existing SNS topic) or `alarmEmail` (a
 * topic is created and the address subscribed). Without any the alarms have no action and show
 * in the CloudWatch console only. Thresholds: `thresholds`, each with a default.
 */
import { Duration, Stack, Token } from 'aws-cdk-lib';
import type { CfnStage, RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  LogQueryWidget,
  MathExpression,
  Metric,
  Stats,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, LogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { DEFAULT_TIMEOUT_MS } from '../../functions/adapters/validate.js';
import { liveRoutes as routeTable } from '../../functions/api/routes.js';
import type { LiveRoute } from '../../functions/platform/route.js';
import { AUTHORIZER_FAILURES_METRIC, DEFAULT_METRICS_NAMESPACE } from '../../functions/platform/metrics.js';
import type { ServiceFunction } from './service-function.js';

export interface ObservabilityThresholds {
  /** Share of API requests answered 5xx, in percent, over one minute (3 of 5 minutes). Default 5. */
  readonly api5xxRatePercent?: number;
  /** Fewer requests than this in a minute never make a 5xx rate (one failure of two is not an outage). Default 10. */
  readonly api5xxMinRequests?: number;
  /**
   * p99 latency in ms of the API requests that do not wait on an orchestrator, over five
   * minutes (2 of 3 periods). Default 5000.
   */
  readonly apiLatencyP99Ms?: number;
  /**
   * p99 latency in ms of the relay route over five minutes (2 of 3 periods). Default the
   * relay's default per-call timeout (10000): above it, more than 1 % of relayed calls waited
   * longer than an orchestrator is given by default.
   */
  readonly relayLatencyP99Ms?: number;
  /** DynamoDB system errors (5xx of DynamoDB) per table in five minutes. Default 1. */
  readonly dynamoSystemErrors?: number;
  /** Requests the authorizer could not decide (not refused tokens) in five minutes. Default 1. */
  readonly authorizerFailures?: number;
}

/** An API method as API Gateway names it in its per-method metrics (`Method`, `Resource`). */
export interface ApiMethod {
  readonly method: string;
  /** The resource path with `{param}` placeholders, e.g. `/orch_manager/restAction/{adapterId}`. */
  readonly path: string;
}

/** The functions and methods whose alarms live together, in `scope` (an API part's nested stack). */
export interface ObservedPart {
  readonly scope: Construct;
  /** In alarm names and graph titles: letters, digits and `-`. */
  readonly name: string;
  /** The part's functions by key (the authorizer is never one of them). */
  readonly functions: Readonly<Record<string, ServiceFunction>>;
  readonly methods: readonly ApiMethod[];
}

export interface ObservabilityProps {
  readonly api: RestApi;
  readonly functions: Readonly<Record<string, ServiceFunction>>;
  readonly tables: Readonly<Record<string, ITable>>;
  /**
   * The deployment's name: the `Service` dimension of the service's EMF metrics
   * (`SERVICE_NAME` of the functions), the prefix of every alarm name and of the dashboard's.
   * Letters, digits, `-` and `_` (a dashboard name allows no more).
   */
  readonly serviceName: string;
  /** Where alarms notify: an SNS topic. At most one of `alarmTopic`, `alarmTopicArn`, `alarmEmail`. */
  readonly alarmTopic?: ITopic;
  /** Where alarms notify: the ARN of an existing SNS topic. */
  readonly alarmTopicArn?: string;
  /** Encrypts the topic created for `alarmEmail` (a customer-managed key whose policy lets CloudWatch use it). */
  readonly alarmTopicKey?: IKey;
  /** Where alarms notify: an address, subscribed to an SSL-only topic created here. */
  readonly alarmEmail?: string;
  readonly thresholds?: ObservabilityThresholds;
  /** The key of the Lambda authorizer in `functions`. Default `authorizer`. */
  readonly authorizerKey?: string;
  /**
   * The methods whose answer waits on an orchestrator: left out of the API latency alarm.
   * Default: the routes of the route table that call orchestrators (`needs.orchestrator`).
   */
  readonly orchestratorMethods?: readonly ApiMethod[];
  /** The live routes (default the route table): where the default orchestrator methods, relay and groups come from. */
  readonly routes?: readonly LiveRoute[];
  /** The relay's method, which gets its own latency alarm. Default the route table's `relayRestAction`. */
  readonly relayMethod?: ApiMethod;
  /**
   * The methods the API serves (default those of `routes`): each, unless it waits on an
   * orchestrator, in one latency alarm group. Ignored when `parts` are given.
   */
  readonly methods?: readonly ApiMethod[];
  /**
   * Where the per-function and per-method alarms go: each part's functions and methods get
   * alarm groups of their own, created in the part's scope (its nested stack) and named
   * `<alarm>-<part name>-<n>`. Default one part: this construct, every function but the
   * authorizer, every method, names `<alarm>-<n>`.
   */
  readonly parts?: readonly ObservedPart[];
  /**
   * The application a function belongs to, which orders the function alarm groups (by
   * application, then key). Default: the route table's tag of the route with that operationId,
   * else the key itself.
   */
  readonly groupOf?: (key: string) => string;
}

/** The DynamoDB operations the service uses (a metric-math alarm takes at most 10 metrics). */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.SCAN,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.TRANSACT_GET_ITEMS,
];

/** CloudWatch's hard limit on the metrics one metric-math alarm may read. */
export const MAX_ALARM_METRICS = 10;

/** CloudWatch Logs Insights' limit on the log groups one query names. */
export const MAX_QUERY_LOG_GROUPS = 50;

/** `items` in the fewest runs of at most `size`, as even as can be (56 groups: 28 and 28, not 50 and 6). */
export const evenChunks = <T>(items: readonly T[], size: number): T[][] => {
  const count = Math.ceil(items.length / size);
  return Array.from({ length: count }, (_, i) => items.slice(Math.floor((i * items.length) / count), Math.floor(((i + 1) * items.length) / count)));
};

/**
 * Lines the Lambda runtime writes (text log format) when an invocation or the init phase dies
 * rather than returning or throwing: a timeout, the runtime process exiting (out of memory, a
 * crash), an exception at module load, a handler module that cannot load. A handler that
 * throws (as the authorizer does for every refused token) logs `Invoke Error`, which none of
 * these match.
 */
export const RUNTIME_FAILURE_TERMS: readonly string[] = [
  'Task timed out',
  'Runtime exited',
  'Runtime.ExitError',
  'Runtime.OutOfMemory',
  'Runtime.ImportModuleError',
  'Uncaught Exception',
];

const FIVE_MINUTES = Duration.minutes(5);
const ONE_MINUTE = Duration.minutes(1);
const SERVICE_NAME_RULE = /^[A-Za-z0-9_-]{1,200}$/;

const apiMethod = ({ method, path }: ApiMethod): ApiMethod => ({ method, path });
const RELAY_OPERATION = 'relayRestAction';
/** The default orchestrator-bound methods: the route table's routes that call orchestrators. */
const orchestratorRoutes = (routes: readonly LiveRoute[]): ApiMethod[] => routes.filter((r) => r.needs.orchestrator).map(apiMethod);
/**
 * The routes whose per-method metrics (ApiName + Method + Resource + Stage) the alarms and the
 * dashboard read with the default methods: every route that does not wait on an orchestrator
 * (the API latency alarms) and the relay (its own latency alarm). Only these need the stage's
 * detailed metrics.
 */
export const alarmedRoutes = (routes: readonly LiveRoute[]): LiveRoute[] => routes.filter((r) => !r.needs.orchestrator || r.operationId === RELAY_OPERATION);

/** `SUM([...])` rather than `a + b`: a sum stays defined when some operations have no data. */
const sumOf = (idPrefix: string, label: string, metrics: readonly IMetric[], period: Duration): MathExpression => {
  // Ids are unique per graph, so each sum names its metrics after itself.
  const id = (i: number) => `${idPrefix.replace(/[^A-Za-z0-9]/g, '').replace(/^./, (c) => c.toLowerCase())}${i}`;
  return new MathExpression({
    label,
    period,
    expression: `SUM([${metrics.map((_, i) => id(i)).join(',')}])`,
    usingMetrics: Object.fromEntries(metrics.map((m, i) => [id(i), m])),
  });
};

/** The route table's tag of a live route's function; other functions stand for themselves. */
const routeTag = (key: string, routes: readonly LiveRoute[] = routeTable): string => routes.find((r) => r.operationId === key)?.tag ?? key;

/**
 * The functions' alarm groups: ordered by application then key, cut into groups of
 * {@link MAX_ALARM_METRICS}. A new function moves at most one function per later group, and
 * only the last group can appear or disappear: alarm names (`-fn-errors-<n>`) stay put.
 */
export const functionGroups = (keys: readonly string[], groupOf: (key: string) => string = routeTag): string[][] => {
  const sorted = [...keys].sort((a, b) => groupOf(a).localeCompare(groupOf(b)) || a.localeCompare(b));
  const groups: string[][] = [];
  for (let i = 0; i < sorted.length; i += MAX_ALARM_METRICS) groups.push(sorted.slice(i, i + MAX_ALARM_METRICS));
  return groups;
};

/** Methods one latency alarm reads: two metrics each (request count and share under the threshold). */
export const METHODS_PER_LATENCY_ALARM = MAX_ALARM_METRICS / 2;

/** Latency alarm groups: the methods ordered by path then method, cut into groups of {@link METHODS_PER_LATENCY_ALARM}. */
export const latencyGroups = (methods: readonly ApiMethod[]): ApiMethod[][] => {
  const sorted = [...methods].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  const groups: ApiMethod[][] = [];
  for (let i = 0; i < sorted.length; i += METHODS_PER_LATENCY_ALARM) groups.push(sorted.slice(i, i + METHODS_PER_LATENCY_ALARM));
  return groups;
};

const THRESHOLD_KEYS: ReadonlySet<string> = new Set<keyof ObservabilityThresholds>([
  'api5xxRatePercent',
  'api5xxMinRequests',
  'apiLatencyP99Ms',
  'relayLatencyP99Ms',
  'dynamoSystemErrors',
  'authorizerFailures',
]);

/** Every threshold known and a positive number: a typo or a retired threshold fails the synth, never silently. */
const checkThresholds = (thresholds: ObservabilityThresholds): void => {
  for (const [key, value] of Object.entries(thresholds)) {
    if (!THRESHOLD_KEYS.has(key)) throw new Error(`observability: unknown threshold ${key} (known: ${[...THRESHOLD_KEYS].join(', ')})`);
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new Error(`observability: thresholds.${key} must be a positive number, got ${String(value)}`);
    }
  }
};

export class Observability extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;
  readonly alarmTopic?: ITopic;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    if (!SERVICE_NAME_RULE.test(props.serviceName)) {
      throw new Error(`observability: serviceName must be 1 to 200 letters, digits, "-" or "_", got "${props.serviceName}"`);
    }
    const t: ObservabilityThresholds = props.thresholds ?? {};
    checkThresholds(t);
    const name = (suffix: string) => `${props.serviceName}-${suffix}`;
    this.alarmTopic = this.#topic(props);
    const action = this.alarmTopic ? new SnsAction(this.alarmTopic) : undefined;
    const alarmIn = (scope: Construct, id: string, alarmProps: ConstructorParameters<typeof Alarm>[2]): Alarm => {
      const a = new Alarm(scope, id, { treatMissingData: TreatMissingData.NOT_BREACHING, ...alarmProps });
      if (action) {
        a.addAlarmAction(action);
        a.addOkAction(action);
      }
      this.alarms.push(a);
      return a;
    };
    const alarm: {
      (id: string, p: ConstructorParameters<typeof Alarm>[2]): Alarm;
      (scope: Construct, id: string, p: ConstructorParameters<typeof Alarm>[2]): Alarm;
    } = (...args: [string, ConstructorParameters<typeof Alarm>[2]] | [Construct, string, ConstructorParameters<typeof Alarm>[2]]): Alarm =>
      args.length === 2 ? alarmIn(this, ...args) : alarmIn(...args);

    // API Gateway: the stage's own metrics (ApiName + Stage dimensions), and per method
    // (ApiName + Method + Resource + Stage; detailed metrics of the methods {@link alarmedRoutes} names).
    const stage = props.api.deploymentStage;
    const requests = stage.metricCount({ period: ONE_MINUTE, statistic: Stats.SUM });
    const errors5xx = stage.metricServerError({ period: ONE_MINUTE, statistic: Stats.SUM });
    const errors4xx = stage.metricClientError({ period: ONE_MINUTE, statistic: Stats.SUM });
    const minRequests = t.api5xxMinRequests ?? 10;
    const rate5xx = new MathExpression({
      label: '5xx rate (%)',
      period: ONE_MINUTE,
      expression: `IF(requests >= ${minRequests}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: errors5xx },
    });
    alarm('Api5xxRate', {
      alarmName: name('api-5xx-rate'),
      alarmDescription: `More than ${t.api5xxRatePercent ?? 5}% of API requests answered 5xx in 3 of the last 5 minutes (minutes with fewer than ${minRequests} requests do not count).`,
      metric: rate5xx,
      threshold: t.api5xxRatePercent ?? 5,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    });

    const latency = (statistic: string) => stage.metricLatency({ period: FIVE_MINUTES, statistic });
    const stageDimensions = latency(Stats.SAMPLE_COUNT).dimensions ?? {};
    // In another stack (an API part), the stage by its literal name: a reference to the stage
    // would make the part wait for the stage, which waits for the deployment, which waits for
    // every part.
    const stageLiteral = { ...stageDimensions, Stage: (stage.node.defaultChild as CfnStage).stageName ?? stage.stageName };
    const methodLatency = (m: ApiMethod, statistic: string, label?: string, scope: Construct = this) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName: 'Latency',
        statistic,
        period: FIVE_MINUTES,
        dimensionsMap: { ...(Stack.of(scope) === Stack.of(this) ? stageDimensions : stageLiteral), Method: m.method, Resource: m.path },
        ...(label ? { label } : {}),
      });

    // p99 of the requests that do not wait on an orchestrator, per group of at most
    // METHODS_PER_LATENCY_ALARM methods of one part (a metric-math alarm reads at most 10
    // metrics, two per method). A percentile of several methods cannot be computed from theirs,
    // but "p99 above T" is "more than 1 % of the requests took longer than T", and counts add:
    // slow = Σ count × (100 − PR(:T)) / 100 over the group's methods (FILL: a method with no
    // request in the period counts 0). When more than 1 % of all such requests are slow, more
    // than 1 % of some group's are: the groups miss nothing one alarm over all would catch, and
    // a route added anywhere never makes an alarm read more than 10 metrics.
    const apiP99 = t.apiLatencyP99Ms ?? 5000;
    const routes = props.routes ?? routeTable;
    const orchestrator = props.orchestratorMethods ?? orchestratorRoutes(routes);
    const waitsOnOrchestrator = new Set(orchestrator.map((m) => `${m.method} ${m.path}`));
    const fastShare = Stats.percentileRank(apiP99);
    const authorizerKey = props.authorizerKey ?? 'authorizer';
    const parts: readonly ObservedPart[] = props.parts ?? [
      {
        scope: this,
        name: '',
        functions: Object.fromEntries(Object.entries(props.functions).filter(([k]) => k !== authorizerKey)),
        methods: props.methods ?? routes.map(apiMethod),
      },
    ];
    const latencyAlarms: { label: string; expression: MathExpression }[] = [];
    const groupLabels: { label: string; members: string[]; functions: Readonly<Record<string, ServiceFunction>> }[] = [];
    for (const part of parts) {
      const scope = part.scope === this ? this : new Construct(part.scope, 'Observability');
      const suffix = (n: number) => (part.name ? `${part.name}-${n}` : String(n));
      const counted = part.methods.filter((m) => !waitsOnOrchestrator.has(`${m.method} ${m.path}`));
      latencyGroups(counted).forEach((members, i) => {
        const label = suffix(i + 1);
        const using: Record<string, IMetric> = {};
        const count: string[] = [];
        const slow: string[] = [];
        // Ids unique over the dashboard graph that shows every group.
        const g = latencyAlarms.length;
        members.forEach((m, j) => {
          using[`l${g}c${j}`] = methodLatency(m, Stats.SAMPLE_COUNT, undefined, scope);
          using[`l${g}f${j}`] = methodLatency(m, fastShare, undefined, scope);
          count.push(`FILL(l${g}c${j}, 0)`);
          slow.push(`FILL(l${g}c${j}, 0) * (100 - FILL(l${g}f${j}, 100)) / 100`);
        });
        const slowPercent = new MathExpression({
          label: `requests over ${apiP99} ms, group ${label} (%)`,
          period: FIVE_MINUTES,
          expression: `IF(${count.join(' + ')} > 0, 100 * (${slow.join(' + ')}) / (${count.join(' + ')}), 0)`,
          usingMetrics: using,
        });
        alarm(scope, `ApiLatencyP99-${i + 1}`, {
          alarmName: name(`api-latency-p99-${label}`),
          alarmDescription:
            `p99 latency above ${apiP99} ms (more than 1% of the requests slower) in 2 of the last 3 five-minute periods, over: ${members.map((m) => `${m.method} ${m.path}`).join(', ')}. ` +
            'Routes that wait on an orchestrator are in no such group (see relay-latency-p99).',
          metric: slowPercent,
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
        });
        latencyAlarms.push({ label, expression: slowPercent });
      });

      // Lambda: errors here are crashes (init failures, timeouts, out of memory); the route
      // functions answer their own failures as 4xx/5xx and those show in the API's metrics.
      // Grouped: one alarm per group of at most 10 functions of the part (a metric-math alarm
      // reads at most 10 metrics) summing their errors, and one summing their throttles; the
      // description names the group's functions and the dashboard graphs each one.
      const groups = functionGroups(Object.keys(part.functions), props.groupOf ?? ((key) => routeTag(key, routes)));
      groups.forEach((members, i) => {
        const label = suffix(i + 1);
        const list = members.join(', ');
        const summed = (what: 'Errors' | 'Throttles') =>
          sumOf(
            `fn${what}${label}m`,
            `${what} of function group ${label}`,
            members.map((op) => part.functions[op]!.function.metric(what, { period: FIVE_MINUTES, statistic: Stats.SUM })),
            FIVE_MINUTES,
          );
        alarm(scope, `FunctionErrors${i + 1}`, {
          alarmName: name(`fn-errors-${label}`),
          alarmDescription: `At least one of these functions failed (crash, timeout or out of memory) in the last 5 minutes: ${list}. The dashboard graph "Function group ${label}" shows which.`,
          metric: summed('Errors'),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
        });
        alarm(scope, `FunctionThrottles${i + 1}`, {
          alarmName: name(`fn-throttles-${label}`),
          alarmDescription: `Invocations of at least one of these functions were throttled (concurrency limit) in the last 5 minutes: ${list}. The dashboard graph "Function group ${label}" shows which.`,
          metric: summed('Throttles'),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
        });
        groupLabels.push({ label, members, functions: part.functions });
      });

      // Durable functions: an execution that fails or times out as a whole (AWS/Lambda
      // publishes both per function). A compliance batch or remediation run whose execution ends
      // so is also ended `failed` by the housekeeping (a batch's then fires compliance-batch-failed).
      for (const [key, fn] of Object.entries(part.functions).filter(([, f]) => f.durable)) {
        const durable = (metricName: string) =>
          new Metric({
            namespace: 'AWS/Lambda',
            metricName,
            statistic: Stats.SUM,
            period: FIVE_MINUTES,
            dimensionsMap: { FunctionName: fn.function.functionName },
          });
        const id = key[0]!.toUpperCase() + key.slice(1);
        alarm(scope, `${id}DurableFailed`, {
          alarmName: name(`fn-${key}-durable-failed`),
          alarmDescription: `A durable execution of ${key} ended FAILED in the last 5 minutes (DurableExecutionFailed): its handler threw out of the workflow.`,
          metric: durable('DurableExecutionFailed'),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
        });
        alarm(scope, `${id}DurableTimedOut`, {
          alarmName: name(`fn-${key}-durable-timed-out`),
          alarmDescription: `A durable execution of ${key} reached its execution timeout in the last 5 minutes (DurableExecutionTimedOut) and was stopped by Lambda.`,
          metric: durable('DurableExecutionTimedOut'),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
        });
      }
    }

    const relay = props.relayMethod ?? apiMethod((props.routes ?? routeTable).find((r) => r.operationId === RELAY_OPERATION)!);
    const relayP99 = t.relayLatencyP99Ms ?? DEFAULT_TIMEOUT_MS;
    alarm('RelayLatencyP99', {
      alarmName: name('relay-latency-p99'),
      alarmDescription: `p99 latency of ${relay.method} ${relay.path} above ${relayP99} ms in 2 of the last 3 five-minute periods: orchestrators answer slowly or not at all (see the RelayLatency and RelayCalls metrics by adapter).`,
      metric: methodLatency(relay, Stats.p(99)),
      threshold: relayP99,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    // The service's own metrics (functions/platform/metrics.ts), this deployment's only.
    const own = (metricName: string, statistic: string, dimensionsMap: Record<string, string> = {}, label?: string) =>
      new Metric({
        namespace: DEFAULT_METRICS_NAMESPACE,
        metricName,
        statistic,
        period: FIVE_MINUTES,
        dimensionsMap: { Service: props.serviceName, ...dimensionsMap },
        ...(label ? { label } : {}),
      });

    const fns = Object.entries(props.functions).sort(([a], [b]) => a.localeCompare(b));

    // The authorizer: what it could not decide (its own metric) and what killed it (the runtime's lines).
    const authorizer = props.functions[authorizerKey];
    // Alarms take the metrics unlabelled: a label would make CloudWatch read them as metric math.
    const authorizerFailures = own(AUTHORIZER_FAILURES_METRIC, Stats.SUM);
    let authorizerCrashes: Metric | undefined;
    if (authorizer) {
      alarm(`${authorizerKey[0]!.toUpperCase()}${authorizerKey.slice(1)}Throttles`, {
        alarmName: name(`fn-${authorizerKey}-throttles`),
        alarmDescription: `Invocations of the ${authorizerKey} function were throttled (concurrency limit) in the last 5 minutes.`,
        metric: authorizer.function.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
      alarm('AuthorizerFailures', {
        alarmName: name(`fn-${authorizerKey}-failures`),
        alarmDescription: `The authorizer could not decide on at least ${t.authorizerFailures ?? 1} request(s) in the last 5 minutes (issuer keys unavailable or an unexpected exception; API Gateway answered 500). Refused tokens are not counted.`,
        metric: authorizerFailures,
        threshold: t.authorizerFailures ?? 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
      const crashes = new MetricFilter(this, 'AuthorizerCrashLines', {
        logGroup: authorizer.logGroup,
        filterPattern: FilterPattern.anyTerm(...RUNTIME_FAILURE_TERMS),
        metricNamespace: `${DEFAULT_METRICS_NAMESPACE}/${props.serviceName}`,
        metricName: 'AuthorizerCrashes',
        metricValue: '1',
      });
      authorizerCrashes = crashes.metric({ period: FIVE_MINUTES, statistic: Stats.SUM });
      alarm('AuthorizerCrashes', {
        alarmName: name(`fn-${authorizerKey}-crashes`),
        alarmDescription: 'The authorizer timed out, ran out of memory, crashed or failed to start in the last 5 minutes (runtime lines in its log group).',
        metric: authorizerCrashes,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    // DynamoDB: system errors and throttled requests per table (TableName + Operation).
    const tables = Object.entries(props.tables).sort(([a], [b]) => a.localeCompare(b));
    const tableMetrics = tables.map(([key, table]) => {
      const perOp = (metricName: 'SystemErrors' | 'ThrottledRequests') =>
        sumOf(
          `${key}${metricName}`,
          `${key} ${metricName}`,
          TABLE_OPERATIONS.map((operation) =>
            table.metric(metricName, { period: FIVE_MINUTES, statistic: Stats.SUM, dimensionsMap: { TableName: table.tableName, Operation: operation } }),
          ),
          FIVE_MINUTES,
        );
      return { key, table, systemErrors: perOp('SystemErrors'), throttled: perOp('ThrottledRequests') };
    });
    for (const { key, systemErrors, throttled } of tableMetrics) {
      const id = key[0]!.toUpperCase() + key.slice(1);
      alarm(`${id}TableSystemErrors`, {
        alarmName: name(`ddb-${key}-system-errors`),
        alarmDescription: `DynamoDB answered the ${key} table's requests with server errors in the last 5 minutes.`,
        metric: systemErrors,
        threshold: t.dynamoSystemErrors ?? 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
      alarm(`${id}TableThrottles`, {
        alarmName: name(`ddb-${key}-throttled-requests`),
        alarmDescription: `Requests to the ${key} table were throttled in the last 5 minutes.`,
        metric: throttled,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    // API Gateway writes execution logs to this group; created here so that the log policy applies to it.
    // The stage's literal name (from its L1 resource): `stage.stageName` is a Ref to the stage itself.
    const stageName = (stage.node.defaultChild as CfnStage).stageName ?? stage.stageName;
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${props.api.restApiId}/${stageName}`,
    });
    stage.node.addDependency(executionLogs);

    const resultClasses = ['2xx', '3xx', '4xx', '5xx', 'timeout', 'error'];

    // Compliance (functions/compliance/metrics.ts): any batch that ends `failed` is worth a look.
    alarm('ComplianceBatchFailed', {
      alarmName: name('compliance-batch-failed'),
      alarmDescription:
        'A compliance batch ended failed: a chunk of devices could not be checked after all its retries, or its durable execution timed out, failed or was stopped without it (see docs/operations.md, "A compliance batch failed").',
      metric: own('ComplianceBatches', Stats.SUM, { Status: 'failed' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: name('operations'),
      defaultInterval: Duration.hours(3),
    });
    const perFunction = (list: typeof fns, metric: (fn: ServiceFunction) => IMetric) => list.map(([, fn]) => metric(fn));
    const apiName = Token.isUnresolved(props.api.restApiName) ? 'the API' : `API \`${props.api.restApiName}\``;
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${props.serviceName}\n${apiName}, stage \`${stageName}\`. Alarms notify ${this.alarmTopic ? 'the alarm topic' : 'no one (no alarm topic or e-mail configured)'}.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'API requests and errors', left: [requests, errors4xx, errors5xx], right: [rate5xx], width: 8 }),
      new GraphWidget({
        title: 'API latency (ms)',
        left: [
          latency(Stats.p(50)),
          latency(Stats.p(90)),
          latency(Stats.p(99)),
          stage.metricIntegrationLatency({ period: FIVE_MINUTES, statistic: Stats.p(99) }),
        ],
        right: latencyAlarms.map((l) => l.expression),
        width: 8,
      }),
      new GraphWidget({
        title: `Relay ${relay.method} ${relay.path} latency (ms)`,
        left: [methodLatency(relay, Stats.p(50), 'p50'), methodLatency(relay, Stats.p(99), 'p99')],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Relay calls by result',
        left: resultClasses.map((rc) => own('RelayCalls', Stats.SUM, { ResultClass: rc }, rc)),
        width: 8,
      }),
      new GraphWidget({
        title: 'Orchestrator latency (ms)',
        left: [own('RelayLatency', Stats.p(50), {}, 'p50'), own('RelayLatency', Stats.p(99), {}, 'p99')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Authorizer and validator',
        left: [own('AuthorizerDenials', Stats.SUM, {}, 'authorizer denials (401/403)'), own('ValidationFailures', Stats.SUM, {}, 'validation failures (400)')],
        right: [
          authorizerFailures.with({ label: 'authorizer failures (500)' }),
          ...(authorizerCrashes ? [authorizerCrashes.with({ label: 'authorizer timeouts and crashes' })] : []),
          ...(authorizer ? [authorizer.function.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM, label: 'authorizer throttles' })] : []),
        ],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Function duration p99 (ms)',
        left: perFunction(fns, (fn) => fn.function.metricDuration({ period: FIVE_MINUTES, statistic: Stats.p(99) })),
        width: 8,
      }),
      new GraphWidget({
        title: 'DynamoDB errors and throttles',
        left: tableMetrics.flatMap((m) => [m.systemErrors, m.throttled]),
        width: 8,
      }),
    );
    // One graph per function alarm group, each function its own line: the alarm says which group, the graph which function.
    this.dashboard.addWidgets(
      ...groupLabels.map(
        ({ label, members, functions }) =>
          new GraphWidget({
            title: `Function group ${label}: errors (left), throttles (right)`,
            left: members.map((op) => functions[op]!.function.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM, label: `${op} errors` })),
            right: members.map((op) => functions[op]!.function.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM, label: `${op} throttles` })),
            width: 8,
          }),
      ),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'DynamoDB consumed capacity',
        left: tableMetrics.map((m) => m.table.metricConsumedReadCapacityUnits({ period: FIVE_MINUTES, label: `${m.key} read` })),
        right: tableMetrics.map((m) => m.table.metricConsumedWriteCapacityUnits({ period: FIVE_MINUTES, label: `${m.key} write` })),
        width: 8,
      }),
    );
    // Logs Insights takes at most 50 log groups a query: one widget per even share of the functions.
    const shares = evenChunks(fns, MAX_QUERY_LOG_GROUPS);
    this.dashboard.addWidgets(
      ...shares.map(
        (share, i) =>
          new LogQueryWidget({
            title: `Recent errors (by correlation id = API Gateway request id)${shares.length > 1 ? ` (${i + 1} of ${shares.length})` : ''}`,
            logGroupNames: share.map(([, fn]) => fn.logGroup.logGroupName),
            queryLines: [
              'fields @timestamp, correlationId, operation, caller.subject, message',
              'filter level = "error" or level = "warn"',
              'sort @timestamp desc',
              'limit 50',
            ],
            width: 12,
            height: 6,
          }),
      ),
    );
  }

  /** The given topic, an existing one by ARN, or a new one for an e-mail address; none when nothing is set. */
  #topic(props: ObservabilityProps): ITopic | undefined {
    const given = [props.alarmTopic && 'alarmTopic', props.alarmTopicArn && 'alarmTopicArn', props.alarmEmail && 'alarmEmail'].filter(Boolean);
    if (given.length > 1) throw new Error(`observability: give at most one of alarmTopic, alarmTopicArn and alarmEmail, got ${given.join(', ')}`);
    if (props.alarmTopic) return props.alarmTopic;
    if (props.alarmTopicArn) return Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn);
    if (!props.alarmEmail) return undefined;
    // SSL-only (cdk-nag AwsSolutions-SNS3). Encrypted only with a customer-managed key
    // (alarmTopicKey): CloudWatch cannot publish to a topic under the AWS managed SNS key.
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `${props.serviceName} alarms`,
      enforceSSL: true,
      ...(props.alarmTopicKey ? { masterKey: props.alarmTopicKey } : {}),
    });
    topic.addSubscription(new EmailSubscription(props.alarmEmail));
    return topic;
  }
}
