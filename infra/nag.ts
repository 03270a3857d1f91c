/**
 * cdk-nag suppressions (AwsSolutions, NIST 800-53 R5, PCI DSS 3.2.1, Serverless), each on the
 * resources its reason is true for and nothing else: a rule applies to a resource type, a test
 * of the resource's own properties (a log group without a customer key, a method without an
 * authorizer) and, where the finding names what it is about (IAM4, IAM5), `appliesTo` those
 * names. A control the config can turn on (a VPC for every function, a web ACL, customer keys)
 * is suppressed only on a resource that lacks it, so a deployment that asks for the control
 * and misses it on some resource gets the finding.
 */
import { CfnResource, Stack } from 'aws-cdk-lib';
import { CfnMethod, CfnRestApi, CfnStage } from 'aws-cdk-lib/aws-apigateway';
import { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { CfnRule } from 'aws-cdk-lib/aws-events';
import { CfnUserPool } from 'aws-cdk-lib/aws-cognito';
import { CfnPolicy, CfnRole } from 'aws-cdk-lib/aws-iam';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { CfnSecret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnSubscription, CfnTopic } from 'aws-cdk-lib/aws-sns';
import { CfnQueue } from 'aws-cdk-lib/aws-sqs';
import { NagSuppressions, type NagPackSuppression } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { DeploySettings } from './config.js';

/** What a suppression rule sees: the resource, and the deployment's settings (none in local mode). */
interface Subject<T> {
  readonly resource: T;
  readonly settings: DeploySettings | undefined;
  /** Construct paths of the secrets the service's Vault credentials are kept in (Vault issues and rotates them). */
  readonly vaultSecrets: ReadonlySet<string>;
}

interface SuppressionRule<T extends CfnResource> {
  /** The resources of one L1 class the rule looks at. */
  readonly type: abstract new (
    ...args: never[]
  ) => T;
  /** Rule ids (all with the same reason: the packs name one check differently). */
  readonly ids: readonly string[];
  readonly reason: string | ((subject: Subject<T>) => string);
  /** Whether the reason holds for this resource. Default: for every resource of the type. */
  readonly when?: (subject: Subject<T>) => boolean;
  readonly appliesTo?: NagPackSuppression['appliesTo'];
}

const rule = <T extends CfnResource>(r: SuppressionRule<T>): SuppressionRule<CfnResource> => r as unknown as SuppressionRule<CfnResource>;

/** Both multi-framework packs report the same checks under their own prefix. */
const nistPci = (...checks: string[]): string[] => checks.flatMap((check) => [`NIST.800.53.R5-${check}`, `PCI.DSS.321-${check}`]);

const resolved = (resource: CfnResource, value: unknown): unknown => Stack.of(resource).resolve(value);

const isDurable = (fn: CfnFunction) => resolved(fn, fn.durableConfig) !== undefined;
/** The compliance housekeeping, run by its hourly EventBridge schedule (infra/stack.ts). */
const isHousekeeping = (fn: CfnFunction) => fn.node.path.includes('/ComplianceHousekeeping/');
const isNode22 = (fn: CfnFunction) => fn.runtime === 'nodejs22.x';

/** The actions of the policy's statements whose resource is `*`. */
const wildcardActions = (policy: CfnPolicy): string[] => {
  const document = resolved(policy, policy.policyDocument) as { Statement: { Action: string | string[]; Resource: string | string[] }[] };
  return document.Statement.filter((st) => [st.Resource].flat().includes('*')).flatMap((st) => [st.Action].flat());
};

const NO_AUTHORIZER = 'Only the removed routes (Mock integrations answering 410) and GET /status have no authorizer: they reveal nothing and run no code.';
const NODE_22 = 'The service targets Node.js 22, the runtime its tests and local mode run on; moving to a newer runtime is a deliberate upgrade.';

const RULES: readonly SuppressionRule<CfnResource>[] = [
  rule({
    type: CfnRestApi,
    ids: ['AwsSolutions-APIG2'],
    reason:
      'Requests are validated in each function against schemas compiled from the route table, so that every violation gets a problem+json body naming the field; API Gateway request validators cannot render that.',
  }),
  rule({
    type: CfnStage,
    ids: ['AwsSolutions-APIG3', ...nistPci('APIGWAssociatedWithWAF')],
    when: ({ resource }) =>
      !Stack.of(resource)
        .node.findAll()
        .some((c) => c instanceof CfnResource && c.cfnResourceType === 'AWS::WAFv2::WebACLAssociation'),
    reason:
      'This deployment associates no web ACL with the stage (web ACLs are shared and priced per ACL: the config names one by ARN where the organisation requires it).',
  }),
  rule({
    type: CfnStage,
    ids: nistPci('APIGWCacheEnabledAndEncrypted'),
    when: ({ resource }) => resource.cacheClusterEnabled !== true,
    reason:
      'No response is cached: answers reflect the tables and NSO at the time of the request and are authorized per caller, so a cached answer would be stale or another caller’s.',
  }),
  rule({
    type: CfnStage,
    ids: nistPci('APIGWSSLEnabled'),
    when: ({ resource }) => resource.clientCertificateId === undefined,
    reason:
      'Every integration is a Lambda invocation (a signed AWS API call over TLS) or a Mock: a client certificate authenticates API Gateway to HTTP backends only.',
  }),
  rule({
    type: CfnMethod,
    ids: ['AwsSolutions-APIG4', 'AwsSolutions-COG4'],
    when: ({ resource }) => resource.authorizationType === 'NONE',
    reason: NO_AUTHORIZER,
  }),
  rule({
    type: CfnMethod,
    ids: ['AwsSolutions-COG4'],
    when: ({ resource }) => resource.authorizationType === 'CUSTOM',
    reason:
      'The method uses the Lambda REQUEST authorizer, which checks the caller’s roles per route (a Cognito authorizer cannot); it verifies Cognito-issued tokens by default, or the configured OIDC issuer’s.',
  }),
  rule({
    type: CfnRole,
    ids: ['AwsSolutions-IAM4'],
    reason:
      'AWS-maintained minimal policies for exactly this purpose: AWSLambdaBasicExecutionRole (log writing), AWSLambdaVPCAccessExecutionRole (a function in a VPC managing its network interfaces), AWSLambdaBasicDurableExecutionRolePolicy (a durable function checkpointing and reading its own executions), AmazonAPIGatewayPushToCloudWatchLogs (the account’s API Gateway logging role, with apiGatewayAccountRole "manage").',
    appliesTo: [
      'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
      'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole',
      'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicDurableExecutionRolePolicy',
      'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
    ],
  }),
  rule({
    type: CfnPolicy,
    ids: ['AwsSolutions-IAM5'],
    reason: 'A table grant includes the table’s own indexes (<table>/index/*), which the queries by index need.',
    // The table's ARN as a reference, or (once synthesized) as the stateful stack's export of it.
    appliesTo: [
      {
        regex:
          '/^Resource::(<[A-Za-z0-9]+Table[0-9A-F]{8}\\.Arn>|[A-Za-z0-9]+:ExportsOutputFnGetAtt[A-Za-z0-9]+Table[0-9A-F]{8}Arn[0-9A-F]{8})\\/index\\/\\*$/',
      },
    ],
  }),
  rule({
    type: CfnPolicy,
    ids: ['AwsSolutions-IAM5'],
    reason:
      'The configuration history’s objects are named by adapter, device and content hash (functions/configs/keys.ts): a grant names their prefix (<bucket>/configs/*), and only GetObject or PutObject on it.',
    // The bucket's ARN as a reference, or (once synthesized) as the stateful stack's export of it.
    appliesTo: [
      {
        regex:
          '/^Resource::(<ConfigArchiveBucket[0-9A-F]{8}\\.Arn>|[A-Za-z0-9]+:ExportsOutputFnGetAttConfigArchiveBucket[0-9A-F]{8}Arn[0-9A-F]{8})\\/configs\\/\\*$/',
      },
    ],
  }),
  rule({
    type: CfnPolicy,
    ids: ['AwsSolutions-IAM5'],
    when: ({ resource }) => wildcardActions(resource).every((action) => action.startsWith('xray:')),
    reason: 'The only statement on every resource is the X-Ray segment and telemetry writes of a traced function, which have no resource-level permissions.',
    appliesTo: ['Resource::*'],
  }),
  rule({
    type: CfnPolicy,
    ids: ['AwsSolutions-IAM5'],
    reason:
      'The compliance housekeeping lists and deletes versions of the durable functions (the batch function, the remediation function): `<function ARN>:*` names that function’s qualified versions only, never the function itself nor another function.',
    appliesTo: [{ regex: '/^Resource::<(ComplianceBatch|RemediationRun)[A-Za-z0-9]*\\.Arn>:\\*$/' }],
  }),
  rule({
    type: CfnPolicy,
    ids: ['AwsSolutions-IAM5'],
    reason:
      'The plan routes create, change, read and delete the schedules of compliance plans (the scheduled-run function only deletes that of a plan that is gone), one per plan named after its id, made at run time: `schedule/<the stack’s group>/*` names the schedules of that group only.',
    appliesTo: [
      { regex: '/^Resource::arn:<AWS::Partition>:scheduler:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|[0-9]{12}):schedule\\/[A-Za-z0-9._-]+-plans\\/\\*$/' },
    ],
  }),
  rule({
    type: CfnQueue,
    ids: ['AwsSolutions-SQS3'],
    when: ({ resource }) => resource.node.path.endsWith('/PlanSchedules/DeadLetters/Resource'),
    reason:
      'This queue is the dead-letter queue of the compliance plans’ schedules: EventBridge Scheduler sends it the invocations that failed after their retries (each schedule names it, at run time, as its target’s DeadLetterConfig).',
  }),
  rule({
    type: CfnPolicy,
    ids: ['AwsSolutions-IAM5'],
    reason:
      'CDK’s grant of a table or secret under a customer-managed key (kms.*): the KMS action families DynamoDB and Secrets Manager use on that key (data keys, re-encryption); the statement’s resource is the one key.',
    appliesTo: ['Action::kms:ReEncrypt*', 'Action::kms:GenerateDataKey*'],
  }),
  rule({
    type: CfnPolicy,
    ids: nistPci('IAMNoInlinePolicy'),
    reason:
      'The policy holds the grants of the one role it is attached to (FunctionRoles, the backup selection and CodeDeploy roles): least privilege per role, created and deleted with it; a managed policy would share nothing and add a resource per role.',
  }),
  rule({ type: CfnFunction, ids: ['AwsSolutions-L1', 'Serverless-LambdaLatestVersion'], when: ({ resource }) => isNode22(resource), reason: NODE_22 }),
  rule({
    type: CfnFunction,
    ids: ['NIST.800.53.R5-LambdaDLQ', 'Serverless-LambdaDLQ'],
    when: ({ resource }) => resource.deadLetterConfig === undefined && !isDurable(resource) && !isHousekeeping(resource),
    reason:
      'Invoked synchronously only (by API Gateway, as a route or as the authorizer): the caller gets the error, and a dead-letter queue applies to asynchronous invocations only.',
  }),
  rule({
    type: CfnFunction,
    ids: ['NIST.800.53.R5-LambdaDLQ', 'Serverless-LambdaDLQ'],
    when: ({ resource }) => resource.deadLetterConfig === undefined && isDurable(resource),
    reason:
      'The durable compliance batch function: each execution keeps its own state and outcome (failed batches are recorded on the batch item and in the execution history), which a dead-letter queue would duplicate.',
  }),
  rule({
    type: CfnFunction,
    ids: ['NIST.800.53.R5-LambdaDLQ', 'Serverless-LambdaDLQ'],
    when: ({ resource }) => resource.deadLetterConfig === undefined && isHousekeeping(resource),
    reason:
      'The compliance housekeeping runs hourly from its schedule (two retries): a failed run loses nothing, since the next one lists the same versions and executions again, and its errors alarm pages.',
  }),
  rule({
    type: CfnRule,
    ids: ['Serverless-EventBusDLQ'],
    when: ({ resource }) => resource.node.path.includes('/ComplianceHousekeepingSchedule/'),
    reason:
      'The hourly schedule of the compliance housekeeping (two retries): an event that could not be delivered loses nothing, since the next hour’s run lists the same versions and executions again.',
  }),
  rule({
    type: CfnFunction,
    ids: ['NIST.800.53.R5-LambdaConcurrency'],
    when: ({ resource }) => resource.reservedConcurrentExecutions === undefined,
    reason:
      'Concurrency is reserved where a burst elsewhere must not starve a function (the authorizer) or a function must not flood what it calls (the relay, the orchestrator health probes; config concurrency); the others share the account’s unreserved pool.',
  }),
  rule({
    type: CfnFunction,
    ids: nistPci('LambdaInsideVPC'),
    when: ({ resource, settings }) => resource.vpcConfig === undefined && settings?.network?.placement !== 'all',
    reason: ({ settings }) =>
      settings?.network
        ? 'Calls neither NSO nor Vault: with network.placement "outside-callers" it runs outside the VPC (placement "all" puts every function in it).'
        : 'This deployment’s config gives no network: every function runs outside any VPC (network, with placement "all", puts every function in one).',
  }),
  rule({
    type: CfnBucket,
    ids: nistPci('S3BucketReplicationEnabled'),
    when: ({ resource }) => resource.node.path.includes('/ConfigArchive/'),
    reason:
      'The configuration history and its access logs are kept in the service’s region, with the tables they describe: versioned and retained with the stack; a copy in another region is a disaster-recovery choice of the deployment, not of the service.',
  }),
  rule({
    type: CfnBucket,
    ids: nistPci('S3DefaultEncryptionKMS'),
    when: ({ resource }) => resource.node.path.endsWith('/ConfigArchive/AccessLogs/Resource'),
    reason: 'The bucket receives S3 server access logs, which S3 delivers only to buckets encrypted with S3-managed keys (SSE-S3).',
  }),
  rule({
    type: CfnLogGroup,
    ids: nistPci('CloudWatchLogGroupEncrypted'),
    when: ({ resource }) => resource.kmsKeyId === undefined,
    reason: 'Encrypted by CloudWatch Logs with its service key: this deployment configures no customer-managed key for its logs.',
  }),
  rule({
    type: CfnTopic,
    ids: nistPci('SNSEncryptedKMS'),
    when: ({ resource }) => resource.kmsMasterKeyId === undefined,
    reason: 'The alarm topic carries alarm state changes only (no request data); this deployment configures no customer-managed key for it.',
  }),
  rule({
    type: CfnSubscription,
    ids: ['Serverless-SNSRedrivePolicy'],
    when: ({ resource }) => resource.protocol === 'email',
    reason: 'The e-mail subscription of alarms.email: an undelivered notification loses no alarm, whose state stays in CloudWatch and on the dashboard.',
  }),
  rule({
    type: CfnSecret,
    ids: nistPci('SecretsManagerUsingKMSKey'),
    when: ({ resource }) => resource.kmsKeyId === undefined,
    reason: 'Encrypted with the Secrets Manager AWS-managed key: this deployment configures no customer-managed key for its secrets.',
  }),
  rule({
    type: CfnSecret,
    ids: ['AwsSolutions-SMG4', 'NIST.800.53.R5-SecretsManagerRotationEnabled'],
    when: ({ resource, vaultSecrets }) => vaultSecrets.has(resource.node.path),
    reason: 'A Vault credential: Vault issues and expires it (AppRole secret ids and token TTLs), not Secrets Manager.',
  }),
  rule({
    type: CfnSecret,
    ids: ['AwsSolutions-SMG4', 'NIST.800.53.R5-SecretsManagerRotationEnabled'],
    when: ({ resource }) => resource.node.path.includes('/IdempotencyKey/'),
    reason:
      'The key of the Idempotency-Key fingerprints: a new key would answer every retry within the idempotency window with 422, so it is kept for the life of the deployment.',
  }),
  rule({
    type: CfnAlarm,
    ids: ['NIST.800.53.R5-CloudWatchAlarmAction'],
    when: ({ resource }) =>
      [resource.alarmActions, resource.okActions, resource.insufficientDataActions].every((actions) => [resolved(resource, actions) ?? []].flat().length === 0),
    reason: 'This deployment’s config names no alarm destination (alarms.email or alarms.topicArn): its alarms show in the console and on the dashboard only.',
  }),
  rule({
    type: CfnUserPool,
    ids: ['AwsSolutions-COG2'],
    when: ({ resource }) => (resource.mfaConfiguration ?? 'OFF') === 'OFF',
    reason: 'Users are created by administrators (no self sign-up); this deployment’s config does not require MFA in the user pool.',
  }),
  rule({
    type: CfnUserPool,
    ids: ['AwsSolutions-COG3', 'AwsSolutions-COG8'],
    reason: 'Cognito threat protection is part of the paid Plus feature plan, chosen per organisation; the pool works on Essentials.',
  }),
];

/** The service as the suppressions see it. */
export interface NagSubject {
  readonly data: Stack;
  readonly api: Stack;
  readonly settings: DeploySettings | undefined;
  /** The constructs of the Vault credential secrets the stack creates. */
  readonly vaultSecrets: readonly IConstruct[];
}

/** Adds each suppression to the resources of both stacks (nested stacks included) that its reason covers. */
export const addNagSuppressions = (service: NagSubject): void => {
  const vaultSecrets = new Set(service.vaultSecrets.flatMap((c) => c.node.findAll().map((child) => child.node.path)));
  for (const resource of [service.data, service.api].flatMap((stack) => stack.node.findAll())) {
    if (!(resource instanceof CfnResource)) continue;
    const subject = { resource, settings: service.settings, vaultSecrets };
    const suppressions = RULES.filter((r) => resource instanceof r.type && (r.when?.(subject) ?? true)).flatMap((r) =>
      r.ids.map((id) => ({ id, reason: typeof r.reason === 'string' ? r.reason : r.reason(subject), ...(r.appliesTo ? { appliesTo: r.appliesTo } : {}) })),
    );
    if (suppressions.length) NagSuppressions.addResourceSuppressions(resource, suppressions);
  }
};
