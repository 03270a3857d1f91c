/**
 * The authorizer's core: a REQUEST authorizer event and a token verifier in, an API Gateway
 * authorizer result out. Every refusal of the token itself is the one error API Gateway turns
 * into 401 (`Unauthorized`), whatever check failed; the reason goes to the log only.
 *
 * Lambda counts that thrown `Unauthorized` as a function error, so its `Errors` metric cannot
 * tell an expired token from a broken authorizer. The two are counted apart here:
 * `AuthorizerDenials` for refused tokens, `AuthorizerFailures` for requests the authorizer
 * could not decide (issuer keys unavailable, any unexpected exception; API Gateway answers
 * 500). The failure alarm watches the latter only.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import type { Logger } from '../platform/logger.js';
import { recordAuthorizerDenial, recordAuthorizerFailure } from '../platform/metrics.js';
import { allowedRoutes, policyFor } from './policy.js';
import { usageKeyFor, type UsageKeys } from './usage.js';
import { bearerToken, IssuerKeysUnavailable, TokenRejected, type VerifiedCaller } from './verify.js';

/** The exact message API Gateway maps to 401 for a Lambda authorizer. */
export const UNAUTHORIZED = 'Unauthorized';

/** The authorizer result as this service returns it: context values are flat strings. */
export interface RoleAuthorizerResult extends APIGatewayAuthorizerResult {
  readonly context: { readonly principal: string; readonly roles: string };
}

export interface AuthorizeDeps {
  readonly verify: (token: string) => Promise<VerifiedCaller>;
  readonly logger: Pick<Logger, 'debug' | 'info' | 'error'>;
  /** The relay's usage plans: each answer names the caller's plan key (`usageIdentifierKey`). */
  readonly usage?: UsageKeys;
}

/**
 * Verifies the bearer token of the event and returns the policy of the caller's roles over the
 * API and stage of the invoked method, and with usage plans the key of the caller's plan
 * (`usage.ts`). Throws `Error('Unauthorized')` for any unusable token
 * (→ 401); a token whose roles allow nothing gets an explicit Deny (→ 403). Any other error
 * (→ 500) is logged, counted as an authorizer failure and rethrown.
 */
export const authorize = async (event: APIGatewayRequestAuthorizerEvent, deps: AuthorizeDeps): Promise<RoleAuthorizerResult> => {
  try {
    return await decide(event, deps);
  } catch (err) {
    if (err instanceof TokenRejected) {
      deps.logger.info('bearer token rejected', { reason: err.reason });
      recordAuthorizerDenial(err.reason);
      throw new Error(UNAUTHORIZED);
    }
    if (err instanceof IssuerKeysUnavailable) {
      deps.logger.error('bearer token not verifiable: the issuer keys could not be fetched');
      recordAuthorizerFailure('issuer-keys-unavailable');
    } else {
      deps.logger.error('authorizer failed', { error: err });
      recordAuthorizerFailure('unexpected');
    }
    throw err;
  }
};

const decide = async (event: APIGatewayRequestAuthorizerEvent, deps: AuthorizeDeps): Promise<RoleAuthorizerResult> => {
  const caller = await deps.verify(bearerToken(event.headers, event.multiValueHeaders));
  const policyDocument = policyFor(caller.roles, event.methodArn);
  // Routes outside the roles are denied by API Gateway from the cached policy; a token with
  // no granted role at all is denied everything, and counted here.
  if (caller.roles.length === 0) recordAuthorizerDenial('no-granted-role');
  // Debug, not info: a line per accepted call would cost more than the verification itself.
  deps.logger.debug('bearer token accepted', {
    principal: caller.sub,
    roles: caller.roles.join(','),
    allowedRoutes: allowedRoutes(caller.roles).length,
  });
  return {
    principalId: caller.sub,
    policyDocument,
    context: { principal: caller.sub, roles: caller.roles.join(',') },
    // API Gateway caches the whole answer per token, so the plan key goes with the policy.
    ...(deps.usage ? { usageIdentifierKey: usageKeyFor(deps.usage, caller) } : {}),
  };
};
