/** GET /configuration_manager/compliance_reports/{reportId}: one device's report. */
import { getComplianceReport as validate } from '../../generated/validators.js';
import { documentClient } from '../../platform/dynamo.js';
import { requiredEnv } from '../../platform/env.js';
import { httpHandler, json } from '../../runtime/http.js';
import { readReport } from '../read.js';
import { ComplianceStore } from '../store.js';

const store = new ComplianceStore(documentClient, requiredEnv('COMPLIANCE_TABLE'));

export const handler = httpHandler({ operation: 'getComplianceReport', validate }, async (event) => {
  const { reportId } = event.pathParameters as { reportId: string };
  return json(200, await readReport(store, reportId));
});
