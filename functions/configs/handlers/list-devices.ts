/** GET /configuration_manager/devices?adapterId=: the devices in an adapter's configuration history. */
import { listConfigDevices as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { CONFIG_PAGE_LIMIT, listDevices } from '../read.js';
import { createConfigIndex } from '../store.js';

const index = createConfigIndex();

export const handler = httpHandler({ operation: 'listConfigDevices', validate }, async (event) => {
  // The validator ran first: adapterId is a name, limit 1 to 200, cursor base64url.
  const { adapterId, limit, cursor } = event.queryStringParameters as { adapterId: string; limit?: string; cursor?: string };
  const page = await listDevices({ index, now: () => new Date() }, adapterId, {
    limit: limit === undefined ? CONFIG_PAGE_LIMIT.default : Number(limit),
    cursor,
  });
  return json(200, page);
});
