/**
 * GET /configuration_manager/compliance_reports/batches/{batchId}/reports: a page of a batch's
 * reports as JSON, or every report (of the grade asked) as streamed CSV.
 */
import { listComplianceReports as validate } from '../../generated/validators.js';
import { csvExportAsked, csvResponse } from '../../platform/csv.js';
import { json } from '../../runtime/http.js';
import { streamingHttpHandler } from '../../runtime/streaming-http.js';
import type { Grade } from '../grading.js';
import { REPORT_PAGE_LIMIT, batchReportPages, listBatchReports } from '../read.js';
import { REPORT_COLUMNS } from '../report-columns.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();

export const handler = streamingHttpHandler({ operation: 'listComplianceReports', validate }, async (event) => {
  // The validator ran first: grade is one of the four, limit 1 to 200, cursor base64url, format json or csv.
  const { batchId } = event.pathParameters as { batchId: string };
  const { grade, limit, cursor } = (event.queryStringParameters ?? {}) as { grade?: Grade; limit?: string; cursor?: string };
  if (csvExportAsked(event)) {
    return csvResponse(REPORT_COLUMNS, await batchReportPages(store, batchId, grade), `${batchId}${grade ? `-${grade}` : ''}-reports.csv`);
  }
  const page = await listBatchReports(store, batchId, {
    limit: limit === undefined ? REPORT_PAGE_LIMIT.default : Number(limit),
    ...(grade ? { grade } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, page);
});
