/** GET /configuration_manager/compliance_reports/batches/{batchId}/reports: a page of a batch's reports. */
import { listComplianceReports as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import type { Grade } from '../grading.js';
import { REPORT_PAGE_LIMIT, listBatchReports } from '../read.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();

export const handler = httpHandler({ operation: 'listComplianceReports', validate }, async (event) => {
  // The validator ran first: grade is one of the four, limit 1 to 200, cursor base64url.
  const { batchId } = event.pathParameters as { batchId: string };
  const { grade, limit, cursor } = (event.queryStringParameters ?? {}) as { grade?: Grade; limit?: string; cursor?: string };
  const page = await listBatchReports(store, batchId, {
    limit: limit === undefined ? REPORT_PAGE_LIMIT.default : Number(limit),
    ...(grade ? { grade } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, page);
});
