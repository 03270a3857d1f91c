/** POST /configuration_manager/configs: creates a golden-configuration tree (201 + Location). */
import { createTree as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { createTree, newTreeId, type CreateTreeInput } from '../service.js';
import { createTreeStore } from '../store.js';

const deps = {
  store: createTreeStore(),
  now: () => new Date(),
  newId: newTreeId,
};

const COLLECTION = '/configuration_manager/configs';

/**
 * Where the new tree is read: the collection's path as the client addressed it (stage or custom
 * domain base path included, from `requestContext.path`) plus the id, so that the header
 * resolves against the request URL. Without that context, the path relative to the stage base.
 */
export const treeLocation = (id: string, requestPath?: string): string => {
  const base = requestPath?.replace(/\/+$/, '');
  return `${base?.endsWith(COLLECTION) ? base : COLLECTION}/${id}`;
};

const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<CreateTreeInput>({ operation: 'createTree', validate, idempotency }, async (event) => {
  // The validator ran first: the body is exactly { name, deviceType, description? }.
  const tree = await createTree(deps, event.body);
  return json(201, tree, { Location: treeLocation(tree.id, event.requestContext?.path) });
});
