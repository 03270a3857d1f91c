/** GET /configuration_manager/compliance_plans: a page of plans, `{ items, next? }`. */
import { listCompliancePlans as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { listPlans } from '../service.js';
import { planDeps } from './deps.js';

export const handler = httpHandler({ operation: 'listCompliancePlans', validate }, async (event) =>
  json(200, await listPlans((event.queryStringParameters ?? {}) as { limit?: string; cursor?: string }, planDeps())),
);
