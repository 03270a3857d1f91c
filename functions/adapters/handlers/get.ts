/** GET /adapters/{name}: one adapter, its password as a `$VAULT_` reference (never a value). */
import { getAdapter as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { getAdapter } from '../service.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath } from '../validate.js';

const store = createAdapterStore();

export const handler = httpHandler({ operation: 'getAdapter', validate }, async (event) =>
  json(200, await getAdapter(store, adapterNameFromPath(event.pathParameters?.['name']))),
);
