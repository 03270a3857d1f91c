/** PUT /configuration_manager/configs/{treeId}/{version}: rename and/or replace the variables. */
import { updateVersion as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { updateVersion, type UpdateVersionInput } from '../version-service.js';
import { callerOf, params, versionDeps } from '../wiring.js';

export const handler = httpHandler<UpdateVersionInput>({ operation: 'updateVersion', validate }, async (event) => {
  const { treeId, version } = params(event);
  return json(200, await updateVersion(versionDeps, treeId as string, version as string, event.body, callerOf(event)));
});
