/**
 * The stack's configuration in local mode (`npm start`): everything lives under `.local/`,
 * the token issuer is the local one, and its JWKS is served by the local gateway.
 */
import path from 'node:path';
import { PROJECT_ROOT } from '../constructs/service-function.js';
import type { NetconfigStackProps } from '../stack.js';

export const LOCAL_DIR = path.join(PROJECT_ROOT, '.local');
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
  },
});

/** What a running local stack tells the tools beside it (`npm run seed`, `npm run token`). */
export const LOCAL_STATE_FILE = path.join(LOCAL_DIR, 'state.json');
export interface LocalState {
  readonly baseUrl: string;
  readonly dynamodbEndpoint: string;
  /** Physical table names by table key. */
  readonly tables: Readonly<Record<string, string>>;
  readonly pid: number;
}
