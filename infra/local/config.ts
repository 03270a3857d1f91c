/**
 * The stack's configuration in local mode (`npm start`): everything lives under `.local/`,
 * the token issuer is the local one, and its JWKS is served by the local gateway.
 */
import path from 'node:path';
import { PROJECT_ROOT } from '../paths.js';
import type { NetconfigStackProps } from '../stack.js';

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
  /** Where this run keeps its data (`.local/` unless started with another directory). */
  readonly dataDir?: string;
  /** The region the functions and the SDK clients use. */
  readonly region?: string;
  /** The DynamoDB Local process (its watchdog shell, whose process group holds the JVM). */
  readonly dynamodbPid?: number;
}

/**
 * The AWS identity the local stack reports in ARNs, events and SDK configuration. The region
 * matches the test setup's; the account is AWS's documentation example; nothing is sent to AWS.
 */
export const LOCAL_REGION = 'eu-west-1';
export const LOCAL_ACCOUNT = '123456789012';
/** The REST API id in method ARNs and `requestContext.apiId` (API Gateway ids are 10 characters). */
export const LOCAL_API_ID = 'localapi01';
/** Credentials the functions get: DynamoDB Local accepts any, and real ones must never leak in. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

