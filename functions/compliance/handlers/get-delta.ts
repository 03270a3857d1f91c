/**
 * GET /configuration_manager/compliance_reports/batches/{batchId}/delta: a plan batch's delta and
 * a page of its rows as JSON, or every row (of the class asked) as streamed CSV.
 */
import { getComplianceBatchDelta as validate } from '../../generated/validators.js';
import { attachmentName, csvExportAsked, csvResponse } from '../../platform/csv.js';
import { json } from '../../runtime/http.js';
import { streamingHttpHandler } from '../../runtime/streaming-http.js';
import { DELTA_COLUMNS } from '../history-columns.js';
import type { DeltaChange } from '../history-model.js';
import { exportDelta, HISTORY_PAGE_LIMITS, readDelta } from '../history-read.js';
import { createHistoryStore } from '../history-store.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();
const history = createHistoryStore(store);

export const handler = streamingHttpHandler({ operation: 'getComplianceBatchDelta', validate }, async (event) => {
  const { batchId } = event.pathParameters as { batchId: string };
  const { change, limit, cursor } = (event.queryStringParameters ?? {}) as { change?: DeltaChange; limit?: string; cursor?: string };
  if (csvExportAsked(event)) {
    const name = attachmentName([batchId, ...(change ? [change] : []), 'delta']);
    return csvResponse(DELTA_COLUMNS, await exportDelta(store, history, batchId, change), name);
  }
  const answer = await readDelta(store, history, batchId, {
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.delta.default : Number(limit),
    ...(change ? { change } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, answer);
});
