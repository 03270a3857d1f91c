/**
 * GET /configuration_manager/compliance_reports/batches: a page of batches, newest first, as
 * JSON, or every batch the filters select as streamed CSV.
 */
import { listComplianceBatches as validate } from '../../generated/validators.js';
import { attachmentName, csvExportAsked, csvResponse } from '../../platform/csv.js';
import { json } from '../../runtime/http.js';
import { streamingHttpHandler } from '../../runtime/streaming-http.js';
import { BATCH_COLUMNS } from '../history-columns.js';
import { exportBatches, HISTORY_PAGE_LIMITS, listBatches, queryRange } from '../history-read.js';
import { createHistoryStore, type BatchFilter } from '../history-store.js';
import { createComplianceStore } from '../store.js';

const history = createHistoryStore(createComplianceStore());

export const handler = streamingHttpHandler({ operation: 'listComplianceBatches', validate }, async (event) => {
  // The validator ran first: every parameter is known and well formed.
  const { limit, cursor, from, to, format: _format, ...filters } = (event.queryStringParameters ?? {}) as Record<string, string | undefined>;
  const filter: BatchFilter = { ...(filters as Omit<BatchFilter, 'from' | 'to'>), ...queryRange({ from, to }) };
  if (csvExportAsked(event)) return csvResponse(BATCH_COLUMNS, exportBatches(history, filter), attachmentName(['batches']));
  const page = await listBatches(history, filter, {
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.batches.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, page);
});
