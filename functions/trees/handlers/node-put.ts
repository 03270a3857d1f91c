/** PUT /configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}: create (201) or replace (200) a node. */
import { putNode as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { putNode, type PutNodeInput } from '../version-service.js';
import { callerOf, params, versionDeps } from '../wiring.js';

export const handler = httpHandler<PutNodeInput>({ operation: 'putNode', validate }, async (event) => {
  const { treeId, version, nodePath } = params(event);
  const { created, node } = await putNode(versionDeps, treeId as string, version as string, nodePath as string, event.body, callerOf(event));
  return json(created ? 201 : 200, node);
});
