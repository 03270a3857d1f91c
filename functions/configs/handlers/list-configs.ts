/** GET /configuration_manager/devices/{adapterId}/{device}/configs: a device's configurations, newest first. */
import { listDeviceConfigs as validate } from '../../generated/validators.js';
import { devicePath } from '../path.js';
import { httpHandler, json } from '../../runtime/http.js';
import { CONFIG_PAGE_LIMIT, listConfigs } from '../read.js';
import { createConfigIndex } from '../store.js';

const index = createConfigIndex();

export const handler = httpHandler({ operation: 'listDeviceConfigs', validate }, async (event) => {
  const { adapterId, device } = devicePath(event.pathParameters);
  const { limit, cursor } = (event.queryStringParameters ?? {}) as { limit?: string; cursor?: string };
  const page = await listConfigs({ index, now: () => new Date() }, adapterId, device, {
    limit: limit === undefined ? CONFIG_PAGE_LIMIT.default : Number(limit),
    cursor,
  });
  return json(200, page);
});
