/** GET /configuration_manager/compliance_reports/batches/{batchId}: a batch's status and counts. */
import { getComplianceBatch as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { readBatch } from '../read.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();

export const handler = httpHandler({ operation: 'getComplianceBatch', validate }, async (event) => {
  const { batchId } = event.pathParameters as { batchId: string };
  return json(200, await readBatch(store, batchId));
});
