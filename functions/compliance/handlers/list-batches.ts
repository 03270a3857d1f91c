/** GET /configuration_manager/compliance_reports/batches: a page of batches, newest first. */
import { listComplianceBatches as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { HISTORY_PAGE_LIMITS, listBatches, queryTime } from '../history-read.js';
import { createHistoryStore, type BatchFilter } from '../history-store.js';
import { createComplianceStore } from '../store.js';

const history = createHistoryStore(createComplianceStore());

export const handler = httpHandler({ operation: 'listComplianceBatches', validate }, async (event) => {
  // The validator ran first: every parameter is known and well formed.
  const { limit, cursor, from, to, ...filters } = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
  const filter: BatchFilter = {
    ...(filters as Omit<BatchFilter, 'from' | 'to'>),
    ...(from ? { from: queryTime(from, 'from')! } : {}),
    ...(to ? { to: queryTime(to, 'to')! } : {}),
  };
  const page = await listBatches(history, filter, {
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.batches.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, page);
});
