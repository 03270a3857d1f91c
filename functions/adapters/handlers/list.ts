/** GET /adapters: adapters sorted by name, `{ items, next? }`, paged by `limit` and `cursor`. */
import { listAdapters as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { listAdapters } from '../service.js';
import { createAdapterStore } from '../store.js';

const store = createAdapterStore();

export const handler = httpHandler({ operation: 'listAdapters', validate }, async (event) => {
  const query = event.queryStringParameters ?? {};
  return json(
    200,
    await listAdapters(store, { ...(query['limit'] ? { limit: query['limit'] } : {}), ...(query['cursor'] ? { cursor: query['cursor'] } : {}) }),
  );
});
