/**
 * Lambda REQUEST authorizer for every live route: verifies `Authorization: Bearer <JWT>`
 * against the issuer's JWKS and returns the policy of the caller's roles (see `../service.ts`).
 * Configuration and the JWKS cache live at module scope: one fetch per container.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { logger } from '../../platform/logger.js';
import { metrics } from '../../platform/metrics.js';
import { authorize, type RoleAuthorizerResult } from '../service.js';
import { readAuthorizerConfig } from '../environment.js';
import { createTokenVerifier } from '../verify.js';

const config = readAuthorizerConfig();
const verifier = createTokenVerifier(config);

/** The authorizer entry point. */
export const handler = async (event: APIGatewayRequestAuthorizerEvent): Promise<RoleAuthorizerResult> => {
  logger.setContext({ correlationId: event.requestContext?.requestId, operation: 'authorize' });
  metrics.setContext({ correlationId: event.requestContext?.requestId });
  return authorize(event, { verify: (token) => verifier.verify(token), logger, ...(config.usage ? { usage: config.usage } : {}) });
};
