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
import { EXAMPLE_CONFIG_FILE, loadDeployConfig } from '../../infra/config.js';
import { FunctionRoles, ServiceFunction, tablePermission } from '../../infra/constructs/service-function.js';
import { STAGE_NAME, type NetconfigService } from '../../infra/stack.js';
import { methods, resourcePaths, type Resources } from './api-template.js';
import { logicalIdOf, NO_BUNDLING, synthService } from './service-template.js';

/** What a part (nested stack) has once, whatever its routes: an execution role with its policy, and two function alarms. */
const PART_COST = 4;
/** Average resources per live route: its own (function, log group, permission, method) plus its share of what it shares (6.08 measured with 53 routes). */
const ROUTE_COST = 6.25;

/**
 * The service's stacks read as one template (service-template.ts), with the example config's
 * settings but no canary release: a canary is what two functions (relay and authorizer) cost once
 * per deployment, not a cost of a route; test/infra/guarded-state.test.ts covers it, and
 * test/infra/stack-split.test.ts's budgets include it.
 */
const synth = () => {
  const example = loadDeployConfig(EXAMPLE_CONFIG_FILE);
  const { service, template } = synthService('Netconfig', { settings: { ...example, deployment: { ...example.deployment, canary: 'off' } } });
  return { stack: service, template, resources: template.toJSON().Resources as Resources };
};

/** The logical ids (in the service's template) of the CloudFormation resources under a construct. */
/** `arn:<partition>:execute-api:<region>:<account>:<the REST API>` followed by `rest`, as CloudFormation joins it. */
const executeApiArn = (restApiId: string, ...rest: unknown[]) => ({
  'Fn::Join': [
    '',
    ['arn:', { Ref: 'AWS::Partition' }, ':execute-api:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':', { Ref: restApiId }, ...rest],
  ],
});

const resourcesUnder = (_service: NetconfigService, construct: { node: { findAll(): readonly unknown[] } }): string[] =>
  construct.node
    .findAll()
    .filter((c): c is CfnResource => c instanceof CfnResource)
    .map((c) => logicalIdOf(c));

/**
 * What each live route costs: 1 for each resource it owns, and for each resource it shares with
 * others, 1 divided by the number of users (an alarm over 10 functions costs each 0.1; a path
 * segment, each method at or below it; an execution role with its policy, each function that
 * assumes it); its permission for API Gateway is its own.
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
    cost += 1; // its method
    const under = (p: string) => (q: string) => q === p || q.startsWith(`${p}/`);
    for (const p of paths.values()) if (under(p)(route.path)) cost += 1 / all.filter((m) => under(p)(m.path)).length;
    const role = roles.find((r) => r.users.includes(fn.node.path))!;
    cost += resourcesUnder(stack, role.role).length / role.users.length;
    for (const alarm of alarms.filter((a) => referenced(a, fnId))) cost += 1 / fnIds.filter((id) => referenced(alarm, id)).length;
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
    // its execution role with its policy, its errors and throttles alarms.
    const alone = new Set(Object.values(synthesized.stack.api.parts).flatMap((part) => (part.methods.length === 1 ? Object.keys(part.functions) : [])));
    expect([...alone]).toEqual(['relayRestAction']);
    for (const [op, cost] of costs) expect(cost, op).toBeLessThanOrEqual(ROUTE_COST + 3 + (alone.has(op) ? PART_COST : 0));
  });

  it('gives a live route no resource of its own but its function, its log group, its permission for API Gateway and its method', () => {
    const { stack, resources } = synth();
    for (const route of liveRoutes) {
      const own = resourcesUnder(stack, stack.functions[route.operationId]!)
        .map((id) => resources[id]!.Type)
        .sort();
      expect(own, route.operationId).toEqual(['AWS::Lambda::Function', 'AWS::Lambda::Permission', 'AWS::Logs::LogGroup']);
    }
    // Besides the routes' own: the authorizer's and the compliance housekeeping's schedule.
    const permissions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Permission');
    const routeFunctions = new Set(liveRoutes.map((r) => logicalIdOf(stack.functions[r.operationId]!.function)));
    expect(
      permissions
        .map((p) => p.Properties['FunctionName']['Fn::GetAtt'][0])
        .filter((id) => !routeFunctions.has(id))
        .sort(),
    ).toEqual([logicalIdOf(stack.functions['authorizer']!.function), logicalIdOf(stack.functions['complianceHousekeeping']!.function)].sort());
    const authorizerPermission = permissions.find(
      (p) => p.Properties['FunctionName']['Fn::GetAtt'][0] === logicalIdOf(stack.functions['authorizer']!.function),
    );
    // For this API's authorizer only: no other API can call the authorizer.
    expect(authorizerPermission!.Properties['SourceArn']).toEqual(
      executeApiArn(logicalIdOf(stack.api.api), '/authorizers/', { Ref: logicalIdOf(stack.api.node.findChild('Auth').node.findChild('RoleAuthorizer')) }),
    );
  });

  it('lets API Gateway invoke each route function for its own method of this API only, in this account', () => {
    const { stack, template, resources } = synth();
    const live = methods(template).filter((m) => m.props['Integration']?.['Type'] === 'AWS_PROXY');
    expect(live).toHaveLength(liveRoutes.length);
    // No integration credentials: API Gateway calls under each function's resource policy.
    for (const m of live) expect(m.props['Integration']['Credentials'], `${m.method} ${m.path}`).toBeUndefined();
    const permissions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Permission');
    for (const route of liveRoutes) {
      const fnId = logicalIdOf(stack.functions[route.operationId]!.function);
      const own = permissions.filter((p) => p.Properties['FunctionName']['Fn::GetAtt']?.[0] === fnId);
      expect(own, route.operationId).toHaveLength(1);
      const { Action, Principal, SourceAccount, SourceArn } = own[0]!.Properties;
      expect({ Action, Principal, SourceAccount }, route.operationId).toEqual({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
        SourceAccount: { Ref: 'AWS::AccountId' },
      });
      // arn:<partition>:execute-api:<region>:<account>:<this API>/v1/<METHOD>/<path, parameters as *>
      const [, parts] = SourceArn['Fn::Join'];
      expect(parts.slice(0, 8), route.operationId).toEqual([
        'arn:',
        { Ref: 'AWS::Partition' },
        ':execute-api:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        ':',
        expect.anything(),
      ]);
      expect(JSON.stringify(parts[7])).toContain(logicalIdOf(stack.api.api));
      expect(parts.slice(8).join(''), route.operationId).toBe(`/${STAGE_NAME}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`);
    }
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
