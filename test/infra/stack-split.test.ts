/**
 * CloudFormation takes at most 500 resources, 200 parameters and 200 outputs per template.
 * Every stack of the service (the stateful stack, the API stack, each application's nested
 * stack) stays under a budget of 450 resources with today's routes and with 150 live routes
 * (synthetic ones added), in the default and the worst deploy config. docs/deployment.md
 * ("Stack size") has the numbers.
 */
import { App, NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDeployConfig } from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import { NO_BUNDLING } from './service-template.js';
import { withSyntheticRoutes } from './synthetic-routes.js';

const BUDGET = 450;
const TEMPLATE_LIMIT = 200;

const sizes = (file: string | undefined, routes?: number) => {
  const app = new App({ context: NO_BUNDLING });
  const config = file ? loadDeployConfig(path.join(PROJECT_ROOT, file)) : undefined;
  const { stackName = 'Netconfig', ...settings } = config ?? {};
  const service = new NetconfigService(app, stackName, { ...(config ? { settings: settings as never } : {}), ...(routes ? { routes: withSyntheticRoutes(routes) } : {}) });
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
