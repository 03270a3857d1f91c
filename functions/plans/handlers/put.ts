/** PUT /configuration_manager/compliance_plans/{planId} (admin): replaces the plan's fields, then writes its schedule. */
import { putCompliancePlan as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import type { PlanInput } from '../model.js';
import { replacePlan } from '../service.js';
import { callerOf, planDeps } from './deps.js';

export const handler = httpHandler<PlanInput>({ operation: 'putCompliancePlan', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  return json(200, await replacePlan(planId, event.body, callerOf(event), planDeps()));
});
