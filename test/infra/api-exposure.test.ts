/**
 * How the API is exposed, per config variant (the `api` key): the regional default as before,
 * a private API with its VPC endpoints and policy, a source-CIDR policy, the web ACL
 * association, the stage throttle, the relay's usage plans, and which methods have detailed
 * metrics. Synthesized without bundling; cdk-nag on the private example, which turns all on.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { parseUsageKeys } from '../../functions/authorizer/usage.js';
import { loadDeployConfig, parseDeployConfig, type DeployConfig } from '../../infra/config.js';
import { usageKeyValue } from '../../infra/constructs/api-exposure.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import { logicalIdOf, NO_BUNDLING, serviceTemplate } from './service-template.js';

type Resource = { Type: string; Properties: Record<string, any> };

const VPCE = 'vpce-0123456789abcdef0';
const WEB_ACL = 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/netconfig/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';

const configOf = (api?: Record<string, unknown>): DeployConfig =>
  parseDeployConfig({ stackName: 'Netconfig', vault: { address: 'https://vault.example.net:8200' }, ...(api ? { api } : {}) }, 'variant.json', PROJECT_ROOT);

const synth = ({ stackName, ...settings }: DeployConfig, nag = false) => {
  const service = new NetconfigService(new App({ context: NO_BUNDLING }), stackName, { settings });
  if (nag) {
    addNagSuppressions(service);
    for (const stack of [service.data, service.api]) Aspects.of(stack).add(new AwsSolutionsChecks());
  }
  const resources = serviceTemplate(service).toJSON().Resources as Record<string, Resource>;
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const only = (type: string): Resource => {
    const found = ofType(type);
    expect(found, type).toHaveLength(1);
    return found[0]![1];
  };
  return { service, resources, ofType, only, api: only('AWS::ApiGateway::RestApi').Properties, stage: only('AWS::ApiGateway::Stage').Properties };
};

/** `Method Resource` of every per-method stage setting (CloudFormation's `/~1a~1{b}` is `/a/{b}`). */
const methodSettings = (stage: Record<string, any>): string[] =>
  (stage['MethodSettings'] as Record<string, any>[])
    .filter((s) => s['ResourcePath'] !== '/*')
    .map((s) => `${s['HttpMethod']} ${String(s['ResourcePath']).slice(1).replaceAll('~1', '/')}`)
    .sort();

/** `Method Resource` of every per-method API Gateway metric the alarms read. */
const alarmedMethods = (resources: Record<string, Resource>): string[] => {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      const dims = Object.fromEntries(value.filter((d) => d && typeof d === 'object' && 'Name' in d).map((d) => [d.Name, d.Value]));
      if (typeof dims['Method'] === 'string' && typeof dims['Resource'] === 'string') found.add(`${dims['Method']} ${dims['Resource']}`);
      value.forEach(walk);
    } else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  for (const r of Object.values(resources)) if (r.Type === 'AWS::CloudWatch::Alarm') walk(r.Properties);
  return [...found].sort();
};

const relayMethod = (resources: Record<string, Resource>) =>
  Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties['OperationName'] === 'relayRestAction')!.Properties;

const authorizerEnv = (service: NetconfigService, resources: Record<string, Resource>): Record<string, unknown> =>
  resources[logicalIdOf(service.functions['authorizer']!.function)]!.Properties['Environment']['Variables'];

// Each synthesizes the whole service: seconds each.
describe('API exposure', () => {
  it('keeps the regional default: no policy, no web ACL, no usage plans, the stage throttle 200/400', () => {
    const { service, resources, ofType, api, stage } = synth(loadDeployConfig(path.join(PROJECT_ROOT, 'deploy', 'config.example.json')));
    expect(api['EndpointConfiguration']).toEqual({ Types: ['REGIONAL'] });
    expect(api['Policy']).toBeUndefined();
    expect(api['ApiKeySourceType']).toBeUndefined();
    for (const type of ['AWS::WAFv2::WebACLAssociation', 'AWS::ApiGateway::UsagePlan', 'AWS::ApiGateway::ApiKey', 'AWS::ApiGateway::UsagePlanKey'])
      expect(ofType(type), type).toEqual([]);
    const all = (stage['MethodSettings'] as Record<string, any>[]).find((s) => s['ResourcePath'] === '/*')!;
    expect(all).toMatchObject({ HttpMethod: '*', MetricsEnabled: false, ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400, LoggingLevel: 'ERROR' });
    expect(relayMethod(resources)['ApiKeyRequired']).toBeUndefined();
    expect(authorizerEnv(service, resources)).not.toHaveProperty('USAGE_PLAN_KEYS');
  });

  it('gives detailed metrics to exactly the methods the alarms read, each with the stage’s throttle and logging', () => {
    const { resources, stage } = synth(configOf({ throttling: { rateLimit: 300, burstLimit: 600 } }));
    const alarmed = alarmedMethods(resources);
    // The orchestrator-bound routes other than the relay are in no latency alarm, and the removed routes in none.
    const waitOnOrchestrators = liveRoutes.filter((r) => r.needs.orchestrator && r.operationId !== 'relayRestAction');
    expect(waitOnOrchestrators.map((r) => r.operationId)).toContain('startBackupBatch');
    expect(alarmed.length).toBe(liveRoutes.length - waitOnOrchestrators.length);
    expect(methodSettings(stage)).toEqual(alarmed);
    for (const s of stage['MethodSettings'] as Record<string, any>[]) {
      expect(s).toMatchObject({ ThrottlingRateLimit: 300, ThrottlingBurstLimit: 600, LoggingLevel: 'ERROR', DataTraceEnabled: false });
      expect(s['MetricsEnabled']).toBe(s['ResourcePath'] !== '/*');
    }
  });

  it('gives every method detailed metrics with detailedMetrics "all"', () => {
    const { stage } = synth(configOf({ detailedMetrics: 'all' }));
    expect(stage['MethodSettings']).toEqual([expect.objectContaining({ ResourcePath: '/*', HttpMethod: '*', MetricsEnabled: true })]);
  });

  it('makes a private API callable only through its VPC endpoints, and from its CIDRs inside the VPC', () => {
    const { api } = synth(configOf({ endpointType: 'private', vpcEndpointIds: [VPCE], sourceCidrs: ['10.40.0.0/16'] }));
    expect(api['EndpointConfiguration']).toEqual({ Types: ['PRIVATE'], VpcEndpointIds: [VPCE] });
    const invoke = { Action: 'execute-api:Invoke', Principal: { AWS: '*' }, Resource: 'execute-api:/*' };
    expect(api['Policy']['Statement']).toEqual([
      { ...invoke, Effect: 'Allow' },
      { ...invoke, Effect: 'Deny', Condition: { StringNotEquals: { 'aws:SourceVpce': [VPCE] } } },
      { ...invoke, Effect: 'Deny', Condition: { NotIpAddress: { 'aws:VpcSourceIp': ['10.40.0.0/16'] } } },
    ]);
  });

  it('restricts a regional API to its source CIDRs', () => {
    const { api } = synth(configOf({ sourceCidrs: ['198.51.100.0/24', '203.0.113.0/24'] }));
    expect(api['EndpointConfiguration']).toEqual({ Types: ['REGIONAL'] });
    expect(api['Policy']['Statement']).toEqual([
      expect.objectContaining({ Effect: 'Allow' }),
      expect.objectContaining({ Effect: 'Deny', Condition: { NotIpAddress: { 'aws:SourceIp': ['198.51.100.0/24', '203.0.113.0/24'] } } }),
    ]);
  });

  it('serves a new resource policy: the deployment changes with it', () => {
    const deploymentId = (config: DeployConfig) => synth(config).ofType('AWS::ApiGateway::Deployment')[0]![0];
    expect(deploymentId(configOf({ sourceCidrs: ['198.51.100.0/24'] }))).not.toBe(deploymentId(configOf()));
    expect(deploymentId(configOf({ detailedMetrics: 'all' }))).toBe(deploymentId(configOf()));
  });

  it('associates the web ACL with the stage', () => {
    const { resources, only } = synth(configOf({ webAclArn: WEB_ACL }));
    const association = only('AWS::WAFv2::WebACLAssociation').Properties;
    expect(association['WebACLArn']).toBe(WEB_ACL);
    const stageId = Object.entries(resources).find(([, r]) => r.Type === 'AWS::ApiGateway::Stage')![0];
    expect(JSON.stringify(association['ResourceArn'])).toContain(`{"Ref":"${stageId}"}`);
    expect(JSON.stringify(association['ResourceArn'])).toContain('/stages/');
  });

  it('throttles each client of the relay by its usage plan, the key named by the authorizer', () => {
    const usagePlans = {
      clientIdClaim: 'azp',
      default: { rateLimit: 5, burstLimit: 10, quota: { limit: 20000, period: 'DAY' } },
      clients: [
        { name: 'pipeline', clientIds: ['pipeline-app'], rateLimit: 50, burstLimit: 100 },
        { name: 'noc', subjects: ['alice'], rateLimit: 10, burstLimit: 20, quota: { limit: 1000, period: 'WEEK' } },
      ],
    };
    const { service, resources, ofType, api } = synth(configOf({ usagePlans }));
    expect(api['ApiKeySourceType']).toBe('AUTHORIZER');
    const keyed = ofType('AWS::ApiGateway::Method').filter(([, r]) => r.Properties['ApiKeyRequired']);
    expect(keyed.map(([, r]) => r.Properties['OperationName'])).toEqual(['relayRestAction']);

    const plans: Record<string, Record<string, any>> = Object.fromEntries(
      ofType('AWS::ApiGateway::UsagePlan').map(([, r]) => [r.Properties['UsagePlanName'], r.Properties]),
    );
    expect(Object.keys(plans).sort()).toEqual(['netconfig-default', 'netconfig-noc', 'netconfig-pipeline']);
    expect(plans['netconfig-default']).toMatchObject({ Throttle: { RateLimit: 5, BurstLimit: 10 }, Quota: { Limit: 20000, Period: 'DAY' } });
    expect(plans['netconfig-pipeline']).toMatchObject({ Throttle: { RateLimit: 50, BurstLimit: 100 } });
    expect(plans['netconfig-pipeline']?.['Quota']).toBeUndefined();
    expect(plans['netconfig-noc']).toMatchObject({ Quota: { Limit: 1000, Period: 'WEEK' } });
    for (const plan of Object.values(plans)) expect(plan['ApiStages']).toEqual([expect.objectContaining({ Stage: expect.anything() })]);

    const keys: Record<string, { id: string; value: string }> = Object.fromEntries(
      ofType('AWS::ApiGateway::ApiKey').map(([id, r]) => [r.Properties['Name'], { id, value: r.Properties['Value'] }]),
    );
    expect(Object.keys(keys).sort()).toEqual(['netconfig-default', 'netconfig-noc', 'netconfig-pipeline']);
    for (const name of ['default', 'noc', 'pipeline']) expect(keys[`netconfig-${name}`]!.value).toBe(usageKeyValue('netconfig', name));
    // Each key in its own plan.
    const planIds = Object.fromEntries(ofType('AWS::ApiGateway::UsagePlan').map(([id, r]) => [id, r.Properties['UsagePlanName']]));
    const pairs = ofType('AWS::ApiGateway::UsagePlanKey').map(([, r]) => [
      planIds[r.Properties['UsagePlanId'].Ref],
      Object.entries(keys).find(([, k]) => k.id === r.Properties['KeyId'].Ref)![0],
    ]);
    expect(pairs.every(([plan, key]) => plan === key)).toBe(true);
    expect(pairs).toHaveLength(3);

    const mapping = parseUsageKeys(String(authorizerEnv(service, resources)['USAGE_PLAN_KEYS']));
    expect(mapping).toEqual({
      claim: 'azp',
      defaultKey: keys['netconfig-default']!.value,
      clients: [
        { key: keys['netconfig-pipeline']!.value, subjects: [], clientIds: ['pipeline-app'] },
        { key: keys['netconfig-noc']!.value, subjects: ['alice'], clientIds: [] },
      ],
    });
  });

  it('turns every control on in the private example, with no cdk-nag finding', () => {
    const { service, ofType, api } = synth(loadDeployConfig(path.join(PROJECT_ROOT, 'deploy', 'config.private.example.json')), true);
    expect(api['EndpointConfiguration']['Types']).toEqual(['PRIVATE']);
    expect(api['Policy']['Statement']).toHaveLength(3);
    expect(api['ApiKeySourceType']).toBe('AUTHORIZER');
    expect(ofType('AWS::WAFv2::WebACLAssociation')).toHaveLength(1);
    expect(ofType('AWS::ApiGateway::UsagePlan')).toHaveLength(2);
    const findings = [service.data, service.api].flatMap((stack) => Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')));
    expect(findings.map((e) => `${e.id}: ${String(e.entry.data).split('\n')[0]}`)).toEqual([]);
  });
});
