/** GET /configuration_manager/compliance_plans/{planId}: the plan, with `broken`, `lastRun` and `nextRunAt`. */
import { getCompliancePlan as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getPlan } from '../service.js';
import { planDeps } from './deps.js';

export const handler = httpHandler({ operation: 'getCompliancePlan', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  return json(200, await getPlan(planId, planDeps()));
});
