/**
 * VPC placement of the functions: an existing VPC and its private subnets, imported from their
 * ids (no lookup: synth stays offline), a security group whose egress is only what the functions
 * need (or groups given by id), and the way to AWS's own APIs: a DynamoDB gateway endpoint plus
 * Secrets Manager, Lambda and EventBridge interface endpoints (the durable compliance function
 * checkpoints through the Lambda API and puts its events on the compliance bus), each with a
 * policy that admits this account's principals on this account's resources only (EventBridge's:
 * PutEvents on the compliance bus only, which may be another account's); or endpoints the VPC already has (a shared VPC, whose route tables
 * a participant cannot change); or a NAT the VPC has.
 */
import { Annotations, Aws } from 'aws-cdk-lib';
import {
  GatewayVpcEndpoint,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpoint,
  InterfaceVpcEndpointAwsService,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  Vpc,
  type ISecurityGroup,
  type ISubnet,
} from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { NetworkSettings } from '../config.js';
import type { FunctionNetwork } from './service-function.js';

/**
 * The policy of an endpoint the stack creates: every action of the service, by this account's
 * principals on this account's resources (`aws:PrincipalAccount`, `aws:ResourceAccount`), so the
 * endpoint carries no call to or from another account. Nothing else in the VPC is meant to use it.
 */
const accountOnly = (service: string): PolicyStatement =>
  new PolicyStatement({
    principals: [new AnyPrincipal()],
    actions: [`${service}:*`],
    resources: ['*'],
    conditions: { StringEquals: { 'aws:PrincipalAccount': Aws.ACCOUNT_ID, 'aws:ResourceAccount': Aws.ACCOUNT_ID } },
  });

export class PrivateNetwork extends Construct {
  /** Where the functions that call NSO or Vault run. */
  readonly placement: FunctionNetwork;
  /** The interface endpoints, by service (none when the VPC reaches AWS through a NAT). */
  readonly interfaceEndpoints: Readonly<Record<string, InterfaceVpcEndpoint>> = {};
  readonly dynamodbEndpoint?: GatewayVpcEndpoint;

  /** `eventBusArn`: the bus of the compliance events, the one resource the EventBridge endpoint admits. */
  constructor(scope: Construct, id: string, settings: NetworkSettings, o: { readonly eventBusArn: string }) {
    super(scope, id);
    const zones = [...new Set(settings.subnets.map((s) => s.availabilityZone))];
    const vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: settings.vpcId, availabilityZones: zones });
    const subnets: ISubnet[] = settings.subnets.map((s, i) => {
      const subnet = Subnet.fromSubnetAttributes(this, `Subnet${i}`, {
        subnetId: s.subnetId,
        availabilityZone: s.availabilityZone,
        ...(s.routeTableId ? { routeTableId: s.routeTableId } : {}),
      });
      // Route tables matter only to the gateway endpoint (the config requires them with endpoints).
      if (!s.routeTableId)
        Annotations.of(subnet).acknowledgeWarning(
          '@aws-cdk/aws-ec2:noSubnetRouteTableId',
          'The functions only run in the subnet; no endpoint is added to its routes',
        );
      return subnet;
    });
    const endpoints = settings.awsServices === 'endpoints';
    // Both endpoint modes reach DynamoDB through a gateway endpoint: the created group's egress names its prefix list.
    const gateway = settings.awsServices !== 'nat';

    let securityGroups: ISecurityGroup[];
    if (settings.securityGroupIds) {
      // Given groups are used as they are: their rules are their owner's.
      securityGroups = settings.securityGroupIds.map((sgId, i) => SecurityGroup.fromSecurityGroupId(this, `SecurityGroup${i}`, sgId, { mutable: false }));
    } else {
      const group = new SecurityGroup(this, 'FunctionSecurityGroup', {
        vpc,
        allowAllOutbound: false,
        description: 'Functions that call NSO or Vault: egress to them and to the AWS APIs they use, nothing else',
      });
      for (const rule of settings.egress ?? []) {
        group.addEgressRule(Peer.ipv4(rule.cidr), Port.tcp(rule.port), rule.description ?? `NSO or Vault at ${rule.cidr} port ${rule.port}`);
      }
      if (gateway) {
        // The gateway endpoint routes DynamoDB's public prefixes; the interface endpoints add their own rules below
        // (the VPC's existing ones are in the egress entries, config.ts requires one on port 443).
        group.addEgressRule(Peer.prefixList(settings.dynamodbPrefixListId!), Port.tcp(443), 'DynamoDB through the gateway endpoint');
      } else {
        group.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'DynamoDB, Secrets Manager and Lambda APIs through the NAT');
      }
      securityGroups = [group];
    }

    if (endpoints) {
      this.dynamodbEndpoint = new GatewayVpcEndpoint(this, 'DynamoDbEndpoint', { vpc, service: GatewayVpcEndpointAwsService.DYNAMODB, subnets: [{ subnets }] });
      this.dynamodbEndpoint.addToPolicy(accountOnly('dynamodb'));
      // An interface endpoint takes one subnet per availability zone.
      const onePerZone = zones.map((zone) => subnets[settings.subnets.findIndex((s) => s.availabilityZone === zone)]!);
      // The endpoints' own group: HTTPS in from the functions' groups; endpoints start no connection, so no egress.
      const endpointGroup = new SecurityGroup(this, 'EndpointSecurityGroup', {
        vpc,
        allowAllOutbound: false,
        description: 'Interface endpoints (Secrets Manager, Lambda, EventBridge) of the functions that call NSO or Vault',
      });
      for (const group of securityGroups) endpointGroup.connections.allowFrom(group, Port.tcp(443), 'HTTPS from the functions that call NSO or Vault');
      const services = {
        SecretsManager: InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
        Lambda: InterfaceVpcEndpointAwsService.LAMBDA,
        Events: InterfaceVpcEndpointAwsService.EVENTBRIDGE,
      };
      const made: Record<string, InterfaceVpcEndpoint> = {};
      for (const [name, service] of Object.entries(services)) {
        made[name] = new InterfaceVpcEndpoint(this, `${name}Endpoint`, {
          vpc,
          service,
          subnets: { subnets: onePerZone },
          privateDnsEnabled: true,
          open: false,
          securityGroups: [endpointGroup],
        });
        made[name].addToPolicy(
          name === 'Events'
            ? new PolicyStatement({
                principals: [new AnyPrincipal()],
                actions: ['events:PutEvents'],
                resources: [o.eventBusArn],
                conditions: { StringEquals: { 'aws:PrincipalAccount': Aws.ACCOUNT_ID } },
              })
            : accountOnly(service.shortName),
        );
      }
      this.interfaceEndpoints = made;
    }
    this.placement = { vpc, subnets, securityGroups };
  }
}
