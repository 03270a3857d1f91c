/** DELETE /configuration_manager/compliance_plans/{planId} (admin): removes the plan's schedule, then the plan. */
import { deleteCompliancePlan as validate } from '../../generated/validators.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { deletePlan } from '../service.js';
import { callerOf, planDeps } from './deps.js';

export const handler = httpHandler({ operation: 'deleteCompliancePlan', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  await deletePlan(planId, callerOf(event), planDeps());
  return noContent();
});
