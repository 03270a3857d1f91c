/**
 * CloudFormation takes at most 500 resources per stack. The stack has one function per live
 * route, so its size grows with the route table: these tests fail when it exceeds its budget,
 * or when a live route costs more than it should (a resource of its own beyond its function,
 * log group and method, or a larger share of the shared ones), so that no route can silently
 * bring the stack near the limit. docs/deployment.md ("Stack size") has the numbers.
 */
import { App, CfnResource, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { loadDeployConfig } from '../../infra/config.js';
import { FunctionRoles, ServiceFunction, tablePermission } from '../../infra/constructs/service-function.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { FUNCTIONS_PER_INVOKE_ROLE, NetconfigStack } from '../../infra/stack.js';
import { methods, resourcePaths, type Resources } from './api-template.js';

/** CloudFormation's hard limit. */
const CLOUDFORMATION_LIMIT = 500;
/** The stack stays under this many resources: 50 under the limit, for what a change adds before anyone looks. */
const BUDGET = CLOUDFORMATION_LIMIT - 50;
/** Average resources per live route: its own (function, log group, method) plus its share of what it shares (5.2 measured with 36 routes). */
const ROUTE_COST = 5.5;

const synth = (configFile?: string) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  let stack: NetconfigStack;
  if (configFile) {
    const { stackName, ...settings } = loadDeployConfig(path.join(PROJECT_ROOT, configFile));
    stack = new NetconfigStack(app, stackName, { settings });
  } else {
    stack = new NetconfigStack(app, 'Netconfig');
  }
  const template = Template.fromStack(stack);
  return { stack, template, resources: template.toJSON().Resources as Resources };
};

/** The logical ids of the CloudFormation resources under a construct. */
const resourcesUnder = (stack: NetconfigStack, construct: { node: { findAll(): readonly unknown[] } }): string[] =>
  construct.node
    .findAll()
    .filter((c): c is CfnResource => c instanceof CfnResource)
    .map((c) => stack.getLogicalId(c as CfnElement));

/**
 * What each live route costs: 1 for each resource it owns, and for each resource it shares with
 * others, 1 divided by the number of users (an alarm over 10 functions costs each 0.1; a path
 * segment, each method at or below it; an execution role with its policy, each function that
 * assumes it; an invoke role with its policy, each method that uses it).
 */
const routeCosts = ({ stack, template, resources }: ReturnType<typeof synth>): Map<string, number> => {
  const paths = resourcePaths(resources);
  const all = methods(template);
  const costs = new Map<string, number>();
  const roles = FunctionRoles.of(stack).roles;
  const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  const fnIds = Object.keys(stack.functions).map((op) => stack.getLogicalId(stack.functions[op]!.function.node.defaultChild as CfnElement));
  const referenced = (r: unknown, id: string) => JSON.stringify(r).includes(`"${id}"`);
  for (const route of liveRoutes) {
    const fn = stack.functions[route.operationId]!;
    const fnId = stack.getLogicalId(fn.function.node.defaultChild as CfnElement);
    let cost = resourcesUnder(stack, fn).length;
    const method = all.find((m) => m.method === route.method && m.path === route.path)!;
    cost += 1;
    const under = (p: string) => (q: string) => q === p || q.startsWith(`${p}/`);
    for (const p of paths.values()) if (under(p)(route.path)) cost += 1 / all.filter((m) => under(p)(m.path)).length;
    const role = roles.find((r) => r.users.includes(fn.node.path))!;
    cost += resourcesUnder(stack, role.role).length / role.users.length;
    for (const alarm of alarms.filter((a) => referenced(a, fnId))) cost += 1 / fnIds.filter((id) => referenced(alarm, id)).length;
    const invokeRole = method.props['Integration']['Credentials']['Fn::GetAtt'][0] as string;
    const invokeRoleResources = Object.entries(resources).filter(
      ([id, r]) => id === invokeRole || (r.Type === 'AWS::IAM::Policy' && referenced(r.Properties['Roles'], invokeRole)),
    ).length;
    cost += invokeRoleResources / all.filter((m) => m.props['Integration']?.['Credentials']?.['Fn::GetAtt']?.[0] === invokeRole).length;
    cost += Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Permission' && referenced(r, fnId)).length;
    costs.set(route.operationId, cost);
  }
  return costs;
};

describe('stack size', () => {
  for (const [variant, file] of [
    ['default', undefined],
    ['private (deploy/config.private.example.json: VPC, endpoints, OIDC)', 'deploy/config.private.example.json'],
  ] as const) {
    it(`${variant}: stays under ${BUDGET} resources (CloudFormation allows ${CLOUDFORMATION_LIMIT})`, () => {
      const { resources } = synth(file);
      expect(Object.keys(resources).length).toBeLessThan(BUDGET);
    });
  }

  it(`costs at most ${ROUTE_COST} resources per live route on average, shares of the shared resources included`, () => {
    const synthesized = synth();
    const costs = routeCosts(synthesized);
    const average = [...costs.values()].reduce((a, b) => a + b, 0) / costs.size;
    expect(average).toBeLessThanOrEqual(ROUTE_COST);
    // No route pays for alarms, roles or permissions of its own: even one with new needs on a new path stays near it.
    for (const [op, cost] of costs) expect(cost, op).toBeLessThanOrEqual(ROUTE_COST + 3);
  });

  it('gives a live route no resource of its own but its function, its log group and its method', () => {
    const { stack, resources } = synth();
    for (const route of liveRoutes) {
      const own = resourcesUnder(stack, stack.functions[route.operationId]!).map((id) => resources[id]!.Type).sort();
      expect(own, route.operationId).toEqual(['AWS::Lambda::Function', 'AWS::Logs::LogGroup']);
    }
    // API Gateway calls the route functions with an invoke role: the authorizer's is the only permission.
    const permissions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Permission');
    expect(permissions).toHaveLength(1);
    expect(JSON.stringify(permissions[0])).toContain(stack.getLogicalId(stack.functions['authorizer']!.function.node.defaultChild as CfnElement));
  });

  it('lets API Gateway invoke exactly the route functions, through roles whose policies stay under IAM’s 10,240 characters', () => {
    const { stack, template, resources } = synth();
    const live = methods(template).filter((m) => m.props['Integration']?.['Type'] === 'AWS_PROXY');
    expect(live).toHaveLength(liveRoutes.length);
    const invokeRoles = new Set(live.map((m) => m.props['Integration']['Credentials']['Fn::GetAtt'][0] as string));
    expect(invokeRoles.size).toBe(Math.ceil(liveRoutes.length / FUNCTIONS_PER_INVOKE_ROLE));
    const invocable: unknown[] = [];
    for (const roleId of invokeRoles) {
      expect(resources[roleId]!.Properties['AssumeRolePolicyDocument']['Statement']).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } },
      ]);
      const statements = Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(`"${roleId}"`))
        .flatMap((p) => p.Properties['PolicyDocument']['Statement']);
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatchObject({ Action: 'lambda:InvokeFunction', Effect: 'Allow' });
      invocable.push(...[statements[0].Resource].flat());
    }
    const arnOf = (op: string) => stack.resolve(stack.functions[op]!.function.functionArn);
    expect(invocable).toEqual(expect.arrayContaining(liveRoutes.map((r) => arnOf(r.operationId))));
    expect(invocable).toHaveLength(liveRoutes.length);
    // Worst case: a 64-character function name in the longest partition and region names.
    const arn = `arn:aws-iso-b:lambda:ap-southeast-3:123456789012:function:${'x'.repeat(64)}`;
    const policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: Array.from({ length: FUNCTIONS_PER_INVOKE_ROLE }, () => arn) }],
    });
    expect(policy.length).toBeLessThan(10_240);
  });
});

describe('FunctionRoles', () => {
  const setup = () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Roles');
    const table = new TableV2(stack, 'Items', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
    const fn = (id: string, permissions = [tablePermission(table, 'read')]) => new ServiceFunction(stack, id, { handler: 'health/handlers/status', description: id, permissions });
    return { stack, table, a: fn('A'), b: fn('B'), writer: fn('Writer', [tablePermission(table, 'write')]), bare: fn('Bare', []) };
  };

  it('gives functions with the same needs one role, and functions with other needs another', () => {
    const { stack, a, b, writer, bare } = setup();
    expect(a.function.role).toBe(b.function.role);
    expect(new Set([a, writer, bare].map((f) => f.function.role)).size).toBe(3);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::IAM::Role', 3);
    const roles = FunctionRoles.of(stack).roles;
    expect(roles.find((r) => r.role === a.function.role)!.users).toEqual(['Roles/A', 'Roles/B']);
  });

  it('fails the synth when a function sharing a role is granted more than the role’s needs afterwards', () => {
    const { stack, table, a } = setup();
    table.grantWriteData(a.function);
    expect(() => Template.fromStack(stack)).toThrow(/shared by Roles\/A, Roles\/B\) was granted more than the needs it was made for: .*dynamodb:PutItem/);
  });

  it('accepts a grant on a function that repeats one its needs made', () => {
    const { stack, table, a } = setup();
    table.grantReadData(a.function);
    expect(() => Template.fromStack(stack)).not.toThrow();
  });
});
