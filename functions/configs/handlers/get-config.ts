/** GET /configuration_manager/devices/{adapterId}/{device}/configs/{configId}: one configuration, secrets masked. */
import { getDeviceConfig as validate } from '../../generated/validators.js';
import { devicePath } from '../path.js';
import { httpHandler, json } from '../../runtime/http.js';
import { readConfig } from '../read.js';
import { archiveStores } from '../wiring.js';

const stores = archiveStores();

export const handler = httpHandler({ operation: 'getDeviceConfig', validate }, async (event) => {
  const { adapterId, device } = devicePath(event.pathParameters);
  const { configId } = event.pathParameters as { configId: string };
  return json(200, await readConfig({ ...stores, now: () => new Date() }, adapterId, device, configId));
});
