/** GET /configuration_manager/devices/{adapterId}/{device}/configs/{configId}/diff: two takes compared, secrets masked. */
import { diffDeviceConfigs as validate } from '../../generated/validators.js';
import { devicePath } from '../path.js';
import { httpHandler } from '../../runtime/http.js';
import { diffConfigs } from '../read.js';
import { archiveStores } from '../wiring.js';

const stores = archiveStores();

export const handler = httpHandler({ operation: 'diffDeviceConfigs', validate }, async (event) => {
  const { adapterId, device } = devicePath(event.pathParameters);
  const { configId } = event.pathParameters as { configId: string };
  const { against, format } = event.queryStringParameters as { against: string; format?: 'json-patch' | 'unified' };
  const { contentType, body } = await diffConfigs({ ...stores, now: () => new Date() }, adapterId, device, configId, against, format ?? 'json-patch');
  return { statusCode: 200, headers: { 'Content-Type': contentType }, body };
});
