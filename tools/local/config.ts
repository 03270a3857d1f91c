/**
 * The local stack's settings (`npm start`): where its data lives, what it tells the tools
 * beside it, and the AWS identity it reports. What the CDK app needs of them in local mode
 * (data directory, token issuer) is `infra/local-mode.ts`.
 */
import path from 'node:path';
import { LOCAL_DIR } from '../../infra/local-mode.js';

export { LOCAL_AUDIENCE, LOCAL_DIR, LOCAL_ISSUER, localJwksUrl, localPort, localStackProps } from '../../infra/local-mode.js';

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
