/**
 * The deployment config file: what the checked-in example resolves to, and the message each
 * kind of mistake gets (naming its key), all reported at once. The app itself refuses to run
 * without a file and refuses the retired `-c` settings.
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_SCHEMA_FILE,
  DeployConfigError,
  environmentMismatch,
  EXAMPLE_CONFIG_FILE,
  loadDeployConfig,
  parseDeployConfig,
  reservedFunctionCounts,
} from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { serviceNameOf } from '../../infra/stack.js';

const STACK_NAME_RULE =
  'must be words each of a capital letter then one or more lower-case letters or digits (NetconfigProd; not netconfig-prod, Netconfig-Prod nor NetconfigNSO): the service name is its kebab case (netconfig-prod), so each stack name has a service name of its own';
const FIXTURES = path.join(PROJECT_ROOT, 'test', 'infra', 'fixtures');
const CA = path.join(FIXTURES, 'private-ca.pem');

const base = () => ({
  stackName: 'NetconfigStaging',
  vault: { address: 'https://vault.example.net:8200' },
});

const problemsOf = (raw: unknown, dir = FIXTURES): readonly string[] => {
  try {
    parseDeployConfig(raw, 'test.json', dir);
  } catch (error) {
    expect(error).toBeInstanceOf(DeployConfigError);
    expect((error as Error).message).toMatch(/^test\.json is not a valid deployment configuration:\n {2}- /);
    return (error as DeployConfigError).problems;
  }
  throw new Error('the configuration was accepted');
};

const network = (extra: Record<string, unknown> = {}) => ({
  vpcId: 'vpc-0123456789abcdef0',
  subnets: [
    { subnetId: 'subnet-0a000000000000001', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' },
    { subnetId: 'subnet-0b000000000000002', availabilityZone: 'eu-west-1b', routeTableId: 'rtb-0b000000000000002' },
  ],
  egress: [{ cidr: '10.20.0.0/16', port: 8888, description: 'NSO' }],
  dynamodbPrefixListId: 'pl-6da54004',
  ...extra,
});

describe('the deployment config file', () => {
  it('resolves the checked-in example, defaults applied', () => {
    const config = loadDeployConfig(EXAMPLE_CONFIG_FILE);
    expect(config).toMatchObject({
      stackName: 'Netconfig',
      logLevel: 'info',
      vault: { address: 'https://vault.example.net:8200', mount: 'secret', authMethod: 'approle' },
      identity: { provider: 'cognito' },
      console: { enabled: true, urls: [], scopes: ['openid', 'email', 'profile'] },
      alarms: { email: 'noc@example.net' },
      concurrency: { accountLimit: 1000, authorizer: 50, relay: 100, health: 10 },
    });
    expect(config.network).toBeUndefined();
    expect(config.caBundle).toBeUndefined();
  });

  it('resolves the checked-in private-network example (VPC, OIDC, existing alarm topic)', () => {
    const config = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy', 'config.private.example.json'));
    expect(config.network).toMatchObject({ vpcId: 'vpc-0a1b2c3d4e5f60718', awsServices: 'endpoints' });
    expect(config.identity).toMatchObject({ provider: 'oidc', audience: 'netconfig-api' });
    expect(config.alarms.topicArn).toBe('arn:aws:sns:eu-west-1:123456789012:noc-paging');
    expect(config.logs).toEqual({ retentionDays: 731, archive: { destinationArn: 'arn:aws:logs:eu-west-1:111122223333:destination:netconfig-log-archive' } });
  });

  it('fills in every default of a minimal file', () => {
    expect(parseDeployConfig(base(), 'min.json', FIXTURES)).toEqual({
      stackName: 'NetconfigStaging',
      logLevel: 'info',
      vault: { address: 'https://vault.example.net:8200', mount: 'secret', authMethod: 'token' },
      identity: { provider: 'cognito' },
      console: { enabled: true, urls: [], scopes: ['openid', 'email', 'profile'] },
      logs: { retentionDays: 365 },
      alarms: {},
      concurrency: { accountLimit: 1000, authorizer: 50, relay: 100, health: 10 },
      api: { endpointType: 'regional', throttling: { rateLimit: 200, burstLimit: 400 }, detailedMetrics: 'alarmed' },
      deployment: { terminationProtection: true, canary: 'canary-10-percent-5-minutes' },
      landingZone: { tags: {}, apiGatewayAccountRole: 'existing' },
    });
  });

  it('keeps a year of logs unless an archive keeps them, and asks for the archive role exactly where CloudWatch Logs uses one', () => {
    const destination = 'arn:aws:logs:eu-west-1:111122223333:destination:central-log-archive';
    const firehose = 'arn:aws:firehose:eu-west-1:123456789012:deliverystream/log-archive';
    const role = 'arn:aws:iam::123456789012:role/cwl-to-firehose';
    expect(problemsOf({ ...base(), logs: { retentionDays: 90 } })).toEqual([
      'logs.retentionDays: 90 keeps less than a year of logs; give logs.archive (where they are kept longer) or at least 365',
    ]);
    expect(problemsOf({ ...base(), logs: { retentionDays: 42 } })).toEqual([
      expect.stringMatching(/^logs\.retentionDays: must be one of 1, 3, 5, .* 3653, got 42$/),
    ]);
    expect(problemsOf({ ...base(), logs: { archive: { destinationArn: firehose } } })).toEqual([
      'logs.archive.roleArn: required with a Firehose or Kinesis destination (the role CloudWatch Logs assumes to put records on it)',
    ]);
    expect(problemsOf({ ...base(), logs: { archive: { destinationArn: destination, roleArn: role } } })).toEqual([
      'logs.archive.roleArn: only used with a Firehose or Kinesis destination; a CloudWatch Logs destination authorizes the account by its own policy',
    ]);
    expect(problemsOf({ ...base(), logs: { archive: { destinationArn: 'arn:aws:s3:::log-bucket' } } })).toEqual([
      'logs.archive.destinationArn: must be a CloudWatch Logs destination, Firehose delivery stream or Kinesis stream ARN, e.g. arn:aws:logs:eu-west-1:111122223333:destination:central-log-archive, got "arn:aws:s3:::log-bucket"',
    ]);
    // Accepted: a short retention with an archive; a stream with its role; the default year.
    expect(parseDeployConfig({ ...base(), logs: { retentionDays: 30, archive: { destinationArn: destination } } }, 'a.json', FIXTURES).logs).toEqual({
      retentionDays: 30,
      archive: { destinationArn: destination },
    });
    expect(parseDeployConfig({ ...base(), logs: { archive: { destinationArn: firehose, roleArn: role } } }, 'b.json', FIXTURES).logs).toEqual({
      retentionDays: 365,
      archive: { destinationArn: firehose, roleArn: role },
    });
  });

  it('accepts one availability zone when told so, and subnets of the landing zone’s region', () => {
    const single = network({ allowSingleAz: true, subnets: [network().subnets[0]] });
    expect(parseDeployConfig({ ...base(), network: single }, 'az.json', FIXTURES).network).toMatchObject({ allowSingleAz: true, placement: 'outside-callers' });
    const landingZone = { account: '123456789012', region: 'eu-west-1' };
    expect(parseDeployConfig({ ...base(), landingZone, network: network() }, 'lz.json', FIXTURES).landingZone).toEqual({
      ...landingZone,
      tags: {},
      apiGatewayAccountRole: 'existing',
    });
  });

  it('names the account and the region the CLI resolved when they are not the config’s, and compares only what both know', () => {
    const config = { account: '123456789012', region: 'eu-west-1' };
    expect(environmentMismatch(config, { account: '210987654321', region: 'eu-west-1' })).toBe(
      "The config deploys to account 123456789012 (landingZone), but the CLI's credentials are for account 210987654321: switch the profile or fix the config",
    );
    expect(environmentMismatch(config, { account: '210987654321', region: 'us-east-1' })).toBe(
      "The config deploys to account 123456789012, region eu-west-1 (landingZone), but the CLI's credentials are for account 210987654321, region us-east-1: switch the profile or fix the config",
    );
    expect(environmentMismatch(config, { account: '123456789012', region: 'eu-west-1' })).toBeUndefined();
    // No credentials (a synth in CI): nothing resolved, nothing to compare.
    expect(environmentMismatch(config, {})).toBeUndefined();
    expect(environmentMismatch({}, { account: '210987654321', region: 'us-east-1' })).toBeUndefined();
  });

  it('resolves caBundle against the file’s own directory', () => {
    expect(parseDeployConfig({ ...base(), caBundle: 'private-ca.pem' }, 'ca.json', FIXTURES).caBundle).toBe(CA);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'an unknown key, with the keys allowed there',
      { vault: { address: 'https://v.example.net', adress: 'x' } },
      'vault.adress: unknown key (keys of vault: address, mount, authMethod, namespace, reader, writer, referencePrefixes, cacheTtlSeconds)',
    ],
    [
      'an unknown top-level key',
      { logLevl: 'info' },
      'logLevl: unknown key (top-level keys: stackName, logLevel, logs, caBundle, vault, identity, console, alarms, concurrency, network, api, kms, backup, events, deployment, landingZone)',
    ],
    ['a wrong type', { vault: { address: 'https://v.example.net', cacheTtlSeconds: '60' } }, 'vault.cacheTtlSeconds: must be integer, got "60"'],
    ['a bad enum value', { logLevel: 'verbose' }, 'logLevel: must be one of "debug", "info", "warn", "error", got "verbose"'],
    [
      'a bad auth method',
      { vault: { address: 'https://v.example.net', authMethod: 'AppRole' } },
      'vault.authMethod: must be one of "token", "approle", got "AppRole"',
    ],
    [
      'an http:// Vault address',
      { vault: { address: 'http://vault.example.net:8200' } },
      'vault.address: must be an https:// URL (Vault tokens travel with every call), e.g. https://vault.example.net:8200, got "http://vault.example.net:8200"',
    ],
    ['a missing Vault address', { vault: { mount: 'secret' } }, 'vault.address: required'],
    ['a bad stack name', { stackName: 'net_config' }, `stackName: ${STACK_NAME_RULE}, got "net_config"`],
    [
      'AppRole without role ids',
      { vault: { address: 'https://v.example.net', authMethod: 'approle', reader: { roleId: 'r' } } },
      'vault.writer.roleId: required with vault.authMethod "approle"',
    ],
    [
      'a role id with token auth',
      { vault: { address: 'https://v.example.net', reader: { roleId: 'r' } } },
      'vault.reader.roleId: only used with vault.authMethod "approle" (authMethod is "token")',
    ],
    [
      'a reference prefix the service manages',
      { vault: { address: 'https://v.example.net', referencePrefixes: ['netconfig/adapters'] } },
      'vault.referencePrefixes[0]: "netconfig/adapters" is not a usable secret path (the service manages the secrets under it)',
    ],
    [
      'OIDC without an audience',
      { identity: { provider: 'oidc', issuer: 'https://idp.example.net' } },
      'identity.audience: required with identity.provider "oidc"',
    ],
    [
      'an issuer with Cognito',
      { identity: { provider: 'cognito', issuer: 'https://idp.example.net' } },
      'identity.issuer: only used with identity.provider "oidc" (the Cognito pool is the issuer)',
    ],
    [
      'two audiences in one (the authorizer takes a list)',
      { identity: { provider: 'oidc', issuer: 'https://idp.example.net', audience: 'netconfig,other-app' } },
      'identity.audience: must be one audience: no comma or space, got "netconfig,other-app"',
    ],
    [
      'an http:// JWKS URL',
      { identity: { provider: 'oidc', issuer: 'https://idp.example.net', audience: 'a', jwksUrl: 'http://idp.example.net/keys' } },
      'identity.jwksUrl: must be an https:// URL, got "http://idp.example.net/keys"',
    ],
    [
      'both alarm e-mail and topic',
      { alarms: { email: 'noc@example.net', topicArn: 'arn:aws:sns:eu-west-1:123456789012:noc' } },
      'alarms: give email (a topic is created) or topicArn (an existing topic), not both',
    ],
    ['a bad alarm e-mail', { alarms: { email: 'noc' } }, 'alarms.email: must match format "email", got "noc"'],
    ['a negative threshold', { alarms: { thresholds: { apiLatencyP99Ms: -1 } } }, 'alarms.thresholds.apiLatencyP99Ms: must be > 0, got -1'],
    [
      'reserved concurrency the account cannot give',
      { concurrency: { relay: 850 } },
      `concurrency: authorizer 50 + relay 850 + health 10 x ${reservedFunctionCounts().health} functions = ${900 + 10 * reservedFunctionCounts().health} reserved, but Lambda keeps 100 of the account's 1000 (concurrency.accountLimit) unreserved: at most 900 can be reserved`,
    ],
    ['a reservation of zero', { concurrency: { relay: 0 } }, 'concurrency.relay: must be >= 1, got 0'],
    [
      'egress beside given security groups',
      { network: network({ securityGroupIds: ['sg-0123456789abcdef0'], dynamodbPrefixListId: undefined }) },
      'network.egress: only for the security group the stack creates; with network.securityGroupIds, those groups carry the rules',
    ],
    [
      'a created security group without egress',
      { network: network({ egress: undefined }) },
      'network.egress: required unless network.securityGroupIds is given: where NSO and Vault listen (cidr, port)',
    ],
    [
      'endpoints without route tables',
      { network: network({ subnets: [{ subnetId: 'subnet-0a000000000000001', availabilityZone: 'eu-west-1a' }] }) },
      'network.subnets[0].routeTableId: required with awsServices "endpoints" (the DynamoDB gateway endpoint is added to it)',
    ],
    [
      'endpoints without the DynamoDB prefix list',
      { network: network({ dynamodbPrefixListId: undefined }) },
      expect.stringContaining('network.dynamodbPrefixListId: required with awsServices "endpoints" and a created security group') as unknown as string,
    ],
    [
      'a prefix list with a NAT',
      { network: network({ awsServices: 'nat', subnets: [{ subnetId: 'subnet-0a000000000000001', availabilityZone: 'eu-west-1a' }] }) },
      'network.dynamodbPrefixListId: only used with the endpoint modes of awsServices (through a NAT, DynamoDB is reached at its public addresses)',
    ],
    [
      'a subnet listed twice',
      { network: network({ subnets: [network().subnets[0], network().subnets[0]] }) },
      'network.subnets[1].subnetId: subnet-0a000000000000001 is listed twice',
    ],
    [
      'a malformed subnet id',
      { network: network({ subnets: [{ subnetId: 'subnet-x', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' }] }) },
      'network.subnets[0].subnetId: must be a subnet id such as subnet-0123456789abcdef0, got "subnet-x"',
    ],
    [
      'a bad egress CIDR',
      { network: network({ egress: [{ cidr: '10.20.0.0', port: 443 }] }) },
      'network.egress[0].cidr: must be an IPv4 CIDR block such as 10.20.0.0/16, got "10.20.0.0"',
    ],
    [
      'a Vault address carrying credentials',
      { vault: { address: 'https://ops:hunter2@vault.example.net:8200' } },
      'vault.address: must not carry credentials (user:password@): the Vault credential is vault.reader / vault.writer',
    ],
    [
      'egress to every address',
      { network: network({ egress: [{ cidr: '0.0.0.0/0', port: 443 }] }) },
      'network.egress[0].cidr: "0.0.0.0/0" spans more than a /8: name the networks NSO and Vault are in (the created group allows nothing else)',
    ],
    [
      'egress to a quarter of the Internet',
      {
        network: network({
          egress: [
            { cidr: '10.20.0.0/16', port: 8888 },
            { cidr: '0.0.0.0/2', port: 8200 },
          ],
        }),
      },
      'network.egress[1].cidr: "0.0.0.0/2" spans more than a /8: name the networks NSO and Vault are in (the created group allows nothing else)',
    ],
    [
      'an egress CIDR with an octet past 255',
      { network: network({ egress: [{ cidr: '10.256.0.0/16', port: 443 }] }) },
      'network.egress[0].cidr: "10.256.0.0/16" is not an IPv4 CIDR block (an octet above 255, or a prefix length above 32)',
    ],
    [
      'an egress CIDR with a prefix length past 32',
      { network: network({ egress: [{ cidr: '10.20.0.0/33', port: 443 }] }) },
      'network.egress[0].cidr: "10.20.0.0/33" is not an IPv4 CIDR block (an octet above 255, or a prefix length above 32)',
    ],
    [
      'an egress CIDR with host bits set',
      { network: network({ egress: [{ cidr: '10.20.30.5/16', port: 443 }] }) },
      'network.egress[0].cidr: "10.20.30.5/16" has host bits set: it opens 10.20.0.0/16; write that, or 10.20.30.5/32 for the one host',
    ],
    ['an account without a region', { landingZone: { account: '123456789012' } }, 'landingZone.region: required with landingZone.account'],
    ['a region without an account', { landingZone: { region: 'eu-west-1' } }, 'landingZone.account: required with landingZone.region'],
    [
      'a short account id',
      { landingZone: { account: '12345', region: 'eu-west-1' } },
      'landingZone.account: must be a 12-digit AWS account id such as 123456789012, got "12345"',
    ],
    [
      'a bootstrap qualifier cdk bootstrap would refuse',
      { landingZone: { bootstrapQualifier: 'NetOps' } },
      'landingZone.bootstrapQualifier: must be 1 to 10 lowercase letters or digits, as cdk bootstrap --qualifier takes, got "NetOps"',
    ],
    [
      'a role path without its trailing slash',
      { landingZone: { rolePath: '/netconfig' } },
      'landingZone.rolePath: must be an IAM path that starts and ends with /, such as /netconfig/, got "/netconfig"',
    ],
    [
      'a tag key AWS reserves',
      { landingZone: { tags: { 'aws:owner': 'x' } } },
      'landingZone.tags: must be a tag key of 1 to 128 letters, digits, spaces or _.:/=+-@, not starting with aws:, got "aws:owner"',
    ],
    [
      'subnets of another region than the landing zone’s',
      { landingZone: { account: '123456789012', region: 'eu-central-1' }, network: network() },
      'network.subnets: availability zones of eu-west-1 (eu-west-1a, eu-west-1b), but landingZone.region is eu-central-1',
    ],
    [
      'subnets in one availability zone',
      {
        network: network({
          subnets: [
            { subnetId: 'subnet-0a000000000000001', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' },
            { subnetId: 'subnet-0a000000000000003', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' },
          ],
        }),
      },
      'network.subnets: all in one availability zone (eu-west-1a): an outage of that zone stops every function in the VPC; add a subnet in another zone, or set network.allowSingleAz to true to accept it',
    ],
    [
      'route tables with existing endpoints (the stack changes none)',
      { network: network({ awsServices: 'existing-endpoints', egress: [{ cidr: '10.0.8.0/24', port: 443 }] }) },
      'network.subnets[0].routeTableId: only used with awsServices "endpoints" (the stack changes no route table otherwise)',
    ],
    [
      'existing endpoints the created group cannot reach',
      { network: network({ awsServices: 'existing-endpoints', subnets: network().subnets.map(({ routeTableId: _, ...s }) => s) }) },
      'network.egress: with awsServices "existing-endpoints", add the addresses of the VPC\'s interface endpoints (Secrets Manager, Lambda) on port 443: the created group allows nothing else',
    ],
    [
      'existing endpoints without the DynamoDB prefix list',
      {
        network: network({
          awsServices: 'existing-endpoints',
          dynamodbPrefixListId: undefined,
          subnets: network().subnets.map(({ routeTableId: _, ...s }) => s),
          egress: [{ cidr: '10.0.8.0/24', port: 443 }],
        }),
      },
      'network.dynamodbPrefixListId: required with awsServices "existing-endpoints" and a created security group (aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.<region>.dynamodb)',
    ],
    ['a missing CA bundle', { caBundle: 'nowhere.pem' }, `caBundle: no such file: ${path.join(FIXTURES, 'nowhere.pem')}`],
    [
      'a CA bundle that is not PEM',
      { caBundle: 'README.md' },
      `caBundle: ${path.join(FIXTURES, 'README.md')} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    ],
  ])('names the key of %s', (_what, change, problem) => {
    expect(problemsOf({ ...base(), ...change })).toContainEqual(problem);
  });

  describe('api', () => {
    const plans = (extra: Record<string, unknown> = {}) => ({ default: { rateLimit: 5, burstLimit: 10 }, ...extra });
    const client = (name: string, extra: Record<string, unknown>) => ({ name, rateLimit: 20, burstLimit: 40, ...extra });

    it('fills in the defaults of usage plans and keeps the rest as given', () => {
      const api = parseDeployConfig(
        { ...base(), api: { endpointType: 'private', vpcEndpointIds: ['vpce-0123456789abcdef0'], throttling: { rateLimit: 50 }, usagePlans: plans() } },
        'api.json',
        FIXTURES,
      ).api;
      expect(api).toEqual({
        endpointType: 'private',
        vpcEndpointIds: ['vpce-0123456789abcdef0'],
        throttling: { rateLimit: 50, burstLimit: 400 },
        detailedMetrics: 'alarmed',
        usagePlans: { clientIdClaim: 'client_id', default: { rateLimit: 5, burstLimit: 10 }, clients: [] },
      });
    });

    it.each<[string, Record<string, unknown>, string[]]>([
      [
        'a private API without endpoints',
        { endpointType: 'private' },
        ['api.vpcEndpointIds: required with api.endpointType "private": a private API is callable only through the VPC endpoints its policy names'],
      ],
      [
        'endpoints of a regional API',
        { vpcEndpointIds: ['vpce-0123456789abcdef0'] },
        ['api.vpcEndpointIds: only used with api.endpointType "private" (endpointType is "regional")'],
      ],
      [
        'a source CIDR with host bits',
        { sourceCidrs: ['10.0.0.0/8', '192.168.1.7/24'] },
        ['api.sourceCidrs[1]: "192.168.1.7/24" has host bits set: it opens 192.168.1.0/24; write that, or 192.168.1.7/32 for the one host'],
      ],
      [
        'a web ACL of CloudFront scope',
        { webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/edge/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b' },
        [
          'api.webAclArn: must be a regional AWS WAFv2 web ACL ARN, e.g. arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/netconfig/01234567-89ab-cdef-0123-456789abcdef, got "arn:aws:wafv2:us-east-1:123456789012:global/webacl/edge/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"',
        ],
      ],
      [
        'a plan throttle above the stage’s',
        { throttling: { rateLimit: 100, burstLimit: 200 }, usagePlans: plans({ clients: [client('pipeline', { clientIds: ['p'], rateLimit: 150 })] }) },
        ["api.usagePlans.clients[0].rateLimit: 150 is above the stage's 100 (api.throttling.rateLimit), so it would never apply"],
      ],
      [
        'a client named default, or twice, or by nobody',
        { usagePlans: plans({ clients: [client('default', { subjects: ['a'] }), client('noc', { subjects: ['b'] }), client('noc', {})] }) },
        [
          'api.usagePlans.clients[0].name: "default" is the plan of every caller no client names (api.usagePlans.default)',
          'api.usagePlans.clients[2].name: "noc" is listed twice',
          'api.usagePlans.clients[2]: give subjects or clientIds (who this client is)',
        ],
      ],
      [
        'a caller named by two clients',
        {
          usagePlans: plans({
            clients: [client('noc', { subjects: ['alice'], clientIds: ['app'] }), client('ops', { subjects: ['alice'], clientIds: ['app'] })],
          }),
        },
        [
          'api.usagePlans.clients[1].subjects: "alice" also names api.usagePlans.clients[0]: a caller must have one plan',
          'api.usagePlans.clients[1].clientIds: "app" also names api.usagePlans.clients[0]: a caller must have one plan',
        ],
      ],
      [
        'more subjects than the authorizer’s environment holds',
        { usagePlans: plans({ clients: [client('noc', { subjects: Array.from({ length: 100 }, (_, i) => `operator-${String(i).padStart(20, '0')}`) })] }) },
        [
          expect.stringMatching(
            /^api\.usagePlans\.clients: the mapping takes \d+ characters of the authorizer's environment, at most 2500: name fewer subjects/,
          ) as unknown as string,
        ],
      ],
    ])('refuses %s, naming the key', (_, api, problems) => {
      expect(problemsOf({ ...base(), api })).toEqual(problems);
    });

    it('accepts the private example’s exposure as is', () => {
      const config = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy', 'config.private.example.json'));
      expect(config.api).toMatchObject({ endpointType: 'private', detailedMetrics: 'alarmed' });
      expect(config.api.usagePlans?.clients).toHaveLength(1);
    });
  });

  it('refuses a CA bundle that carries a private key, or a certificate that does not parse', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-ca-'));
    const pem = readFileSync(CA, 'utf8');
    writeFileSync(path.join(dir, 'with-key.pem'), `${pem}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`);
    writeFileSync(path.join(dir, 'broken.pem'), pem.replace(/^MII.*$/m, 'MIIBroken'));
    expect(problemsOf({ ...base(), caBundle: 'with-key.pem' }, dir)).toEqual([
      `caBundle: ${path.join(dir, 'with-key.pem')} holds a PRIVATE KEY block: a CA bundle carries certificates only (never a key)`,
    ]);
    expect(problemsOf({ ...base(), caBundle: 'broken.pem' }, dir)).toEqual([expect.stringMatching(/^caBundle: .*broken\.pem: certificate 1 does not parse/)]);
  });

  describe('identity.inVpc and identity.jwks', () => {
    const oidc = (extra: Record<string, unknown>) => ({ provider: 'oidc', issuer: 'https://login.corp.example/realms/ops', audience: 'netconfig', ...extra });
    const JWKS = path.join(FIXTURES, 'jwks.json');
    const publicKeys = () => (JSON.parse(readFileSync(JWKS, 'utf8')) as { keys: [Record<string, unknown>, Record<string, unknown>] }).keys;
    /** A JWKS file of these keys, in a directory of its own; the config names it `keys.json`. */
    const jwksDir = (keys: unknown[] | unknown) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-jwks-'));
      writeFileSync(path.join(dir, 'keys.json'), JSON.stringify(Array.isArray(keys) ? { keys } : keys));
      return dir;
    };
    const problemsOfKeys = (keys: unknown[] | unknown) => {
      const dir = jwksDir(keys);
      return { file: path.join(dir, 'keys.json'), problems: problemsOf({ ...base(), identity: oidc({ jwks: 'keys.json' }) }, dir) };
    };

    it('resolves a pinned JWKS against the file’s directory, and accepts inVpc with a network', () => {
      const config = parseDeployConfig({ ...base(), identity: oidc({ jwks: 'jwks.json', inVpc: true }), network: network() }, 'test.json', FIXTURES);
      expect(config.identity).toMatchObject({ provider: 'oidc', jwks: JWKS, inVpc: true });
    });

    it('refuses inVpc without a network, and both keys with the Cognito pool', () => {
      expect(problemsOf({ ...base(), identity: oidc({ inVpc: true }) })).toEqual(['identity.inVpc: requires network (the VPC the authorizer joins)']);
      // In the VPC, the authorizer must reach its issuer's keys: a NAT, HTTPS egress, given groups, or pinned keys.
      const refusal = (why: string) =>
        `network.egress: with ${why} the authorizer runs in the VPC and fetches the issuer's keys (JWKS) over HTTPS: add an egress rule on port 443 to the issuer, use awsServices "nat", or pin the keys (identity.jwks)`;
      expect(problemsOf({ ...base(), identity: oidc({ inVpc: true }), network: network() })).toEqual([refusal('identity.inVpc')]);
      expect(problemsOf({ ...base(), network: { ...network(), placement: 'all' } })).toEqual([refusal('network.placement "all"')]);
      const https = { cidr: '10.50.0.10/32', port: 443 };
      const accepted = (raw: Record<string, unknown>) => expect(() => parseDeployConfig(raw, 'test.json', FIXTURES)).not.toThrow();
      accepted({ ...base(), identity: oidc({ inVpc: true }), network: { ...network(), egress: [...network().egress, https] } });
      accepted({ ...base(), network: { ...network(), placement: 'all', egress: [...network().egress, https] } });
      accepted({
        ...base(),
        network: {
          ...network(),
          placement: 'all',
          awsServices: 'nat',
          dynamodbPrefixListId: undefined,
          subnets: network().subnets.map(({ routeTableId: _, ...rest }) => rest),
        },
      });
      expect(problemsOf({ ...base(), identity: { provider: 'cognito', inVpc: true, jwks: 'jwks.json' } })).toEqual([
        'identity.inVpc: only used with identity.provider "oidc" (the Cognito pool is the issuer)',
        'identity.jwks: only used with identity.provider "oidc" (the Cognito pool is the issuer)',
      ]);
    });

    it('refuses pinned keys beside a JWKS URL, and a JWKS file that is missing or not a JWKS', () => {
      expect(problemsOf({ ...base(), identity: oidc({ jwks: 'jwks.json', jwksUrl: 'https://login.corp.example/certs' }) })).toEqual([
        'identity.jwks: pinned keys are never fetched: give identity.jwks or identity.jwksUrl, not both',
      ]);
      expect(problemsOf({ ...base(), identity: oidc({ jwks: 'nowhere.json' }) })).toEqual([
        `identity.jwks: no such file: ${path.join(FIXTURES, 'nowhere.json')}`,
      ]);
      const notJson = problemsOf({ ...base(), identity: oidc({ jwks: 'private-ca.pem' }) });
      expect(notJson).toEqual([expect.stringMatching(/^identity\.jwks: .*private-ca\.pem is not JSON/)]);
      for (const doc of [{}, { keys: [] }, { keys: {} }, []]) {
        const { file, problems } = problemsOfKeys(doc);
        expect(problems, JSON.stringify(doc)).toEqual([`identity.jwks: ${file} is not a JWKS: a JSON object whose "keys" lists one key or more`]);
      }
    });

    it('refuses a private key in the set, naming its kid and members', () => {
      const [rsa, ec] = publicKeys();
      const cases: [Record<string, unknown>, string][] = [
        [{ ...rsa, d: 'AQAB', p: 'AQAB', q: 'AQAB' }, 'd, p, q'],
        [{ ...rsa, dp: 'AQAB', qi: 'AQAB' }, 'dp, qi'],
        [{ ...ec, d: 'AQAB' }, 'd'],
        [{ kid: 'hmac', kty: 'oct', alg: 'HS256', k: 'c2VjcmV0' }, 'k'],
      ];
      for (const [key, members] of cases) {
        const { file, problems } = problemsOfKeys([key]);
        expect(problems).toEqual([
          `identity.jwks: ${file}: key 0 (kid ${JSON.stringify(key.kid)}) holds private key material (${members}): pin the provider's public keys only`,
        ]);
      }
    });

    it('refuses a key without kid, kty or alg, a repeated kid, an algorithm of another family, and a weak key, each by its place', () => {
      const [rsa, ec] = publicKeys() as [Record<string, unknown>, Record<string, unknown>];
      const { kid: _kid, ...noKid } = rsa;
      const { alg: _alg, ...noAlg } = ec;
      const weak = (() => {
        const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
        return { ...(publicKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: 'weak', alg: 'RS256' };
      })();
      const { file, problems } = problemsOfKeys([
        noKid,
        rsa,
        { ...rsa },
        noAlg,
        { ...ec, kid: 'ec-as-rsa', alg: 'RS256' },
        { ...rsa, kid: 'okp', kty: 'OKP' },
        weak,
        'x',
      ]);
      const at = (p: string) => `identity.jwks: ${file}: ${p}`;
      expect(problems).toEqual([
        at('key 0 has no kid: tokens name their key by it'),
        at(`key 2 (kid "${rsa['kid']}"): the kid is listed twice`),
        at(`key 3 (kid "${ec['kid']}") has no alg: name the algorithm its tokens are signed with (RS256, RS384, RS512, ES256, ES384, ES512)`),
        at('key 4 (kid "ec-as-rsa"): alg "RS256" is not one the authorizer accepts for this key'),
        at('key 5 (kid "okp"): kty must be "RSA" or "EC", got "OKP"'),
        at(
          'key 6 (kid "weak") is not a usable signature key (use "sig"; RSA of 2048 bits or more, or EC on P-256, P-384 or P-521, with all its public members)',
        ),
        at('key 7 is not a JSON object'),
      ]);
    });

    it('accepts the checked-in private example’s pinned keys', () => {
      const config = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy', 'config.private.example.json'));
      expect(config.identity).toMatchObject({ inVpc: true, jwks: path.join(PROJECT_ROOT, 'deploy', 'identity-jwks.example.json') });
    });
  });

  it('reports every problem at once', () => {
    const problems = problemsOf({ ...base(), logLevel: 'loud', extra: true, vault: { address: 'http://v' } });
    expect(problems).toHaveLength(3);
  });

  it('reports the cross-key problems beside the schema problems of the same file', () => {
    const problems = problemsOf({
      ...base(),
      logLevel: 'loud',
      alarms: { email: 'noc@example.net', topicArn: 'arn:aws:sns:eu-west-1:123456789012:noc' },
      caBundle: '.',
      network: network({ egress: undefined }),
    });
    expect(problems).toEqual([
      'logLevel: must be one of "debug", "info", "warn", "error", got "loud"',
      'alarms: give email (a topic is created) or topicArn (an existing topic), not both',
      'network.egress: required unless network.securityGroupIds is given: where NSO and Vault listen (cidr, port)',
      `caBundle: ${FIXTURES} is a directory: name the file in it`,
    ]);
  });

  it('checks across keys whatever shape the schema refused, one problem per key', () => {
    const problems = problemsOf({
      stackName: 'netconfig-prod',
      vault: 'https://vault.example.net',
      identity: ['oidc'],
      alarms: { email: 'noc@example.net', topicArn: 'arn:aws:sns:eu-west-1:123456789012:noc' },
      concurrency: { relay: '850' },
      network: { vpcId: 'vpc-0123456789abcdef0', subnets: 'all', egress: [{ cidr: '10.20.0.0', port: 443 }, 7], awsServices: 'endpoints' },
    });
    expect(problems).toContain(`stackName: ${STACK_NAME_RULE}, got "netconfig-prod"`);
    expect(problems).toContain('vault: must be object, got "https://vault.example.net"');
    expect(problems).toContain('alarms: give email (a topic is created) or topicArn (an existing topic), not both');
    expect(problems.filter((p) => p.startsWith('network.egress[0].cidr: '))).toEqual([
      'network.egress[0].cidr: must be an IPv4 CIDR block such as 10.20.0.0/16, got "10.20.0.0"',
    ]);
    const keys = problems.map((p) => p.slice(0, p.indexOf(': ')));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('refuses a caBundle that is a directory or not a regular file with a clear problem, never a raw error', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-ca-'));
    mkdirSync(path.join(dir, 'certs'));
    expect(problemsOf({ ...base(), caBundle: 'certs' }, dir)).toEqual([`caBundle: ${path.join(dir, 'certs')} is a directory: name the file in it`]);
    expect(spawnSync('mkfifo', [path.join(dir, 'pipe')]).status).toBe(0);
    expect(problemsOf({ ...base(), caBundle: 'pipe' }, dir)).toEqual([`caBundle: ${path.join(dir, 'pipe')} is not a regular file`]);
    writeFileSync(path.join(dir, 'loop.pem'), '');
    expect(problemsOf({ ...base(), caBundle: 'loop.pem/inner.pem' }, dir)).toEqual([
      expect.stringMatching(/^caBundle: .*loop\.pem\/inner\.pem cannot be read \(ENOTDIR\)$/),
    ]);
  });

  it('refuses a config file that is a directory', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-config-'));
    expect(() => loadDeployConfig(dir)).toThrow(`${dir} is not a valid deployment configuration:\n  - ${dir} is a directory: name the file in it`);
  });

  it.each(['netconfig-prod', 'Netconfig-Prod', 'NETCONFIG', 'netconfig', 'NetconfigNSO', 'Net--config', 'N'.repeat(1) + 'x'.repeat(64)])(
    'refuses the stack name %s, which is not the one canonical form of its service name',
    (stackName) => {
      expect(problemsOf({ ...base(), stackName }).filter((p) => p.startsWith('stackName: '))).toHaveLength(1);
    },
  );

  it('refuses a stack name ending in the word Api, the name of another deployment’s API stack', () => {
    expect(problemsOf({ ...base(), stackName: 'NetconfigApi' })).toEqual([
      'stackName: must not end in the word Api: the API stack of a deployment named Netconfig is NetconfigApi (each deployment is <stackName> and <stackName>Api)',
    ]);
    for (const stackName of ['NetconfigApis', 'NetconfigApiProd', 'Api'])
      expect(parseDeployConfig({ ...base(), stackName }, 'n.json', FIXTURES).stackName).toBe(stackName);
  });

  it('derives a service name of its own from every stack name it accepts', () => {
    const pattern = new RegExp(
      (JSON.parse(readFileSync(CONFIG_SCHEMA_FILE, 'utf8')) as { properties: { stackName: { pattern: string } } }).properties.stackName.pattern,
    );
    // Less the names of API stacks (a last word Api), refused above.
    const names = fc
      .array(fc.stringMatching(/^[A-Z][a-z0-9]{1,6}$/), { minLength: 1, maxLength: 6 })
      .map((words) => words.join(''))
      .filter((name) => !/[a-z0-9]Api$/.test(name));
    // The stack name is read back from its service name: two accepted names never share one.
    const stackNameOf = (service: string) =>
      service
        .split('-')
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
    fc.assert(
      fc.property(names, (name) => {
        expect(pattern.test(name)).toBe(true);
        expect(parseDeployConfig({ ...base(), stackName: name }, 'n.json', FIXTURES).stackName).toBe(name);
        expect(stackNameOf(serviceNameOf(name))).toBe(name);
      }),
    );
    expect(serviceNameOf('NetconfigProd')).toBe('netconfig-prod');
  });

  it('says what is wrong with a file that is missing or not JSON', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-config-'));
    writeFileSync(path.join(dir, 'bad.json'), '{ "stackName": ');
    expect(() => loadDeployConfig(path.join(dir, 'bad.json'))).toThrow(/bad\.json is not a valid deployment configuration:\n {2}- not JSON: /);
    expect(() => loadDeployConfig(path.join(dir, 'none.json'))).toThrow(/none\.json is not a valid deployment configuration:\n {2}- no such file/);
  });
});

describe('the CDK app', () => {
  const runApp = (context: Record<string, unknown>, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(PROJECT_ROOT, 'infra', 'app.ts')], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: mkdtempSync(path.join(tmpdir(), 'netconfig-cdk-')) },
      encoding: 'utf8',
    });

  it('will not synthesize a deployment without a config file', () => {
    const run = runApp({});
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('No deployment configuration: run with -c config=<file>');
  });

  it('refuses the retired -c settings, naming the config key that replaces each', () => {
    const run = runApp({ config: EXAMPLE_CONFIG_FILE, vaultAuthMethod: 'approle', alarmEmail: 'noc@example.net' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('-c vaultAuthMethod: set vault.authMethod in the config file');
    expect(run.stderr).toContain('-c alarmEmail: set alarms.email in the config file');
  });

  it('refuses credentials of another account than the config’s, naming both', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-config-'));
    const file = path.join(dir, 'prod.json');
    writeFileSync(file, JSON.stringify({ ...base(), landingZone: { account: '123456789012', region: 'eu-west-1' } }));
    const run = runApp({ config: file }, { CDK_DEFAULT_ACCOUNT: '210987654321', CDK_DEFAULT_REGION: 'eu-west-1' });
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(
      `${file}: The config deploys to account 123456789012 (landingZone), but the CLI's credentials are for account 210987654321: switch the profile or fix the config`,
    );
  });

  it('prints the problems of a bad file and exits 1', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-config-'));
    writeFileSync(path.join(dir, 'prod.json'), JSON.stringify({ ...base(), logLevel: 'verbose' }));
    const run = runApp({ config: path.join(dir, 'prod.json') });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('prod.json is not a valid deployment configuration:\n  - logLevel: must be one of');
  });
});
