/**
 * The authorizer's configuration, from the environment the stack sets (see
 * `infra/constructs/auth.ts`), read once at module load and checked there.
 */
import { optionalEnv, requiredEnv } from '../platform/env.js';
import { checkJwksUrl } from './jwks.js';

export interface AuthorizerConfig {
  /** The exact `iss` every token must carry. */
  readonly issuer: string;
  /** The `aud` every token must carry (Cognito: the app client id; ID tokens carry it). */
  readonly audience: string;
  /** Where the issuer publishes its public keys: https, or http on loopback. */
  readonly jwksUrl: string;
  /** The claim holding the caller's roles as an array of names. */
  readonly rolesClaim: string;
}

/** Reads `JWT_ISSUER`, `JWT_AUDIENCE`, `JWKS_URL` (required) and `ROLES_CLAIM` (default `cognito:groups`). */
export const readAuthorizerConfig = (): AuthorizerConfig => ({
  issuer: requiredEnv('JWT_ISSUER'),
  audience: requiredEnv('JWT_AUDIENCE'),
  jwksUrl: checkJwksUrl(requiredEnv('JWKS_URL')).href,
  rolesClaim: optionalEnv('ROLES_CLAIM', 'cognito:groups'),
});
