/**
 * GET /applications/{name}/changelogs, and the same at the singular
 * GET /application/{name}/changelogs (spec 9.1 writes the replacement so): the application's
 * audit trail, newest first, `{ items, next? }` paged by `limit` and `cursor`; 404 for a name
 * that is not one of the service's applications. Both routes run this handler: the singular
 * path answers exactly what the plural one does, with no redirect.
 */
import { listApplicationChangelogs as validate } from '../../generated/validators.js';
import { APPLICATIONS, isApplicationName } from '../../platform/applications.js';
import { listChangelog } from '../../runtime/changelog.js';
import { documentClient } from '../../platform/dynamo.js';
import { httpHandler, json } from '../../runtime/http.js';
import { NotFound } from '../../platform/problem.js';

export const handler = httpHandler({ operation: 'listApplicationChangelogs', validate }, async (event) => {
  const name = event.pathParameters?.['name'] ?? '';
  if (!isApplicationName(name)) throw new NotFound(`No application is named "${name}"; the applications are ${APPLICATIONS.join(', ')}.`);
  return json(200, await listChangelog(documentClient, { kind: 'application', name }, event.queryStringParameters ?? {}));
});
