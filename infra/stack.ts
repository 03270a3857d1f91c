/**
 * The whole service: one function per live route behind an API Gateway REST API with a role
 * authorizer, Mock integrations answering 410 for removed routes, problem+json gateway
 * responses, and the DynamoDB tables. Everything per route is derived from the route table.
 */
import { CfnOutput, CfnParameter, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { liveRoutes, removedRoutes, type TableKey } from '../functions/shared/routes.js';
import { Auth, type AuthProps } from './constructs/auth.js';
import { Observability } from './constructs/observability.js';
import { Secrets, type SecretsProps } from './constructs/secrets.js';
import { parseReferencePrefixes } from '../functions/secrets/reference.js';
import { ServiceFunction } from './constructs/service-function.js';
import { addGatewayResponses } from './gateway-responses.js';
import { addRemovedRoute } from './removed-routes.js';
import { tableEnv, tableSpecs } from './tables.js';

export const STAGE_NAME = 'v1';
export const SERVICE_NAME = 'netconfig';

export interface NetconfigStackProps extends StackProps {
  /** Local mode (`npm start`): loopback orchestrators allowed, secrets in an embedded store. */
  readonly local?: { readonly secretsFile: string; readonly auth: AuthProps };
  readonly auth?: AuthProps;
  readonly logLevel?: string;
}

const pascal = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

export class NetconfigStack extends Stack {
  readonly api: RestApi;
  readonly tables: Record<TableKey, TableV2>;
  readonly functions: Record<string, ServiceFunction> = {};
  /** The durable function that runs compliance batches, as the API starts it. */
  readonly complianceBatchAlias: Alias;

  constructor(scope: Construct, id: string, props: NetconfigStackProps = {}) {
    super(scope, id, props);

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
      : {
          backend: 'vault',
          address: new CfnParameter(this, 'VaultAddress', {
            type: 'String',
            description: 'HashiCorp Vault address (https) that resolves $VAULT_ references, e.g. https://vault.example.net:8200',
            // Vault tokens travel with every call: TLS only.
            allowedPattern: '^https://.+',
          }).valueAsString,
          mount: this.node.tryGetContext('vaultMount') ?? 'secret',
          authMethod: this.node.tryGetContext('vaultAuthMethod') ?? 'token',
          reader: { secretName: this.node.tryGetContext('vaultCredentialsSecret'), roleId: this.node.tryGetContext('vaultRoleId') },
          writer: { secretName: this.node.tryGetContext('vaultWriterCredentialsSecret'), roleId: this.node.tryGetContext('vaultWriterRoleId') },
          namespace: this.node.tryGetContext('vaultNamespace'),
          referencePrefixes: parseReferencePrefixes(this.node.tryGetContext('vaultReferencePrefixes')),
        };
    const secrets = new Secrets(this, 'Secrets', secretsProps);

    const common = {
      SERVICE_NAME,
      LOG_LEVEL: props.logLevel ?? 'info',
      ...(props.local ? { LOCAL_MODE: 'true' } : {}),
    };
    const auth = new Auth(this, 'Auth', { ...(props.local?.auth ?? props.auth), environment: common });

    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    this.api = new RestApi(this, 'Api', {
      restApiName: SERVICE_NAME,
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

    // Compliance batches run on a durable function: checkpointed chunks, replayed after a crash
    // or a 15-minute invocation limit, for up to a day per batch (docs/compliance.md has the
    // arithmetic for 50,000 devices). Started through its `live` alias: durable executions run
    // a published version, so a deployment never changes the code under a running batch.
    const complianceBatch = new ServiceFunction(this, 'ComplianceBatch', {
      handler: 'compliance/batch',
      description: 'Runs compliance batches (durable execution): fetches device configurations through the relay client and grades them',
      environment: common,
      timeout: Duration.minutes(15),
      memorySize: 1024,
      durableConfig: { executionTimeout: Duration.hours(24), retentionPeriod: Duration.days(14) },
    });
    complianceBatch.bindTable(this.tables.compliance, tableEnv('compliance'), 'write');
    complianceBatch.bindTable(this.tables.adapters, tableEnv('adapters'), 'read');
    secrets.bind(complianceBatch, 'read');
    this.functions['complianceBatch'] = complianceBatch;
    this.complianceBatchAlias = new Alias(this, 'ComplianceBatchLive', { aliasName: 'live', version: complianceBatch.function.currentVersion });

    for (const route of liveRoutes) {
      const fn = new ServiceFunction(this, pascal(route.operationId), {
        handler: route.handler,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: common,
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
      });
      for (const [key, access] of Object.entries(route.needs.tables ?? {}) as [TableKey, 'read' | 'write'][]) {
        fn.bindTable(this.tables[key], tableEnv(key), access);
      }
      if (route.needs.secrets) secrets.bind(fn, route.needs.secrets);
      if (route.needs.startsCompliance) {
        this.complianceBatchAlias.grantInvoke(fn.function);
        fn.function.addEnvironment('COMPLIANCE_FUNCTION', this.complianceBatchAlias.functionArn);
      }
      this.functions[route.operationId] = fn;
      this.api.root.resourceForPath(route.path).addMethod(
        route.method,
        // No second permission for the console's test-invoke stage: half the Lambda::Permission
        // resources, which keeps the stack under CloudFormation's 500-resource limit.
        new LambdaIntegration(fn.function, { allowTestInvoke: false }),
        route.roles === 'public'
          ? { authorizationType: AuthorizationType.NONE, operationName: route.operationId }
          : { authorizer: auth.authorizer, authorizationType: AuthorizationType.CUSTOM, operationName: route.operationId },
      );
    }
    this.functions['authorizer'] = auth.function;

    for (const route of removedRoutes) addRemovedRoute(this.api.root, route);
    addGatewayResponses(this.api);

    new Observability(this, 'Observability', { api: this.api, functions: this.functions, tables: this.tables, serviceName: SERVICE_NAME });
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Stage base URL' });
    if (auth.userPool) new CfnOutput(this, 'UserPoolId', { value: auth.userPool.userPoolId });
    if (auth.userPoolClient) {
      new CfnOutput(this, 'UserPoolClientId', { value: auth.userPoolClient.userPoolClientId, description: 'Token audience: the client id for initiate-auth' });
    }
  }
}
