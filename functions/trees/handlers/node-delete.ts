/** DELETE /configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}: a node and its subtree (204). */
import { deleteNode as validate } from '../../generated/validators.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { deleteNode } from '../version-service.js';
import { callerOf, params, versionDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'deleteNode', validate }, async (event) => {
  const { treeId, version, nodePath } = params(event);
  await deleteNode(versionDeps, treeId as string, version as string, nodePath as string, callerOf(event));
  return noContent();
});
