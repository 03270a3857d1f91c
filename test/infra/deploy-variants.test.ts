/**
 * The template of each kind of deployment the config file can ask for: no VPC; a VPC reaching
 * AWS through endpoints; a VPC with a NAT; security groups given by id; a private CA bundle;
 * an external OIDC issuer; concurrency and alarm settings; and two stacks side by side.
 * Synthesized without bundling; cdk-nag runs on the VPC variants.
 */
import { App, Aspects, CfnResource, type DefaultStackSynthesizer, type ITaggable, TagManager, Token } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { callsOutside, concurrencyGroup, loadDeployConfig, parseDeployConfig } from '../../infra/config.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { AUTHORIZER_MEMORY_MB, PINNED_JWKS_FILE } from '../../infra/constructs/auth.js';
import { NetconfigService } from '../../infra/stack.js';
import { logicalIdOf, NO_BUNDLING, serviceTemplate } from './service-template.js';

const FIXTURES = path.join(PROJECT_ROOT, 'test', 'infra', 'fixtures');
type Resource = { Type: string; Properties: Record<string, any> };

const settingsOf = (config: Record<string, unknown>) => {
  const { stackName, ...settings } = parseDeployConfig(
    { stackName: 'Netconfig', vault: { address: 'https://vault.example.net:8200' }, ...config },
    'variant.json',
    FIXTURES,
  );
  return { stackName, settings };
};

const newApp = () => new App({ context: NO_BUNDLING });

/** The service of one config: its stacks (the nested ones among them, checked by cdk-nag with their parent). */
const build = (app: App, config: Record<string, unknown>, nag = false): NetconfigService => {
  const { stackName, settings } = settingsOf(config);
  const service = new NetconfigService(app, stackName, { settings });
  if (nag) {
    addNagSuppressions(service);
    for (const stack of [service.data, service.api]) {
      Aspects.of(stack).add(new AwsSolutionsChecks());
      Aspects.of(stack).add(new NIST80053R5Checks());
    }
  }
  return service;
};

/** The service's stacks read as one template (service-template.ts). */
const inspect = (stack: NetconfigService) => {
  const template = serviceTemplate(stack);
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const fn = (op: string): Resource => resources[logicalIdOf(stack.functions[op]!.function)]!;
  return { stack, template, resources, fn };
};

const synth = (config: Record<string, unknown>, { nag = false } = {}) => inspect(build(newApp(), config, nag));

const OUTSIDE = [...liveRoutes.filter(callsOutside).map((r) => r.operationId), 'complianceBatch'];
const ALL = [...liveRoutes.map((r) => r.operationId), 'complianceBatch', 'authorizer'];

const SUBNETS = [
  { subnetId: 'subnet-0a000000000000001', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' },
  { subnetId: 'subnet-0b000000000000002', availabilityZone: 'eu-west-1b', routeTableId: 'rtb-0b000000000000002' },
  { subnetId: 'subnet-0c000000000000003', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' },
];
const EGRESS = [
  { cidr: '10.20.0.0/16', port: 8888, description: 'NSO RESTCONF' },
  { cidr: '10.30.1.5/32', port: 8200, description: 'Vault' },
];
const ENDPOINTS_NETWORK = { vpcId: 'vpc-0123456789abcdef0', subnets: SUBNETS, egress: EGRESS, dynamodbPrefixListId: 'pl-6da54004' };
/** An egress rule on HTTPS to the issuer: what an authorizer in the VPC needs to fetch its keys. */
const TO_ISSUER = { cidr: '10.50.0.10/32', port: 443, description: 'identity provider' };
const NAT_NETWORK = { vpcId: 'vpc-0123456789abcdef0', subnets: SUBNETS.map(({ routeTableId: _, ...s }) => s), egress: EGRESS, awsServices: 'nat' };

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
/** The open AwsSolutions and NIST 800-53 R5 findings (errors and warnings) of both stacks (the nested stacks' are reported on their parent's). */
const nagErrors = (service: NetconfigService) =>
  [service.data, service.api]
    .flatMap((stack) => {
      const annotations = Annotations.fromStack(stack);
      const finding = Match.stringLikeRegexp('^(AwsSolutions|NIST\\.800\\.53\\.R5)-');
      return [...annotations.findError('*', finding), ...annotations.findWarning('*', finding)];
    })
    .map((e) => `${e.id}: ${String(e.entry.data).split('\n')[0]}`);

// Each synthesizes the whole stack (with cdk-nag for the VPC variants): seconds each, more on a busy machine.
describe('the example configs under cdk-nag', () => {
  it.each(['deploy/config.example.json', 'deploy/config.private.example.json'])('%s has no open AwsSolutions or NIST 800-53 R5 finding', (file) => {
    const { stackName, ...settings } = loadDeployConfig(path.join(PROJECT_ROOT, file));
    const service = new NetconfigService(newApp(), stackName, { settings });
    addNagSuppressions(service);
    for (const stack of [service.data, service.api]) {
      Aspects.of(stack).add(new AwsSolutionsChecks());
      Aspects.of(stack).add(new NIST80053R5Checks());
    }
    expect(nagErrors(service)).toEqual([]);
  });
});

describe('the landing zone', () => {
  const LANDING_ZONE = {
    account: '123456789012',
    region: 'eu-west-1',
    bootstrapQualifier: 'netops',
    permissionsBoundary: 'netops-boundary',
    rolePath: '/netconfig/',
    tags: { 'cost-center': 'NET-4711', owner: 'netops' },
  };

  it('deploys both stacks to the configured account and region with the qualifier’s bootstrap', () => {
    const { stack } = synth({ landingZone: LANDING_ZONE });
    for (const s of [stack.data, stack.api]) {
      expect([s.account, s.region], s.stackName).toEqual(['123456789012', 'eu-west-1']);
      expect((s.synthesizer as DefaultStackSynthesizer).bootstrapQualifier, s.stackName).toBe('netops');
      expect(Template.fromStack(s).toJSON()['Parameters']['BootstrapVersion']['Default'], s.stackName).toBe('/cdk-bootstrap/netops/version');
      expect(s.tags.tagValues(), s.stackName).toEqual(LANDING_ZONE.tags);
    }
    // Without a landing zone the stacks stay environment-agnostic, on the default bootstrap.
    const agnostic = synth({}).stack;
    expect(Token.isUnresolved(agnostic.api.account)).toBe(true);
    expect(Template.fromStack(agnostic.api).toJSON()['Parameters']['BootstrapVersion']['Default']).toBe('/cdk-bootstrap/hnb659fds/version');
  });

  it('puts the boundary and the path on every role, and the tags on every taggable resource, in every stack', () => {
    const { stack, resources } = synth({ landingZone: LANDING_ZONE, network: ENDPOINTS_NETWORK, alarms: { email: 'noc@example.net' } });
    const roles = ofType(resources, 'AWS::IAM::Role');
    expect(roles.length).toBeGreaterThan(10);
    for (const [id, role] of roles) {
      expect(role.Properties['Path'], id).toBe('/netconfig/');
      expect(JSON.stringify(role.Properties['PermissionsBoundary']), id).toContain(':policy/netops-boundary');
    }
    const taggable = stack.stacks.flatMap((s) => s.node.findAll()).filter((c): c is CfnResource => CfnResource.isCfnResource(c) && TagManager.isTaggable(c));
    expect(taggable.length).toBeGreaterThan(100);
    for (const resource of taggable) {
      expect((resource as unknown as ITaggable).tags.tagValues(), resource.node.path).toMatchObject(LANDING_ZONE.tags);
    }
  });

  it('leaves the account’s API Gateway logging role alone unless told to manage it, and then keeps it', () => {
    const existing = synth({});
    expect(ofType(existing.resources, 'AWS::ApiGateway::Account')).toEqual([]);
    // Access logs go to the stage's log group either way.
    expect(ofType(existing.resources, 'AWS::ApiGateway::Stage')[0]![1].Properties['AccessLogSetting']).toBeDefined();
    const managed = synth({ landingZone: { apiGatewayAccountRole: 'manage' } });
    const accounts = Object.values(managed.template.findResources('AWS::ApiGateway::Account'));
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });
});

describe('deployment variants', () => {
  it('without a network, runs every function outside any VPC and makes no EC2 resources', () => {
    const { resources, fn } = synth({});
    for (const op of ALL) expect(fn(op).Properties['VpcConfig'], op).toBeUndefined();
    expect(Object.values(resources).filter((r) => r.Type.startsWith('AWS::EC2::'))).toEqual([]);
  });

  it('with a VPC and endpoints, puts exactly the functions that call NSO or Vault in the private subnets, behind a group with narrow egress', () => {
    const { stack, resources, fn } = synth({ network: ENDPOINTS_NETWORK }, { nag: true });
    expect(OUTSIDE).toEqual(
      expect.arrayContaining([
        'relayRestAction',
        'getAdapterHealth',
        'getAdaptersHealth',
        'getSystemHealth',
        'putAdapter',
        'restartAdapter',
        'complianceBatch',
      ]),
    );
    const groups = ofType(resources, 'AWS::EC2::SecurityGroup');
    const functionGroup = groups.find(([id]) => id.includes('FunctionSecurityGroup'))!;
    expect(functionGroup).toBeDefined();
    for (const op of ALL) {
      const vpcConfig = fn(op).Properties['VpcConfig'];
      if (!OUTSIDE.includes(op)) {
        expect(vpcConfig, op).toBeUndefined();
        continue;
      }
      expect(vpcConfig, op).toEqual({
        SubnetIds: SUBNETS.map((s) => s.subnetId),
        SecurityGroupIds: [{ 'Fn::GetAtt': [functionGroup[0], 'GroupId'] }],
      });
    }
    // Egress: NSO and Vault as configured, DynamoDB's prefix list, and HTTPS to the interface endpoints' group. Nothing to 0.0.0.0/0.
    const groupRef = { 'Fn::GetAtt': [functionGroup[0], 'GroupId'] };
    const endpointGroup = groups.find(([id]) => id.includes('EndpointSecurityGroup'))!;
    expect(groups).toHaveLength(2);
    const egress = [
      ...(functionGroup[1].Properties['SecurityGroupEgress'] as Record<string, unknown>[]),
      ...ofType(resources, 'AWS::EC2::SecurityGroupEgress')
        .map(([, r]) => r.Properties)
        .filter((p) => JSON.stringify(p['GroupId']) === JSON.stringify(groupRef))
        .map(({ GroupId: _, ...rule }) => rule),
    ];
    expect(egress).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ CidrIp: '10.20.0.0/16', FromPort: 8888, ToPort: 8888, IpProtocol: 'tcp', Description: 'NSO RESTCONF' }),
        expect.objectContaining({ CidrIp: '10.30.1.5/32', FromPort: 8200, ToPort: 8200, IpProtocol: 'tcp', Description: 'Vault' }),
        expect.objectContaining({ DestinationPrefixListId: 'pl-6da54004', FromPort: 443, ToPort: 443, IpProtocol: 'tcp' }),
        expect.objectContaining({ DestinationSecurityGroupId: { 'Fn::GetAtt': [endpointGroup[0], 'GroupId'] }, FromPort: 443, ToPort: 443, IpProtocol: 'tcp' }),
      ]),
    );
    expect(egress).toHaveLength(4);
    expect(JSON.stringify(Object.values(resources).filter((r) => r.Type.startsWith('AWS::EC2::')))).not.toContain('0.0.0.0/0');

    const endpoints = ofType(resources, 'AWS::EC2::VPCEndpoint').map(([, r]) => r.Properties);
    expect(endpoints).toHaveLength(4);
    // Each endpoint carries its service's calls by this account's principals on this account's resources only
    // (EventBridge's: PutEvents on the compliance bus only, test/infra/compliance-events.test.ts).
    for (const endpoint of endpoints.filter((e) => !JSON.stringify(e['ServiceName']).includes('.events'))) {
      const service = JSON.stringify(endpoint['ServiceName']).match(/\.(dynamodb|secretsmanager|lambda)"/)![1];
      expect(endpoint['PolicyDocument']['Statement'], service).toEqual([
        {
          Effect: 'Allow',
          Principal: { AWS: '*' },
          Action: `${service}:*`,
          Resource: '*',
          Condition: { StringEquals: { 'aws:PrincipalAccount': { Ref: 'AWS::AccountId' }, 'aws:ResourceAccount': { Ref: 'AWS::AccountId' } } },
        },
      ]);
    }
    const byService = (name: string) => endpoints.find((e) => JSON.stringify(e['ServiceName']).includes(name))!;
    expect(byService('dynamodb')).toMatchObject({
      VpcEndpointType: 'Gateway',
      VpcId: 'vpc-0123456789abcdef0',
      RouteTableIds: ['rtb-0a000000000000001', 'rtb-0b000000000000002'],
    });
    // The durable compliance function checkpoints through the Lambda API and puts its events on EventBridge.
    for (const service of ['secretsmanager', 'lambda', 'events']) {
      expect(byService(service), service).toMatchObject({
        VpcEndpointType: 'Interface',
        PrivateDnsEnabled: true,
        SubnetIds: ['subnet-0a000000000000001', 'subnet-0b000000000000002'],
      });
    }
    // The endpoints admit HTTPS from the functions' group only.
    const ingress = ofType(resources, 'AWS::EC2::SecurityGroupIngress').map(([, r]) => r.Properties);
    expect(ingress).toEqual([
      expect.objectContaining({ FromPort: 443, ToPort: 443, SourceSecurityGroupId: groupRef, GroupId: { 'Fn::GetAtt': [endpointGroup[0], 'GroupId'] } }),
    ]);
    for (const service of ['secretsmanager', 'lambda', 'events']) {
      expect(byService(service)['SecurityGroupIds'], service).toEqual([{ 'Fn::GetAtt': [endpointGroup[0], 'GroupId'] }]);
    }
    expect(nagErrors(stack)).toEqual([]);
  });

  it('with a VPC and a NAT, makes no endpoint and lets the functions reach AWS over HTTPS', () => {
    const { stack, resources, fn } = synth({ network: NAT_NETWORK }, { nag: true });
    expect(ofType(resources, 'AWS::EC2::VPCEndpoint')).toEqual([]);
    const [groupId, group] = ofType(resources, 'AWS::EC2::SecurityGroup')[0]!;
    expect(ofType(resources, 'AWS::EC2::SecurityGroup')).toHaveLength(1);
    expect(group.Properties['SecurityGroupEgress']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ CidrIp: '0.0.0.0/0', FromPort: 443, ToPort: 443, IpProtocol: 'tcp' }),
        expect.objectContaining({ CidrIp: '10.20.0.0/16', FromPort: 8888 }),
        expect.objectContaining({ CidrIp: '10.30.1.5/32', FromPort: 8200 }),
      ]),
    );
    expect(group.Properties['SecurityGroupEgress']).toHaveLength(3);
    expect(fn('relayRestAction').Properties['VpcConfig']).toEqual({
      SubnetIds: SUBNETS.map((s) => s.subnetId),
      SecurityGroupIds: [{ 'Fn::GetAtt': [groupId, 'GroupId'] }],
    });
    expect(fn('getTree').Properties['VpcConfig']).toBeUndefined();
    expect(nagErrors(stack)).toEqual([]);
    // Subnets without route tables are fine here (no gateway endpoint): synth prints no warning about them.
    expect([stack.data, stack.api].flatMap((s) => Annotations.fromStack(s).findWarning('*', Match.stringLikeRegexp('routeTableId')))).toEqual([]);
  });

  it('with the VPC’s own endpoints (a shared VPC), creates none and changes no route table', () => {
    const subnets = SUBNETS.map(({ routeTableId: _, ...subnet }) => subnet);
    const egress = [...EGRESS, { cidr: '10.0.8.0/24', port: 443, description: 'Interface endpoints of the shared VPC' }];
    const { stack, resources, fn } = synth(
      { network: { vpcId: 'vpc-0123456789abcdef0', subnets, egress, awsServices: 'existing-endpoints', dynamodbPrefixListId: 'pl-6da54004' } },
      { nag: true },
    );
    expect(ofType(resources, 'AWS::EC2::VPCEndpoint')).toEqual([]);
    expect(JSON.stringify(resources)).not.toContain('rtb-');
    const [groupId, group] = ofType(resources, 'AWS::EC2::SecurityGroup')[0]!;
    expect(ofType(resources, 'AWS::EC2::SecurityGroup')).toHaveLength(1);
    // The prefix-list rule is a resource of its own; the CIDR rules are inline.
    const groupRef = JSON.stringify({ 'Fn::GetAtt': [groupId, 'GroupId'] });
    const egressRules = [
      ...(group.Properties['SecurityGroupEgress'] as Record<string, unknown>[]),
      ...ofType(resources, 'AWS::EC2::SecurityGroupEgress')
        .map(([, r]) => r.Properties)
        .filter((p) => JSON.stringify(p['GroupId']) === groupRef),
    ];
    expect(egressRules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ DestinationPrefixListId: 'pl-6da54004', FromPort: 443, ToPort: 443 }),
        expect.objectContaining({ CidrIp: '10.0.8.0/24', FromPort: 443, ToPort: 443 }),
      ]),
    );
    expect(egressRules).toHaveLength(4);
    expect(JSON.stringify(group)).not.toContain('0.0.0.0/0');
    expect(fn('relayRestAction').Properties['VpcConfig']['SecurityGroupIds']).toEqual([{ 'Fn::GetAtt': [groupId, 'GroupId'] }]);
    expect(nagErrors(stack)).toEqual([]);
  });

  it('with network.placement "all", runs every function in the VPC, the authorizer and the batch function included', () => {
    const { stack, fn } = synth({ network: { ...ENDPOINTS_NETWORK, egress: [...EGRESS, TO_ISSUER], placement: 'all' } }, { nag: true });
    for (const op of ALL) expect(fn(op).Properties['VpcConfig']?.['SubnetIds'], op).toEqual(SUBNETS.map((s) => s.subnetId));
    // No suppression of NIST's LambdaInsideVPC is left to hide a function outside it.
    expect(nagErrors(stack)).toEqual([]);
  });

  it('with security groups given by id, creates none and lets the endpoints admit them', () => {
    const { resources, fn } = synth({
      network: { vpcId: 'vpc-0123456789abcdef0', subnets: SUBNETS, securityGroupIds: ['sg-0123456789abcdef0', 'sg-0fedcba9876543210'] },
    });
    // Only the endpoints' own group is created; it admits the given groups.
    expect(ofType(resources, 'AWS::EC2::SecurityGroup').map(([id]) => id)).toEqual([expect.stringContaining('EndpointSecurityGroup')]);
    expect(fn('complianceBatch').Properties['VpcConfig']['SecurityGroupIds']).toEqual(['sg-0123456789abcdef0', 'sg-0fedcba9876543210']);
    const sources = ofType(resources, 'AWS::EC2::SecurityGroupIngress').map(([, r]) => r.Properties['SourceSecurityGroupId']);
    expect(sources.sort()).toEqual(['sg-0123456789abcdef0', 'sg-0fedcba9876543210']);
    expect(ofType(resources, 'AWS::EC2::SecurityGroupEgress')).toEqual([]);
  });

  it('with a CA bundle, names it in NETCONFIG_CA_BUNDLE of exactly the functions that call NSO or Vault', () => {
    const { fn } = synth({ caBundle: 'private-ca.pem' });
    for (const op of ALL) {
      const env = fn(op).Properties['Environment']['Variables'];
      expect(env['NETCONFIG_CA_BUNDLE'], op).toBe(OUTSIDE.includes(op) ? 'ca-bundle.pem' : undefined);
    }
  });

  it('with an external OIDC issuer, creates no user pool and verifies that issuer’s tokens', () => {
    const { resources, fn } = synth({
      identity: {
        provider: 'oidc',
        issuer: 'https://login.example.net/realms/ops',
        audience: 'netconfig',
        jwksUrl: 'https://login.example.net/realms/ops/certs',
      },
    });
    expect(ofType(resources, 'AWS::Cognito::UserPool')).toEqual([]);
    expect(fn('authorizer').Properties['Environment']['Variables']).toMatchObject({
      JWT_ISSUER: 'https://login.example.net/realms/ops',
      JWT_AUDIENCE: 'netconfig',
      JWKS_URL: 'https://login.example.net/realms/ops/certs',
      ROLES_CLAIM: 'roles',
    });
  });

  it('runs an OIDC authorizer in the VPC when identity.inVpc asks, trusting the CA bundle for its JWKS fetch', () => {
    const identity = { provider: 'oidc', issuer: 'https://login.corp.example/realms/ops', audience: 'netconfig', inVpc: true };
    const { fn, resources, stack } = synth(
      { network: { ...ENDPOINTS_NETWORK, egress: [...EGRESS, TO_ISSUER] }, caBundle: 'private-ca.pem', identity },
      { nag: true },
    );
    expect(nagErrors(stack)).toEqual([]);
    const authorizer = fn('authorizer').Properties;
    expect(authorizer['VpcConfig']).toEqual(fn('relayRestAction').Properties['VpcConfig']);
    expect(authorizer['VpcConfig']['SubnetIds']).toEqual(SUBNETS.map((s) => s.subnetId));
    expect(authorizer['Environment']['Variables']).toMatchObject({
      NETCONFIG_CA_BUNDLE: 'ca-bundle.pem',
      JWKS_URL: 'https://login.corp.example/realms/ops/.well-known/jwks.json',
    });
    expect(authorizer['MemorySize']).toBe(AUTHORIZER_MEMORY_MB);
    // Its role may manage the network interfaces of a VPC function.
    const role = resources[authorizer['Role']['Fn::GetAtt'][0]]!;
    expect(JSON.stringify(role.Properties['ManagedPolicyArns'])).toContain('AWSLambdaVPCAccessExecutionRole');

    // Without inVpc it stays outside the VPC, and still trusts the CA bundle.
    const outside = synth({ network: ENDPOINTS_NETWORK, caBundle: 'private-ca.pem', identity: { ...identity, inVpc: false } }).fn('authorizer').Properties;
    expect(outside['VpcConfig']).toBeUndefined();
    expect(outside['Environment']['Variables']['NETCONFIG_CA_BUNDLE']).toBe('ca-bundle.pem');
  });

  it('ships a pinned JWKS with the authorizer, which then has no JWKS URL and no CA to trust for it', () => {
    const identity = { provider: 'oidc', issuer: 'https://login.corp.example/realms/ops', audience: 'netconfig', jwks: 'jwks.json' };
    const { fn } = synth({ caBundle: 'private-ca.pem', identity });
    const variables = fn('authorizer').Properties['Environment']['Variables'];
    expect(variables).toMatchObject({ JWKS_FILE: PINNED_JWKS_FILE, JWT_ISSUER: identity.issuer });
    expect(variables).not.toHaveProperty('JWKS_URL');
    expect(variables).not.toHaveProperty('NETCONFIG_CA_BUNDLE');
    // test/infra/bundling.test.ts: the file lands in the bundle where JWKS_FILE names it.
  });

  it('reserves concurrency for the authorizer and caps the relay and the orchestrator health probes, from the file', () => {
    const { fn } = synth({ concurrency: { authorizer: 40, relay: 120, health: 5 } });
    for (const op of ALL) {
      const route = liveRoutes.find((r) => r.operationId === op);
      const group = op === 'authorizer' ? 'authorizer' : route && concurrencyGroup(route);
      const expected = ({ authorizer: 40, relay: 120, health: 5 } as Record<string, number>)[group ?? ''];
      expect(fn(op).Properties['ReservedConcurrentExecutions'], op).toBe(expected);
    }
    expect(fn('getAdapterHealth').Properties['ReservedConcurrentExecutions']).toBe(5);
    expect(fn('getAdaptersHealth').Properties['ReservedConcurrentExecutions']).toBe(5);
    const none = synth({ concurrency: { authorizer: null, relay: null, health: null } });
    for (const op of ALL) expect(none.fn(op).Properties['ReservedConcurrentExecutions'], op).toBeUndefined();
  });

  it('sends alarms to an existing topic, or to a topic it creates for an e-mail address', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:noc';
    const existing = synth({ alarms: { topicArn: arn, thresholds: { apiLatencyP99Ms: 8000 } } });
    expect(ofType(existing.resources, 'AWS::SNS::Topic')).toEqual([]);
    const alarms = ofType(existing.resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) expect(alarm['AlarmActions']).toEqual([arn]);
    // The threshold is inside the alarm's metric math: the share of requests slower than 8000 ms.
    const latency = alarms.find((a) => /-api-latency-p99-[a-z-]+-\d+$/.test(a['AlarmName']))!;
    expect(JSON.stringify(latency['Metrics'])).toContain('8000');
    expect(latency['AlarmDescription']).toContain('above 8000 ms');
    const created = synth({ alarms: { email: 'noc@example.net' } });
    expect(ofType(created.resources, 'AWS::SNS::Topic')).toHaveLength(1);
    created.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'noc@example.net' });
    const silent = synth({});
    expect(ofType(silent.resources, 'AWS::SNS::Topic')).toEqual([]);
  });

  it('gives two stacks in one app no API name, Service dimension, alarm name or dashboard name in common', () => {
    const app = newApp();
    const [staging, prod] = ['NetconfigStaging', 'NetconfigProd'].map((stackName) => build(app, { stackName })).map(inspect);
    const names = ({ resources, fn }: ReturnType<typeof inspect>) => ({
      api: ofType(resources, 'AWS::ApiGateway::RestApi').map(([, r]) => r.Properties['Name']),
      service: [...new Set(ALL.map((op) => fn(op).Properties['Environment']['Variables']['SERVICE_NAME']))],
      alarms: ofType(resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties['AlarmName']),
      dashboards: ofType(resources, 'AWS::CloudWatch::Dashboard').map(([, r]) => r.Properties['DashboardName']),
    });
    const a = names(staging!);
    const b = names(prod!);
    expect(a.api).toEqual(['netconfig-staging']);
    expect(b.api).toEqual(['netconfig-prod']);
    expect(a.service).toEqual(['netconfig-staging']);
    expect(b.service).toEqual(['netconfig-prod']);
    expect(a.alarms.length).toBeGreaterThan(10);
    expect(a.dashboards).toHaveLength(1);
    for (const key of ['api', 'service', 'alarms', 'dashboards'] as const) {
      expect(
        a[key].every((n) => typeof n === 'string' && n.length > 0),
        key,
      ).toBe(true);
      expect(
        a[key].filter((n) => b[key].includes(n)),
        key,
      ).toEqual([]);
    }
  });
});
