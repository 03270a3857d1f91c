/** PUT /configuration_manager/configs/{treeId}/exemptions/{exemptionId} (admin): replaces the exemption's fields. */
import { putExemption as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import type { ExemptionInput } from '../model.js';
import { replaceExemption } from '../service.js';
import { callerOf, exemptionDeps, pathOf } from './deps.js';

export const handler = httpHandler<ExemptionInput>({ operation: 'putExemption', validate }, async (event) => {
  const { treeId, exemptionId } = pathOf(event);
  return json(200, await replaceExemption(treeId, exemptionId, event.body, callerOf(event), exemptionDeps()));
});
