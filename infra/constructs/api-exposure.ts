/**
 * How the API is exposed, from the `api` settings (docs/deployment.md, "API exposure"): its
 * endpoint type, its resource policy (source VPC endpoints, source addresses), the web ACL
 * associated with its stage, and the usage plans that throttle each client of the relay.
 */
import { ApiKey, ApiKeySourceType, EndpointType, Period, UsagePlan, type EndpointConfiguration, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { InterfaceVpcEndpoint } from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { createHash } from 'node:crypto';
import { serializeUsageKeys, type UsageKeys } from '../../functions/authorizer/usage.js';
import { DEFAULT_PLAN_NAME as DEFAULT_PLAN, USAGE_KEY_LENGTH, type ApiSettings, type UsagePlanSettings, type UsagePlansSettings } from '../config.js';

/**
 * The API key value of a plan: derived from the service and plan names, so that the authorizer
 * can be told it at synth (CloudFormation returns no generated key value) and two deployments
 * in one account never share one (values are unique per account and region). An identifier, not
 * a secret: with the key source `AUTHORIZER` a caller cannot present a key.
 */
export const usageKeyValue = (serviceName: string, plan: string): string =>
  createHash('sha256').update(`${serviceName}/usage-plan/${plan}`).digest('hex').slice(0, USAGE_KEY_LENGTH);

/** The authorizer's mapping from callers to plan keys. */
export const usageKeysOf = (serviceName: string, plans: UsagePlansSettings): UsageKeys => ({
  claim: plans.clientIdClaim,
  defaultKey: usageKeyValue(serviceName, DEFAULT_PLAN),
  clients: plans.clients.map((c) => ({ key: usageKeyValue(serviceName, c.name), subjects: c.subjects ?? [], clientIds: c.clientIds ?? [] })),
});

/** The `USAGE_PLAN_KEYS` environment of the authorizer, or none without usage plans. */
export const usageKeysEnvironment = (serviceName: string, api: ApiSettings): Record<string, string> =>
  api.usagePlans ? { USAGE_PLAN_KEYS: serializeUsageKeys(usageKeysOf(serviceName, api.usagePlans)) } : {};

/** The RestApi properties the exposure decides: endpoint type, resource policy, key source. */
export const restApiExposure = (scope: Construct, api: ApiSettings) => ({
  endpointConfiguration: endpointConfiguration(scope, api),
  ...(resourcePolicy(api) ? { policy: resourcePolicy(api) } : {}),
  ...(api.usagePlans ? { apiKeySourceType: ApiKeySourceType.AUTHORIZER } : {}),
});

const endpointConfiguration = (scope: Construct, api: ApiSettings): EndpointConfiguration =>
  api.endpointType === 'private'
    ? {
        types: [EndpointType.PRIVATE],
        // The endpoints also get the API's Route 53 alias ({api-id}-{vpce-id}.execute-api…), for callers without private DNS.
        vpcEndpoints: (api.vpcEndpointIds ?? []).map((id) =>
          InterfaceVpcEndpoint.fromInterfaceVpcEndpointAttributes(scope, `Endpoint-${id}`, { vpcEndpointId: id, port: 443 }),
        ),
      }
    : { types: [EndpointType.REGIONAL] };

/**
 * The resource policy: none for a regional API open to all (as before). A private API allows
 * only its VPC endpoints (without a policy nobody can call it); source CIDRs deny every other
 * address (`aws:SourceIp` on a regional API; `aws:VpcSourceIp` on a private one, where the
 * caller's address is its address in the VPC). Each restriction is an explicit Deny beside one
 * Allow, so that no statement added later can widen it.
 */
export const resourcePolicy = (api: ApiSettings): PolicyDocument | undefined => {
  const privateApi = api.endpointType === 'private';
  if (!privateApi && !api.sourceCidrs) return undefined;
  const statement = (effect: Effect, conditions?: Record<string, Record<string, readonly string[]>>) =>
    new PolicyStatement({
      effect,
      principals: [new AnyPrincipal()],
      actions: ['execute-api:Invoke'],
      resources: ['execute-api:/*'],
      ...(conditions ? { conditions } : {}),
    });
  const statements = [statement(Effect.ALLOW)];
  if (privateApi) statements.push(statement(Effect.DENY, { StringNotEquals: { 'aws:SourceVpce': api.vpcEndpointIds ?? [] } }));
  if (api.sourceCidrs) statements.push(statement(Effect.DENY, { NotIpAddress: { [privateApi ? 'aws:VpcSourceIp' : 'aws:SourceIp']: api.sourceCidrs } }));
  return new PolicyDocument({ statements });
};

export interface ApiExposureProps {
  readonly api: RestApi;
  readonly settings: ApiSettings;
  readonly serviceName: string;
}

/** What the exposure adds beside the RestApi: the web ACL association and the usage plans with their keys. */
export class ApiExposure extends Construct {
  constructor(scope: Construct, id: string, props: ApiExposureProps) {
    super(scope, id);
    const { api, settings, serviceName } = props;
    if (settings.webAclArn) new CfnWebACLAssociation(this, 'WebAcl', { resourceArn: api.deploymentStage.stageArn, webAclArn: settings.webAclArn });
    const plans = settings.usagePlans;
    if (!plans) return;
    const plan = (name: string, limits: UsagePlanSettings, who: string) => {
      const usagePlan = new UsagePlan(this, `Plan-${name}`, {
        name: `${serviceName}-${name}`,
        description: `${serviceName}: relay throttle and quota of ${who}`,
        throttle: { rateLimit: limits.rateLimit, burstLimit: limits.burstLimit },
        ...(limits.quota ? { quota: { limit: limits.quota.limit, period: Period[limits.quota.period] } } : {}),
        apiStages: [{ api, stage: api.deploymentStage }],
      });
      const key = new ApiKey(this, `Key-${name}`, {
        apiKeyName: `${serviceName}-${name}`,
        description: `${serviceName}: usage-plan identifier of ${who}, named by the authorizer (not a secret)`,
        value: usageKeyValue(serviceName, name),
        enabled: true,
      });
      usagePlan.addApiKey(key);
    };
    plan(DEFAULT_PLAN, plans.default, 'every caller no client names');
    for (const client of plans.clients) plan(client.name, client, `client ${client.name}`);
  }
}
