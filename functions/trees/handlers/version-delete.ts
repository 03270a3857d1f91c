/** DELETE /configuration_manager/configs/{treeId}/{version}: 204; the last version stays (409). */
import { deleteVersion as validate } from '../../generated/validators.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { deleteVersion } from '../version-service.js';
import { params, versionDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'deleteVersion', validate }, async (event) => {
  const { treeId, version } = params(event);
  await deleteVersion(versionDeps, treeId as string, version as string);
  return noContent();
});
