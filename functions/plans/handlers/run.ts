/**
 * POST /configuration_manager/compliance_plans/{planId}/run (admin): starts a batch of the plan;
 * 202 `{ batchId, status, total }` with the batch's path in `Location`. A run is naturally
 * idempotent (a second one while the first batch runs is 409 `plan-running`), so it takes no
 * Idempotency-Key.
 */
import { runCompliancePlan as validate } from '../../generated/validators.js';
import { httpHandler, json, locationOf } from '../../runtime/http.js';
import { InternalError } from '../../platform/problem.js';
import { runPlan } from '../service.js';
import { callerOf, planDeps } from './deps.js';

export const handler = httpHandler({ operation: 'runCompliancePlan', validate }, async (event) => {
  const { planId } = event.pathParameters as { planId: string };
  const { batch } = await runPlan(planId, { trigger: 'user', by: callerOf(event) }, planDeps());
  if (!batch) throw new InternalError('a user run of a plan ended without a batch and without a refusal');
  const path = `/configuration_manager/compliance_reports/batches/${batch.batchId}`;
  return json(202, batch, { Location: locationOf(path, event.requestContext?.path, `/configuration_manager/compliance_plans/${planId}/run`) });
});
