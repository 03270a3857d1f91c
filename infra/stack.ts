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
import { CfnOutput, Duration, NestedStack, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  AwsIntegration,
  EndpointType,
  LogGroupLogDestination,
  MethodLoggingLevel,
  Resource,
  RestApi,
  type IAuthorizer,
  type IResource,
} from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { liveRoutes as routeTable } from '../functions/api/routes.js';
import { removedRoutes } from '../functions/api/removed.js';
import type { LiveRoute, TableAccess, TableKey } from '../functions/platform/route.js';
import { callsOutside, concurrencyGroup, EXAMPLE_CONFIG_FILE, loadDeployConfig, type DeploySettings } from './config.js';
import { Auth, UserDirectory, type AuthProps } from './constructs/auth.js';
import { PrivateNetwork } from './constructs/network.js';
import { Observability } from './constructs/observability.js';
import { Secrets, type SecretsAccess, type SecretsProps } from './constructs/secrets.js';
import { ServiceFunction, tablePermission, type FunctionPermission } from './constructs/service-function.js';
import { addGatewayResponses } from './gateway-responses.js';
import { applyLandingZone, stackPlacement } from './landing-zone.js';
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
  /** The live routes; default the route table (a test passes more to measure the stacks). */
  readonly routes?: readonly LiveRoute[];
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

/** The stateful stack: tables, user pool, secrets. Terminated by no one, and none of its resources is ever deleted with it. */
export class NetconfigDataStack extends Stack {
  readonly tables: Record<TableKey, TableV2>;
  readonly secrets: Secrets;
  /** The default issuer (absent with an external OIDC issuer, and in local mode). */
  readonly directory?: UserDirectory;
  /** The key of the idempotency fingerprints (absent in local mode: a key file). */
  readonly fingerprintKey?: Secret;

  constructor(scope: Construct, id: string, props: NetconfigStackProps & { readonly serviceName: string; readonly deployed?: DeploySettings }) {
    super(scope, id, { ...props, terminationProtection: props.terminationProtection ?? !props.local });
    const { deployed, serviceName } = props;
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

    const secretsProps: SecretsProps = props.local ? { backend: 'local', file: props.local.secretsFile } : { backend: 'vault', ...deployed!.vault };
    this.secrets = new Secrets(this, 'Secrets', secretsProps);
    if (!props.local && deployed?.identity.provider !== 'oidc') this.directory = new UserDirectory(this, 'Auth');

    // The key of the idempotency fingerprints (functions/platform/fingerprint-key.ts): a random
    // secret of this deployment, kept (a new key would turn every retry within a day into a 422).
    // Locally, a key file beside the secrets store.
    if (!props.local) {
      this.fingerprintKey = new Secret(this, 'IdempotencyKey', {
        description: `${serviceName}: key of the Idempotency-Key request fingerprints (HMAC-SHA-256)`,
        generateSecretString: { passwordLength: 64, excludePunctuation: true },
        removalPolicy: RemovalPolicy.RETAIN,
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
  readonly invokeRoles = new ApiInvokeRoles(this);
  readonly #api;
  readonly #resources = new Map<string, IResource>();

  constructor(scope: Construct, id: string, api: RestApi, description: string) {
    super(scope, id, { description });
    this.#api = RestApi.fromRestApiAttributes(this, 'Api', { restApiId: api.restApiId, rootResourceId: api.restApiRootResourceId });
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

  constructor(
    scope: Construct,
    id: string,
    props: NetconfigStackProps & { readonly serviceName: string; readonly deployed?: DeploySettings; readonly data: NetconfigDataStack },
  ) {
    super(scope, id, props);
    const { deployed, serviceName, data } = props;
    const liveRoutes = props.routes ?? routeTable;
    this.addStackDependency(data);

    const common = {
      SERVICE_NAME: serviceName,
      LOG_LEVEL: deployed?.logLevel ?? 'info',
      ...(props.local ? { LOCAL_MODE: 'true' } : {}),
    };
    const identity = deployed?.identity;
    // The functions that call NSO or Vault run in the VPC when one is given (and carry the CA
    // bundle); with network.placement "all", every function does.
    const network = deployed?.network ? new PrivateNetwork(this, 'Network', deployed.network) : undefined;
    const inVpc = network ? { network: network.placement } : {};
    const everyInVpc = deployed?.network?.placement === 'all' ? inVpc : {};
    const outside = { ...inVpc, ...(deployed?.caBundle ? { caBundle: deployed.caBundle } : {}) };

    const auth = new Auth(this, 'Auth', {
      ...everyInVpc,
      ...(props.local?.auth ?? (identity?.provider === 'oidc' ? { ...identity, rolesClaim: identity.rolesClaim ?? 'roles' } : { directory: data.directory! })),
      environment: common,
      ...(typeof deployed?.concurrency.authorizer === 'number' ? { reservedConcurrentExecutions: deployed.concurrency.authorizer } : {}),
    });

    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    this.api = new RestApi(this, 'Api', {
      restApiName: serviceName,
      description: 'Network configuration management service',
      endpointTypes: [EndpointType.REGIONAL],
      // The account's API Gateway logging role is region-wide: set by the stack only when the
      // config says so, and then kept when the stack goes (or stops managing it).
      ...(deployed?.landingZone.apiGatewayAccountRole === 'manage'
        ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
        : { cloudWatchRole: false }),
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
    // The methods of the parts name the authorizer by id; it belongs to this stack's API.
    auth.authorizer._attachToApi(this.api);
    const authorizer: IAuthorizer = { authorizerId: auth.authorizer.authorizerId, authorizationType: AuthorizationType.CUSTOM };

    const partOf = (name: string): ApiPart => (this.parts[name] ??= new ApiPart(this, name, this.api, `${serviceName}: the functions and methods of ${name}`));

    // What a function may do, from its needs: the tables (with their names in the environment),
    // the Vault credential, starting compliance batches. Functions with the same needs (in one part) share a role.
    const tableNeeds = (tables: Partial<Record<TableKey, TableAccess>>) => {
      const entries = Object.entries(tables) as [TableKey, TableAccess][];
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
    const batchTables = tableNeeds({ compliance: 'write', adapters: 'read' });
    const complianceBatch = new ServiceFunction(batchPart, 'ComplianceBatch', {
      handler: 'compliance/handlers/batch',
      description: 'Runs compliance batches (durable execution): fetches device configurations through the relay client and grades them',
      environment: { ...common, ...batchTables.environment },
      timeout: Duration.minutes(15),
      memorySize: 1024,
      durableConfig: { executionTimeout: Duration.hours(24), retentionPeriod: Duration.days(14) },
      permissions: [...batchTables.permissions, secretsPermission('read')],
      ...outside,
    });
    data.secrets.bind(complianceBatch, 'read');
    this.functions['complianceBatch'] = complianceBatch;
    batchPart.functions['complianceBatch'] = complianceBatch;
    this.complianceBatchAlias = new Alias(batchPart, 'ComplianceBatchLive', { aliasName: 'live', version: complianceBatch.function.currentVersion });

    const startsCompliance: FunctionPermission = {
      key: `invoke:${this.complianceBatchAlias.node.path}`,
      grant: (grantee) => this.complianceBatchAlias.grantInvoke(grantee),
    };
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
          ...(route.needs.startsCompliance ? { COMPLIANCE_FUNCTION: this.complianceBatchAlias.functionArn } : {}),
          ...(route.needs.tables?.idempotency ? fingerprintKeyNeeds.environment : {}),
        },
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
        ...(callsOutside(route) ? outside : everyInVpc),
        ...(cap !== undefined && cap !== null ? { reservedConcurrentExecutions: cap } : {}),
        permissions: [
          ...tables.permissions,
          ...(route.needs.secrets ? [secretsPermission(route.needs.secrets)] : []),
          ...(route.needs.startsCompliance ? [startsCompliance] : []),
          ...(route.needs.tables?.idempotency ? fingerprintKeyNeeds.permissions : []),
        ],
      });
      if (route.needs.secrets) data.secrets.bind(fn, route.needs.secrets);
      this.functions[route.operationId] = fn;
      part.functions[route.operationId] = fn;
      const credentialsRole = part.invokeRoles.roleFor(fn.function);
      part.methods.push({ method: route.method, path: route.path });
      resourceIn(part, partName, route.path).addMethod(
        route.method,
        // API Gateway calls the function with an invoke role (the integration's credentials)
        // rather than through a permission on each function: no AWS::Lambda::Permission per route.
        new AwsIntegration({
          proxy: true,
          service: 'lambda',
          path: `2015-03-31/functions/${fn.function.functionArn}/invocations`,
          options: { credentialsRole },
        }),
        route.roles === 'public'
          ? { authorizationType: AuthorizationType.NONE, operationName: route.operationId }
          : { authorizer, authorizationType: AuthorizationType.CUSTOM, operationName: route.operationId },
      );
      methods.push([
        route.method,
        route.path,
        route.operationId,
        route.roles === 'public',
        route.timeoutSeconds ?? null,
        fn.node.path,
        credentialsRole.node.path,
      ]);
    }
    this.functions['authorizer'] = auth.function;

    // The methods of the parts are not this stack's: API Gateway serves them once a deployment
    // made after them reaches the stage. The deployment waits for every part, and its logical id
    // (a new deployment) follows what the parts' methods are, as it follows this stack's own.
    const deployment = this.api.latestDeployment!;
    deployment.addToLogicalId({ parts: methods });
    for (const part of Object.values(this.parts)) deployment.node.addDependency(part);

    for (const route of removedRoutes) addRemovedRoute(this.api.root, route);
    addGatewayResponses(this.api);

    // Alarm destination and thresholds are passed explicitly: the settings are their only source.
    new Observability(this, 'Observability', {
      api: this.api,
      functions: this.functions,
      tables: data.tables,
      serviceName,
      // Each part's function and latency alarms in its nested stack, beside what they watch.
      parts: Object.entries(this.parts).map(([name, part]) => ({ scope: part, name: partSlug(name), functions: part.functions, methods: part.methods })),
      ...(props.routes ? { routes: props.routes } : {}),
      ...(deployed?.alarms.topicArn ? { alarmTopicArn: deployed.alarms.topicArn } : {}),
      ...(deployed?.alarms.email ? { alarmEmail: deployed.alarms.email } : {}),
      ...(deployed?.alarms.thresholds ? { thresholds: deployed.alarms.thresholds } : {}),
    });
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Stage base URL' });
  }
}

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
