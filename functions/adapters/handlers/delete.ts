/** DELETE /adapters/{name}: 204, or 404 when absent. The secret the service stored for it goes too. */
import { deleteAdapter as validate } from '../../generated/validators.js';
import { secretsBackend } from '../../outbound/secrets/resolver.js';
import { httpHandler, noContent } from '../../runtime/http.js';
import { callerOf } from '../../platform/idempotency.js';
import { deleteAdapter } from '../service.js';
import { createAdapterStore } from '../store.js';
import { adapterNameFromPath } from '../validate.js';

const store = createAdapterStore();

export const handler = httpHandler({ operation: 'deleteAdapter', validate }, async (event) => {
  await deleteAdapter({ store, secrets: secretsBackend }, adapterNameFromPath(event.pathParameters?.['name']), callerOf(event));
  return noContent();
});
