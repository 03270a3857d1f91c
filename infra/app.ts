/**
 * The CDK app. `cdk synth` needs no AWS account: no lookups; the environment is the config's
 * `landingZone` (account and region, refused when the CLI's credentials are for another), or
 * left agnostic. Two stacks per deployment (infra/stack.ts): `<stackName>` (tables, users, secrets)
 * and `<stackName>Api`, which depends on it; `npm run deploy` deploys both. A deployment is configured by one file, `-c config=<file>` (see
 * docs/deployment.md); local mode (`npm start`) by `-c local=true` alone.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { staleRouteIndex } from './build/route-index.js';
import { DeployConfigError, environmentMismatch, loadDeployConfig, RETIRED_CONTEXT_KEYS } from './config.js';
import { localStackProps } from './local-mode.js';
import { addNagSuppressions } from './nag.js';
import { NetconfigService } from './stack.js';

const app = new App();
const local = [true, 'true'].includes(app.node.tryGetContext('local'));
const configFile: unknown = app.node.tryGetContext('config');

const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

const retired = Object.keys(RETIRED_CONTEXT_KEYS).filter((key) => app.node.tryGetContext(key) !== undefined);
if (retired.length) {
  fail(
    `Settings are read from the config file only (a -c setting applied to one deploy, and the next one reverted it):\n` +
      retired.map((key) => `  -c ${key}: set ${RETIRED_CONTEXT_KEYS[key]} in the config file`).join('\n'),
  );
}

const stale = staleRouteIndex();
if (stale) fail(`${stale}: the authorizer reads its roles from it. Run npm run generate, then synth again.`);

const service = (() => {
  if (local) {
    if (configFile !== undefined) fail('-c local=true takes no config file: local mode configures itself (infra/local-mode.ts)');
    return new NetconfigService(app, 'Netconfig', { description: 'Network configuration management service (local mode)', ...localStackProps() });
  }
  if (typeof configFile !== 'string' || configFile === '') {
    return fail(
      'No deployment configuration: run with -c config=<file>, e.g. npm run deploy -- -c config=deploy/prod.json (start from deploy/config.example.json; docs/deployment.md lists every key)',
    );
  }
  try {
    const { stackName, ...settings } = loadDeployConfig(configFile);
    const mismatch = environmentMismatch(settings.landingZone, { account: process.env['CDK_DEFAULT_ACCOUNT'], region: process.env['CDK_DEFAULT_REGION'] });
    if (mismatch) fail(`${configFile}: ${mismatch}`);
    return new NetconfigService(app, stackName, { description: 'Network configuration management service', settings });
  } catch (error) {
    if (error instanceof DeployConfigError) return fail(error.message);
    throw error;
  }
})();
addNagSuppressions(service);
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
