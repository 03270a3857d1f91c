/**
 * GET /schema/adapters/{name}: the JSON Schema of the adapter's type, `{ schema }`: the very
 * schema `PUT /adapters/{name}` validates against (the route table's), so the two cannot drift.
 */
import { getAdapterSchema as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { ADAPTER_BODY } from '../schemas.js';
import { getAdapter } from '../service.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath } from '../validate.js';

const store = createAdapterStore();

export const handler = httpHandler({ operation: 'getAdapterSchema', validate }, async (event) => {
  const adapter = await getAdapter(store, adapterNameFromPath(event.pathParameters?.['name']));
  // One adapter type today (`nso`); the schema is the type's, whatever the adapter holds.
  return json(200, {
    type: adapter.type,
    schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', title: `Adapter of type ${adapter.type}`, ...ADAPTER_BODY },
  });
});
