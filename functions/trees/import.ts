/** POST /configuration_manager/imports: creates a tree from an export document (201 + Location). */
import { importTree as validate } from '../generated/validators.js';
import { httpHandler, json } from '../shared/http.js';
import { importTree, type ImportInput } from './versions.js';
import { callerOf, locationFor, versionDeps } from './wiring.js';

export const handler = httpHandler<ImportInput>({ operation: 'importTree', validate }, async (event) => {
  const tree = await importTree(versionDeps, event.body, callerOf(event));
  return json(201, tree, { Location: locationFor(event, '/configuration_manager/imports', `/configuration_manager/configs/${tree.id}`) });
});
