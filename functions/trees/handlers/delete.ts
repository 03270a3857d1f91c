/** DELETE /configuration_manager/configs/{treeId}: the tree, its name and every version (204). */
import { deleteTree as validate } from '../../generated/validators.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { deleteTree } from '../version-service.js';
import { params, versionDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'deleteTree', validate }, async (event) => {
  await deleteTree(versionDeps, params(event)['treeId'] as string);
  return noContent();
});
