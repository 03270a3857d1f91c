/**
 * The whole service, in two stacks of one CDK app (docs/decisions.md, "Stack split"):
 *
 * - the stateful stack (`<stackName>`): the DynamoDB tables, the Cognito user pool, the
 *   secrets; termination protection, every resource retained. Its construct ids are those the
 *   resources had when everything was one stack, so their logical ids (pinned by
 *   test/infra/stateful.test.ts) never move.
 * - the API stack (`<stackName>Api`): the REST API with its stage, authorizer, the path
 *   resources parts share, the removed routes (Mock integrations answering 410), gateway
 *   responses, API-wide alarms and the dashboard; and one nested stack per application
 *   ({@link apiPartOf}) with that application's functions, their roles, their methods, the path
 *   subtrees only its routes use ({@link pathOwners}) and their alarms. A route costs its part
 *   about four resources and the API stack none, so each stays far from CloudFormation's 500.
 *
 * Everything per route is derived from the route table; everything per deployment from the
 * deployment settings (the config file, infra/config.ts).
 */
import { ArnFormat, Aspects, CfnOutput, Duration, NestedStack, RemovalPolicy, Size, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AuthorizationType,
  AwsIntegration,
  ResponseTransferMode,
  LogGroupLogDestination,
  MethodLoggingLevel,
  Resource,
  RestApi,
  type IAuthorizer,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, Billing, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key, type IKey } from 'aws-cdk-lib/aws-kms';
import { Alias, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { liveRoutes as routeTable } from '../functions/api/routes.js';
import { BATCH_EXECUTION_TIMEOUT_SECONDS } from '../functions/compliance/deadline.js';
import { removedRoutes } from '../functions/api/removed.js';
import type { LiveRoute, TableAccess, TableKey } from '../functions/platform/route.js';
import { CONSOLE_BUNDLE_DIR, consoleEnvironment, type ConsoleConfig } from '../functions/console/model.js';
import { buildConsole } from '../console/build.js';
import { accessLogFormat } from './access-log.js';
import {
  callsOutside,
  concurrencyGroup,
  DEFAULT_API,
  DEFAULT_CONSOLE_SCOPES,
  DEFAULT_LOG_RETENTION_DAYS,
  EXAMPLE_CONFIG_FILE,
  kmsKeyArn,
  loadDeployConfig,
  serviceNameOf,
  type ConsoleSettings,
  type DeploySettings,
  type IdentitySettings,
  type KmsUse,
} from './config.js';
import { ApiExposure, restApiExposure, usageKeysEnvironment } from './constructs/api-exposure.js';
import { Auth, UserDirectory, type AuthProps } from './constructs/auth.js';
import { CognitoConsoleSignIn, oidcConsoleSignIn } from './constructs/console-sign-in.js';
import { TableBackup } from './constructs/backup.js';
import { ComplianceEventBus } from './constructs/compliance-events.js';
import { ConfigArchiveBucket } from './constructs/config-archive.js';
import { CanaryRelease, releaseTarget } from './constructs/canary.js';
import { LogEncryption } from './constructs/log-encryption.js';
import { LogPolicy } from './constructs/log-policy.js';
import { PrivateNetwork } from './constructs/network.js';
import { alarmedRoutes, Observability } from './constructs/observability.js';
import { Secrets, type SecretsAccess, type SecretsProps } from './constructs/secrets.js';
import { PlanSchedules, removesSchedules } from './constructs/plan-schedules.js';
import { ServiceFunction, tablePermission, type FunctionPermission, type ServiceFunctionProps } from './constructs/service-function.js';
import { addGatewayResponses } from './gateway-responses.js';
import { applyLandingZone, stackPlacement } from './landing-zone.js';
import { addRemovedRoute } from './removed-routes.js';
import { tableEnv, tableSpecs } from '../functions/platform/tables.js';
import { ROUTE_ROLES_VARIABLE, routeRolesValue } from '../functions/platform/route-authorization.js';

export const STAGE_NAME = 'v1';

export { serviceNameOf };

export interface NetconfigStackProps extends StackProps {
  /** Local mode (`npm start`): loopback orchestrators allowed, secrets in an embedded store. */
  readonly local?: { readonly secretsFile: string; readonly auth: AuthProps; readonly console: ConsoleConfig };
  /**
   * The deployment settings (a checked config file, `loadDeployConfig`). Default: those of
   * `deploy/config.example.json`, so that a stack built in a test has a complete configuration;
   * the app always passes the file it was given.
   */
  readonly settings?: DeploySettings;
  /** The live routes; default the route table (a test passes more to measure the stacks). */
  readonly routes?: readonly LiveRoute[];
}

const pascal = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

/**
 * The customer-managed key of a use in a stack (imported by ARN, once per key and stack), or
 * none: an AWS-managed key. The log groups of every stack take `kms.logs` ({@link LogEncryption}).
 */
const customerKey = (scope: Stack, settings: DeploySettings | undefined, use: KmsUse): IKey | undefined => {
  const arn = kmsKeyArn(settings?.kms, use);
  if (!arn) return undefined;
  const id = `Key${createHash('sha256').update(arn).digest('hex').slice(0, 8)}`;
  return (scope.node.tryFindChild(id) as IKey | undefined) ?? Key.fromKeyArn(scope, id, arn);
};

/**
 * The execute-api ARN of one method of a REST API on the stage: `…:<api-id>/v1/POST/orch_manager/restAction/*`,
 * path parameters as `*` (as API Gateway names the method it invokes a function for).
 */
export const methodArn = (scope: Construct, restApiId: string, method: string, routePath: string): string =>
  Stack.of(scope).formatArn({
    service: 'execute-api',
    resource: restApiId,
    resourceName: `${STAGE_NAME}/${method}${routePath.replace(/\{[^}]+\}/g, '*')}`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });

/**
 * Lets API Gateway invoke a route's function (or its release alias) for that one method of this
 * stack's REST API, in this account: a resource policy statement on the function with
 * `aws:SourceArn` (the method's ARN on the stage) and `aws:SourceAccount`. No other API, method
 * or account can make API Gateway a deputy that calls it, and the function's other routes cannot
 * reach it either. (An integration role assumed by API Gateway cannot be scoped so: API Gateway
 * sets neither key when it assumes an integration's credentials.)
 */
const allowMethodInvoke = (target: IFunction, restApiId: string, method: string, routePath: string): void => {
  target.addPermission('ApiInvoke', {
    principal: new ServicePrincipal('apigateway.amazonaws.com'),
    action: 'lambda:InvokeFunction',
    sourceArn: methodArn(target, restApiId, method, routePath),
    sourceAccount: Stack.of(target).account,
  });
};

/**
 * The nested stack (API part) of a route: its application (`/orch_manager`,
 * `/configuration_manager`), else its feature. Fixed by the route itself, never by its position
 * in the table: a method that moved to another part would be created there before the old
 * part deleted it, which API Gateway refuses (docs/decisions.md).
 */
const PARTS: Readonly<Record<string, string>> = {
  relay: 'OrchManager',
  trees: 'ConfigurationManager',
  versions: 'ConfigurationManager',
  compliance: 'ConfigurationManager',
  exemptions: 'ConfigurationManager',
  configurations: 'ConfigurationManager',
  adapters: 'Adapters',
  applications: 'Runtime',
  profiles: 'Runtime',
  operations: 'Health',
};
export const apiPartOf = (route: Pick<LiveRoute, 'tag'>): string =>
  PARTS[route.tag] ??
  route.tag
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(pascal)
    .join('');

/**
 * What an append-only table's resource policy denies every principal (`TableSpec.appendOnly`):
 * each way to change or remove an item. PutItem stays allowed, to whom IAM grants it: the
 * functions put new entries with `attribute_not_exists` (functions/runtime/changelog.ts).
 */
export const APPEND_ONLY_DENIED = [
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
] as const;

/**
 * The resource policy of an append-only table: an explicit Deny of {@link APPEND_ONLY_DENIED}
 * to any principal, which no identity policy can override (an administrator's included). `*`
 * as the resource is the table the policy is attached to (its own ARN would be a circular reference).
 */
const appendOnlyPolicy = (): PolicyDocument =>
  new PolicyDocument({
    statements: [
      new PolicyStatement({
        sid: 'AppendOnly',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: [...APPEND_ONLY_DENIED],
        resources: ['*'],
      }),
    ],
  });

/**
 * A customer-managed table key in a region-agnostic stack. CDK renders a global table's replica
 * key per region and refuses when the stack's region is a token; these tables have one replica,
 * in the stack's own region, so its key is the table key wherever that is (kms.* keys of one
 * region are checked by infra/config.ts; the table and the key must share it).
 */
const singleRegionKey = (key: IKey): TableEncryptionV2 => {
  const encryption = TableEncryptionV2.customerManagedKey(key);
  encryption._renderReplicaSseSpecification = () => ({ kmsMasterKeyId: key.keyArn });
  return encryption;
};

/** The stateful stack: tables, user pool, secrets. Terminated by no one, and none of its resources is ever deleted with it. */
/**
 * The Lambda proxy integration of a route. A CSV route's streams (`InvokeWithResponseStream`,
 * response transfer mode STREAM): API Gateway passes the function's rows on as they come, past
 * its 10 MB answer limit, instead of waiting for the whole answer (as `LambdaIntegration` does
 * with the same option; the permission is the same `lambda:InvokeFunction`).
 */
const lambdaIntegration = (route: LiveRoute, functionArn: string): AwsIntegration =>
  route.csv
    ? new AwsIntegration({
        proxy: true,
        service: 'lambda',
        path: `2021-11-15/functions/${functionArn}/response-streaming-invocations`,
        options: { responseTransferMode: ResponseTransferMode.STREAM },
      })
    : new AwsIntegration({ proxy: true, service: 'lambda', path: `2015-03-31/functions/${functionArn}/invocations` });

export class NetconfigDataStack extends Stack {
  readonly tables: Record<TableKey, TableV2>;
  readonly secrets: Secrets;
  /** The default issuer (absent with an external OIDC issuer, and in local mode). */
  readonly directory?: UserDirectory;
  /** The key of the idempotency fingerprints (absent in local mode: a key file). */
  readonly fingerprintKey?: Secret;
  /** The configuration history's bucket. */
  readonly configArchive: ConfigArchiveBucket;
  /** The bus of the compliance events (the stack's own, or the one the config names). */
  readonly complianceEvents: ComplianceEventBus;

  constructor(scope: Construct, id: string, props: NetconfigStackProps & { readonly serviceName: string; readonly deployed?: DeploySettings }) {
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? !props.local });
    const { deployed, serviceName } = props;
    const tableKey = customerKey(this, deployed, 'tables');
    const secretsKey = customerKey(this, deployed, 'secrets');
    // Construct ids as in the single stack of earlier versions: the logical ids stay those of the deployed tables.
    this.tables = Object.fromEntries(
      (Object.keys(tableSpecs) as TableKey[]).map((key) => {
        const spec = tableSpecs[key];
        const attr = (k: { name: string; type: 'S' | 'N' }) => ({ name: k.name, type: k.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER });
        const table = new TableV2(this, `${pascal(key)}Table`, {
          partitionKey: attr(spec.partitionKey),
          ...(spec.sortKey ? { sortKey: attr(spec.sortKey) } : {}),
          billing: Billing.onDemand(),
          pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
          // A change of key is an update in place (SSESpecification): the table keeps its logical id and data.
          encryption: tableKey ? singleRegionKey(tableKey) : TableEncryptionV2.awsManagedKey(),
          deletionProtection: !props.local,
          removalPolicy: RemovalPolicy.RETAIN,
          ...(spec.timeToLive ? { timeToLiveAttribute: spec.timeToLive } : {}),
          ...(spec.appendOnly ? { resourcePolicy: appendOnlyPolicy() } : {}),
          globalSecondaryIndexes: spec.globalIndexes?.map((g) => ({
            indexName: g.name,
            partitionKey: attr(g.partitionKey),
            ...(g.sortKey ? { sortKey: attr(g.sortKey) } : {}),
            ...(g.include ? { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...g.include] } : {}),
          })),
        });
        return [key, table];
      }),
    ) as Record<TableKey, TableV2>;

    this.configArchive = new ConfigArchiveBucket(this, 'ConfigArchive', {
      key: customerKey(this, deployed, 'configs'),
      accessLogDays: deployed?.logs.retentionDays ?? DEFAULT_LOG_RETENTION_DAYS,
    });

    this.complianceEvents = new ComplianceEventBus(this, 'ComplianceEvents', {
      serviceName,
      busArn: deployed?.events?.busArn,
      key: deployed?.events?.busArn ? undefined : customerKey(this, deployed, 'events'),
    });

    const secretsProps: SecretsProps = props.local
      ? { backend: 'local', file: props.local.secretsFile }
      : { backend: 'vault', ...deployed!.vault, ...(secretsKey ? { encryptionKey: secretsKey } : {}) };
    this.secrets = new Secrets(this, 'Secrets', secretsProps);
    const identity = deployed?.identity;
    if (!props.local && identity?.provider !== 'oidc') this.directory = new UserDirectory(this, 'Auth', identity?.mfa);
    const backupKey = customerKey(this, deployed, 'backup');
    if (deployed?.backup) {
      new TableBackup(this, 'Backup', { settings: deployed.backup, tables: Object.values(this.tables), serviceName, ...(backupKey ? { key: backupKey } : {}) });
    }
    const logKey = kmsKeyArn(deployed?.kms, 'logs');
    if (logKey) Aspects.of(this).add(new LogEncryption(logKey));

    // The key of the idempotency fingerprints (functions/platform/fingerprint-key.ts): a random
    // secret of this deployment, kept (a new key would turn every retry within a day into a 422).
    // Locally, a key file beside the secrets store.
    if (!props.local) {
      this.fingerprintKey = new Secret(this, 'IdempotencyKey', {
        description: `${serviceName}: key of the Idempotency-Key request fingerprints (HMAC-SHA-256)`,
        generateSecretString: { passwordLength: 64, excludePunctuation: true },
        removalPolicy: RemovalPolicy.RETAIN,
        ...(secretsKey ? { encryptionKey: secretsKey } : {}),
      });
    }
    if (this.directory) {
      new CfnOutput(this, 'UserPoolId', { value: this.directory.userPool.userPoolId });
      new CfnOutput(this, 'UserPoolClientId', {
        value: this.directory.userPoolClient.userPoolClientId,
        description: 'Token audience: the client id for initiate-auth',
      });
    }
  }
}

/**
 * One application's functions, their roles, their methods, the path resources only its routes
 * use, and their alarms, on the REST API of the parent stack.
 */
export class ApiPart extends NestedStack {
  readonly functions: Record<string, ServiceFunction> = {};
  /** The methods it serves (for its latency alarms). */
  readonly methods: { method: string; path: string }[] = [];
  /** The REST API's id, as this nested stack receives it. */
  readonly restApiId: string;
  readonly #api;
  readonly #resources = new Map<string, IResource>();

  constructor(scope: Construct, id: string, api: RestApi, description: string) {
    super(scope, id, { description });
    this.#api = RestApi.fromRestApiAttributes(this, 'Api', { restApiId: api.restApiId, rootResourceId: api.restApiRootResourceId });
    this.restApiId = this.#api.restApiId;
  }

  /** A path resource the parent stack made (a path other parts or removed routes use too), imported here. */
  pathResource(parent: IResource): IResource {
    let known = this.#resources.get(parent.path);
    if (!known) {
      const id = `Path${createHash('sha256').update(parent.path).digest('hex').slice(0, 8)}`;
      known = Resource.fromResourceAttributes(this, id, { resourceId: parent.resourceId, restApi: this.#api, path: parent.path });
      this.#resources.set(parent.path, known);
    }
    return known;
  }
}

/**
 * Which stack makes each path resource: the part whose live routes are the only ones at and
 * below the path, else (a path of several parts, or of a removed route) the API stack. So a
 * feature's path subtree grows in its own nested stack, and the API stack holds only the
 * shared trunk. A path's owner changes only when a route of another part or a removed route
 * comes under it; test/infra/stack-split.test.ts pins the owners, since such a move needs two
 * deploys (docs/decisions.md, "Stack split").
 */
export const pathOwners = (live: readonly LiveRoute[], removed: readonly { path: string }[]): Map<string, string | undefined> => {
  const users = new Map<string, Set<string>>();
  const note = (path: string, user: string) => {
    const segments = path.split('/').filter(Boolean);
    for (let i = 1; i <= segments.length; i++) {
      const prefix = `/${segments.slice(0, i).join('/')}`;
      (users.get(prefix) ?? users.set(prefix, new Set()).get(prefix)!).add(user);
    }
  };
  for (const route of live) note(route.path, apiPartOf(route));
  // No part is named so: apiPartOf gives PascalCase names.
  for (const route of removed) note(route.path, ' removed');
  return new Map([...users].map(([path, set]) => [path, set.size === 1 && !set.has(' removed') ? [...set][0] : undefined]));
};

/** A part's name as it appears in alarm names: `ConfigurationManager` → `configuration-manager`. */
export const partSlug = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/**
 * The API: the REST API and what it shares (stage, authorizer, path resources, removed
 * routes, gateway responses, alarms), and an {@link ApiPart} per application.
 */
export class NetconfigApiStack extends Stack {
  readonly api: RestApi;
  readonly functions: Record<string, ServiceFunction> = {};
  readonly parts: Record<string, ApiPart> = {};
  /** The durable function that runs compliance batches, as the API starts it. */
  readonly complianceBatchAlias: Alias;
  /** The remediation function's `live` alias: what the routes that start runs and rollbacks invoke. */
  readonly remediationRunAlias: Alias;

  constructor(
    scope: Construct,
    id: string,
    props: NetconfigStackProps & { readonly serviceName: string; readonly deployed?: DeploySettings; readonly data: NetconfigDataStack },
  ) {
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? props.deployed?.deployment.terminationProtection ?? false });
    const { deployed, serviceName, data } = props;
    // The console's routes only while it is on (`console.enabled`; always in local mode).
    const liveRoutes = (props.routes ?? routeTable).filter((r) => !r.needs.console || props.local || (deployed?.console.enabled ?? true));
    this.addStackDependency(data);
    const logKey = kmsKeyArn(deployed?.kms, 'logs');
    // Every log group of this stack and its parts, whoever creates it.
    if (logKey) Aspects.of(this).add(new LogEncryption(logKey));
    const canary = deployed?.deployment.canary;

    const common = {
      SERVICE_NAME: serviceName,
      LOG_LEVEL: deployed?.logLevel ?? 'info',
      ...(props.local ? { LOCAL_MODE: 'true' } : {}),
    };
    // The functions that call NSO or Vault (and the authorizer, when asked): in the VPC when one is given, and carrying the CA bundle.
    const network = deployed?.network
      ? new PrivateNetwork(this, 'Network', deployed.network, { eventBusArn: data.complianceEvents.bus.eventBusArn })
      : undefined;
    const outside = {
      ...(network ? { network: network.placement } : {}),
      ...(deployed?.caBundle ? { caBundle: deployed.caBundle } : {}),
    };

    const identity = deployed?.identity;
    const exposure = deployed?.api ?? DEFAULT_API;
    // With network.placement "all", every function runs in the VPC, the authorizer included.
    const everyInVpc = network && deployed?.network?.placement === 'all' ? { network: network.placement } : {};
    const auth = new Auth(this, 'Auth', {
      ...everyInVpc,
      ...(props.local?.auth ?? (identity?.provider === 'oidc' ? oidcAuth(identity, outside) : { directory: data.directory! })),
      environment: { ...common, ...usageKeysEnvironment(serviceName, exposure) },
      ...(typeof deployed?.concurrency.authorizer === 'number' ? { reservedConcurrentExecutions: deployed.concurrency.authorizer } : {}),
      ...(canary ? { canary } : {}),
      serviceName,
    });

    // Retention, removal and archive: the deployment's log policy (NetconfigService, LogPolicy).
    const accessLogs = new LogGroup(this, 'AccessLogs');
    // Every method's settings: a method with settings of its own takes none from the stage's `*/*`, so each repeats them.
    const methodSettings = {
      loggingLevel: MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      throttlingRateLimit: exposure.throttling.rateLimit,
      throttlingBurstLimit: exposure.throttling.burstLimit,
    };
    // Per-method metrics cost per metric: by default only the methods the latency alarms read have them.
    const allMetrics = exposure.detailedMetrics === 'all';
    this.api = new RestApi(this, 'Api', {
      restApiName: serviceName,
      description: 'Network configuration management service',
      // Answers of 1 KiB and more go out compressed to a client that accepts it: the console's scripts above all.
      minCompressionSize: Size.kibibytes(1),
      ...restApiExposure(this, exposure),
      // The account's API Gateway logging role is region-wide: set by the stack only when the
      // config says so, and then kept when the stack goes (or stops managing it).
      ...(deployed?.landingZone.apiGatewayAccountRole === 'manage'
        ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
        : { cloudWatchRole: false }),
      deployOptions: {
        stageName: STAGE_NAME,
        tracingEnabled: true,
        metricsEnabled: allMetrics,
        ...methodSettings,
        ...(allMetrics
          ? {}
          : {
              methodOptions: Object.fromEntries(alarmedRoutes(liveRoutes).map((r) => [`${r.path}/${r.method}`, { ...methodSettings, metricsEnabled: true }])),
            }),
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
      },
    });
    new ApiExposure(this, 'Exposure', { api: this.api, settings: exposure, serviceName });
    // The methods of the parts name the authorizer by id; it belongs to this stack's API.
    auth.authorizer._attachToApi(this.api);
    const authorizer: IAuthorizer = { authorizerId: auth.authorizer.authorizerId, authorizationType: AuthorizationType.CUSTOM };

    const partOf = (name: string): ApiPart => (this.parts[name] ??= new ApiPart(this, name, this.api, `${serviceName}: the functions and methods of ${name}`));

    // What a function may do, from its needs: the tables (with their names in the environment),
    // the Vault credential, starting compliance batches. Functions with the same needs (in one part) share a role.
    const tableNeeds = (tables: Partial<Record<TableKey, TableAccess>>) => {
      const entries = Object.entries(tables) as [TableKey, TableAccess][];
      for (const [key, access] of entries) {
        if (tableSpecs[key].appendOnly && access === 'write') {
          throw new Error(`the ${key} table is append-only: a function may have 'append' access to it (PutItem of new items), never 'write'`);
        }
      }
      return {
        permissions: entries.map(([key, access]) => tablePermission(data.tables[key], access)),
        environment: Object.fromEntries(entries.map(([key]) => [tableEnv(key), data.tables[key].tableName])),
      };
    };
    const secretsPermission = (access: SecretsAccess): FunctionPermission => ({
      key: `secrets:${access}`,
      grant: (grantee) => data.secrets.credentials?.[access].grantRead(grantee),
    });
    // `secrets.bind` below sets the Vault environment; the read grant it also makes on the function
    // is this permission's own statement again, which the role's policy keeps once.

    // Compliance batches run on a durable function: checkpointed chunks, replayed after a crash
    // or a 15-minute invocation limit, for up to a day per batch (docs/compliance.md has the
    // arithmetic for 50,000 devices). Started through its `live` alias: durable executions run
    // a published version, so a deployment never changes the code under a running batch.
    const batchPart = partOf(apiPartOf({ tag: 'compliance' }));
    const batchTables = tableNeeds({ compliance: 'write', adapters: 'read', configs: 'write', profiles: 'read' });
    const archive = data.configArchive;
    const complianceBatch = new ServiceFunction(batchPart, 'ComplianceBatch', {
      handler: 'compliance/handlers/batch',
      description: 'Runs compliance batches (durable execution): fetches device configurations through the relay client and grades them',
      environment: { ...common, ...batchTables.environment, ...archive.environment(), ...data.complianceEvents.environment() },
      timeout: Duration.minutes(15),
      memorySize: 1024,
      durableConfig: { executionTimeout: Duration.seconds(BATCH_EXECUTION_TIMEOUT_SECONDS), retentionPeriod: Duration.days(14) },
      permissions: [...batchTables.permissions, archive.permission('write'), secretsPermission('read'), data.complianceEvents.permission()],
      ...outside,
    });
    data.secrets.bind(complianceBatch, 'read');
    this.functions['complianceBatch'] = complianceBatch;
    batchPart.functions['complianceBatch'] = complianceBatch;
    this.complianceBatchAlias = new Alias(batchPart, 'ComplianceBatchLive', { aliasName: 'live', version: complianceBatch.function.currentVersion });

    // Remediation runs (and their rollbacks) are durable executions too, for the same reasons:
    // a crash between a device's commit and its record must never commit it again. The function
    // reaches NSO through the relay client (secrets, network), and writes the run's items in the
    // compliance table and its end in the audit trail.
    const runTables = tableNeeds({ compliance: 'write', adapters: 'read', changelog: 'append', profiles: 'read' });
    const remediationRun = new ServiceFunction(batchPart, 'RemediationRun', {
      handler: 'remediation/handlers/run',
      description:
        "Runs remediation runs and their rollbacks (durable execution): sends each device's transaction to NSO, dry-run or commit, and grades it again",
      environment: { ...common, ...runTables.environment },
      timeout: Duration.minutes(15),
      memorySize: 1024,
      durableConfig: { executionTimeout: Duration.seconds(BATCH_EXECUTION_TIMEOUT_SECONDS), retentionPeriod: Duration.days(14) },
      permissions: [...runTables.permissions, secretsPermission('read')],
      ...outside,
    });
    data.secrets.bind(remediationRun, 'read');
    this.functions['remediationRun'] = remediationRun;
    batchPart.functions['remediationRun'] = remediationRun;
    this.remediationRunAlias = new Alias(batchPart, 'RemediationRunLive', { aliasName: 'live', version: remediationRun.function.currentVersion });
    const startsRemediation: FunctionPermission = {
      key: `invoke:${this.remediationRunAlias.node.path}`,
      grant: (grantee) => this.remediationRunAlias.grantInvoke(grantee),
    };

    // The housekeeping of both durable functions, every hour: ends the batches, runs and rollbacks
    // whose execution ended without them (timed out, failed, stopped; a run's end is audited) and
    // deletes the versions no execution can use any more. It may read each function's versions,
    // aliases and executions and delete its versions, nothing else: `DeleteFunction` only on
    // qualified ARNs (`:*`), so never a function itself.
    const housekeepingTables = tableNeeds({ compliance: 'write', changelog: 'append', profiles: 'read' });
    const versionsOf = (fn: IFunction): FunctionPermission => ({
      key: `versions:${fn.node.path}`,
      grant: (grantee) => {
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['lambda:ListVersionsByFunction', 'lambda:ListAliases'], resources: [fn.functionArn] }),
        );
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['lambda:ListDurableExecutionsByFunction', 'lambda:DeleteFunction'], resources: [`${fn.functionArn}:*`] }),
        );
      },
    });
    const housekeeping = new ServiceFunction(batchPart, 'ComplianceHousekeeping', {
      handler: 'api/handlers/housekeeping',
      description:
        'Hourly: ends compliance batches and remediation runs whose durable execution ended without them, prunes the versions of both durable functions no execution uses',
      environment: {
        ...common,
        ...housekeepingTables.environment,
        COMPLIANCE_FUNCTION_NAME: complianceBatch.function.functionName,
        REMEDIATION_FUNCTION_NAME: remediationRun.function.functionName,
        CONFIGS_BUCKET: archive.bucket.bucketName,
      },
      timeout: Duration.minutes(5),
      ...everyInVpc,
      permissions: [
        ...housekeepingTables.permissions,
        archive.lifecyclePermission(),
        versionsOf(complianceBatch.function),
        versionsOf(remediationRun.function),
      ],
    });
    this.functions['complianceHousekeeping'] = housekeeping;
    batchPart.functions['complianceHousekeeping'] = housekeeping;
    new Rule(batchPart, 'ComplianceHousekeepingSchedule', {
      description: 'Runs the compliance housekeeping every hour',
      schedule: Schedule.rate(Duration.hours(1)),
      targets: [new LambdaFunction(housekeeping.function, { retryAttempts: 2 })],
    });

    const startsCompliance: FunctionPermission = {
      key: `invoke:${this.complianceBatchAlias.node.path}`,
      grant: (grantee) => this.complianceBatchAlias.grantInvoke(grantee),
    };
    const schedules = this.#planSchedules(batchPart, serviceName, {
      tables: tableNeeds({ compliance: 'write', trees: 'read', adapters: 'read', profiles: 'read', changelog: 'append' }),
      common: { ...common, COMPLIANCE_FUNCTION: this.complianceBatchAlias.functionArn },
      // A plan's start reads NSO's inventory when its version selects devices: the relay's secrets and network.
      permissions: [startsCompliance, secretsPermission('read')],
      network: outside,
      bind: (fn) => data.secrets.bind(fn, 'read'),
    });
    const fingerprintKey = data.fingerprintKey;
    const fingerprintKeyNeeds: { environment: Record<string, string>; permissions: FunctionPermission[] } = {
      environment: props.local
        ? { IDEMPOTENCY_KEY_FILE: path.join(path.dirname(props.local.secretsFile), 'idempotency.key') }
        : { IDEMPOTENCY_KEY_SECRET: fingerprintKey!.secretArn },
      permissions: fingerprintKey ? [{ key: 'secret:idempotency-key', grant: (grantee) => fingerprintKey.grantRead(grantee) }] : [],
    };

    // The resource of a route's path in its part: made there below the first segment only the
    // part's routes use, else imported from this stack.
    const owners = pathOwners(liveRoutes, removedRoutes);
    const resourceIn = (part: ApiPart, name: string, routePath: string): IResource => {
      const segments = routePath.split('/').filter(Boolean);
      const own = segments.findIndex((_, i) => owners.get(`/${segments.slice(0, i + 1).join('/')}`) === name);
      if (own < 0) return part.pathResource(this.api.root.resourceForPath(routePath));
      const trunk = part.pathResource(own === 0 ? this.api.root : this.api.root.resourceForPath(`/${segments.slice(0, own).join('/')}`));
      return trunk.resourceForPath(segments.slice(own).join('/'));
    };

    // The web console: built once for the routes that serve it, shipped in their bundles, with the sign-in settings.
    const consoleNeeds = liveRoutes.some((r) => r.needs.console)
      ? {
          bundledFiles: { [CONSOLE_BUNDLE_DIR]: buildConsole().dir },
          environment: consoleEnvironment(props.local?.console ?? this.#consoleSignIn(auth, deployed, data, serviceName)),
        }
      : undefined;

    // What each method is: the deployment's logical id changes with it (below).
    const methods: unknown[] = [];
    for (const route of liveRoutes) {
      const partName = apiPartOf(route);
      const part = partOf(partName);
      const group = concurrencyGroup(route);
      const cap = group ? deployed?.concurrency[group] : undefined;
      const tables = tableNeeds(route.needs.tables ?? {});
      const fn = new ServiceFunction(part, pascal(route.operationId), {
        handler: route.handler,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: {
          ...common,
          ...tables.environment,
          // The function checks the caller's roles again (functions/platform/route-authorization.ts).
          [ROUTE_ROLES_VARIABLE]: routeRolesValue(route.roles),
          ...(route.needs.startsCompliance ? { COMPLIANCE_FUNCTION: this.complianceBatchAlias.functionArn } : {}),
          ...(route.needs.startsRemediation ? { REMEDIATION_FUNCTION: this.remediationRunAlias.functionArn } : {}),
          ...(route.needs.tables?.idempotency ? fingerprintKeyNeeds.environment : {}),
          ...(route.needs.configsBucket ? archive.environment() : {}),
          ...(route.needs.schedules ? schedules.environment() : {}),
          ...(route.needs.console ? consoleNeeds?.environment : {}),
        },
        ...(route.needs.console ? { bundledFiles: consoleNeeds?.bundledFiles } : {}),
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
        ...(callsOutside(route) ? outside : everyInVpc),
        ...(cap !== undefined && cap !== null ? { reservedConcurrentExecutions: cap } : {}),
        permissions: [
          ...tables.permissions,
          ...(route.needs.secrets ? [secretsPermission(route.needs.secrets)] : []),
          ...(route.needs.startsCompliance ? [startsCompliance] : []),
          ...(route.needs.startsRemediation ? [startsRemediation] : []),
          ...(route.needs.tables?.idempotency ? fingerprintKeyNeeds.permissions : []),
          ...(route.needs.configsBucket ? [archive.permission(route.needs.configsBucket)] : []),
          ...(route.needs.schedules ? [schedules.permission()] : []),
        ],
      });
      if (route.needs.secrets) data.secrets.bind(fn, route.needs.secrets);
      this.functions[route.operationId] = fn;
      part.functions[route.operationId] = fn;
      // The relay takes traffic through a canary release; the other routes' functions are updated in place.
      const target = releaseTarget(
        part,
        `${pascal(route.operationId)}Release`,
        fn,
        group === 'relay' ? canary : undefined,
        `${serviceName}-release-${partSlug(pascal(route.operationId))}`,
      );
      allowMethodInvoke(target, part.restApiId, route.method, route.path);
      part.methods.push({ method: route.method, path: route.path });
      resourceIn(part, partName, route.path).addMethod(
        route.method,
        // API Gateway calls the function under the permission above (no integration credentials).
        lambdaIntegration(route, target.functionArn),
        route.roles === 'public'
          ? { authorizationType: AuthorizationType.NONE, operationName: route.operationId }
          : {
              authorizer,
              authorizationType: AuthorizationType.CUSTOM,
              operationName: route.operationId,
              // The relay counts against the caller's usage plan (the authorizer names its key).
              ...(exposure.usagePlans && route.tag === 'relay' ? { apiKeyRequired: true } : {}),
            },
      );
      // A streaming integration is served only by a deployment made after it: its mode is part of the deployment's id.
      methods.push([
        route.method,
        route.path,
        route.operationId,
        route.roles === 'public',
        route.timeoutSeconds ?? null,
        target.node.path,
        ...(route.csv ? ['STREAM'] : []),
      ]);
    }
    this.functions['authorizer'] = auth.function;

    // The methods of the parts are not this stack's: API Gateway serves them once a deployment
    // made after them reaches the stage. The deployment waits for every part, and its logical id
    // (a new deployment) follows what the parts' methods are, as it follows this stack's own.
    const deployment = this.api.latestDeployment!;
    // The resource policy and the key source reach callers only with a new deployment too.
    const { endpointType, vpcEndpointIds, sourceCidrs, usagePlans } = exposure;
    const served = { endpointType, vpcEndpointIds, sourceCidrs, keys: usagePlans?.clients.map((c) => c.name) };
    deployment.addToLogicalId({ parts: methods, ...(JSON.stringify(served) === JSON.stringify({ endpointType: 'regional' }) ? {} : { served }) });
    for (const part of Object.values(this.parts)) deployment.node.addDependency(part);

    for (const route of removedRoutes) addRemovedRoute(this.api.root, route);
    addGatewayResponses(this.api);

    // Alarm destination and thresholds are passed explicitly: the settings are their only source.
    const alarmTopicKey = customerKey(this, deployed, 'alarmTopic');
    const observability = new Observability(this, 'Observability', {
      api: this.api,
      functions: this.functions,
      tables: data.tables,
      serviceName,
      // Each part's function and latency alarms in its nested stack, beside what they watch.
      parts: Object.entries(this.parts).map(([name, part]) => ({ scope: part, name: partSlug(name), functions: part.functions, methods: part.methods })),
      ...(props.routes ? { routes: props.routes } : {}),
      ...(deployed?.alarms.topicArn ? { alarmTopicArn: deployed.alarms.topicArn } : {}),
      ...(deployed?.alarms.email ? { alarmEmail: deployed.alarms.email } : {}),
      ...(alarmTopicKey ? { alarmTopicKey } : {}),
      ...(deployed?.alarms.thresholds ? { thresholds: deployed.alarms.thresholds } : {}),
    });
    // A release rolled back notifies as every other alarm does.
    if (observability.alarmTopic) {
      const action = new SnsAction(observability.alarmTopic);
      for (const release of this.node.findAll().filter((c): c is CanaryRelease => c instanceof CanaryRelease)) {
        for (const a of release.alarms) {
          a.addAlarmAction(action);
          a.addOkAction(action);
        }
      }
    }
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Stage base URL' });
  }

  /**
   * The function compliance plans' schedules invoke (it starts the plan's batch, as a user's run
   * does) and the schedule group, role and dead-letter queue of those schedules.
   */
  /**
   * How the deployed console signs in: with the Cognito pool, through a hosted-UI domain and an
   * app client of its own (in this stack: their callback is this API's URL); with an external
   * provider, through the client the config names. Either way the authorizer accepts the
   * console's client id as an audience.
   */
  #consoleSignIn(auth: Auth, deployed: DeploySettings | undefined, data: NetconfigDataStack, serviceName: string): ConsoleConfig {
    const console: ConsoleSettings = deployed?.console ?? { enabled: true, urls: [], scopes: [...DEFAULT_CONSOLE_SCOPES] };
    const identity = deployed?.identity;
    const config =
      identity?.provider === 'oidc'
        ? oidcConsoleSignIn(console, identity.rolesClaim ?? 'roles')
        : new CognitoConsoleSignIn(this, 'ConsoleSignIn', {
            userPool: data.directory!.userPool,
            domainPrefix: console.domainPrefix ?? `${serviceName}-${this.account}`,
            // Made of the API's id, not its stage's URL: the stage waits for the authorizer, which takes this client's id.
            callbackUrls: [`https://${this.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${STAGE_NAME}/console`, ...console.urls],
            scopes: console.scopes,
          }).config;
    auth.acceptAudience(config.clientId);
    return config;
  }

  #planSchedules(
    part: ApiPart,
    serviceName: string,
    o: {
      tables: { environment: Record<string, string>; permissions: FunctionPermission[] };
      common: Record<string, string>;
      permissions: FunctionPermission[];
      network: Pick<ServiceFunctionProps, 'network' | 'caBundle'>;
      bind: (fn: ServiceFunction) => void;
    },
  ): PlanSchedules {
    const groupName = `${serviceName.slice(0, 58)}-plans`;
    const run = new ServiceFunction(part, 'PlanScheduledRun', {
      handler: 'plans/handlers/scheduled-run',
      description: "Invoked by a compliance plan's schedule: starts the plan's batch (or records why it was skipped)",
      environment: { ...o.common, ...o.tables.environment, PLAN_SCHEDULE_GROUP: groupName },
      timeout: Duration.seconds(30),
      ...o.network,
      permissions: [...o.tables.permissions, ...o.permissions, removesSchedules(part, groupName)],
    });
    o.bind(run);
    this.functions['planScheduledRun'] = run;
    part.functions['planScheduledRun'] = run;
    return new PlanSchedules(part, 'PlanSchedules', { groupName, target: run.function });
  }
}

/**
 * The authorizer of an external OIDC issuer: its keys from the JWKS URL (through the CA bundle,
 * when one is given) or pinned in the config, and in the VPC when `identity.inVpc` asks.
 */
const oidcAuth = (identity: Extract<IdentitySettings, { provider: 'oidc' }>, outside: Pick<AuthProps, 'network' | 'caBundle'>): AuthProps => ({
  issuer: identity.issuer,
  audience: identity.audience,
  rolesClaim: identity.rolesClaim ?? 'roles',
  ...(identity.jwksUrl ? { jwksUrl: identity.jwksUrl } : {}),
  ...(identity.jwks ? { jwksFile: identity.jwks } : {}),
  ...(identity.inVpc && outside.network ? { network: outside.network } : {}),
  ...(outside.caBundle ? { caBundle: outside.caBundle } : {}),
});

/** The two stacks of one deployment: `<stackName>` (stateful) and `<stackName>Api`. */
export class NetconfigService {
  readonly data: NetconfigDataStack;
  readonly api: NetconfigApiStack;
  /** The deployment settings the stacks were built from (none in local mode). */
  readonly settings: DeploySettings | undefined;

  constructor(scope: Construct, stackName: string, props: NetconfigStackProps = {}) {
    const serviceName = serviceNameOf(stackName);
    // Local mode takes its settings from props.local; the rest are the defaults.
    const deployed = props.local ? undefined : (props.settings ?? loadDeployConfig(EXAMPLE_CONFIG_FILE));
    this.settings = deployed;
    const { description, routes, ...given } = props;
    const rest = { ...(deployed ? stackPlacement(deployed.landingZone) : {}), ...given };
    this.data = new NetconfigDataStack(scope, stackName, {
      ...rest,
      serviceName,
      ...(deployed ? { deployed } : {}),
      description: `${description ?? 'Network configuration management service'}: tables, users and secrets`,
    });
    this.api = new NetconfigApiStack(scope, `${stackName}Api`, {
      ...rest,
      ...(routes ? { routes } : {}),
      serviceName,
      ...(deployed ? { deployed } : {}),
      ...(deployed?.landingZone.bootstrapQualifier ? { synthesizer: stackPlacement(deployed.landingZone).synthesizer } : {}),
      data: this.data,
      description: `${description ?? 'Network configuration management service'}: the API`,
    });
    // Every log group of both stacks (the nested ones included) follows the deployment's log
    // settings; a deployment keeps its logs when a stack is deleted, local mode does not.
    const policy = new LogPolicy({
      retentionDays: deployed?.logs.retentionDays ?? DEFAULT_LOG_RETENTION_DAYS,
      removalPolicy: props.local ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      ...(deployed?.logs.archive ? { archive: deployed.logs.archive } : {}),
    });
    for (const stack of [this.data, this.api]) Aspects.of(stack).add(policy);
    if (deployed) applyLandingZone([this.data, this.api], deployed.landingZone);
  }

  get stacks(): Stack[] {
    return [this.data, this.api, ...Object.values(this.api.parts)];
  }
  get functions(): Record<string, ServiceFunction> {
    return this.api.functions;
  }
  /** The constructs of the Vault credential secrets (cdk-nag suppressions, infra/nag.ts). */
  get vaultSecrets(): Construct[] {
    return [this.data.secrets];
  }
  get tables(): Record<TableKey, TableV2> {
    return this.data.tables;
  }
}
