/** GET /configuration_manager/configs/{treeId}: the summary of one golden-configuration tree (spec 4.2). */
import { getTree as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getTreeSummary } from '../service.js';
import { createTreeStore } from '../store.js';

const store = createTreeStore();

export const handler = httpHandler({ operation: 'getTree', validate }, async (event) => {
  // The validator ran first: treeId is present and 24 lowercase hex characters.
  const { treeId } = event.pathParameters as { treeId: string };
  return json(200, await getTreeSummary(store, treeId));
});
