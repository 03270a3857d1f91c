/** POST /configuration_manager/configs: creates a golden-configuration tree (201 + Location). */
import { createTree as validate } from '../generated/validators.js';
import { documentClient } from '../shared/dynamo.js';
import { requiredEnv } from '../shared/env.js';
import { httpHandler, json } from '../shared/http.js';
import { createIdempotencyStore } from '../shared/idempotency-store.js';
import { createTree, newTreeId, type CreateTreeInput } from './core.js';
import { DynamoTreeStore } from './store.js';

const deps = {
  store: new DynamoTreeStore(documentClient, requiredEnv('TREES_TABLE')),
  now: () => new Date(),
  newId: newTreeId,
};

/** Where a tree is read, relative to the stage base URL (as every path of this API is). */
export const treeLocation = (id: string): string => `/configuration_manager/configs/${id}`;

const idempotency = { store: createIdempotencyStore() };

export const handler = httpHandler<CreateTreeInput>({ operation: 'createTree', validate, idempotency }, async (event) => {
  // The validator ran first: the body is exactly { name, deviceType, description? }.
  const tree = await createTree(deps, event.body);
  return json(201, tree, { Location: treeLocation(tree.id) });
});
