/**
 * CloudFormation takes at most 500 resources per stack. The service has one function per live
 * route, so its size grows with the route table: these tests fail when a live route costs more
 * than it should (a resource of its own beyond its function, log group and method, or a larger
 * share of the shared ones), so that no route can silently bring a stack near the limit. The
 * budget of each stack (450, with today's routes and with 150) is test/infra/stack-split.test.ts;
 * docs/deployment.md ("Stack size") has the numbers.
 */
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import { FunctionRoles, ServiceFunction, tablePermission } from '../../infra/constructs/service-function.js';
import { FUNCTIONS_PER_INVOKE_ROLE, type NetconfigService } from '../../infra/stack.js';
import { methods, resourcePaths, type Resources } from './api-template.js';
import { logicalIdOf, NO_BUNDLING, synthService } from './service-template.js';

/** What a part (nested stack) has once, whatever its routes: an execution role and an invoke role, each with its policy, and two function alarms. */
const PART_COST = 6;
/** Average resources per live route: its own (function, log group, method) plus its share of what it shares (5.2 measured with 36 routes). */
const ROUTE_COST = 5.5;

/** The service's stacks read as one template (service-template.ts). */
const synth = () => {
  const { service, template } = synthService();
  return { stack: service, template, resources: template.toJSON().Resources as Resources };
};

/** The logical ids (in the service's template) of the CloudFormation resources under a construct. */
const resourcesUnder = (_service: NetconfigService, construct: { node: { findAll(): readonly unknown[] } }): string[] =>
  construct.node
    .findAll()
    .filter((c): c is CfnResource => c instanceof CfnResource)
    .map((c) => logicalIdOf(c));

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
  // Execution roles are made per part (nested stack).
  const roles = Object.values(stack.api.parts).flatMap((part) => FunctionRoles.of(part).roles);
  const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  const fnIds = Object.keys(stack.functions).map((op) => logicalIdOf(stack.functions[op]!.function));
  const referenced = (r: unknown, id: string) => JSON.stringify(r).includes(`"${id}"`);
  for (const route of liveRoutes) {
    const fn = stack.functions[route.operationId]!;
    const fnId = logicalIdOf(fn.function);
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
  it(`costs at most ${ROUTE_COST} resources per live route on average, shares of the shared resources included`, () => {
    const synthesized = synth();
    const costs = routeCosts(synthesized);
    const average = [...costs.values()].reduce((a, b) => a + b, 0) / costs.size;
    expect(average).toBeLessThanOrEqual(ROUTE_COST);
    // No route pays for alarms, roles or permissions of its own: even one with new needs on a new
    // path stays near it. But the only route of a part (the relay) pays what a part has once:
    // its execution role and invoke role with their policies, its errors and throttles alarms.
    const alone = new Set(Object.values(synthesized.stack.api.parts).flatMap((part) => (part.methods.length === 1 ? Object.keys(part.functions) : [])));
    expect([...alone]).toEqual(['relayRestAction']);
    for (const [op, cost] of costs) expect(cost, op).toBeLessThanOrEqual(ROUTE_COST + 3 + (alone.has(op) ? PART_COST : 0));
  });

  it('gives a live route no resource of its own but its function, its log group and its method', () => {
    const { stack, resources } = synth();
    for (const route of liveRoutes) {
      const own = resourcesUnder(stack, stack.functions[route.operationId]!)
        .map((id) => resources[id]!.Type)
        .sort();
      expect(own, route.operationId).toEqual(['AWS::Lambda::Function', 'AWS::Logs::LogGroup']);
    }
    // API Gateway calls the route functions with an invoke role: the authorizer's is the only permission.
    const permissions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Permission');
    expect(permissions).toHaveLength(1);
    expect(JSON.stringify(permissions[0])).toContain(logicalIdOf(stack.functions['authorizer']!.function));
  });

  it('lets API Gateway invoke exactly the route functions, through roles whose policies stay under IAM’s 10,240 characters', () => {
    const { stack, template, resources } = synth();
    const live = methods(template).filter((m) => m.props['Integration']?.['Type'] === 'AWS_PROXY');
    expect(live).toHaveLength(liveRoutes.length);
    const invokeRoles = new Set(live.map((m) => m.props['Integration']['Credentials']['Fn::GetAtt'][0] as string));
    // Invoke roles are made per part: one per FUNCTIONS_PER_INVOKE_ROLE of its methods.
    expect(invokeRoles.size).toBe(Object.values(stack.api.parts).reduce((n, part) => n + Math.ceil(part.methods.length / FUNCTIONS_PER_INVOKE_ROLE), 0));
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
    const arnOf = (op: string) => ({ 'Fn::GetAtt': [logicalIdOf(stack.functions[op]!.function), 'Arn'] });
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
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Roles');
    const table = new TableV2(stack, 'Items', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
    const fn = (id: string, permissions = [tablePermission(table, 'read')]) =>
      new ServiceFunction(stack, id, { handler: 'health/handlers/status', description: id, permissions });
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

  it('accepts the statements CDK merged in place (minimizePolicies, as cdk.json sets it)', () => {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Merged');
    const tables = ['One', 'Two'].map((id) => new TableV2(stack, id, { partitionKey: { name: 'pk', type: AttributeType.STRING } }));
    const fn = new ServiceFunction(stack, 'A', {
      handler: 'health/handlers/status',
      description: 'A',
      permissions: tables.map((t) => tablePermission(t, 'read')),
    });
    // Resolved before the synth validates (cdk-nag does so): the two reads become one statement.
    const policy = fn.function.role!.node.findChild('DefaultPolicy') as unknown as { document: unknown };
    const merged = stack.resolve(policy.document) as { Statement: unknown[] };
    expect(merged.Statement.length).toBeLessThan(3);
    expect(() => Template.fromStack(stack)).not.toThrow();
  });

  it('accepts a grant on a function that repeats one its needs made', () => {
    const { stack, table, a } = setup();
    table.grantReadData(a.function);
    expect(() => Template.fromStack(stack)).not.toThrow();
  });
});
