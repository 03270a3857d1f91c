/** GET /configuration_manager/compliance_reports/batches/{batchId}/delta: a plan batch's delta and a page of its rows. */
import { getComplianceBatchDelta as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import type { DeltaChange } from '../history-model.js';
import { HISTORY_PAGE_LIMITS, readDelta } from '../history-read.js';
import { createHistoryStore } from '../history-store.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();
const history = createHistoryStore(store);

export const handler = httpHandler({ operation: 'getComplianceBatchDelta', validate }, async (event) => {
  const { batchId } = event.pathParameters as { batchId: string };
  const { change, limit, cursor } = (event.queryStringParameters ?? {}) as { change?: DeltaChange; limit?: string; cursor?: string };
  const answer = await readDelta(store, history, batchId, {
    limit: limit === undefined ? HISTORY_PAGE_LIMITS.delta.default : Number(limit),
    ...(change ? { change } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, answer);
});
