/** GET /configuration_manager/compliance_reports/{reportId}: one device's report. */
import { getComplianceReport as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { readReport } from '../read.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();

export const handler = httpHandler({ operation: 'getComplianceReport', validate }, async (event) => {
  const { reportId } = event.pathParameters as { reportId: string };
  return json(200, await readReport(store, reportId));
});
