/**
 * `GET /health/adapters/{name}` (admin, apiread): whether this adapter's orchestrator
 * answers. 200 when it does; 503 (problem+json carrying the same health fields) when it
 * does not, so that a monitor can watch one orchestrator by status code; 404 for no adapter.
 */
import { adapterNameFromPath } from '../../adapters/validate.js';
import { getAdapterHealth as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { adapterHealth } from '../adapter-health.js';
import { NO_STORE } from '../about.js';
import { adapterHealthDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'getAdapterHealth', validate }, async (event) =>
  json(200, await adapterHealth(adapterHealthDeps, adapterNameFromPath(event.pathParameters?.['name'])), NO_STORE),
);
