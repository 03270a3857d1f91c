/** GET /configuration_manager/exports/{treeId}: the whole tree, every version, as one JSON document. */
import { exportTree as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { exportTree } from '../version-service.js';
import { params, versionDeps } from '../wiring.js';

export const handler = httpHandler({ operation: 'exportTree', validate }, async (event) =>
  json(200, await exportTree(versionDeps, params(event)['treeId'] as string)),
);
