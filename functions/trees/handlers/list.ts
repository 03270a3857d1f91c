/** GET /configuration_manager/configs: tree summaries in name order, a page at a time. */
import { listTrees as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { PAGE_LIMIT, listTreeSummaries } from '../service.js';
import { createTreeStore } from '../store.js';

const store = createTreeStore();

export const handler = httpHandler({ operation: 'listTrees', validate }, async (event) => {
  // The validator ran first: limit, when present, is a decimal integer from 1 to 100.
  const { limit, cursor } = (event.queryStringParameters ?? {}) as { limit?: string; cursor?: string };
  const page = await listTreeSummaries(store, {
    limit: limit === undefined ? PAGE_LIMIT.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, page);
});
