/** GET /configuration_manager/configs/{treeId}: the summary of one golden-configuration tree (spec 4.2). */
import { getTree as validate } from '../../generated/validators.js';
import { documentClient } from '../../platform/dynamo.js';
import { requiredEnv } from '../../platform/env.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getTreeSummary } from '../service.js';
import { DynamoTreeStore } from '../store.js';

const store = new DynamoTreeStore(documentClient, requiredEnv('TREES_TABLE'));

export const handler = httpHandler({ operation: 'getTree', validate }, async (event) => {
  // The validator ran first: treeId is present and 24 lowercase hex characters.
  const { treeId } = event.pathParameters as { treeId: string };
  return json(200, await getTreeSummary(store, treeId));
});
