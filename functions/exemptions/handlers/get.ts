/** GET /configuration_manager/configs/{treeId}/exemptions/{exemptionId}: one exemption. */
import { getExemption as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getExemption } from '../service.js';
import { exemptionDeps, pathOf } from './deps.js';

export const handler = httpHandler({ operation: 'getExemption', validate }, async (event) => {
  const { treeId, exemptionId } = pathOf(event);
  return json(200, await getExemption(treeId, exemptionId, exemptionDeps()));
});
