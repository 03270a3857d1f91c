/** GET /profiles: profiles sorted by id, `{ items, next? }`, each with `active`. */
import { listProfiles as validate } from '../../generated/validators.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../../platform/cursor.js';
import { httpHandler, json } from '../../runtime/http.js';
import { createProfileStore } from '../../runtime/profile-store.js';

const store = createProfileStore();
const DEFAULT_PAGE = 50;

export const handler = httpHandler({ operation: 'listProfiles', validate }, async (event) => {
  const query = event.queryStringParameters ?? {};
  const limit = query['limit'] ? Number(query['limit']) : DEFAULT_PAGE;
  let after: string | undefined;
  if (query['cursor']) {
    after = decodeCursor(query['cursor'], ['id'], () => true)?.id;
    if (after === undefined) throw invalidCursor();
  }
  const page = await store.list({ limit, ...(after !== undefined ? { after } : {}) });
  const last = page.items.at(-1);
  return json(200, { items: page.items, ...(page.more && last ? { next: encodeCursor({ id: last.id }) } : {}) });
});
