/**
 * The deployment configuration file (`cdk deploy -c config=deploy/prod.json`): one JSON
 * document, checked at synth against `deploy/config.schema.json` (structure, types, enums,
 * patterns) and then against the rules a schema cannot say well (settings that contradict, a
 * CA bundle that is not PEM certificates, reserved concurrency the account cannot give).
 * Every problem is reported at once, each naming its key. docs/deployment.md is the reference.
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { X509Certificate } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isManagedPath, pathProblem } from '../functions/outbound/secrets/reference.js';
import type { LogLevel } from '../functions/platform/logger.js';
import { liveRoutes } from '../functions/api/routes.js';
import type { LiveRoute } from '../functions/platform/route.js';
import { serializeUsageKeys } from '../functions/authorizer/usage.js';
import type { ObservabilityThresholds } from './constructs/observability.js';
import type { LogArchive } from './constructs/log-policy.js';
import type { VaultCredential } from './constructs/secrets.js';
import { jwksFileProblems } from './jwks-file.js';
import { PROJECT_ROOT } from './paths.js';

export const CONFIG_SCHEMA_FILE = path.join(PROJECT_ROOT, 'deploy', 'config.schema.json');
/** The checked-in example; the tests synthesize it, and it is the starting point of a real file. */
export const EXAMPLE_CONFIG_FILE = path.join(PROJECT_ROOT, 'deploy', 'config.example.json');

/** Lambda keeps this much of the account's concurrency unreserved; reservations beyond it fail at deploy. */
export const UNRESERVED_MINIMUM = 100;

export interface VaultSettings {
  readonly address: string;
  readonly mount: string;
  readonly authMethod: 'token' | 'approle';
  readonly namespace?: string;
  readonly reader?: VaultCredential;
  readonly writer?: VaultCredential;
  readonly referencePrefixes?: readonly string[];
  readonly cacheTtlSeconds?: number;
}

/** Multi-factor sign-in of the Cognito user pool (TOTP); absent: the template leaves the pool's setting alone. */
export type MfaSetting = 'required' | 'optional' | 'off';

export type IdentitySettings =
  | { readonly provider: 'cognito'; readonly mfa?: MfaSetting }
  | {
      readonly provider: 'oidc';
      readonly issuer: string;
      readonly audience: string;
      readonly jwksUrl?: string;
      readonly rolesClaim?: string;
      /** The authorizer runs in the VPC of `network`. */
      readonly inVpc?: boolean;
      /** Absolute path of the pinned JWKS file: the authorizer verifies with its keys only, and never fetches. */
      readonly jwks?: string;
    };

/** The web console (docs/console.md): off, or on with how it signs in. */
export interface ConsoleSettings {
  readonly enabled: boolean;
  /** Cognito: the hosted-UI domain's prefix; absent: `<service name>-<account id>`. */
  readonly domainPrefix?: string;
  /** Addresses of the console besides `<API URL>/console`. */
  readonly urls: readonly string[];
  readonly scopes: readonly string[];
  /** oidc: the console's client at the provider, and the provider's endpoints. */
  readonly clientId?: string;
  readonly authorizationEndpoint?: string;
  readonly tokenEndpoint?: string;
  readonly endSessionEndpoint?: string;
}

/**
 * The service's name in this stack: the REST API's name, the `Service` dimension of its metrics
 * (`SERVICE_NAME`) and the stem of alarm and dashboard names. From the stack name, so that two
 * stacks in one account never share one: `Netconfig` → `netconfig`, `NetconfigStaging` →
 * `netconfig-staging`.
 */
export const serviceNameOf = (stackName: string): string => stackName.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** What the console asks for unless `console.scopes` says otherwise. */
export const DEFAULT_CONSOLE_SCOPES = ['openid', 'email', 'profile'] as const;
/** Words Cognito refuses in a hosted-UI domain prefix. */
const RESERVED_DOMAIN_WORDS = ['aws', 'amazon', 'cognito'] as const;

export interface AlarmSettings {
  readonly email?: string;
  readonly topicArn?: string;
  readonly thresholds?: ObservabilityThresholds;
}

/** Reserved concurrency per function of each group; `null` reserves none (and caps nothing). */
export interface ConcurrencySettings {
  readonly accountLimit: number;
  readonly authorizer: number | null;
  readonly relay: number | null;
  readonly health: number | null;
}

export interface SubnetSettings {
  readonly subnetId: string;
  readonly availabilityZone: string;
  readonly routeTableId?: string;
}

export interface EgressRule {
  readonly cidr: string;
  readonly port: number;
  readonly description?: string;
}

export interface NetworkSettings {
  readonly vpcId: string;
  readonly subnets: readonly SubnetSettings[];
  /** Security groups to use as they are; none is created. */
  readonly securityGroupIds?: readonly string[];
  /** The created security group's egress (NSO and Vault), besides what reaching AWS needs. */
  readonly egress?: readonly EgressRule[];
  /** How the functions in the VPC reach DynamoDB, Secrets Manager and Lambda. */
  readonly awsServices: 'endpoints' | 'existing-endpoints' | 'nat';
  /** Which functions run in the VPC: those that call NSO or Vault, or every one. */
  readonly placement: 'outside-callers' | 'all';
  /** Subnets in one availability zone accepted. */
  readonly allowSingleAz: boolean;
  /** DynamoDB's managed prefix list in the region (egress of the created group to the gateway endpoint). */
  readonly dynamodbPrefixListId?: string;
}

/** Retention and archive of every log group (`logs`). */
export interface LogSettings {
  /** Days CloudWatch Logs keeps events; one of the values it accepts. */
  readonly retentionDays: number;
  readonly archive?: LogArchive;
}

/** The retention of every log group when the config names none: a year, the least an audit needs at hand. */
export const DEFAULT_LOG_RETENTION_DAYS = 365;
/** A throttle: steady requests per second and the burst above it. */
export interface ThrottleSettings {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** One usage plan of the relay: its throttle and, optionally, a quota per period. */
export interface UsagePlanSettings extends ThrottleSettings {
  readonly quota?: { readonly limit: number; readonly period: 'DAY' | 'WEEK' | 'MONTH' };
}

/** A named client of the relay, recognised by its token subjects or client ids. */
export interface UsageClientSettings extends UsagePlanSettings {
  readonly name: string;
  readonly subjects?: readonly string[];
  readonly clientIds?: readonly string[];
}

export interface UsagePlansSettings {
  /** The claim holding the client id (default `client_id`). */
  readonly clientIdClaim: string;
  readonly default: UsagePlanSettings;
  readonly clients: readonly UsageClientSettings[];
}

/** How the API is exposed (docs/deployment.md, "API exposure"). */
export interface ApiSettings {
  readonly endpointType: 'regional' | 'private';
  /** The execute-api interface endpoints allowed to call a private API. */
  readonly vpcEndpointIds?: readonly string[];
  /** The only source addresses allowed to call the API. */
  readonly sourceCidrs?: readonly string[];
  readonly webAclArn?: string;
  /** The stage's throttle for all callers together. */
  readonly throttling: ThrottleSettings;
  /** Per-method metrics: only for the methods the alarms read, or for every method. */
  readonly detailedMetrics: 'alarmed' | 'all';
  readonly usagePlans?: UsagePlansSettings;
}

/** The name of the plan of every caller no client names; no client may take it. */
export const DEFAULT_PLAN_NAME = 'default';
/** Characters of a usage-plan key value (infra/constructs/api-exposure.ts). */
export const USAGE_KEY_LENGTH = 40;

/** The API as it was before the `api` key: regional, no resource policy, 200 rps / burst 400 for everyone. */
export const DEFAULT_API: ApiSettings = { endpointType: 'regional', throttling: { rateLimit: 200, burstLimit: 400 }, detailedMetrics: 'alarmed' };
/** What a customer-managed KMS key encrypts. */
export type KmsUse = 'tables' | 'logs' | 'secrets' | 'alarmTopic' | 'backup' | 'configs' | 'events';
/** Key ARNs per use; `key` stands for every use not named. */
export type KmsSettings = Partial<Record<KmsUse | 'key', string>>;

/** The key ARN of a use (its own, else `kms.key`), or none: an AWS-managed key. */
export const kmsKeyArn = (kms: KmsSettings | undefined, use: KmsUse): string | undefined => kms?.[use] ?? kms?.key;

export interface BackupSettings {
  /** EventBridge cron expression (UTC). */
  readonly schedule: string;
  readonly retentionDays: number;
  /** An existing vault; absent: one is created. */
  readonly vaultArn?: string;
  readonly copyTo?: { readonly vaultArn: string; readonly retentionDays?: number };
}

/** Where the compliance events go (docs/deployment.md, "Compliance events"). */
export interface EventsSettings {
  /** An existing bus; absent: the stack creates one. */
  readonly busArn?: string;
}

export type CanaryMode =
  | 'canary-10-percent-5-minutes'
  | 'canary-10-percent-10-minutes'
  | 'canary-10-percent-30-minutes'
  | 'linear-10-percent-every-1-minute'
  | 'linear-10-percent-every-10-minutes'
  | 'all-at-once'
  | 'off';

export interface DeploymentSettings {
  /** Termination protection of the API stack. */
  readonly terminationProtection: boolean;
  readonly canary: CanaryMode;
}

const DEFAULT_DEPLOYMENT: DeploymentSettings = { terminationProtection: true, canary: 'canary-10-percent-5-minutes' };

/** Where and how the stacks deploy in a governed account (docs/deployment.md, "Landing zone"). */
export interface LandingZoneSettings {
  readonly account?: string;
  readonly region?: string;
  readonly bootstrapQualifier?: string;
  /** A managed policy name or ARN. */
  readonly permissionsBoundary?: string;
  readonly rolePath?: string;
  readonly tags: Readonly<Record<string, string>>;
  /** Whether the stack sets the account's API Gateway CloudWatch Logs role. */
  readonly apiGatewayAccountRole: 'existing' | 'manage';
}

/** What the stack is built from, the file's values with defaults applied. */
export interface DeploySettings {
  readonly logLevel: LogLevel;
  readonly logs: LogSettings;
  readonly landingZone: LandingZoneSettings;
  /** Absolute path of the PEM CA bundle. */
  readonly caBundle?: string;
  readonly vault: VaultSettings;
  readonly identity: IdentitySettings;
  readonly console: ConsoleSettings;
  readonly alarms: AlarmSettings;
  readonly concurrency: ConcurrencySettings;
  readonly network?: NetworkSettings;
  readonly api: ApiSettings;
  readonly kms?: KmsSettings;
  readonly backup?: BackupSettings;
  readonly events?: EventsSettings;
  readonly deployment: DeploymentSettings;
}

export interface DeployConfig extends DeploySettings {
  readonly stackName: string;
}

export type ConcurrencyGroup = 'relay' | 'health';

/**
 * Which functions a concurrency cap applies to, from the route table: the relay, and the health
 * routes that probe orchestrators (they wait on them, so a slow NSO holds their instances).
 */
export const concurrencyGroup = (route: Pick<LiveRoute, 'operationId' | 'path' | 'needs'>): ConcurrencyGroup | undefined => {
  if (route.operationId === 'relayRestAction') return 'relay';
  if (route.needs.orchestrator && route.path.startsWith('/health')) return 'health';
  return undefined;
};

/** Functions that call NSO or Vault: they join the VPC and carry the CA bundle. The compliance batch function is one too. */
export const callsOutside = (route: Pick<LiveRoute, 'needs'>): boolean => Boolean(route.needs.orchestrator || route.needs.secrets);

export class DeployConfigError extends Error {
  override name = 'DeployConfigError';
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source} is not a valid deployment configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: read only after ajv has checked it against deploy/config.schema.json.
type Json = Record<string, any>;

const schema = JSON.parse(readFileSync(CONFIG_SCHEMA_FILE, 'utf8')) as Json;
const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true });
addFormats.default(ajv, ['email']);
// The message a pattern failure prints instead of the bare regular expression.
ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
const validateSchema = ajv.compile(schema);

/** `/vault/reader/roleId` → `vault.reader.roleId`, `/network/subnets/0` → `network.subnets[0]`. */
const keyOf = (pointer: string, extra?: string): string => {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((key, part) => (/^\d+$/.test(part) ? `${key}[${part}]` : key ? `${key}.${part}` : part), '') || '(top level)';
};

const shown = (value: unknown): string => JSON.stringify(value) ?? String(value);

const describe = (error: ErrorObject): string | undefined => {
  const key = keyOf(error.instancePath);
  const params = error.params as Json;
  switch (error.keyword) {
    case 'additionalProperties': {
      const allowed = Object.keys((error.parentSchema as Json)['properties'] ?? {}).filter((k) => k !== '$schema');
      return `${keyOf(error.instancePath, params['additionalProperty'])}: unknown key (${key === '(top level)' ? 'top-level keys' : `keys of ${key}`}: ${allowed.join(', ')})`;
    }
    case 'required':
      return `${keyOf(error.instancePath, params['missingProperty'])}: required`;
    case 'type':
      return `${key}: must be ${[params['type']].flat().join(' or ')}, got ${shown(error.data)}`;
    case 'enum':
      return `${key}: must be one of ${(params['allowedValues'] as unknown[]).map(shown).join(', ')}, got ${shown(error.data)}`;
    case 'pattern':
    case 'format':
      return `${key}: ${(error.parentSchema as Json)['x-message'] ?? error.message}, got ${shown(error.data)}`;
    default:
      return `${key}: ${error.message}${error.keyword === 'uniqueItems' ? '' : `, got ${shown(error.data)}`}`;
  }
};

/**
 * Why a file a key names cannot be read as text, or none: missing, a directory or another
 * non-file, or refused by the file system (permissions). A file-path key is checked with this
 * before its content, so that no such case surfaces as a raw `EISDIR` or `EACCES` trace.
 */
export const readableFileProblem = (file: string): string | undefined => {
  let stats;
  try {
    stats = statSync(file);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? `no such file: ${file}`
      : `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (stats.isDirectory()) return `${file} is a directory: name the file in it`;
  if (!stats.isFile()) return `${file} is not a regular file`;
  try {
    accessSync(file, constants.R_OK);
  } catch (error) {
    return `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  return undefined;
};

/** The CA bundle's problem, or none: a readable file of one or more PEM certificates and nothing else. */
export const caBundleProblem = (file: string): string | undefined => {
  const unreadable = readableFileProblem(file);
  if (unreadable) return unreadable;
  const text = readFileSync(file, 'utf8');
  const blocks = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) return `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`;
  const other = blocks.find((b) => b[1] !== 'CERTIFICATE');
  if (other) return `${file} holds a ${other[1]} block: a CA bundle carries certificates only (never a key)`;
  const rest = text.replace(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g, '').trim();
  if (rest) return `${file} has text outside its PEM blocks: ${shown(rest.slice(0, 40))}`;
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block[0]);
    } catch (error) {
      return `${file}: certificate ${i + 1} does not parse (${(error as Error).message})`;
    }
  }
  return undefined;
};

/** The shape the schema's pattern gives a CIDR block; only such a value is checked further. */
const CIDR_SHAPE = /^\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}$/;

/** The widest egress block the created security group takes: anything wider is not "where NSO and Vault listen". */
export const WIDEST_EGRESS_PREFIX = 8;

/**
 * The problem of an egress CIDR the schema's pattern let through, or none: octets and prefix
 * length in range, no host bits (`10.20.30.5/16` opens the whole /16: a typo for /32 must not
 * widen the group silently), and no block wider than {@link WIDEST_EGRESS_PREFIX}.
 */
export const egressCidrProblem = (cidr: string): string | undefined => {
  if (Number(cidr.split('/')[1]) < WIDEST_EGRESS_PREFIX && cidrProblem(cidr) === undefined)
    return `${shown(cidr)} spans more than a /${WIDEST_EGRESS_PREFIX}: name the networks NSO and Vault are in (the created group allows nothing else)`;
  return cidrProblem(cidr);
};

/**
 * The problem of a CIDR block the schema's pattern let through, or none: octets and prefix
 * length in range, and no host bits (`10.20.30.5/16` would open the whole /16: a typo for /32
 * must not widen a rule silently).
 */
export const cidrProblem = (cidr: string): string | undefined => {
  const [address = '', length = ''] = cidr.split('/');
  const octets = address.split('.').map(Number);
  const prefix = Number(length);
  if (octets.some((o) => o > 255) || prefix > 32) return `${shown(cidr)} is not an IPv4 CIDR block (an octet above 255, or a prefix length above 32)`;
  const value = octets.reduce((v, o) => v * 256 + o, 0);
  const block = 2 ** (32 - prefix);
  const network = value - (value % block);
  if (network !== value) {
    const dotted = [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.');
    return `${shown(cidr)} has host bits set: it opens ${dotted}/${prefix}; write that, or ${address}/32 for the one host`;
  }
  return undefined;
};

const DEFAULT_CONCURRENCY: ConcurrencySettings = { accountLimit: 1000, authorizer: 50, relay: 100, health: 10 };

/** How many functions each concurrency setting reserves for (one authorizer; the route table's relay and health functions). */
export const reservedFunctionCounts = (): Record<'authorizer' | ConcurrencyGroup, number> => ({
  authorizer: 1,
  relay: liveRoutes.filter((r) => concurrencyGroup(r) === 'relay').length,
  health: liveRoutes.filter((r) => concurrencyGroup(r) === 'health').length,
});

/** `value` when it is a JSON object, else an empty one: the cross-key checks read any shape the schema refused. */
const objectOf = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
/** `value` when it is an array, else an empty one. */
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
/** The key a problem names (what comes before its first `: `). */
const keyOfProblem = (problem: string): string => problem.slice(0, problem.indexOf(': ') >>> 0);

/**
 * `logs` against itself: less than a year of retention only with an archive that keeps the rest,
 * and the archive's role exactly where CloudWatch Logs uses one (a Firehose or Kinesis destination).
 */
const logsProblems = (logs: Json): string[] => {
  const problems: string[] = [];
  const archive = logs['archive'] === undefined ? undefined : objectOf(logs['archive']);
  if (typeof logs['retentionDays'] === 'number' && logs['retentionDays'] < DEFAULT_LOG_RETENTION_DAYS && !archive) {
    problems.push(
      `logs.retentionDays: ${logs['retentionDays']} keeps less than a year of logs; give logs.archive (where they are kept longer) or at least ${DEFAULT_LOG_RETENTION_DAYS}`,
    );
  }
  const destination = archive?.['destinationArn'];
  if (typeof destination === 'string') {
    const stream = /^arn:[^:]+:(?:firehose|kinesis):/.test(destination);
    if (stream && !archive?.['roleArn'])
      problems.push('logs.archive.roleArn: required with a Firehose or Kinesis destination (the role CloudWatch Logs assumes to put records on it)');
    if (!stream && archive?.['roleArn'])
      problems.push(
        'logs.archive.roleArn: only used with a Firehose or Kinesis destination; a CloudWatch Logs destination authorizes the account by its own policy',
      );
  }
  return problems;
};

/** Where an OIDC authorizer's keys come from and where it runs: a pinned JWKS or a URL, in the VPC or not. */
const identityKeyProblems = (identity: Json, config: Json, dir: string): string[] => {
  const problems: string[] = [];
  if (identity['inVpc'] === true && config['network'] === undefined) problems.push('identity.inVpc: requires network (the VPC the authorizer joins)');
  if (typeof identity['jwks'] !== 'string') return problems;
  if (identity['jwksUrl'] !== undefined) problems.push('identity.jwks: pinned keys are never fetched: give identity.jwks or identity.jwksUrl, not both');
  const file = path.resolve(dir, identity['jwks']);
  const unreadable = readableFileProblem(file);
  problems.push(...(unreadable ? [unreadable] : jwksFileProblems(file)).map((p) => `identity.jwks: ${p}`));
  return problems;
};

/**
 * An authorizer in the VPC (`network.placement` "all", or `identity.inVpc`) must reach its
 * issuer's keys: through a NAT, or an egress rule on HTTPS (443) of the created group, or
 * security groups given by id (their rules are the owner's), unless the keys are pinned.
 * Otherwise every authorized request would answer 500 (keys unavailable) after a clean deploy.
 */
const authorizerReachProblems = (config: Json): string[] => {
  const network = config['network'] === undefined ? undefined : objectOf(config['network']);
  const identity = objectOf(config['identity']);
  const inVpc = network?.['placement'] === 'all' || (identity['provider'] === 'oidc' && identity['inVpc'] === true);
  if (!network || !inVpc || typeof identity['jwks'] === 'string') return [];
  if (network['awsServices'] === 'nat' || Array.isArray(network['securityGroupIds'])) return [];
  if (listOf(network['egress']).some((rule) => objectOf(rule)['port'] === 443)) return [];
  const why = network['placement'] === 'all' ? 'network.placement "all"' : 'identity.inVpc';
  return [
    `network.egress: with ${why} the authorizer runs in the VPC and fetches the issuer's keys (JWKS) over HTTPS: add an egress rule on port 443 to the issuer, use awsServices "nat", or pin the keys (identity.jwks)`,
  ];
};

/** The region of an ARN (its fourth field). */
const regionOfArn = (arn: unknown): string | undefined => (typeof arn === 'string' ? arn.split(':')[3] : undefined);

/** Keys, backup and events: keys of one region, each use set only where it has something to encrypt, a copy to another vault, a bus of the stacks' region. */
const keyChecks = (config: Json): string[] => {
  const problems: string[] = [];
  const kms = objectOf(config['kms']);
  const backup = config['backup'] === undefined ? undefined : objectOf(config['backup']);
  const regions = new Set(Object.values(kms).map(regionOfArn).filter(Boolean));
  if (regions.size > 1)
    problems.push(`kms: keys of more than one region (${[...regions].join(', ')}): tables, log groups and secrets use a key of their own region only`);
  if (kms['alarmTopic'] && !objectOf(config['alarms'])['email'])
    problems.push('kms.alarmTopic: only used for the topic created for alarms.email (a topic given by alarms.topicArn keeps its own key)');
  if (kms['backup'] && !(backup && !backup['vaultArn']))
    problems.push('kms.backup: only used for the vault created for backup (backup given without backup.vaultArn)');
  const busArn = objectOf(config['events'])['busArn'];
  if (kms['events'] && busArn)
    problems.push('kms.events: only used for the event bus the stack creates (events.busArn absent); a bus given by events.busArn keeps its own key');
  const region = objectOf(config['landingZone'])['region'];
  if (typeof busArn === 'string' && region && regionOfArn(busArn) !== region)
    problems.push(
      `events.busArn: a bus of ${regionOfArn(busArn)}, but the stacks deploy to ${region}: PutEvents reaches buses of the caller's region only (forward events to another region with a rule on a bus of ${region})`,
    );
  const copy = objectOf(backup?.['copyTo'])['vaultArn'];
  if (copy && copy === backup?.['vaultArn']) problems.push('backup.copyTo.vaultArn: the copy goes to another vault than backup.vaultArn');
  return problems;
};

const crossChecks = (config: Json, dir: string): string[] => {
  const problems: string[] = [];
  // A deployment is two stacks, `<stackName>` and `<stackName>Api` (infra/stack.ts): a name whose
  // last word is Api would be the API stack of another deployment's name.
  if (typeof config['stackName'] === 'string' && /[a-z0-9]Api$/.test(config['stackName'])) {
    const other = config['stackName'].slice(0, -3);
    problems.push(
      `stackName: must not end in the word Api: the API stack of a deployment named ${other} is ${config['stackName']} (each deployment is <stackName> and <stackName>Api)`,
    );
  }
  const vault = objectOf(config['vault']);
  const approle = vault['authMethod'] === 'approle';
  for (const who of ['reader', 'writer']) {
    const roleId = objectOf(vault[who])['roleId'];
    if (approle && !roleId) problems.push(`vault.${who}.roleId: required with vault.authMethod "approle"`);
    if (!approle && roleId) problems.push(`vault.${who}.roleId: only used with vault.authMethod "approle" (authMethod is "${vault['authMethod'] ?? 'token'}")`);
  }
  // The functions refuse an address with credentials at their start (functions/outbound/secrets/vault.ts): refused here, before a deploy.
  const address = typeof vault['address'] === 'string' && URL.canParse(vault['address']) ? new URL(vault['address']) : undefined;
  if (!address && vault['address'] !== undefined) problems.push(`vault.address: ${shown(vault['address'])} is not a URL`);
  else if (address && (address.username || address.password))
    problems.push('vault.address: must not carry credentials (user:password@): the Vault credential is vault.reader / vault.writer');
  for (const [i, prefix] of listOf(vault['referencePrefixes']).entries()) {
    if (typeof prefix !== 'string') continue;
    const problem = pathProblem(prefix) ?? (isManagedPath(`${prefix}/`) ? 'the service manages the secrets under it' : undefined);
    if (problem) problems.push(`vault.referencePrefixes[${i}]: "${prefix}" is not a usable secret path (${problem})`);
  }

  const identity = config['identity'] === undefined ? undefined : objectOf(config['identity']);
  if (identity?.['provider'] === 'oidc') {
    for (const key of ['issuer', 'audience']) if (!identity[key]) problems.push(`identity.${key}: required with identity.provider "oidc"`);
    problems.push(...identityKeyProblems(identity, config, dir));
  } else if (identity) {
    for (const key of ['issuer', 'audience', 'jwksUrl', 'rolesClaim', 'inVpc', 'jwks']) {
      if (identity[key] !== undefined) problems.push(`identity.${key}: only used with identity.provider "oidc" (the Cognito pool is the issuer)`);
    }
  }
  if (identity?.['provider'] === 'oidc' && identity['mfa'] !== undefined)
    problems.push('identity.mfa: only used with identity.provider "cognito" (an external issuer enforces its own MFA)');
  problems.push(...consoleProblems(objectOf(config['console']), identity?.['provider'] === 'oidc' ? 'oidc' : 'cognito', config['stackName']));
  problems.push(...keyChecks(config));

  problems.push(...logsProblems(objectOf(config['logs'])));

  const alarms = objectOf(config['alarms']);
  if (alarms['email'] && alarms['topicArn']) problems.push('alarms: give email (a topic is created) or topicArn (an existing topic), not both');

  const concurrency = { ...DEFAULT_CONCURRENCY, ...objectOf(config['concurrency']) } as ConcurrencySettings;
  const counts = reservedFunctionCounts();
  const parts = (['authorizer', 'relay', 'health'] as const).filter((k) => concurrency[k] !== null);
  const reserved = parts.reduce((sum, k) => sum + concurrency[k]! * counts[k], 0);
  // Only numbers are summed: a value of another type has its own schema problem.
  const numeric = [concurrency.accountLimit, ...parts.map((k) => concurrency[k])].every((n) => typeof n === 'number');
  if (numeric && reserved > concurrency.accountLimit - UNRESERVED_MINIMUM) {
    const terms = parts.map((k) => `${k} ${concurrency[k]}${counts[k] > 1 ? ` x ${counts[k]} functions` : ''}`).join(' + ');
    problems.push(
      `concurrency: ${terms} = ${reserved} reserved, but Lambda keeps ${UNRESERVED_MINIMUM} of the account's ${concurrency.accountLimit} (concurrency.accountLimit) unreserved: at most ${concurrency.accountLimit - UNRESERVED_MINIMUM} can be reserved`,
    );
  }

  const landingZone = objectOf(config['landingZone']);
  // A stack's environment is an account and a region: one without the other would deploy wherever the shell points.
  for (const [key, other] of [
    ['account', 'region'],
    ['region', 'account'],
  ] as const) {
    if (landingZone[key] !== undefined && landingZone[other] === undefined) problems.push(`landingZone.${other}: required with landingZone.${key}`);
  }

  const network = config['network'] === undefined ? undefined : objectOf(config['network']);
  if (network) {
    const awsServices = network['awsServices'] ?? 'endpoints';
    const endpoints = awsServices === 'endpoints';
    // Both endpoint modes reach DynamoDB through a gateway endpoint, whose prefix list the created group needs.
    const gateway = endpoints || awsServices === 'existing-endpoints';
    const given = Array.isArray(network['securityGroupIds']);
    if (given && network['egress'])
      problems.push('network.egress: only for the security group the stack creates; with network.securityGroupIds, those groups carry the rules');
    if (!given && !network['egress'])
      problems.push('network.egress: required unless network.securityGroupIds is given: where NSO and Vault listen (cidr, port)');
    if (given && network['dynamodbPrefixListId'])
      problems.push('network.dynamodbPrefixListId: only used for the created security group; with network.securityGroupIds, those groups carry the rules');
    if (!given && gateway && !network['dynamodbPrefixListId']) {
      problems.push(
        `network.dynamodbPrefixListId: required with awsServices "${awsServices}" and a created security group (aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.<region>.dynamodb)`,
      );
    }
    if (!gateway && network['dynamodbPrefixListId'])
      problems.push(
        'network.dynamodbPrefixListId: only used with the endpoint modes of awsServices (through a NAT, DynamoDB is reached at its public addresses)',
      );
    if (!given && awsServices === 'existing-endpoints' && !listOf(network['egress']).some((rule) => objectOf(rule)['port'] === 443)) {
      problems.push(
        'network.egress: with awsServices "existing-endpoints", add the addresses of the VPC\'s interface endpoints (Secrets Manager, Lambda) on port 443: the created group allows nothing else',
      );
    }
    for (const [i, rule] of listOf(network['egress']).entries()) {
      const cidr = objectOf(rule)['cidr'];
      const problem = typeof cidr === 'string' && CIDR_SHAPE.test(cidr) ? egressCidrProblem(cidr) : undefined;
      if (problem) problems.push(`network.egress[${i}].cidr: ${problem}`);
    }
    const seen = new Set<string>();
    const zones = new Set<string>();
    for (const [i, subnet] of listOf(network['subnets']).map(objectOf).entries()) {
      if (seen.has(subnet['subnetId'])) problems.push(`network.subnets[${i}].subnetId: ${subnet['subnetId']} is listed twice`);
      seen.add(subnet['subnetId']);
      if (endpoints && !subnet['routeTableId'])
        problems.push(`network.subnets[${i}].routeTableId: required with awsServices "endpoints" (the DynamoDB gateway endpoint is added to it)`);
      if (!endpoints && subnet['routeTableId'])
        problems.push(`network.subnets[${i}].routeTableId: only used with awsServices "endpoints" (the stack changes no route table otherwise)`);
      if (typeof subnet['availabilityZone'] === 'string') zones.add(subnet['availabilityZone']);
    }
    const regionOf = (zone: string) => zone.slice(0, -1);
    const regions = [...new Set([...zones].map(regionOf))];
    const region = objectOf(config['landingZone'])['region'];
    if (regions.length > 1) problems.push(`network.subnets: availability zones of more than one region (${[...zones].join(', ')})`);
    else if (regions.length === 1 && typeof region === 'string' && regions[0] !== region)
      problems.push(`network.subnets: availability zones of ${regions[0]} (${[...zones].join(', ')}), but landingZone.region is ${region}`);
    if (zones.size === 1 && network['allowSingleAz'] !== true) {
      problems.push(
        `network.subnets: all in one availability zone (${[...zones][0]}): an outage of that zone stops every function in the VPC; add a subnet in another zone, or set network.allowSingleAz to true to accept it`,
      );
    }
  }

  problems.push(...authorizerReachProblems(config));
  problems.push(...apiProblems(objectOf(config['api'])));

  if (typeof config['caBundle'] === 'string') {
    const problem = caBundleProblem(path.resolve(dir, config['caBundle']));
    if (problem) problems.push(`caBundle: ${problem}`);
  }
  return problems;
};

/**
 * Most characters the authorizer's usage-plan mapping may take in its environment: Lambda allows
 * 4 KB for all of a function's variables, and the authorizer's others take under 1 KB.
 */
export const USAGE_KEYS_BUDGET = 2500;

/** The problems of the `api` settings between their keys (docs/deployment.md, "API exposure"). */
const apiProblems = (api: Json): string[] => {
  const problems: string[] = [];
  const privateApi = api['endpointType'] === 'private';
  if (privateApi && api['vpcEndpointIds'] === undefined)
    problems.push('api.vpcEndpointIds: required with api.endpointType "private": a private API is callable only through the VPC endpoints its policy names');
  if (!privateApi && api['vpcEndpointIds'] !== undefined)
    problems.push(`api.vpcEndpointIds: only used with api.endpointType "private" (endpointType is "${api['endpointType'] ?? 'regional'}")`);
  for (const [i, cidr] of listOf(api['sourceCidrs']).entries()) {
    const problem = typeof cidr === 'string' && CIDR_SHAPE.test(cidr) ? cidrProblem(cidr) : undefined;
    if (problem) problems.push(`api.sourceCidrs[${i}]: ${problem}`);
  }
  const stage = { ...DEFAULT_API.throttling, ...objectOf(api['throttling']) };
  const plans = api['usagePlans'] === undefined ? undefined : objectOf(api['usagePlans']);
  if (!plans) return problems;
  const named = [
    ['api.usagePlans.default', objectOf(plans['default'])] as const,
    ...listOf(plans['clients']).map((c, i) => [`api.usagePlans.clients[${i}]`, objectOf(c)] as const),
  ];
  // A plan's throttle above the stage's is never reached: the stage throttles first.
  for (const [key, plan] of named) {
    for (const limit of ['rateLimit', 'burstLimit'] as const) {
      if (typeof plan[limit] === 'number' && typeof stage[limit] === 'number' && plan[limit] > stage[limit])
        problems.push(`${key}.${limit}: ${plan[limit]} is above the stage's ${stage[limit]} (api.throttling.${limit}), so it would never apply`);
    }
  }
  const names = new Set<string>();
  const owners = new Map<string, string>();
  for (const [key, client] of named.slice(1)) {
    const name = client['name'];
    if (name === DEFAULT_PLAN_NAME) problems.push(`${key}.name: "${DEFAULT_PLAN_NAME}" is the plan of every caller no client names (api.usagePlans.default)`);
    else if (typeof name === 'string' && names.has(name)) problems.push(`${key}.name: "${name}" is listed twice`);
    names.add(name);
    if (client['subjects'] === undefined && client['clientIds'] === undefined) problems.push(`${key}: give subjects or clientIds (who this client is)`);
    for (const field of ['subjects', 'clientIds'] as const) {
      for (const value of listOf(client[field])) {
        const id = `${field}:${String(value)}`;
        const other = owners.get(id);
        if (other !== undefined && other !== key) problems.push(`${key}.${field}: ${shown(value)} also names ${other}: a caller must have one plan`);
        owners.set(id, key);
      }
    }
  }
  const size = serializeUsageKeys({
    claim: typeof plans['clientIdClaim'] === 'string' ? plans['clientIdClaim'] : 'client_id',
    defaultKey: 'k'.repeat(USAGE_KEY_LENGTH),
    clients: named
      .slice(1)
      .map(([, c]) => ({ key: 'k'.repeat(USAGE_KEY_LENGTH), subjects: listOf(c['subjects']) as string[], clientIds: listOf(c['clientIds']) as string[] })),
  }).length;
  if (size > USAGE_KEYS_BUDGET)
    problems.push(
      `api.usagePlans.clients: the mapping takes ${size} characters of the authorizer's environment, at most ${USAGE_KEYS_BUDGET}: name fewer subjects (a client id covers a whole application)`,
    );
  return problems;
};

/**
 * Why the CLI's account or region is not the config's, or none. `resolved` is what the CLI
 * resolved from its credentials and profile (`CDK_DEFAULT_ACCOUNT`, `CDK_DEFAULT_REGION`); a
 * value the CLI could not resolve (no credentials: a synth in CI) is not compared, so a template
 * can be synthesized anywhere, and `cdk deploy`, which needs credentials, is always checked.
 */
export const environmentMismatch = (
  landingZone: Pick<LandingZoneSettings, 'account' | 'region'>,
  resolved: { account?: string; region?: string },
): string | undefined => {
  const differ = (['account', 'region'] as const).filter((key) => landingZone[key] && resolved[key] && landingZone[key] !== resolved[key]);
  if (!differ.length) return undefined;
  return `The config deploys to ${differ.map((k) => `${k} ${landingZone[k]}`).join(', ')} (landingZone), but the CLI's credentials are for ${differ.map((k) => `${k} ${resolved[k]}`).join(', ')}: switch the profile or fix the config`;
};

/** Whether the console is on: `console.enabled`, else on with Cognito, and with oidc when its client is given. */
const consoleEnabled = (console: Json, provider: 'cognito' | 'oidc'): boolean =>
  typeof console['enabled'] === 'boolean' ? console['enabled'] : provider === 'cognito' || console['clientId'] !== undefined;

const OIDC_CONSOLE_KEYS = ['clientId', 'authorizationEndpoint', 'tokenEndpoint', 'endSessionEndpoint'] as const;

/** The console's keys against the identity provider: Cognito makes its own client and domain, an external provider needs them given. */
const consoleProblems = (console: Json, provider: 'cognito' | 'oidc', stackName: unknown): string[] => {
  const problems: string[] = [];
  if (!consoleEnabled(console, provider)) {
    for (const key of Object.keys(console))
      if (key !== 'enabled') problems.push(`console.${key}: only used while the console is on (console.enabled is false)`);
    return problems;
  }
  if (provider === 'cognito') {
    for (const key of OIDC_CONSOLE_KEYS)
      if (console[key] !== undefined)
        problems.push(`console.${key}: only used with identity.provider "oidc" (with Cognito the stack makes the console's client)`);
    const prefix = console['domainPrefix'];
    const word = typeof prefix === 'string' ? RESERVED_DOMAIN_WORDS.find((w) => prefix.includes(w)) : undefined;
    if (word) problems.push(`console.domainPrefix: "${prefix}" holds "${word}", which Cognito refuses in a domain prefix`);
    // The default, <service name>-<account id>, must itself be a prefix Cognito takes.
    const service = typeof stackName === 'string' && prefix === undefined ? serviceNameOf(stackName) : undefined;
    const defaultWord = service ? RESERVED_DOMAIN_WORDS.find((w) => service.includes(w)) : undefined;
    if (service && (defaultWord || service.length > 50 || !/^[a-z0-9](?:[a-z0-9-]*)$/.test(service)))
      problems.push(
        `console.domainPrefix: required here: the default, "${service}-<account id>", is not a prefix Cognito takes (${defaultWord ? `it holds "${defaultWord}"` : 'letters, digits and hyphens, at most 63'})`,
      );
  } else {
    if (console['domainPrefix'] !== undefined) problems.push('console.domainPrefix: only used with identity.provider "cognito" (the hosted-UI domain)');
    for (const key of OIDC_CONSOLE_KEYS.slice(0, 3))
      if (console[key] === undefined) problems.push(`console.${key}: required for the console with identity.provider "oidc" (or set console.enabled to false)`);
  }
  const scopes = console['scopes'];
  if (Array.isArray(scopes) && !scopes.includes('openid')) problems.push('console.scopes: must include "openid" (the console signs in with the ID token)');
  return problems;
};

/** Checks a parsed configuration; `dir` resolves relative paths (the file's own directory). */
export const parseDeployConfig = (raw: unknown, source: string, dir: string): DeployConfig => {
  const schemaProblems = validateSchema(raw) ? [] : [...new Set((validateSchema.errors ?? []).map(describe).filter((p): p is string => p !== undefined))];
  // The cross-key checks run on whatever the file holds, so a schema problem hides none of them;
  // a key the schema already faulted gets no second message.
  const faulted = new Set(schemaProblems.map(keyOfProblem));
  const problems = [...schemaProblems, ...crossChecks(objectOf(raw), dir).filter((p) => !faulted.has(keyOfProblem(p)))];
  if (problems.length) throw new DeployConfigError(source, problems);
  const config = raw as Json;
  const vault = config['vault'] as Json;
  const identity = (
    config['identity']?.['jwks']
      ? { ...config['identity'], jwks: path.resolve(dir, config['identity']['jwks']) }
      : (config['identity'] ?? { provider: 'cognito' })
  ) as IdentitySettings;
  const network = config['network'] as Json | undefined;
  return {
    stackName: config['stackName'],
    logLevel: config['logLevel'] ?? 'info',
    logs: { retentionDays: DEFAULT_LOG_RETENTION_DAYS, ...(config['logs'] as Json | undefined) } as LogSettings,
    landingZone: { tags: {}, apiGatewayAccountRole: 'existing', ...(config['landingZone'] as Json | undefined) } as LandingZoneSettings,
    ...(config['caBundle'] ? { caBundle: path.resolve(dir, config['caBundle']) } : {}),
    vault: { ...vault, mount: vault['mount'] ?? 'secret', authMethod: vault['authMethod'] ?? 'token' } as VaultSettings,
    identity,
    console: consoleSettingsOf(objectOf(config['console']), identity.provider),
    alarms: (config['alarms'] ?? {}) as AlarmSettings,
    concurrency: { ...DEFAULT_CONCURRENCY, ...(config['concurrency'] as Json | undefined) },
    ...(network ? { network: { awsServices: 'endpoints', placement: 'outside-callers', allowSingleAz: false, ...network } as NetworkSettings } : {}),
    api: apiSettingsOf(objectOf(config['api'])),
    ...(config['kms'] ? { kms: config['kms'] as KmsSettings } : {}),
    ...(config['backup'] ? { backup: config['backup'] as BackupSettings } : {}),
    ...(config['events'] ? { events: config['events'] as EventsSettings } : {}),
    deployment: { ...DEFAULT_DEPLOYMENT, ...(config['deployment'] as Json | undefined) },
  };
};

/** The `console` settings of a checked file, with their defaults. */
const consoleSettingsOf = (console: Json, provider: 'cognito' | 'oidc'): ConsoleSettings => ({
  ...console,
  enabled: consoleEnabled(console, provider),
  urls: console['urls'] ?? [],
  scopes: console['scopes'] ?? [...DEFAULT_CONSOLE_SCOPES],
});

/** The `api` settings of a checked file, with their defaults. */
const apiSettingsOf = (api: Json): ApiSettings => {
  const plans = api['usagePlans'] as Json | undefined;
  return {
    ...DEFAULT_API,
    ...api,
    throttling: { ...DEFAULT_API.throttling, ...api['throttling'] },
    ...(plans ? { usagePlans: { clientIdClaim: plans['clientIdClaim'] ?? 'client_id', default: plans['default'], clients: plans['clients'] ?? [] } } : {}),
  } as ApiSettings;
};

/** Reads and checks a configuration file. */
export const loadDeployConfig = (file: string): DeployConfig => {
  const absolute = path.resolve(file);
  const unreadable = readableFileProblem(absolute);
  if (unreadable) throw new DeployConfigError(file, [unreadable]);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(absolute, 'utf8'));
  } catch (error) {
    throw new DeployConfigError(file, [`not JSON: ${(error as Error).message}`]);
  }
  return parseDeployConfig(raw, file, path.dirname(absolute));
};

/**
 * Context keys earlier versions read (`-c key=value`). They are refused, never ignored: a
 * setting given that way used to apply to one deploy only.
 */
export const RETIRED_CONTEXT_KEYS: Readonly<Record<string, string>> = {
  stackName: 'stackName',
  logLevel: 'logLevel',
  issuer: 'identity.issuer',
  audience: 'identity.audience',
  jwksUrl: 'identity.jwksUrl',
  rolesClaim: 'identity.rolesClaim',
  vaultMount: 'vault.mount',
  vaultAuthMethod: 'vault.authMethod',
  vaultRoleId: 'vault.reader.roleId',
  vaultWriterRoleId: 'vault.writer.roleId',
  vaultCredentialsSecret: 'vault.reader.secretName',
  vaultWriterCredentialsSecret: 'vault.writer.secretName',
  vaultNamespace: 'vault.namespace',
  vaultReferencePrefixes: 'vault.referencePrefixes',
  alarmEmail: 'alarms.email',
  alarmTopicArn: 'alarms.topicArn',
  alarmApi5xxRatePercent: 'alarms.thresholds.api5xxRatePercent',
  alarmApi5xxMinRequests: 'alarms.thresholds.api5xxMinRequests',
  alarmApiLatencyP99Ms: 'alarms.thresholds.apiLatencyP99Ms',
  alarmDynamoSystemErrors: 'alarms.thresholds.dynamoSystemErrors',
};
