/** GET /configuration_manager/remediations/{remediationId}: a run's status, mode, totals, who started it and its rollback. */
import { getRemediation as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { readRemediation } from '../service.js';
import { remediationStore } from '../wiring.js';

export const handler = httpHandler({ operation: 'getRemediation', validate }, async (event) => {
  const { remediationId } = event.pathParameters as { remediationId: string };
  return json(200, await readRemediation(remediationStore(), remediationId));
});
