/**
 * The authorizer's configuration, from the environment the stack sets (see
 * `infra/constructs/auth.ts`), read once at module load and checked there.
 */
import { optionalEnv, requiredEnv } from '../platform/env.js';
import { checkJwksUrl } from './jwks.js';
import { parseUsageKeys, type UsageKeys } from './usage.js';

export interface AuthorizerConfig {
  /** The exact `iss` every token must carry. */
  readonly issuer: string;
  /** The `aud` every token must carry (Cognito: the app client id; ID tokens carry it). */
  readonly audience: string;
  /** Where the issuer publishes its public keys: https, or http on loopback. */
  readonly jwksUrl: string;
  /** The claim holding the caller's roles as an array of names. */
  readonly rolesClaim: string;
  /** The usage plans of the relay, when the deployment has them (`usage.ts`). */
  readonly usage?: UsageKeys;
}

/**
 * Reads `JWT_ISSUER`, `JWT_AUDIENCE`, `JWKS_URL` (required), `ROLES_CLAIM` (default
 * `cognito:groups`) and `USAGE_PLAN_KEYS` (optional: the relay's usage plans).
 */
export const readAuthorizerConfig = (): AuthorizerConfig => {
  const usage = optionalEnv('USAGE_PLAN_KEYS', '');
  return {
    issuer: requiredEnv('JWT_ISSUER'),
    audience: requiredEnv('JWT_AUDIENCE'),
    jwksUrl: checkJwksUrl(requiredEnv('JWKS_URL')).href,
    rolesClaim: optionalEnv('ROLES_CLAIM', 'cognito:groups'),
    ...(usage ? { usage: parseUsageKeys(usage) } : {}),
  };
};
