/**
 * What platform engineers watch: CloudWatch alarms on the API's 5xx rate and p99 latency,
 * on every function's throttles and errors and on DynamoDB errors and throttles; a
 * dashboard with those plus the service's own metrics (EMF, namespace `Netconfig`); and a
 * retention on the API Gateway execution log group (API Gateway would otherwise create it
 * with no expiry). Function log groups get their retention from `ServiceFunction`.
 *
 * Alarm actions: set context `alarmTopicArn` (an existing SNS topic) or `alarmEmail` (a
 * topic is created and the address subscribed). Without either the alarms have no action
 * and show in the CloudWatch console only. Thresholds: props, or context `alarmApi5xxRatePercent`,
 * `alarmApi5xxMinRequests`, `alarmApiLatencyP99Ms`, `alarmDynamoSystemErrors`, `alarmDynamoUserErrors`.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
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
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { DEFAULT_METRICS_NAMESPACE } from '../../functions/shared/metrics.js';
import type { ServiceFunction } from './service-function.js';

export interface ObservabilityThresholds {
  /** Share of API requests answered 5xx, in percent, over one minute (3 of 5 minutes). Default 5. */
  readonly api5xxRatePercent?: number;
  /** Fewer requests than this in a minute never make a 5xx rate (one failure of two is not an outage). Default 10. */
  readonly api5xxMinRequests?: number;
  /** p99 of API latency in ms over five minutes (2 of 3 periods). Default 5000. */
  readonly apiLatencyP99Ms?: number;
  /** DynamoDB system errors (5xx of DynamoDB) per table in five minutes. Default 1. */
  readonly dynamoSystemErrors?: number;
  /** DynamoDB user errors (4xx: validation, access denied…), account and region wide, in five minutes. Default 5. */
  readonly dynamoUserErrors?: number;
}

export interface ObservabilityProps {
  readonly api: RestApi;
  readonly functions: Readonly<Record<string, ServiceFunction>>;
  readonly tables: Readonly<Record<string, ITable>>;
  /** The `Service` dimension of the service's EMF metrics (`SERVICE_NAME`). */
  readonly serviceName: string;
  /** Where alarms notify; default from context `alarmTopicArn` / `alarmEmail`. */
  readonly alarmTopic?: ITopic;
  readonly thresholds?: ObservabilityThresholds;
  /** Retention of the API Gateway execution logs. Default one month. */
  readonly executionLogRetention?: RetentionDays;
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

const FIVE_MINUTES = Duration.minutes(5);
const ONE_MINUTE = Duration.minutes(1);

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

export class Observability extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;
  readonly alarmTopic?: ITopic;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const t: ObservabilityThresholds = {
      ...this.#thresholdsFromContext(),
      ...props.thresholds,
    };
    const name = (suffix: string) => `${stack.stackName}-${suffix}`;
    this.alarmTopic = props.alarmTopic ?? this.#topicFromContext();
    const action = this.alarmTopic ? new SnsAction(this.alarmTopic) : undefined;
    const alarm = (id: string, alarmProps: ConstructorParameters<typeof Alarm>[2]): Alarm => {
      const a = new Alarm(this, id, { treatMissingData: TreatMissingData.NOT_BREACHING, ...alarmProps });
      if (action) {
        a.addAlarmAction(action);
        a.addOkAction(action);
      }
      this.alarms.push(a);
      return a;
    };

    // API Gateway: the stage's own metrics (ApiName + Stage dimensions).
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
    const latency = (statistic: string) => stage.metricLatency({ period: FIVE_MINUTES, statistic });
    alarm('Api5xxRate', {
      alarmName: name('api-5xx-rate'),
      alarmDescription: `More than ${t.api5xxRatePercent ?? 5}% of API requests answered 5xx in 3 of the last 5 minutes (minutes with fewer than ${minRequests} requests do not count).`,
      metric: rate5xx,
      threshold: t.api5xxRatePercent ?? 5,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    });
    alarm('ApiLatencyP99', {
      alarmName: name('api-latency-p99'),
      alarmDescription: `API p99 latency above ${t.apiLatencyP99Ms ?? 5000} ms in 2 of the last 3 five-minute periods.`,
      metric: latency(Stats.p(99)),
      threshold: t.apiLatencyP99Ms ?? 5000,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    // Lambda: errors here are crashes (init failures, timeouts, out of memory); the
    // functions answer their own failures as 4xx/5xx and those show in the API's metrics.
    const fns = Object.entries(props.functions).sort(([a], [b]) => a.localeCompare(b));
    for (const [op, fn] of fns) {
      const id = op[0]!.toUpperCase() + op.slice(1);
      alarm(`${id}Errors`, {
        alarmName: name(`fn-${op}-errors`),
        alarmDescription: `The ${op} function failed (crash, timeout or out of memory) in the last 5 minutes.`,
        metric: fn.function.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
      alarm(`${id}Throttles`, {
        alarmName: name(`fn-${op}-throttles`),
        alarmDescription: `Invocations of the ${op} function were throttled (concurrency limit) in the last 5 minutes.`,
        metric: fn.function.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    // DynamoDB: system errors and throttled requests per table, user errors account-wide
    // (DynamoDB publishes UserErrors without a table dimension).
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
    const firstTable = tableMetrics[0]?.table;
    const userErrors = firstTable?.metricUserErrors({ period: FIVE_MINUTES, statistic: Stats.SUM });
    if (userErrors) {
      alarm('DynamoUserErrors', {
        alarmName: name('ddb-user-errors'),
        alarmDescription: `DynamoDB rejected at least ${t.dynamoUserErrors ?? 5} requests as invalid or unauthorized in 5 minutes (account and region wide: a bad deployment, a missing grant or a missing table).`,
        metric: userErrors,
        threshold: t.dynamoUserErrors ?? 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    // API Gateway writes execution logs to this group; created here so that it has a retention.
    // The stage's literal name (from its L1 resource): `stage.stageName` is a Ref to the stage itself.
    const stageName = (stage.node.defaultChild as CfnStage).stageName ?? stage.stageName;
    const executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${props.api.restApiId}/${stageName}`,
      retention: props.executionLogRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    stage.node.addDependency(executionLogs);

    // The service's own metrics (functions/shared/metrics.ts).
    const own = (metricName: string, statistic: string, dimensionsMap: Record<string, string> = {}, label?: string) =>
      new Metric({
        namespace: DEFAULT_METRICS_NAMESPACE,
        metricName,
        statistic,
        period: FIVE_MINUTES,
        dimensionsMap: { Service: props.serviceName, ...dimensionsMap },
        ...(label ? { label } : {}),
      });
    const resultClasses = ['2xx', '3xx', '4xx', '5xx', 'timeout', 'error'];

    // Compliance (functions/compliance/metrics.ts): any batch that ends `failed` is worth a look.
    alarm('ComplianceBatchFailed', {
      alarmName: name('compliance-batch-failed'),
      alarmDescription: 'A compliance batch ended failed: a chunk of devices could not be checked after all its retries (see the batch function logs).',
      metric: own('ComplianceBatches', Stats.SUM, { Status: 'failed' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: name('operations'),
      defaultInterval: Duration.hours(3),
    });
    const perFunction = (metric: (fn: ServiceFunction) => IMetric) => fns.map(([, fn]) => metric(fn));
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${props.serviceName}\nAPI stage \`${stageName}\`. Alarms notify ${this.alarmTopic ? 'the alarm topic' : 'no one (set context alarmTopicArn or alarmEmail)'}.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'API requests and errors', left: [requests, errors4xx, errors5xx], right: [rate5xx], width: 8 }),
      new GraphWidget({
        title: 'API latency (ms)',
        left: [latency(Stats.p(50)), latency(Stats.p(90)), latency(Stats.p(99)), stage.metricIntegrationLatency({ period: FIVE_MINUTES, statistic: Stats.p(99) })],
        width: 8,
      }),
      new GraphWidget({
        title: 'Relay calls by result',
        left: resultClasses.map((rc) => own('RelayCalls', Stats.SUM, { ResultClass: rc }, rc)),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Relay latency (ms)',
        left: [own('RelayLatency', Stats.p(50), {}, 'p50'), own('RelayLatency', Stats.p(99), {}, 'p99')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Refused requests',
        left: [own('AuthorizerDenials', Stats.SUM, {}, 'authorizer denials'), own('ValidationFailures', Stats.SUM, {}, 'validation failures (400)')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Function errors and throttles',
        left: perFunction((fn) => fn.function.metricErrors({ period: FIVE_MINUTES, statistic: Stats.SUM })),
        right: perFunction((fn) => fn.function.metricThrottles({ period: FIVE_MINUTES, statistic: Stats.SUM })),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Function duration p99 (ms)',
        left: perFunction((fn) => fn.function.metricDuration({ period: FIVE_MINUTES, statistic: Stats.p(99) })),
        width: 8,
      }),
      new GraphWidget({
        title: 'DynamoDB errors and throttles',
        left: [...tableMetrics.flatMap((m) => [m.systemErrors, m.throttled]), ...(userErrors ? [userErrors] : [])],
        width: 8,
      }),
      new GraphWidget({
        title: 'DynamoDB consumed capacity',
        left: tableMetrics.map((m) => m.table.metricConsumedReadCapacityUnits({ period: FIVE_MINUTES, label: `${m.key} read` })),
        right: tableMetrics.map((m) => m.table.metricConsumedWriteCapacityUnits({ period: FIVE_MINUTES, label: `${m.key} write` })),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new LogQueryWidget({
        title: 'Recent errors (by correlation id = API Gateway request id)',
        logGroupNames: fns.map(([, fn]) => fn.logGroup.logGroupName),
        queryLines: [
          'fields @timestamp, correlationId, operation, message',
          'filter level = "error" or level = "warn"',
          'sort @timestamp desc',
          'limit 50',
        ],
        width: 24,
        height: 6,
      }),
    );
  }

  /** Thresholds given as context (`-c alarmApiLatencyP99Ms=8000`); each a positive number. */
  #thresholdsFromContext(): ObservabilityThresholds {
    const keys: Record<string, keyof ObservabilityThresholds> = {
      alarmApi5xxRatePercent: 'api5xxRatePercent',
      alarmApi5xxMinRequests: 'api5xxMinRequests',
      alarmApiLatencyP99Ms: 'apiLatencyP99Ms',
      alarmDynamoSystemErrors: 'dynamoSystemErrors',
      alarmDynamoUserErrors: 'dynamoUserErrors',
    };
    const out: Record<string, number> = {};
    for (const [contextKey, field] of Object.entries(keys)) {
      const raw: unknown = this.node.tryGetContext(contextKey);
      if (raw === undefined) continue;
      const value = Number(raw);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`context ${contextKey} must be a positive number, got ${String(raw)}`);
      out[field] = value;
    }
    return out;
  }

  /** An existing topic (`alarmTopicArn`), or a new one for `alarmEmail`; none when neither is set. */
  #topicFromContext(): ITopic | undefined {
    const arn = this.node.tryGetContext('alarmTopicArn') as string | undefined;
    if (arn) return Topic.fromTopicArn(this, 'AlarmTopic', arn);
    const email = this.node.tryGetContext('alarmEmail') as string | undefined;
    if (!email) return undefined;
    // SSL-only (cdk-nag AwsSolutions-SNS3). Not KMS-encrypted: CloudWatch cannot publish to a topic
    // under the AWS managed SNS key; pass your own encrypted topic with alarmTopicArn if you need one.
    const topic = new Topic(this, 'AlarmTopic', { displayName: 'netconfig alarms', enforceSSL: true });
    topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}
