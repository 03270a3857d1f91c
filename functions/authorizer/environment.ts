/**
 * The authorizer's configuration, from the environment the stack sets (see
 * `infra/constructs/auth.ts`), read once at module load and checked there.
 */
import type { Jwks } from 'aws-jwt-verify/jwk';
import { bundledFileFromEnv, optionalEnv, requiredEnv } from '../platform/env.js';
import { checkJwksUrl, parseJwks } from './jwks.js';
import { parseUsageKeys, type UsageKeys } from './usage.js';

export interface AuthorizerConfig {
  /** The exact `iss` every token must carry. */
  readonly issuer: string;
  /**
   * The `aud` values a token may carry, one of them at least (Cognito: the app clients' ids, the
   * API's and the web console's; ID tokens carry it). `JWT_AUDIENCE` lists them comma-separated.
   */
  readonly audience: readonly string[];
  /** Where the issuer publishes its public keys: https, or http on loopback; with pinned keys, only their name in the cache. */
  readonly jwksUrl: string;
  /** The claim holding the caller's roles as an array of names. */
  readonly rolesClaim: string;
  /** Keys pinned in the deployment: verified with instead of fetching from `jwksUrl`. */
  readonly pinnedJwks?: Jwks;
  /** The usage plans of the relay, when the deployment has them (`usage.ts`). */
  readonly usage?: UsageKeys;
}

/** Names the pinned JWKS file the stack ships in the bundle (`identity.jwks`). */
export const JWKS_FILE_VARIABLE = 'JWKS_FILE';

/** The cache key of pinned keys: never fetched, and no URL the library could reach. */
export const PINNED_JWKS_URI = 'urn:netconfig:pinned-jwks';

/**
 * The keys of the JWKS file that `JWKS_FILE` names, filtered as a fetched document is
 * (`parseJwks`), or undefined when the variable is unset.
 *
 * @throws a configuration error naming the file when it cannot be read, is not a JWKS, or
 *   holds no key the authorizer verifies with.
 */
export const pinnedJwksFromEnv = (env: NodeJS.ProcessEnv = process.env): Jwks | undefined => {
  const file = bundledFileFromEnv(JWKS_FILE_VARIABLE, env);
  if (file === undefined) return undefined;
  const refused = (why: string): Error => new Error(`configuration error: ${JWKS_FILE_VARIABLE} names ${file}, which ${why}`);
  let body: Buffer;
  try {
    body = process.getBuiltinModule('node:fs').readFileSync(file);
  } catch (error) {
    throw refused(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let jwks: Jwks;
  try {
    jwks = parseJwks(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer);
  } catch (error) {
    throw refused(`is not usable (${(error as Error).message})`);
  }
  if (jwks.keys.length === 0) throw refused('holds no key the authorizer verifies with');
  return jwks;
};

/** The comma-separated audiences of `JWT_AUDIENCE`, blanks dropped; none at all is a configuration error. */
const audiencesOf = (value: string): string[] => {
  const audiences = value
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  if (audiences.length === 0) throw new Error('configuration error: JWT_AUDIENCE names no audience');
  return audiences;
};

/**
 * Reads `JWT_ISSUER`, `JWT_AUDIENCE`, `ROLES_CLAIM` (default `cognito:groups`), where the keys
 * come from: `JWKS_FILE` (pinned keys) or `JWKS_URL`, exactly one of them, and `USAGE_PLAN_KEYS`
 * (optional: the relay's usage plans).
 */
export const readAuthorizerConfig = (env: NodeJS.ProcessEnv = process.env): AuthorizerConfig => {
  const pinnedJwks = pinnedJwksFromEnv(env);
  const usage = optionalEnv('USAGE_PLAN_KEYS', '', env);
  if (pinnedJwks && env['JWKS_URL'])
    throw new Error(`configuration error: JWKS_URL and ${JWKS_FILE_VARIABLE} exclude each other (pinned keys are never fetched)`);
  return {
    issuer: requiredEnv('JWT_ISSUER', env),
    audience: audiencesOf(requiredEnv('JWT_AUDIENCE', env)),
    jwksUrl: pinnedJwks ? PINNED_JWKS_URI : checkJwksUrl(requiredEnv('JWKS_URL', env)).href,
    rolesClaim: optionalEnv('ROLES_CLAIM', 'cognito:groups', env),
    ...(pinnedJwks ? { pinnedJwks } : {}),
    ...(usage ? { usage: parseUsageKeys(usage) } : {}),
  };
};
