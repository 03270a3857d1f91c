/**
 * POST /configuration_manager/compliance_reports/batches/{batchId}/remediations (admin): starts
 * a dry-run or apply run on a completed batch (service.ts says which devices it takes) and
 * answers 202 with the run's path in `Location`. Honours `Idempotency-Key` like the other POSTs:
 * a retried start answers the first answer and starts nothing more.
 */
import { startRemediation as validate } from '../../generated/validators.js';
import { idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { httpHandler, json } from '../../runtime/http.js';
import { startRemediation, type StartRemediationInput } from '../service.js';
import { actorOf, runLocation, startDeps } from './deps.js';

const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<StartRemediationInput>({ operation: 'startRemediation', validate, idempotency }, async (event) => {
  const { batchId } = event.pathParameters as { batchId: string };
  const started = await startRemediation(batchId, event.body, actorOf(event), startDeps());
  return json(202, started, { Location: runLocation(started.remediationId, event.requestContext?.path, event.path) });
});
