/**
 * The whole service: one function per live route behind an API Gateway REST API with a role
 * authorizer, Mock integrations answering 410 for removed routes, problem+json gateway
 * responses, and the DynamoDB tables. Everything per route is derived from the route table;
 * everything per deployment from the deployment settings (the config file, infra/config.ts).
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  AwsIntegration,
  EndpointType,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import path from 'node:path';
import { liveRoutes } from '../functions/api/routes.js';
import { removedRoutes } from '../functions/api/removed.js';
import type { TableAccess, TableKey } from '../functions/platform/route.js';
import { callsOutside, concurrencyGroup, EXAMPLE_CONFIG_FILE, loadDeployConfig, type DeploySettings } from './config.js';
import { Auth, type AuthProps } from './constructs/auth.js';
import { PrivateNetwork } from './constructs/network.js';
import { Observability } from './constructs/observability.js';
import { Secrets, type SecretsAccess, type SecretsProps } from './constructs/secrets.js';
import { ServiceFunction, tablePermission, type FunctionPermission } from './constructs/service-function.js';
import { addGatewayResponses } from './gateway-responses.js';
import { addRemovedRoute } from './removed-routes.js';
import { tableEnv, tableSpecs } from '../functions/platform/tables.js';

export const STAGE_NAME = 'v1';

/**
 * The service's name in this stack: the REST API's name, the `Service` dimension of its metrics
 * (`SERVICE_NAME`) and the stem of alarm and dashboard names. From the stack name, so that two
 * stacks in one account never share one: `Netconfig` → `netconfig`, `NetconfigStaging` →
 * `netconfig-staging`.
 */
export const serviceNameOf = (stackName: string): string => stackName.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

export interface NetconfigStackProps extends StackProps {
  /** Local mode (`npm start`): loopback orchestrators allowed, secrets in an embedded store. */
  readonly local?: { readonly secretsFile: string; readonly auth: AuthProps };
  /**
   * The deployment settings (a checked config file, `loadDeployConfig`). Default: those of
   * `deploy/config.example.json`, so that a stack built in a test has a complete configuration;
   * the app always passes the file it was given.
   */
  readonly settings?: DeploySettings;
}

const pascal = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

/**
 * Functions one API invoke role may name. Its policy lists each function's ARN (up to ~120
 * characters with a 64-character function name) and IAM allows 10,240 characters of inline
 * policy per role: 60 leaves room for the rest. test/infra/stack-size.test.ts checks the worst case.
 */
export const FUNCTIONS_PER_INVOKE_ROLE = 60;

/**
 * The roles API Gateway assumes to call the route functions (the integrations' credentials),
 * instead of a resource policy statement (`AWS::Lambda::Permission`) on each function: one role
 * and one policy per {@link FUNCTIONS_PER_INVOKE_ROLE} functions, each allowed to invoke exactly
 * the functions it was given, and assumable by API Gateway only.
 */
class ApiInvokeRoles {
  readonly #roles: { role: Role; statement: PolicyStatement; count: number }[] = [];
  constructor(private readonly scope: Construct) {}

  /** The role that may invoke `fn`: `fn` added to the newest role, or to a new one when that is full. */
  roleFor(fn: IFunction): Role {
    let last = this.#roles.at(-1);
    if (!last || last.count >= FUNCTIONS_PER_INVOKE_ROLE) {
      const n = this.#roles.length + 1;
      const role = new Role(this.scope, n === 1 ? 'ApiInvokeRole' : `ApiInvokeRole${n}`, {
        assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
        description: 'API Gateway invokes the route functions with this role (the credentials of their integrations)',
      });
      const statement = new PolicyStatement({ actions: ['lambda:InvokeFunction'] });
      role.addToPrincipalPolicy(statement);
      last = { role, statement, count: 0 };
      this.#roles.push(last);
    }
    last.statement.addResources(fn.functionArn);
    last.count++;
    return last.role;
  }
}

export class NetconfigStack extends Stack {
  readonly api: RestApi;
  readonly tables: Record<TableKey, TableV2>;
  readonly functions: Record<string, ServiceFunction> = {};
  /** The durable function that runs compliance batches, as the API starts it. */
  readonly complianceBatchAlias: Alias;

  constructor(scope: Construct, id: string, props: NetconfigStackProps = {}) {
    super(scope, id, props);
    const serviceName = serviceNameOf(this.stackName);
    // Local mode takes its settings from props.local; the rest are the defaults.
    const deployed = props.local ? undefined : (props.settings ?? loadDeployConfig(EXAMPLE_CONFIG_FILE));

    this.tables = Object.fromEntries(
      (Object.keys(tableSpecs) as TableKey[]).map((key) => {
        const spec = tableSpecs[key];
        const attr = (k: { name: string; type: 'S' | 'N' }) => ({ name: k.name, type: k.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER });
        const table = new TableV2(this, `${pascal(key)}Table`, {
          partitionKey: attr(spec.partitionKey),
          ...(spec.sortKey ? { sortKey: attr(spec.sortKey) } : {}),
          billing: Billing.onDemand(),
          pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
          encryption: TableEncryptionV2.awsManagedKey(),
          deletionProtection: !props.local,
          removalPolicy: RemovalPolicy.RETAIN,
          ...(spec.timeToLive ? { timeToLiveAttribute: spec.timeToLive } : {}),
          globalSecondaryIndexes: spec.globalIndexes?.map((g) => ({
            indexName: g.name,
            partitionKey: attr(g.partitionKey),
            ...(g.sortKey ? { sortKey: attr(g.sortKey) } : {}),
          })),
        });
        return [key, table];
      }),
    ) as Record<TableKey, TableV2>;

    const secretsProps: SecretsProps = props.local
      ? { backend: 'local', file: props.local.secretsFile }
      : { backend: 'vault', ...deployed!.vault };
    const secrets = new Secrets(this, 'Secrets', secretsProps);

    const common = {
      SERVICE_NAME: serviceName,
      LOG_LEVEL: deployed?.logLevel ?? 'info',
      ...(props.local ? { LOCAL_MODE: 'true' } : {}),
    };
    const identity = deployed?.identity;
    const auth = new Auth(this, 'Auth', {
      ...(props.local?.auth ?? (identity?.provider === 'oidc' ? { ...identity, rolesClaim: identity.rolesClaim ?? 'roles' } : {})),
      environment: common,
      ...(typeof deployed?.concurrency.authorizer === 'number' ? { reservedConcurrentExecutions: deployed.concurrency.authorizer } : {}),
    });

    // The functions that call NSO or Vault: in the VPC when one is given, and carrying the CA bundle.
    const network = deployed?.network ? new PrivateNetwork(this, 'Network', deployed.network) : undefined;
    const outside = {
      ...(network ? { network: network.placement } : {}),
      ...(deployed?.caBundle ? { caBundle: deployed.caBundle } : {}),
    };

    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    this.api = new RestApi(this, 'Api', {
      restApiName: serviceName,
      description: 'Network configuration management service',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: STAGE_NAME,
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        throttlingRateLimit: 200,
        throttlingBurstLimit: 400,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      },
    });

    // What a function may do, from its needs: the tables (with their names in the environment),
    // the Vault credential, starting compliance batches. Functions with the same needs share a role.
    const tableNeeds = (tables: Partial<Record<TableKey, TableAccess>>) => {
      const entries = Object.entries(tables) as [TableKey, TableAccess][];
      return {
        permissions: entries.map(([key, access]) => tablePermission(this.tables[key], access)),
        environment: Object.fromEntries(entries.map(([key]) => [tableEnv(key), this.tables[key].tableName])),
      };
    };
    const secretsPermission = (access: SecretsAccess): FunctionPermission => ({
      key: `secrets:${access}`,
      grant: (grantee) => secrets.credentials?.[access].grantRead(grantee),
    });
    // `secrets.bind` below sets the Vault environment; the read grant it also makes on the function
    // is this permission's own statement again, which the role's policy keeps once.

    // Compliance batches run on a durable function: checkpointed chunks, replayed after a crash
    // or a 15-minute invocation limit, for up to a day per batch (docs/compliance.md has the
    // arithmetic for 50,000 devices). Started through its `live` alias: durable executions run
    // a published version, so a deployment never changes the code under a running batch.
    const batchTables = tableNeeds({ compliance: 'write', adapters: 'read' });
    const complianceBatch = new ServiceFunction(this, 'ComplianceBatch', {
      handler: 'compliance/handlers/batch',
      description: 'Runs compliance batches (durable execution): fetches device configurations through the relay client and grades them',
      environment: { ...common, ...batchTables.environment },
      timeout: Duration.minutes(15),
      memorySize: 1024,
      durableConfig: { executionTimeout: Duration.hours(24), retentionPeriod: Duration.days(14) },
      permissions: [...batchTables.permissions, secretsPermission('read')],
      ...outside,
    });
    secrets.bind(complianceBatch, 'read');
    this.functions['complianceBatch'] = complianceBatch;
    this.complianceBatchAlias = new Alias(this, 'ComplianceBatchLive', { aliasName: 'live', version: complianceBatch.function.currentVersion });

    const startsCompliance: FunctionPermission = {
      key: `invoke:${this.complianceBatchAlias.node.path}`,
      grant: (grantee) => this.complianceBatchAlias.grantInvoke(grantee),
    };

    // The key of the idempotency fingerprints (functions/platform/fingerprint-key.ts): a random
    // secret of this stack, kept (a new key would turn every retry within a day into a 422).
    // Locally, a key file beside the secrets store.
    const fingerprintKey = props.local
      ? undefined
      : new Secret(this, 'IdempotencyKey', {
          description: `${serviceName}: key of the Idempotency-Key request fingerprints (HMAC-SHA-256)`,
          generateSecretString: { passwordLength: 64, excludePunctuation: true },
          removalPolicy: RemovalPolicy.RETAIN,
        });
    const fingerprintKeyNeeds: { environment: Record<string, string>; permissions: FunctionPermission[] } = {
      environment: props.local
        ? { IDEMPOTENCY_KEY_FILE: path.join(path.dirname(props.local.secretsFile), 'idempotency.key') }
        : { IDEMPOTENCY_KEY_SECRET: fingerprintKey!.secretArn },
      permissions: fingerprintKey ? [{ key: 'secret:idempotency-key', grant: (grantee) => fingerprintKey.grantRead(grantee) }] : [],
    };

    const invokeRoles = new ApiInvokeRoles(this);
    for (const route of liveRoutes) {
      const group = concurrencyGroup(route);
      const cap = group ? deployed?.concurrency[group] : undefined;
      const tables = tableNeeds(route.needs.tables ?? {});
      const fn = new ServiceFunction(this, pascal(route.operationId), {
        handler: route.handler,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: {
          ...common,
          ...tables.environment,
          ...(route.needs.startsCompliance ? { COMPLIANCE_FUNCTION: this.complianceBatchAlias.functionArn } : {}),
          ...(route.needs.tables?.idempotency ? fingerprintKeyNeeds.environment : {}),
        },
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
        ...(callsOutside(route) ? outside : {}),
        ...(cap !== undefined && cap !== null ? { reservedConcurrentExecutions: cap } : {}),
        permissions: [
          ...tables.permissions,
          ...(route.needs.secrets ? [secretsPermission(route.needs.secrets)] : []),
          ...(route.needs.startsCompliance ? [startsCompliance] : []),
          ...(route.needs.tables?.idempotency ? fingerprintKeyNeeds.permissions : []),
        ],
      });
      if (route.needs.secrets) secrets.bind(fn, route.needs.secrets);
      this.functions[route.operationId] = fn;
      this.api.root.resourceForPath(route.path).addMethod(
        route.method,
        // API Gateway calls the function with an invoke role (the integration's credentials)
        // rather than through a permission on each function: no AWS::Lambda::Permission per route.
        new AwsIntegration({
          proxy: true,
          service: 'lambda',
          path: `2015-03-31/functions/${fn.function.functionArn}/invocations`,
          options: { credentialsRole: invokeRoles.roleFor(fn.function) },
        }),
        route.roles === 'public'
          ? { authorizationType: AuthorizationType.NONE, operationName: route.operationId }
          : { authorizer: auth.authorizer, authorizationType: AuthorizationType.CUSTOM, operationName: route.operationId },
      );
    }
    this.functions['authorizer'] = auth.function;

    for (const route of removedRoutes) addRemovedRoute(this.api.root, route);
    addGatewayResponses(this.api);

    // Alarm destination and thresholds are passed explicitly: the settings are their only source.
    new Observability(this, 'Observability', {
      api: this.api,
      functions: this.functions,
      tables: this.tables,
      serviceName,
      ...(deployed?.alarms.topicArn ? { alarmTopicArn: deployed.alarms.topicArn } : {}),
      ...(deployed?.alarms.email ? { alarmEmail: deployed.alarms.email } : {}),
      ...(deployed?.alarms.thresholds ? { thresholds: deployed.alarms.thresholds } : {}),
    });
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Stage base URL' });
    if (auth.userPool) new CfnOutput(this, 'UserPoolId', { value: auth.userPool.userPoolId });
    if (auth.userPoolClient) {
      new CfnOutput(this, 'UserPoolClientId', { value: auth.userPoolClient.userPoolClientId, description: 'Token audience: the client id for initiate-auth' });
    }
  }
}
