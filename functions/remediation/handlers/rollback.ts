/**
 * POST /configuration_manager/remediations/{remediationId}/rollback (admin): starts the rollback
 * of a completed apply run and answers 202 with the run's path in `Location` (its `rollback`
 * member shows how the rollback goes). A second rollback of the same run is a 409.
 */
import { startRemediationRollback as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { startRollback } from '../service.js';
import { actorOf, runLocation, startDeps } from './deps.js';

export const handler = httpHandler({ operation: 'startRemediationRollback', validate }, async (event) => {
  const { remediationId } = event.pathParameters as { remediationId: string };
  const started = await startRollback(remediationId, actorOf(event), startDeps());
  return json(202, started, { Location: runLocation(remediationId, event.requestContext?.path, event.path) });
});
