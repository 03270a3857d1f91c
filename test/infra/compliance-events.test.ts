/**
 * The bus of the compliance events: the stack's own by default (no resource policy, no archive,
 * the `events` customer key when given), or the bus the config names; the batch function may put
 * events of the compliance source on that bus only and finds it in `EVENT_BUS_NAME`; the config
 * refuses a key or a region that contradicts the bus; cdk-nag finds nothing open.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../../functions/compliance/history-model.js';
import { DeployConfigError, parseDeployConfig } from '../../infra/config.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import { logicalIdOf, NO_BUNDLING, serviceTemplate } from './service-template.js';

type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown; Effect: string };

const FIXTURES = path.join(PROJECT_ROOT, 'test', 'infra', 'fixtures');
const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9';
const BUS_ARN = 'arn:aws:events:eu-west-1:210987654321:event-bus/netops-automation';
const base = { stackName: 'Netconfig', vault: { address: 'https://vault.example.net:8200' } };

const build = (config: Record<string, unknown>) => {
  const app = new App({ context: NO_BUNDLING });
  const { stackName, ...settings } = parseDeployConfig({ ...base, ...config }, 'variant.json', FIXTURES);
  const service = new NetconfigService(app, stackName, { settings });
  addNagSuppressions(service);
  for (const stack of [service.data, service.api]) Aspects.of(stack).add(new AwsSolutionsChecks());
  app.synth();
  const resources = serviceTemplate(service).toJSON().Resources as Record<string, Resource>;
  const batch = resources[logicalIdOf(service.api.functions['complianceBatch']!.function)]!;
  // The function's role is `Fn::GetAtt [role, Arn]`; its policies name it by `Ref`.
  const batchRole = { Ref: batch.Properties['Role']['Fn::GetAtt'][0] };
  const batchStatements: Statement[] = Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(JSON.stringify(batchRole)))
    .flatMap((p) => p.Properties['PolicyDocument']['Statement']);
  const putters = Object.entries(resources)
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
    .filter(([, r]) => JSON.stringify(r.Properties['PolicyDocument']).includes('events:PutEvents'))
    .map(([, r]) => r.Properties['Roles']);
  const nag = [service.data, service.api].flatMap((stack) => {
    const finding = Match.stringLikeRegexp('^AwsSolutions-');
    const annotations = Annotations.fromStack(stack);
    return [...annotations.findError('*', finding), ...annotations.findWarning('*', finding)].map((e) => `${e.id}: ${String(e.entry.data).split('\n')[0]}`);
  });
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  return { service, resources, batch, batchRole, batchStatements, putters, nag, ofType };
};

const putEvents = (statements: Statement[]) => statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('events:')));

describe('the compliance event bus', () => {
  describe('by default: the stack’s own bus', () => {
    let built: ReturnType<typeof build>;
    beforeAll(() => {
      built = build({});
    });

    it('creates a bus named after the service, in the stateful stack, with no policy and no archive', () => {
      const buses = built.ofType('AWS::Events::EventBus');
      expect(buses).toHaveLength(1);
      const [id, bus] = buses[0]!;
      expect(id).toBe(logicalIdOf(built.service.data.complianceEvents.bus));
      expect(bus.Properties).toMatchObject({ Name: 'netconfig-compliance' });
      expect(bus.Properties['KmsKeyIdentifier']).toBeUndefined();
      expect(bus.Properties['Policy']).toBeUndefined();
      expect(built.ofType('AWS::Events::EventBusPolicy')).toEqual([]);
      expect(built.ofType('AWS::Events::Archive')).toEqual([]);
    });

    it('lets the batch function put events of the compliance source on that bus only, and no other function put any', () => {
      const busId = logicalIdOf(built.service.data.complianceEvents.bus);
      expect(putEvents(built.batchStatements)).toEqual([
        {
          Effect: 'Allow',
          Action: 'events:PutEvents',
          Resource: { 'Fn::GetAtt': [busId, 'Arn'] },
          Condition: { StringEquals: { 'events:source': EVENT_SOURCE } },
        },
      ]);
      expect(built.putters).toEqual([[built.batchRole]]);
    });

    it('gives the batch function the bus’s name', () => {
      expect(built.batch.Properties['Environment']['Variables']['EVENT_BUS_NAME']).toEqual({ Ref: logicalIdOf(built.service.data.complianceEvents.bus) });
    });

    it('has no open AwsSolutions finding', () => {
      expect(built.nag).toEqual([]);
    });
  });

  it('encrypts the created bus with kms.events (or kms.key) when given', () => {
    for (const kms of [{ events: KEY }, { key: KEY }]) {
      const [, bus] = build({ kms }).ofType('AWS::Events::EventBus')[0]!;
      expect(bus.Properties['KmsKeyIdentifier']).toBe(KEY);
    }
  });

  describe('with events.busArn: the configured bus', () => {
    let built: ReturnType<typeof build>;
    beforeAll(() => {
      built = build({
        events: { busArn: BUS_ARN },
        landingZone: { account: '123456789012', region: 'eu-west-1' },
        network: {
          vpcId: 'vpc-0123456789abcdef0',
          subnets: [
            { subnetId: 'subnet-0a000000000000001', availabilityZone: 'eu-west-1a', routeTableId: 'rtb-0a000000000000001' },
            { subnetId: 'subnet-0b000000000000002', availabilityZone: 'eu-west-1b', routeTableId: 'rtb-0b000000000000002' },
          ],
          egress: [{ cidr: '10.20.0.0/16', port: 8888, description: 'NSO RESTCONF' }],
          dynamodbPrefixListId: 'pl-6da54004',
        },
      });
    });

    it('creates no bus, and the batch function puts on the configured one, by ARN', () => {
      expect(built.ofType('AWS::Events::EventBus')).toEqual([]);
      expect(built.batch.Properties['Environment']['Variables']['EVENT_BUS_NAME']).toBe(BUS_ARN);
      expect(putEvents(built.batchStatements)).toEqual([
        { Effect: 'Allow', Action: 'events:PutEvents', Resource: BUS_ARN, Condition: { StringEquals: { 'events:source': EVENT_SOURCE } } },
      ]);
    });

    it('reaches EventBridge from the VPC through an endpoint that admits PutEvents on that bus only', () => {
      const endpoints = built
        .ofType('AWS::EC2::VPCEndpoint')
        .map(([, r]) => r)
        .filter((r) => JSON.stringify(r.Properties['ServiceName']).includes('.events'));
      expect(endpoints).toHaveLength(1);
      expect(endpoints[0]!.Properties['PolicyDocument']['Statement']).toEqual([
        {
          Effect: 'Allow',
          Principal: { AWS: '*' },
          Action: 'events:PutEvents',
          Resource: BUS_ARN,
          Condition: { StringEquals: { 'aws:PrincipalAccount': { Ref: 'AWS::AccountId' } } },
        },
      ]);
    });

    it('has no open AwsSolutions finding', () => {
      expect(built.nag).toEqual([]);
    });
  });

  describe('the config', () => {
    const problemsOf = (config: Record<string, unknown>): readonly string[] => {
      try {
        parseDeployConfig({ ...base, ...config }, 'test.json', FIXTURES);
      } catch (error) {
        expect(error).toBeInstanceOf(DeployConfigError);
        return (error as DeployConfigError).problems;
      }
      throw new Error('the configuration was accepted');
    };

    it('refuses a busArn that is not an event bus ARN', () => {
      expect(problemsOf({ events: { busArn: 'arn:aws:sns:eu-west-1:123456789012:topic' } })).toEqual([
        'events.busArn: must be the ARN of an EventBridge event bus, e.g. arn:aws:events:eu-west-1:123456789012:event-bus/netops, got "arn:aws:sns:eu-west-1:123456789012:topic"',
      ]);
    });

    it('refuses kms.events beside events.busArn, and a bus of another region than the stacks', () => {
      expect(
        problemsOf({
          events: { busArn: 'arn:aws:events:us-east-1:123456789012:event-bus/netops' },
          kms: { events: 'arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9' },
          landingZone: { account: '123456789012', region: 'eu-west-1' },
        }),
      ).toEqual([
        'kms.events: only used for the event bus the stack creates (events.busArn absent); a bus given by events.busArn keeps its own key',
        "events.busArn: a bus of us-east-1, but the stacks deploy to eu-west-1: PutEvents reaches buses of the caller's region only (forward events to another region with a rule on a bus of eu-west-1)",
      ]);
    });

    it('refuses an empty events object', () => {
      expect(problemsOf({ events: {} })).toHaveLength(1);
    });
  });
});
