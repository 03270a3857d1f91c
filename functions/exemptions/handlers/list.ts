/** GET /configuration_manager/configs/{treeId}/exemptions: a page of the tree's exemptions, newest first, `{ items, next? }`. */
import { listExemptions as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { listExemptions } from '../service.js';
import { exemptionDeps } from './deps.js';

export const handler = httpHandler({ operation: 'listExemptions', validate }, async (event) => {
  const { treeId } = event.pathParameters as { treeId: string };
  return json(200, await listExemptions(treeId, event.queryStringParameters ?? {}, exemptionDeps()));
});
