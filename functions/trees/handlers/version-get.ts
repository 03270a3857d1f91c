/** GET /configuration_manager/configs/{treeId}/{version}: one version with its whole node tree. */
import { getVersion as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getVersion } from '../version-service.js';
import { params, versionDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'getVersion', validate }, async (event) => {
  const { treeId, version } = params(event);
  return json(200, await getVersion(versionDeps, treeId as string, version as string));
});
