/**
 * `GET /health/adapters` (admin, apiread): whether each adapter's orchestrator answers a
 * light RESTCONF call, with its latency; paged like `GET /adapters` (`limit` 1–20, default
 * 10; `cursor`). Always 200: the top-level `status` is `down` when any adapter of the page is.
 */
import { getAdaptersHealth as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { adaptersHealth } from '../adapter-health.js';
import { NO_STORE } from '../about.js';
import { adapterHealthDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'getAdaptersHealth', validate }, async (event) => {
  const query = event.queryStringParameters ?? {};
  return json(
    200,
    await adaptersHealth(adapterHealthDeps, { ...(query['limit'] ? { limit: query['limit'] } : {}), ...(query['cursor'] ? { cursor: query['cursor'] } : {}) }),
    NO_STORE,
  );
});
