/**
 * GET /adapters/{name}/changelogs: the adapter's audit trail, newest first, `{ items, next? }`
 * paged by `limit` and `cursor`. Readable after the adapter is deleted (entries are kept by
 * name); 404 only when no adapter has the name and none ever had an entry under it.
 */
import { listAdapterChangelogs as validate } from '../../generated/validators.js';
import { listChangelog } from '../../runtime/changelog.js';
import { documentClient } from '../../platform/dynamo.js';
import { httpHandler, json } from '../../runtime/http.js';
import { NotFound } from '../../platform/problem.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath } from '../validate.js';

const store = createAdapterStore();

export const handler = httpHandler({ operation: 'listAdapterChangelogs', validate }, async (event) => {
  const name = adapterNameFromPath(event.pathParameters?.['name']);
  const page = await listChangelog(documentClient, { kind: 'adapter', name }, event.queryStringParameters ?? {});
  // An adapter written before the changelog existed has a record and no entry yet: an empty trail.
  if (page.items.length === 0 && event.queryStringParameters?.['cursor'] === undefined && (await store.current(name)) === null) {
    throw new NotFound(`No adapter is named "${name}", and none ever was.`);
  }
  return json(200, page);
});
