/** POST /configuration_manager/configs/{treeId}/exemptions (admin): 201 with the exemption's path in `Location`. */
import { createExemption as validate } from '../../generated/validators.js';
import { httpHandler, json, locationOf } from '../../runtime/http.js';
import type { ExemptionInput } from '../model.js';
import { createExemption } from '../service.js';
import { callerOf, exemptionDeps } from './deps.js';

export const handler = httpHandler<ExemptionInput>({ operation: 'createExemption', validate }, async (event) => {
  const { treeId } = event.pathParameters as { treeId: string };
  const exemption = await createExemption(treeId, event.body, callerOf(event), exemptionDeps());
  const collection = `/configuration_manager/configs/${treeId}/exemptions`;
  return json(201, exemption, { Location: locationOf(`${collection}/${exemption.exemptionId}`, event.requestContext?.path, collection) });
});
