/** POST /configuration_manager/compliance_plans (admin): creates a plan and its schedule; 201 with the plan's path in `Location`. */
import { createCompliancePlan as validate } from '../../generated/validators.js';
import { httpHandler, json, locationOf } from '../../runtime/http.js';
import type { PlanInput } from '../model.js';
import { createPlan } from '../service.js';
import { callerOf, planDeps } from './deps.js';

export const handler = httpHandler<PlanInput>({ operation: 'createCompliancePlan', validate }, async (event) => {
  const plan = await createPlan(event.body, callerOf(event), planDeps());
  const path = `/configuration_manager/compliance_plans/${plan.planId}`;
  return json(201, plan, { Location: locationOf(path, event.requestContext?.path, '/configuration_manager/compliance_plans') });
});
