/** DELETE /configuration_manager/configs/{treeId}/exemptions/{exemptionId} (admin): 204. */
import { deleteExemption as validate } from '../../generated/validators.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { deleteExemption } from '../service.js';
import { callerOf, exemptionDeps, pathOf } from './deps.js';

export const handler = httpHandler({ operation: 'deleteExemption', validate }, async (event) => {
  const { treeId, exemptionId } = pathOf(event);
  await deleteExemption(treeId, exemptionId, callerOf(event), exemptionDeps());
  return noContent();
});
