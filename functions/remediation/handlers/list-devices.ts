/** GET /configuration_manager/remediations/{remediationId}/devices: a page of a run's devices, secrets masked. */
import { listRemediationDevices as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { DEVICE_PAGE_LIMIT, listRemediationDevices } from '../service.js';
import { remediationStore } from '../wiring.js';

export const handler = httpHandler({ operation: 'listRemediationDevices', validate }, async (event) => {
  // The validator ran first: limit 1 to 200, cursor base64url.
  const { remediationId } = event.pathParameters as { remediationId: string };
  const { limit, cursor } = (event.queryStringParameters ?? {}) as { limit?: string; cursor?: string };
  const page = await listRemediationDevices(remediationStore(), remediationId, {
    limit: limit === undefined ? DEVICE_PAGE_LIMIT.default : Number(limit),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  return json(200, page);
});
