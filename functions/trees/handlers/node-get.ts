/** GET /configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}: a node and its children's names. */
import { getNode as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getNode } from '../version-service.js';
import { params, versionDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'getNode', validate }, async (event) => {
  const { treeId, version, nodePath } = params(event);
  return json(200, await getNode(versionDeps, treeId as string, version as string, nodePath as string));
});
