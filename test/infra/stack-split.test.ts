/**
 * CloudFormation takes at most 500 resources, 200 parameters and 200 outputs per template.
 * Every stack of the service (the stateful stack, the API stack, each application's nested
 * stack) stays under a budget of 450 resources with today's routes and with 150 live routes
 * (synthetic ones added, a tenth of them waiting on an orchestrator), in the default and the
 * worst deploy config. docs/deployment.md ("Stack size") has the numbers.
 */
import { App, NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDeployConfig } from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { removedRoutes } from '../../functions/api/removed.js';
import { NetconfigService, pathOwners } from '../../infra/stack.js';
import { resourcePaths, type Resources } from './api-template.js';
import { NO_BUNDLING } from './service-template.js';
import { withSyntheticRoutes } from './synthetic-routes.js';

const BUDGET = 450;
const TEMPLATE_LIMIT = 200;

const sizes = (file: string | undefined, routes?: number) => {
  const app = new App({ context: NO_BUNDLING });
  const config = file ? loadDeployConfig(path.join(PROJECT_ROOT, file)) : undefined;
  const { stackName = 'Netconfig', ...settings } = config ?? {};
  const service = new NetconfigService(app, stackName, {
    ...(config ? { settings: settings as never } : {}),
    ...(routes ? { routes: withSyntheticRoutes(routes) } : {}),
  });
  return service.stacks.map((stack) => {
    const t = Template.fromStack(stack).toJSON();
    return {
      name: stack instanceof NestedStack ? stack.node.path : stack.stackName,
      resources: Object.keys(t.Resources ?? {}).length,
      parameters: Object.keys(t.Parameters ?? {}).length,
      outputs: Object.keys(t.Outputs ?? {}).length,
    };
  });
};

describe('stack split', () => {
  for (const [variant, file] of [
    ['default', undefined],
    ['private (deploy/config.private.example.json: VPC, endpoints, OIDC, CA bundle)', 'deploy/config.private.example.json'],
  ] as const) {
    for (const routes of [undefined, 150]) {
      it(`${variant}${routes ? `, ${routes} live routes` : ''}: every stack under ${BUDGET} resources, ${TEMPLATE_LIMIT} parameters and ${TEMPLATE_LIMIT} outputs`, () => {
        const all = sizes(file, routes);
        for (const s of all) {
          expect(s.resources, s.name).toBeLessThan(BUDGET);
          expect(s.parameters, s.name).toBeLessThan(TEMPLATE_LIMIT);
          expect(s.outputs, s.name).toBeLessThan(TEMPLATE_LIMIT);
        }
      });
    }
  }
});

/**
 * The path subtrees each part makes (the rest of the paths are the API stack's). A subtree whose
 * owner changes cannot deploy in one step: the new owner's resource would be created while the
 * old owner's still holds the path, which API Gateway refuses. A new subtree added here is
 * harmless; one that moved needs the two deploys of docs/decisions.md ("Stack split").
 */
const SUBTREES = {
  '/adapters': 'Adapters',
  '/application': 'Runtime',
  '/applications': 'Runtime',
  '/configuration_manager': 'ConfigurationManager',
  '/console': 'Console',
  '/health/adapters': 'Health',
  '/health/applications': 'Health',
  '/health/server': 'Health',
  '/health/system': 'Health',
  '/orch_manager': 'OrchManager',
  '/profiles': 'Runtime',
  '/schema/adapters': 'Adapters',
  '/schema/applications': 'Runtime',
  '/schema/profiles': 'Runtime',
  '/status': 'Health',
};

describe('path resources', () => {
  it('are made by the part whose routes alone use them, the shared trunk by the API stack; the subtrees stay where they were deployed', () => {
    const owners = pathOwners(liveRoutes, removedRoutes);
    const parent = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';
    const subtrees = Object.fromEntries([...owners].filter(([p, owner]) => owner && owners.get(parent(p)) !== owner).sort(([a], [b]) => a.localeCompare(b)));
    expect(subtrees).toEqual(SUBTREES);
    // The trunk: shared by two parts, or by a part and a removed route.
    expect(owners.get('/health')).toBeUndefined();
    expect(owners.get('/schema')).toBeUndefined();

    const app = new App({ context: NO_BUNDLING });
    const service = new NetconfigService(app, 'Netconfig');
    const parts = Object.fromEntries(
      Object.entries(service.api.parts).map(([name, part]) => [
        name,
        Template.fromStack(part).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>,
      ]),
    );
    const api = Template.fromStack(service.api).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
    const pathParts = (resources: typeof api) =>
      Object.values(resources)
        .filter((r) => r.Type === 'AWS::ApiGateway::Resource')
        .map((r) => r.Properties['PathPart'] as string);
    // Each subtree's top segment is made in its part, and nothing at or under it in the API stack.
    const apiPaths = [...resourcePaths(api as Resources).values()];
    for (const [path, owner] of Object.entries(SUBTREES)) {
      expect(pathParts(parts[owner]!), path).toContain(path.slice(path.lastIndexOf('/') + 1));
      expect(
        apiPaths.filter((p) => p === path || p.startsWith(`${path}/`)),
        path,
      ).toEqual([]);
    }
    expect(apiPaths).toContain('/health');
    // Methods live in the parts, except the removed routes' (Mock integrations) in the API stack.
    const apiMethods = Object.values(api).filter((r) => r.Type === 'AWS::ApiGateway::Method');
    expect(apiMethods.length).toBe(removedRoutes.length);
    for (const m of apiMethods) expect(m.Properties['Integration']['Type']).toBe('MOCK');
  });
});
