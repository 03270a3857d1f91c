/**
 * The stack's configuration in local mode (`cdk synth -c local=true`, which `npm start` runs):
 * everything lives under `.local/`, the token issuer is the local one, and its JWKS is served
 * by the local gateway (`tools/local/`).
 */
import path from 'node:path';
import { PROJECT_ROOT } from './paths.js';
import type { ConsoleConfig } from '../functions/console/model.js';
import type { NetconfigStackProps } from './stack.js';

/** Where local mode keeps its data: `.local/`, or `NETCONFIG_LOCAL_DIR` (for a second, separate local stack). */
export const LOCAL_DIR = process.env['NETCONFIG_LOCAL_DIR'] ? path.resolve(process.env['NETCONFIG_LOCAL_DIR']) : path.join(PROJECT_ROOT, '.local');
export const LOCAL_ISSUER = 'urn:netconfig:local-issuer';
export const LOCAL_AUDIENCE = 'netconfig-local';
export const localPort = (): number => Number(process.env['PORT'] ?? 3000);
export const localJwksUrl = (port = localPort()): string => `http://127.0.0.1:${port}/.well-known/jwks.json`;

export const localStackProps = (): Pick<NetconfigStackProps, 'local'> => ({
  local: {
    secretsFile: path.join(LOCAL_DIR, 'secrets.json'),
    auth: {
      issuer: LOCAL_ISSUER,
      audience: LOCAL_AUDIENCE,
      jwksUrl: localJwksUrl(),
      rolesClaim: 'roles',
    },
    console: localConsoleConfig(),
  },
});

/** The web console's sign-in in local mode: the local gateway's sign-in page and token endpoint (`tools/simulators/sign-in.ts`), the local audience as client id. */
export const localConsoleConfig = (port = localPort()): ConsoleConfig => ({
  authorizationEndpoint: `http://127.0.0.1:${port}/oauth2/authorize`,
  tokenEndpoint: `http://127.0.0.1:${port}/oauth2/token`,
  clientId: LOCAL_AUDIENCE,
  scopes: ['openid', 'email', 'profile'],
  rolesClaim: 'roles',
});

/**
 * Context key naming a directory of function bundles built ahead of the synth, all in one
 * esbuild run with the functions' own options (`tools/local/bundles.ts`): in local mode a
 * function whose bundle is there takes it as its code instead of running esbuild again, one
 * process per function. The bundles are byte for byte those `NodejsFunction` makes, so the
 * template is the same.
 */
export const LOCAL_BUNDLES_CONTEXT = 'localBundles';

/** Where the bundle of the handler module `trees/get` (under `functions/`) lies in a bundles directory. */
export const localBundleDir = (bundlesDir: string, handler: string): string => path.join(bundlesDir, handler.replaceAll('/', '__'));
