/** POST /configuration_manager/configs/{treeId}: a new version copying `base` (201 + Location). */
import { createVersion as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { createVersion, type CreateVersionInput } from '../version-service.js';
import { callerOf, locationFor, params, versionDeps } from '../wiring.js';

const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<CreateVersionInput>({ operation: 'createVersion', validate, idempotency }, async (event) => {
  const { treeId } = params(event);
  const version = await createVersion(versionDeps, treeId as string, event.body, callerOf(event));
  const path = `/configuration_manager/configs/${treeId}`;
  return json(201, version, { Location: locationFor(event, path, `${path}/${encodeURIComponent(version.address)}`) });
});
