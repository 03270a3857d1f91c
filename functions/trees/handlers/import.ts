/** POST /configuration_manager/imports: creates a tree from an export document (201 + Location). */
import { importTree as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { importTree, type ImportInput } from '../version-service.js';
import { callerOf, locationFor, versionDeps } from '../wiring.js';

const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<ImportInput>({ operation: 'importTree', validate, idempotency }, async (event) => {
  const tree = await importTree(versionDeps, event.body, callerOf(event));
  return json(201, tree, { Location: locationFor(event, '/configuration_manager/imports', `/configuration_manager/configs/${tree.id}`) });
});
