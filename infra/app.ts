/**
 * The CDK app. `cdk synth` needs no AWS account: no lookups, the environment is left
 * agnostic. Context (`-c key=value`) configures it; see docs/deployment.md.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { NetconfigStack } from './stack.js';
import { addNagSuppressions } from './nag.js';
import { localStackProps } from './local/config.js';

const app = new App();
const ctx = (key: string): string | undefined => app.node.tryGetContext(key);
const local = ctx('local') === 'true' || ctx('local') === (true as unknown as string);

const stack = new NetconfigStack(app, ctx('stackName') ?? 'Netconfig', {
  description: 'Network configuration management service',
  ...(local
    ? localStackProps()
    : {
        auth: {
          ...(ctx('issuer') ? { issuer: ctx('issuer') } : {}),
          ...(ctx('audience') ? { audience: ctx('audience') } : {}),
          ...(ctx('jwksUrl') ? { jwksUrl: ctx('jwksUrl') } : {}),
          ...(ctx('rolesClaim') ? { rolesClaim: ctx('rolesClaim') } : {}),
        },
      }),
  ...(ctx('logLevel') ? { logLevel: ctx('logLevel') } : {}),
});
addNagSuppressions(stack);
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
