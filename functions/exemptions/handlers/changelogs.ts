/** GET /configuration_manager/configs/{treeId}/changelogs: the tree's audit trail, newest first, `{ items, next? }`. */
import { listTreeChangelogs as validate } from '../../generated/validators.js';
import { documentClient } from '../../platform/dynamo.js';
import { listChangelog } from '../../runtime/changelog.js';
import { httpHandler, json } from '../../runtime/http.js';
import { createTreeStore } from '../../trees/store.js';
import { type PageQuery, treeChangelog } from '../service.js';

const deps = {
  trees: createTreeStore(),
  changelog: (subject: { kind: 'tree'; name: string }, query: PageQuery) => listChangelog(documentClient, subject, query),
};

export const handler = httpHandler({ operation: 'listTreeChangelogs', validate }, async (event) => {
  const { treeId } = event.pathParameters as { treeId: string };
  return json(200, await treeChangelog(treeId, event.queryStringParameters ?? {}, deps));
});
