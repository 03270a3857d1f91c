/**
 * The one route table. The CDK stack, the authorizer's role → route policy, the OpenAPI
 * document, the request validators and the tests are all derived from it: adding a route
 * is one entry here.
 *
 * Paths use API Gateway's `{name}` form for path parameters.
 */
import type { JsonSchema } from '../platform/json-schema.js';
import { anyCase, EMPTY_BODY, pageQuery, type LiveRoute, type TableAccess, type TableKey } from '../platform/route.js';
import { ADAPTER_BODY, ADAPTER_CHANGED, ADAPTER_NAME, ADAPTER_PARAMS } from '../adapters/schemas.js';
import { LABEL_PATTERN_SOURCE, TREE_LIMITS } from '../trees/model.js';
import { CONFIG_LIMITS } from '../trees/config-checks.js';
import { PATH_NAME_PATTERN_SOURCE } from '../platform/names.js';
import { createVersionBody, importBody, nodeParams, putNodeBody, startBatchBody, treeParams, updateVersionBody, versionParams } from '../trees/schemas.js';
import { APPLICATIONS, applicationOf, type ApplicationName } from '../platform/applications.js';
import { LOG_LEVELS } from '../platform/logger.js';
import { BATCH_ID_PATTERN, REPORT_ID_PATTERN } from '../compliance/model.js';
import { APPLICATION_SETTINGS_SCHEMAS, PROFILE_ID_PATTERN, PROFILE_SCHEMA, PROFILE_SETTINGS_SCHEMA } from '../runtime/profile-model.js';


const TREE_ID = { type: 'string', pattern: '^[0-9a-f]{24}$' } as const;
const BATCH_ID = { type: 'string', pattern: BATCH_ID_PATTERN, description: 'The batchId that starting the batch answered' } as const;
const REPORT_ID = { type: 'string', pattern: REPORT_ID_PATTERN, description: 'A reportId from the batch\'s reports' } as const;


/** The routes of the applications, adapters and operations; {@link liveRoutes} adds the runtime routes. */
const serviceRoutes: readonly LiveRoute[] = [
  {
    method: 'POST',
    path: '/orch_manager/restAction/{adapterId}',
    operationId: 'relayRestAction',
    summary: 'Relay a REST action to the orchestrator behind a named adapter',
    tag: 'relay',
    handler: 'relay/handlers/rest-action',
    roles: ['admin'],
    request: {
      pathParameters: {
        type: 'object',
        required: ['adapterId'],
        properties: {
          // Decoded and checked against the adapter name rule by the handler.
          adapterId: ADAPTER_NAME,
        },
      },
      body: {
        type: 'object',
        required: ['params', 'body'],
        additionalProperties: false,
        properties: {
          params: {
            type: 'object',
            required: ['path', 'accept'],
            // A misspelt member (`Method`) must not be ignored: the action would run another way.
            additionalProperties: false,
            properties: {
              path: {
                type: 'string',
                minLength: 1,
                maxLength: 2048,
                description:
                  'Path (and query) on the orchestrator, starting with "/", e.g. /restconf/data/tailf-ncs:devices/device=ce0/config?depth=2. ' +
                  'Absolute URLs, "//", backslashes, "@", control characters, dot segments and encoded ".", "/", "\\", "%" or control characters are refused.',
              },
              accept: { type: 'string', minLength: 1, maxLength: 255, description: 'One media type, e.g. application/yang-data+json' },
              contentType: {
                type: 'string',
                minLength: 1,
                maxLength: 255,
                description: 'Media type of the body (a JSON type when a body is sent); default: accept when it is JSON, else application/json',
              },
              method: {
                type: 'string',
                pattern: anyCase('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
                description: 'GET, POST, PUT, PATCH or DELETE, any case; default POST. GET and DELETE send no body.',
              },
            },
          },
          body: { type: 'object', description: 'Sent as JSON for POST, PUT and PATCH; ignored for GET and DELETE' },
        },
      },
    },
    responses: {
      200: 'The orchestrator answered, whatever its status: `[ { "result": "<status>", "data": <body> } ]`',
      400: 'The request is invalid (each offending field named, the Idempotency-Key header included); nothing was sent',
      404: 'No adapter has this name',
      409: 'The adapter is stopped (`adapter-stopped`; nothing was sent), a request with the same Idempotency-Key is still running (retry after `Retry-After`), or its answer was too large to keep for replay',
      422: 'The Idempotency-Key was already used for a different request',
      429: 'The adapter already carries as many calls as the active profile allows (`adapter-busy`, `maxConcurrentCallsPerAdapter`); nothing was sent; retry after `Retry-After`',
      500: 'The adapter record or its secret reference is unusable (logged), or the relay failed on the orchestrator’s answer (logged; kept under the Idempotency-Key)',
      502: 'The orchestrator could not be reached, failed TLS, redirected, sent too large a body, JSON that does not parse or JSON nested deeper than 128 levels',
      503: 'A dependency (secrets store, database) is unavailable',
      504: 'The orchestrator did not answer in time',
    },
    needs: { tables: { adapters: 'read', idempotency: 'write' }, secrets: 'read', orchestrator: true },
    timeoutSeconds: 28,
  },
  {
    method: 'GET',
    path: '/configuration_manager/configs/{treeId}',
    operationId: 'getTree',
    summary: 'Get the summary of one golden-configuration tree',
    tag: 'trees',
    handler: 'trees/handlers/get',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: { type: 'object', required: ['treeId'], properties: { treeId: TREE_ID } },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'The tree summary',
      400: 'treeId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No tree has this id',
      500: 'The stored tree is damaged (logged with its id)',
      503: 'The tree store is unavailable; retry later',
    },
    needs: { tables: { trees: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/configs',
    operationId: 'listTrees',
    summary: 'List golden-configuration tree summaries, sorted by name',
    tag: 'trees',
    handler: 'trees/handlers/list',
    roles: ['admin', 'apiread'],
    request: {
      // Keep in step with PAGE_LIMIT in functions/trees/service.ts.
      queryStringParameters: pageQuery(100, 50),
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of tree summaries: `{ items, next? }`; `next` is absent on the last page',
      400: 'limit or cursor is invalid, an unknown query parameter was sent, or a body was sent',
      500: 'A stored tree of the page is damaged (logged with its id)',
      503: 'The tree store is unavailable; retry later',
    },
    needs: { tables: { trees: 'read' } },
  },
  {
    method: 'POST',
    path: '/configuration_manager/configs',
    operationId: 'createTree',
    summary: 'Create a golden-configuration tree',
    tag: 'trees',
    handler: 'trees/handlers/create',
    roles: ['admin'],
    request: {
      body: {
        type: 'object',
        required: ['name', 'deviceType'],
        additionalProperties: false,
        properties: {
          name: {
            type: 'string',
            minLength: 1,
            maxLength: TREE_LIMITS.name,
            pattern: LABEL_PATTERN_SOURCE,
            description: 'Unique (case-sensitive) name under the rule for every stored name: no whitespace at either end, no control, format (zero-width, bidirectional) or whitespace character but the space, in Unicode NFC.',
          },
          deviceType: { type: 'string', minLength: 1, maxLength: TREE_LIMITS.deviceType, pattern: LABEL_PATTERN_SOURCE },
          description: { type: 'string', maxLength: TREE_LIMITS.description },
        },
      },
    },
    responses: {
      201: 'The tree was created: its summary, and its path in `Location`',
      400: 'The request is invalid (the Idempotency-Key header included)',
      409: 'A tree with this name exists, or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      422: 'The Idempotency-Key was already used for a different request',
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write', idempotency: 'write' } },
  },
  {
    method: 'DELETE',
    path: '/configuration_manager/configs/{treeId}',
    operationId: 'deleteTree',
    summary: 'Delete a golden-configuration tree with every version',
    tag: 'trees',
    handler: 'trees/handlers/delete',
    roles: ['admin'],
    request: { pathParameters: treeParams, body: EMPTY_BODY },
    responses: { 204: 'The tree, its name and every version are gone', 404: 'No tree has this id', 503: 'The tree store is unavailable or busy; retry later' },
    needs: { tables: { trees: 'write' } },
  },
  {
    method: 'POST',
    path: '/configuration_manager/configs/{treeId}',
    operationId: 'createVersion',
    summary: 'Create a version of a tree as a deep copy of another',
    tag: 'versions',
    handler: 'trees/handlers/version-create',
    roles: ['admin'],
    request: { pathParameters: treeParams, body: createVersionBody },
    responses: {
      201: 'The new version with its whole node tree; its path in `Location`',
      400: 'The request is invalid (each offending field named, the Idempotency-Key header included)',
      404: 'No tree has this id, or it has no version `base`',
      409: 'The tree already has a version with this name, or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      413: `The tree already holds ${TREE_LIMITS.versions} versions, or would be more than ${CONFIG_LIMITS.treeTransportBytes} bytes as transported (see docs/trees.md)`,
      422: 'The Idempotency-Key was already used for a different request',
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write', idempotency: 'write' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/configs/{treeId}/{version}',
    operationId: 'getVersion',
    summary: 'Get one version of a tree with its whole node tree',
    tag: 'versions',
    handler: 'trees/handlers/version-get',
    roles: ['admin', 'apiread'],
    request: { pathParameters: versionParams, body: EMPTY_BODY },
    responses: {
      200: 'The version: `{ treeId, name, address, variables, root: { name: "base", devices, rules, children }, created, createdBy, lastUpdated, lastUpdatedBy }`',
      404: 'No tree has this id, or it has no such version',
      500: 'The stored tree is damaged (logged with its id)',
      503: 'The tree store is unavailable; retry later',
    },
    needs: { tables: { trees: 'read' } },
  },
  {
    method: 'PUT',
    path: '/configuration_manager/configs/{treeId}/{version}',
    operationId: 'updateVersion',
    summary: 'Rename a version and/or replace its variables',
    tag: 'versions',
    handler: 'trees/handlers/version-update',
    roles: ['admin'],
    request: { pathParameters: versionParams, body: updateVersionBody },
    responses: {
      200: 'The version as changed',
      400: 'The request is invalid, or a rule would name a variable the new set lacks',
      404: 'No tree has this id, or it has no such version',
      409: 'Another version of the tree has the new name',
      413: 'The variables go past a limit',
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write' } },
  },
  {
    method: 'DELETE',
    path: '/configuration_manager/configs/{treeId}/{version}',
    operationId: 'deleteVersion',
    summary: 'Delete a version of a tree',
    tag: 'versions',
    handler: 'trees/handlers/version-delete',
    roles: ['admin'],
    request: { pathParameters: versionParams, body: EMPTY_BODY },
    responses: {
      204: 'The version is gone',
      404: 'No tree has this id, or it has no such version',
      409: 'It is the last version of the tree',
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write' } },
  },
  {
    method: 'PUT',
    path: '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}',
    operationId: 'putNode',
    summary: 'Create or replace one node of a version (its devices and rules)',
    tag: 'versions',
    handler: 'trees/handlers/node-put',
    roles: ['admin'],
    request: { pathParameters: nodeParams, body: putNodeBody },
    responses: {
      200: 'The node was replaced: `{ path, name, devices, rules, children: [names] }`',
      201: 'The node was created',
      400: 'The request is invalid: a rule (pointer, mode, unknown variable, an id its path repeats), a device name, the node path',
      404: 'No tree has this id, it has no such version, or the parent node does not exist',
      409: 'A device is already on another node of the version',
      413: `The version would go past a limit (${CONFIG_LIMITS.nodesPerVersion} nodes, ${CONFIG_LIMITS.rulesPerNode} rules per node, ${CONFIG_LIMITS.ruleValueBytes} bytes per rule value, ${CONFIG_LIMITS.versionBytes} bytes per version)`,
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}',
    operationId: 'getNode',
    summary: 'Get one node of a version with its children’s names',
    tag: 'versions',
    handler: 'trees/handlers/node-get',
    roles: ['admin', 'apiread'],
    request: { pathParameters: nodeParams, body: EMPTY_BODY },
    responses: {
      200: 'The node: `{ path, name, devices, rules, children: [names] }`',
      404: 'No tree has this id, it has no such version, or no such node',
      500: 'The stored tree is damaged (logged with its id)',
      503: 'The tree store is unavailable; retry later',
    },
    needs: { tables: { trees: 'read' } },
  },
  {
    method: 'DELETE',
    path: '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}',
    operationId: 'deleteNode',
    summary: 'Delete a node of a version and its subtree',
    tag: 'versions',
    handler: 'trees/handlers/node-delete',
    roles: ['admin'],
    request: { pathParameters: nodeParams, body: EMPTY_BODY },
    responses: {
      204: 'The node and its subtree are gone',
      404: 'No tree has this id, it has no such version, or no such node',
      409: 'The root node base cannot be deleted',
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/exports/{treeId}',
    operationId: 'exportTree',
    summary: 'Export a whole tree, every version, as one JSON document',
    tag: 'versions',
    handler: 'trees/handlers/export',
    roles: ['admin', 'apiread'],
    request: { pathParameters: treeParams, body: EMPTY_BODY },
    responses: {
      200: 'The export document (`format: "netconfig-tree/1"`), which POST /configuration_manager/imports takes',
      404: 'No tree has this id',
      500: 'The stored tree is damaged (logged with its id)',
      503: 'The tree store is unavailable; retry later',
    },
    needs: { tables: { trees: 'read' } },
  },
  {
    method: 'POST',
    path: '/configuration_manager/imports',
    operationId: 'importTree',
    summary: 'Create a tree from an export document',
    tag: 'versions',
    handler: 'trees/handlers/import',
    roles: ['admin'],
    request: { body: importBody },
    responses: {
      201: 'The tree was created under a new id: its summary, and its path in `Location`',
      400: 'The document is invalid (each offending field named), checked as if written route by route; or the Idempotency-Key header is invalid',
      409: 'A tree with this name exists, a device is on two nodes of one version, or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      413: 'The document goes past a limit of a version or a tree',
      422: 'The Idempotency-Key was already used for a different request',
      503: 'The tree store is unavailable or busy; retry later',
    },
    needs: { tables: { trees: 'write', idempotency: 'write' } },
    timeoutSeconds: 28,
  },
  {
    method: 'PUT',
    path: '/adapters/{name}',
    operationId: 'putAdapter',
    summary: 'Create or replace an adapter',
    tag: 'adapters',
    handler: 'adapters/handlers/put',
    roles: ['admin'],
    request: {
      pathParameters: { type: 'object', required: ['name'], properties: { name: ADAPTER_NAME } },
      body: ADAPTER_BODY,
    },
    responses: {
      200: 'The adapter was replaced',
      201: 'The adapter was created',
      400: 'The request is invalid (name, baseUrl, a $ENC value, a reference that does not resolve or may not be named, a kept secret with a new baseUrl or username)',
      409: 'Another request changed the adapter meanwhile, or another adapter has a name that differs from this one only by case (`adapter-exists`); nothing was changed',
      503: 'The secrets store or the database is unavailable; nothing was changed',
    },
    needs: { tables: { adapters: 'write', changelog: 'write' }, secrets: 'write' },
  },
  {
    method: 'POST',
    path: '/adapters',
    operationId: 'createAdapter',
    summary: 'Create an adapter (the body of PUT /adapters/{name} plus its name)',
    tag: 'adapters',
    handler: 'adapters/handlers/create',
    roles: ['admin'],
    request: {
      body: {
        ...ADAPTER_BODY,
        required: ['name', ...(ADAPTER_BODY['required'] as string[])],
        properties: {
          name: { type: 'string', pattern: PATH_NAME_PATTERN_SOURCE, description: '1 to 128 letters, digits, spaces, "-", "_" or ".", no space at either end; unique without regard to case' },
          ...(ADAPTER_BODY['properties'] as Record<string, JsonSchema>),
        },
      },
    },
    responses: {
      201: 'The adapter was created (state RUNNING); its path in `Location`',
      400: 'The request is invalid (as for PUT /adapters/{name}, the Idempotency-Key header included)',
      409: 'An adapter has this name already, or one that differs only by case (`adapter-exists`; nothing was changed), or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      422: 'The Idempotency-Key was already used for a different request',
      503: 'The secrets store or the database is unavailable; nothing was changed',
    },
    needs: { tables: { adapters: 'write', idempotency: 'write', changelog: 'write' }, secrets: 'write' },
  },
  {
    method: 'PUT',
    path: '/adapters/{name}/stop',
    operationId: 'stopAdapter',
    summary: 'Stop an adapter: the relay and compliance refuse it (409 adapter-stopped) until it is started',
    tag: 'adapters',
    handler: 'adapters/handlers/stop',
    roles: ['admin'],
    request: { pathParameters: ADAPTER_PARAMS, body: EMPTY_BODY },
    responses: {
      200: 'The adapter, `state` STOPPED (already stopped: unchanged)',
      400: 'The name is invalid, or a body was sent',
      404: 'No adapter has this name',
      409: ADAPTER_CHANGED,
      503: 'The database is unavailable; nothing was changed',
    },
    needs: { tables: { adapters: 'write', changelog: 'write' } },
  },
  {
    method: 'PUT',
    path: '/adapters/{name}/start',
    operationId: 'startAdapter',
    summary: 'Start a stopped adapter',
    tag: 'adapters',
    handler: 'adapters/handlers/start',
    roles: ['admin'],
    request: { pathParameters: ADAPTER_PARAMS, body: EMPTY_BODY },
    responses: {
      200: 'The adapter, `state` RUNNING (already running: unchanged)',
      400: 'The name is invalid, or a body was sent',
      404: 'No adapter has this name',
      409: ADAPTER_CHANGED,
      503: 'The database is unavailable; nothing was changed',
    },
    needs: { tables: { adapters: 'write', changelog: 'write' } },
  },
  {
    method: 'PUT',
    path: '/adapters/{name}/restart',
    operationId: 'restartAdapter',
    summary: 'Restart a running adapter: every relay re-reads it and its password within 5 s; the answer carries a fresh probe of its orchestrator',
    tag: 'adapters',
    handler: 'adapters/handlers/restart',
    roles: ['admin'],
    request: { pathParameters: ADAPTER_PARAMS, body: EMPTY_BODY },
    responses: {
      200: 'The adapter and `probe` `{ status, latencyMs?, httpStatus?, reason? }` of its orchestrator',
      400: 'The name is invalid, or a body was sent',
      404: 'No adapter has this name',
      409: 'The adapter is stopped (`adapter-stopped`): start it instead; or other requests kept changing it meanwhile (`adapter-changed`)',
      503: 'The database is unavailable; nothing was changed',
    },
    needs: { tables: { adapters: 'write', changelog: 'write' }, secrets: 'read', orchestrator: true },
  },
  {
    method: 'PUT',
    path: '/adapters/{name}/loglevel',
    operationId: 'setAdapterLogLevel',
    summary: 'Set how much the relay logs of the calls through an adapter (every relay uses it within 5 s)',
    tag: 'adapters',
    handler: 'adapters/handlers/loglevel',
    roles: ['admin'],
    request: {
      pathParameters: ADAPTER_PARAMS,
      body: {
        type: 'object',
        required: ['level'],
        additionalProperties: false,
        properties: {
          level: {
            type: 'string',
            enum: [...LOG_LEVELS],
            description:
              'error, warn or info: one line per call (error: failed calls only; warn: also refused ones); debug: also the request and answer metadata; trace: also the bodies, truncated and with secrets redacted. Default info',
          },
        },
      },
    },
    responses: {
      200: 'The adapter with its new `logLevel` (the same level: unchanged, nothing recorded)',
      400: 'The name or the level is invalid',
      404: 'No adapter has this name',
      409: ADAPTER_CHANGED,
      500: 'The stored adapter record is damaged (logged)',
      503: 'The database is unavailable; nothing was changed',
    },
    needs: { tables: { adapters: 'write', changelog: 'write' } },
  },
  {
    method: 'GET',
    path: '/adapters/{name}/changelogs',
    operationId: 'listAdapterChangelogs',
    summary: "An adapter's audit trail, newest first: who changed what, when, field by field (kept after the adapter is deleted)",
    tag: 'adapters',
    handler: 'adapters/handlers/changelogs',
    roles: ['admin'],
    request: {
      pathParameters: ADAPTER_PARAMS,
      // Keep in step with CHANGELOG_PAGE in functions/runtime/changelog.ts.
      queryStringParameters: pageQuery(100, 50, 'Entries per page'),
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of entries, newest first: `{ items: [{ kind, name, at, by, action, changes: [{ field, from?, to? }] }], next? }`; secrets appear only as their `$VAULT_` reference',
      400: 'The name, limit or cursor is invalid (a cursor of another subject included), an unknown query parameter was sent, or a body was sent',
      404: 'No adapter has this name and none ever had an entry under it',
      503: 'The database is unavailable',
    },
    needs: { tables: { adapters: 'read', changelog: 'read' } },
  },
  ...(['/applications/{name}/changelogs', '/application/{name}/changelogs'] as const).map(
    (path): LiveRoute => ({
      method: 'GET',
      path,
      operationId: path.startsWith('/applications/') ? 'listApplicationChangelogs' : 'listApplicationChangelogsSingular',
      summary: path.startsWith('/applications/')
        ? "An application's audit trail, newest first"
        : "An application's audit trail, newest first (the singular path of spec 9.1: answers exactly what /applications/{name}/changelogs answers)",
      tag: 'applications',
      // One handler for both paths: the same answer, no redirect.
      handler: 'applications/handlers/changelogs',
      roles: ['admin'],
      request: {
        pathParameters: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 128, description: `An application: ${APPLICATIONS.join(', ')}` } } },
        queryStringParameters: pageQuery(100, 50, 'Entries per page'),
        body: EMPTY_BODY,
      },
      responses: {
        200: 'A page of entries, newest first: `{ items: [{ kind, name, at, by, action, changes }], next? }`',
        400: 'limit or cursor is invalid, an unknown query parameter was sent, or a body was sent',
        404: 'No application has this name',
        503: 'The database is unavailable',
      },
      needs: { tables: { changelog: 'read' } },
    }),
  ),
  {
    method: 'GET',
    path: '/schema/adapters/{name}',
    operationId: 'getAdapterSchema',
    summary: "The JSON Schema of an adapter's type (what PUT /adapters/{name} validates)",
    tag: 'adapters',
    handler: 'adapters/handlers/schema',
    roles: ['admin', 'apiread'],
    request: { pathParameters: ADAPTER_PARAMS, body: EMPTY_BODY },
    responses: {
      200: '`{ "schema": <JSON Schema> }`',
      400: 'The name is invalid, or a body was sent',
      404: 'No adapter has this name',
      503: 'The database is unavailable',
    },
    needs: { tables: { adapters: 'read' } },
  },
  {
    method: 'GET',
    path: '/adapters/{name}',
    operationId: 'getAdapter',
    summary: 'Get one adapter (secrets as references)',
    tag: 'adapters',
    handler: 'adapters/handlers/get',
    roles: ['admin'],
    request: { pathParameters: { type: 'object', required: ['name'], properties: { name: ADAPTER_NAME } }, body: EMPTY_BODY },
    responses: { 200: 'The adapter', 400: 'The name is invalid', 404: 'No adapter has this name' },
    needs: { tables: { adapters: 'read' } },
  },
  {
    method: 'GET',
    path: '/adapters',
    operationId: 'listAdapters',
    summary: 'List adapters',
    tag: 'adapters',
    handler: 'adapters/handlers/list',
    roles: ['admin'],
    request: {
      queryStringParameters: pageQuery(100, 50),
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of adapters sorted by name: { items, next? }; a damaged record (e.g. a $ENC password) is listed as { name, status: "damaged", problem, detail }',
      400: 'A query parameter is invalid',
    },
    needs: { tables: { adapters: 'read' } },
  },
  {
    method: 'DELETE',
    path: '/adapters/{name}',
    operationId: 'deleteAdapter',
    summary: 'Delete an adapter',
    tag: 'adapters',
    handler: 'adapters/handlers/delete',
    roles: ['admin'],
    request: { pathParameters: { type: 'object', required: ['name'], properties: { name: ADAPTER_NAME } }, body: EMPTY_BODY },
    responses: { 204: 'The adapter was deleted (and the secret the service stored for it)', 400: 'The name is invalid', 404: 'No adapter has this name', 409: ADAPTER_CHANGED },
    needs: { tables: { adapters: 'write', changelog: 'write' }, secrets: 'write' },
  },
  {
    method: 'GET',
    path: '/status',
    operationId: 'getStatus',
    summary: 'Service status (replaces /isAlive)',
    tag: 'operations',
    handler: 'health/handlers/status',
    roles: 'public',
    request: { body: EMPTY_BODY },
    responses: { 200: 'The service is running: `{ service, version, status: "running" }`; checks no dependency' },
    needs: {},
  },
  {
    method: 'GET',
    path: '/health/system',
    operationId: 'getSystemHealth',
    summary: 'Health of the dependencies (database, secrets backend)',
    tag: 'operations',
    handler: 'health/handlers/system',
    roles: ['admin', 'apiread'],
    request: { body: EMPTY_BODY },
    responses: {
      200: 'Every dependency is up: `{ status: "up", checkedAt, dependencies: { <name>: { status, latencyMs } } }`',
      503: 'A dependency is down: problem+json carrying the same `checkedAt` and `dependencies`',
    },
    needs: { tables: { trees: 'read', adapters: 'read' }, secrets: 'read' },
  },
  {
    method: 'GET',
    path: '/health/server',
    operationId: 'getServerHealth',
    summary: 'Health of the serving function (runtime, memory, cold or warm)',
    tag: 'operations',
    handler: 'health/handlers/server',
    roles: ['admin', 'apiread'],
    request: { body: EMPTY_BODY },
    responses: { 200: 'Runtime, region, memory, function name and version, cold or warm start of the serving function' },
    needs: {},
  },
  {
    method: 'GET',
    path: '/health/adapters',
    operationId: 'getAdaptersHealth',
    summary: 'Whether each adapter’s orchestrator answers',
    tag: 'operations',
    handler: 'health/handlers/adapters',
    roles: ['admin', 'apiread'],
    request: {
      // Keep in step with MAX_HEALTH_PAGE in functions/health/adapter-health.ts.
      queryStringParameters: pageQuery(20, 10, 'Adapters probed per page'),
      body: EMPTY_BODY,
    },
    responses: {
      200: 'Health of one page of adapters sorted by name: `{ status, checkedAt, adapters: [{ name, type, status, checkedAt, latencyMs, httpStatus?, reason? }], next? }`; `status` is "degraded" when an adapter is misconfigured (a damaged record, a $ENC password), else "down" when any adapter is. An adapter\'s `checkedAt` is when its orchestrator was probed: results are reused for up to 10 s',
      400: 'A query parameter is invalid',
    },
    needs: { tables: { adapters: 'read' }, secrets: 'read', orchestrator: true },
    timeoutSeconds: 28,
  },
  {
    method: 'GET',
    path: '/health/adapters/{name}',
    operationId: 'getAdapterHealth',
    summary: 'Whether one adapter’s orchestrator answers',
    tag: 'operations',
    handler: 'health/handlers/adapter',
    roles: ['admin', 'apiread'],
    request: { pathParameters: { type: 'object', required: ['name'], properties: { name: ADAPTER_NAME } }, body: EMPTY_BODY },
    responses: {
      200: 'The orchestrator answers: `{ status: "up", checkedAt, adapter: { name, type, status, checkedAt, latencyMs, httpStatus } }`; a probe result is reused for up to 10 s (`checkedAt` says when it was taken)',
      400: 'The name is invalid',
      404: 'No adapter has this name',
      503: 'The orchestrator does not answer as it should, or the adapter record is misconfigured: problem+json carrying `checkedAt` and `adapter` (with `reason`)',
    },
    needs: { tables: { adapters: 'read' }, secrets: 'read', orchestrator: true },
    timeoutSeconds: 28,
  },
  {
    method: 'POST',
    path: '/configuration_manager/compliance_reports',
    operationId: 'startComplianceBatch',
    summary: 'Check devices against a tree version through an adapter: starts a compliance batch',
    tag: 'compliance',
    handler: 'compliance/handlers/start',
    roles: ['admin'],
    request: { body: startBatchBody },
    responses: {
      202: 'The batch started: `{ batchId, status: "running", total }`; its path in `Location`',
      400: 'The request is invalid (the Idempotency-Key header included), or names devices not assigned to a node of the version',
      404: 'No tree has this id, it has no such version, or no adapter has this name',
      409: 'The adapter is stopped (`adapter-stopped`), or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      422: 'The Idempotency-Key was already used for a different request',
      503: 'A store or the compliance engine is unavailable; retry later (nothing was started)',
    },
    needs: { tables: { trees: 'read', adapters: 'read', compliance: 'write', idempotency: 'write' }, startsCompliance: true },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/batches/{batchId}',
    operationId: 'getComplianceBatch',
    summary: 'Get a compliance batch: status, progress, rule totals and device counts by grade',
    tag: 'compliance',
    handler: 'compliance/handlers/get-batch',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'The batch: `{ batchId, treeId, version, adapterId, status, total, done, totals, grades, started, finished? }`',
      400: 'batchId is not 24 lowercase hexadecimal characters, or a body was sent',
      404: 'No batch has this id (or it expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/batches/{batchId}/reports',
    operationId: 'listComplianceReports',
    summary: "List a batch's device reports (also while it runs), optionally of one grade",
    tag: 'compliance',
    handler: 'compliance/handlers/list-reports',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: { type: 'object', required: ['batchId'], properties: { batchId: BATCH_ID } },
      // Keep in step with REPORT_PAGE_LIMIT in functions/compliance/read.ts.
      queryStringParameters: {
        ...pageQuery(200, 50),
        properties: {
          ...(pageQuery(200, 50).properties as Record<string, JsonSchema>),
          grade: { type: 'string', enum: ['pass', 'review', 'fail', 'error'], description: 'Only reports of this grade' },
        },
      },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'A page of reports: `{ items, next? }`; `next` is absent on the last page',
      400: 'batchId, grade, limit or cursor is invalid, an unknown query parameter was sent, or a body was sent',
      404: 'No batch has this id (or it expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
  {
    method: 'GET',
    path: '/configuration_manager/compliance_reports/{reportId}',
    operationId: 'getComplianceReport',
    summary: "Get one device's compliance report",
    tag: 'compliance',
    handler: 'compliance/handlers/get-report',
    roles: ['admin', 'apiread'],
    request: {
      pathParameters: { type: 'object', required: ['reportId'], properties: { reportId: REPORT_ID } },
      body: EMPTY_BODY,
    },
    responses: {
      200: 'The report: `{ reportId, batchId, device, treeId, version, node, grade, score?, totals, issues, reason?, checkedAt }`',
      400: 'reportId is not a report id (batch id, "-", then a grade initial and 16 digits, or 32 hexadecimal digits for a report stored before packs), or a body was sent',
      404: 'No report has this id (or it expired)',
      503: 'The compliance store is unavailable; retry later',
    },
    needs: { tables: { compliance: 'read' } },
  },
];

const PROFILE_PARAMS: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: PROFILE_ID_PATTERN, description: '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit' } },
};
/** An application name; an unknown one is a 404 (the handler's), so that the answer names the applications there are. */
const APPLICATION_PARAMS: JsonSchema = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 64, description: APPLICATIONS.join(' or ') } },
};
/**
 * The body of `PUT /applications/{name}`: every application's settings in one object; the
 * handler then refuses a member the named application does not have. Together that is exactly
 * the application's own schema (`GET /schema/applications/{name}`), since the members that two
 * applications share (`logLevel`) have one schema.
 */
const ANY_APPLICATION_SETTINGS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.assign({}, ...APPLICATIONS.map((name) => APPLICATION_SETTINGS_SCHEMAS[name]['properties'])) as Record<string, JsonSchema>,
};
const APPLICATION_BODY = '`{ name, description, state, changed?, changedBy?, restarted?, logLevel, settings, profile, routes }`';
const NO_APPLICATION = 'No application has this name';

/** Applications, their health, and profiles: the service's own runtime settings. */
const runtimeRoutes: readonly LiveRoute[] = [
  {
    method: 'GET',
    path: '/profiles',
    operationId: 'listProfiles',
    summary: 'List profiles, sorted by id; exactly one is active',
    tag: 'profiles',
    handler: 'profiles/handlers/list',
    roles: ['admin', 'apiread'],
    request: { queryStringParameters: pageQuery(100, 50), body: EMPTY_BODY },
    responses: { 200: 'A page of profiles: `{ items, next? }`, each with `active`', 400: 'A query parameter is invalid, or a body was sent' },
    needs: { tables: { profiles: 'read' } },
  },
  {
    method: 'POST',
    path: '/profiles',
    operationId: 'createProfile',
    summary: 'Create a profile (inactive); omitted settings take their defaults',
    tag: 'profiles',
    handler: 'profiles/handlers/create',
    roles: ['admin'],
    request: { body: PROFILE_SCHEMA },
    responses: {
      201: 'The profile, every default filled in; its path in `Location`',
      400: 'The profile fails its schema (`GET /schema/profiles`; each offending field named), or the Idempotency-Key header is invalid',
      409: 'A profile has this id, or one that differs only by case (`profile-exists`), or a request with the same Idempotency-Key is still running (retry after `Retry-After`)',
      422: 'The Idempotency-Key was already used for a different request',
    },
    needs: { tables: { profiles: 'write', idempotency: 'write' } },
  },
  {
    method: 'GET',
    path: '/profiles/{id}',
    operationId: 'getProfile',
    summary: 'Get one profile',
    tag: 'profiles',
    handler: 'profiles/handlers/get',
    roles: ['admin', 'apiread'],
    request: { pathParameters: PROFILE_PARAMS, body: EMPTY_BODY },
    responses: { 200: 'The profile', 400: 'The id is invalid, or a body was sent', 404: 'No profile has this id' },
    needs: { tables: { profiles: 'read' } },
  },
  {
    method: 'PUT',
    path: '/profiles/{id}',
    operationId: 'putProfile',
    summary: "Replace a profile's settings (the active one included: the service follows within 10 s)",
    tag: 'profiles',
    handler: 'profiles/handlers/put',
    roles: ['admin'],
    request: { pathParameters: PROFILE_PARAMS, body: PROFILE_SETTINGS_SCHEMA },
    responses: {
      200: 'The profile as replaced, every default filled in. For the active profile, each application whose settings change gets a `replaced` changelog entry in the same write',
      400: 'The settings fail the profile schema (each offending field named); nothing was changed',
      404: 'No profile has this id (create it with POST /profiles)',
      409: 'The profile was changed, activated or deactivated meanwhile (`profile-contended`); nothing was changed',
    },
    needs: { tables: { profiles: 'write', changelog: 'write' } },
  },
  {
    method: 'DELETE',
    path: '/profiles/{id}',
    operationId: 'deleteProfile',
    summary: 'Delete a profile that is not active',
    tag: 'profiles',
    handler: 'profiles/handlers/delete',
    roles: ['admin'],
    request: { pathParameters: PROFILE_PARAMS, body: EMPTY_BODY },
    responses: { 204: 'The profile is gone', 400: 'The id is invalid, or a body was sent', 404: 'No profile has this id', 409: 'The profile is active (`profile-active`): activate another first' },
    needs: { tables: { profiles: 'write' } },
  },
  {
    method: 'PUT',
    path: '/profiles/{id}/active',
    operationId: 'activateProfile',
    summary: 'Make a profile the active one; the previously active one is deactivated in the same write',
    tag: 'profiles',
    handler: 'profiles/handlers/activate',
    roles: ['admin'],
    request: { pathParameters: PROFILE_PARAMS, body: EMPTY_BODY },
    responses: {
      200: 'The profile, now active, and `previous` (the id of the profile that was). Each application gets a `replaced` changelog entry (`profile` from the previous id to this one) in the same write',
      400: 'The id is invalid, or a body was sent',
      404: 'No profile has this id',
      409: 'Another activation, or a change of either profile, landed meanwhile (`profile-contended`); nothing was changed',
    },
    needs: { tables: { profiles: 'write', changelog: 'write' } },
  },
  {
    method: 'GET',
    path: '/schema/profiles',
    operationId: 'getProfileSchema',
    summary: 'The JSON Schema of a profile (what POST /profiles validates)',
    tag: 'profiles',
    handler: 'profiles/handlers/schema',
    roles: ['admin', 'apiread'],
    request: { body: EMPTY_BODY },
    responses: { 200: '`{ "schema": <JSON Schema> }`', 400: 'A body or a query parameter was sent' },
    needs: {},
  },
  {
    method: 'GET',
    path: '/applications',
    operationId: 'listApplications',
    summary: "The service's applications: state, log level, settings (from the active profile) and routes",
    tag: 'applications',
    handler: 'applications/handlers/list',
    roles: ['admin', 'apiread'],
    request: { body: EMPTY_BODY },
    responses: { 200: `\`{ items: [ ${APPLICATION_BODY} ] }\``, 400: 'A body or a query parameter was sent' },
    needs: { tables: { profiles: 'read' } },
  },
  {
    method: 'GET',
    path: '/applications/{name}',
    operationId: 'getApplication',
    summary: 'One application: state, log level, settings and routes',
    tag: 'applications',
    handler: 'applications/handlers/get',
    // The authorizer's `GET/applications/*` for apiread also covers the admin-only changelogs
    // route (IAM's * spans slashes): its policy denies that one explicitly.
    roles: ['admin', 'apiread'],
    request: { pathParameters: APPLICATION_PARAMS, body: EMPTY_BODY },
    responses: { 200: APPLICATION_BODY, 400: 'The name is invalid, or a body was sent', 404: NO_APPLICATION },
    needs: { tables: { profiles: 'read' } },
  },
  {
    method: 'PUT',
    path: '/applications/{name}',
    operationId: 'putApplication',
    summary: "Replace an application's settings in the active profile (GET /schema/applications/{name}); omitted settings take their defaults",
    tag: 'applications',
    handler: 'applications/handlers/put',
    roles: ['admin'],
    request: { pathParameters: APPLICATION_PARAMS, body: ANY_APPLICATION_SETTINGS },
    responses: {
      200: `The application as it now runs: ${APPLICATION_BODY}`,
      400: "The settings fail the application's schema (each offending field named); nothing was changed",
      404: NO_APPLICATION,
      409: 'Another profile became active meanwhile (`profile-contended`); nothing was changed',
    },
    needs: { tables: { profiles: 'write', changelog: 'write' } },
  },
  ...(['stop', 'start', 'restart'] as const).map(
    (action): LiveRoute => ({
      method: 'PUT',
      path: `/applications/{name}/${action}`,
      operationId: `${action}Application`,
      summary: {
        stop: 'Stop an application: each of its routes answers 503 with Retry-After (within 10 s everywhere) until it is started',
        start: 'Start a stopped application',
        restart: 'Restart a running application: every warm function of it re-reads its settings and drops what it cached',
      }[action],
      tag: 'applications',
      handler: `applications/handlers/${action}`,
      roles: ['admin'],
      request: { pathParameters: APPLICATION_PARAMS, body: EMPTY_BODY },
      responses: {
        200: `The application, \`state\` ${action === 'stop' ? 'STOPPED (already stopped: unchanged)' : action === 'start' ? 'RUNNING (already running: unchanged)' : 'RUNNING, `restarted` now'}`,
        400: 'The name is invalid, or a body was sent',
        404: NO_APPLICATION,
        409: action === 'restart' ? 'The application is stopped (`application-stopped`): start it instead; or another change landed meanwhile' : 'Another change of its state landed meanwhile; nothing was changed',
      },
      needs: { tables: { profiles: 'write', changelog: 'write' } },
    }),
  ),
  {
    method: 'PUT',
    path: '/applications/{name}/loglevel',
    operationId: 'setApplicationLogLevel',
    summary: "Set an application's log level (in the active profile; every function of it follows within 10 s)",
    tag: 'applications',
    handler: 'applications/handlers/loglevel',
    roles: ['admin'],
    request: {
      pathParameters: APPLICATION_PARAMS,
      body: { type: 'object', required: ['level'], additionalProperties: false, properties: { level: { type: 'string', enum: [...LOG_LEVELS] } } },
    },
    responses: {
      200: `The application: ${APPLICATION_BODY}`,
      400: 'The level or the name is invalid',
      404: NO_APPLICATION,
      409: 'Another profile became active meanwhile (`profile-contended`); nothing was changed',
    },
    needs: { tables: { profiles: 'write', changelog: 'write' } },
  },
  {
    method: 'GET',
    path: '/schema/applications/{name}',
    operationId: 'getApplicationSchema',
    summary: "The JSON Schema of an application's settings (what PUT /applications/{name} validates)",
    tag: 'applications',
    handler: 'applications/handlers/schema',
    roles: ['admin', 'apiread'],
    request: { pathParameters: APPLICATION_PARAMS, body: EMPTY_BODY },
    responses: { 200: '`{ "schema": <JSON Schema> }`', 400: 'The name is invalid, or a body was sent', 404: NO_APPLICATION },
    needs: {},
  },
];

/**
 * What an application depends on: every table its routes use (read access is enough to check
 * one), and the secrets store when one of its routes resolves secrets.
 */
export const applicationDependencies = (name: ApplicationName): LiveRoute['needs'] => {
  const routes = serviceRoutes.filter((r) => applicationOf(r.path) === name);
  const tables = Object.fromEntries(routes.flatMap((r) => Object.keys(r.needs.tables ?? {})).map((key) => [key, 'read'])) as Partial<Record<TableKey, TableAccess>>;
  return { tables: { ...tables, profiles: 'read' }, ...(routes.some((r) => r.needs.secrets) ? { secrets: 'read' as const } : {}) };
};

const everyDependency = (): LiveRoute['needs'] => {
  const all = APPLICATIONS.map(applicationDependencies);
  return { tables: Object.assign({}, ...all.map((n) => n.tables)), ...(all.some((n) => n.secrets) ? { secrets: 'read' as const } : {}) };
};

const healthRoutes = (): readonly LiveRoute[] => [
  {
    method: 'GET',
    path: '/health/applications',
    operationId: 'getApplicationsHealth',
    summary: 'State of each application and the health of what it depends on',
    tag: 'operations',
    handler: 'health/handlers/applications',
    roles: ['admin', 'apiread'],
    request: { body: EMPTY_BODY },
    responses: {
      200: 'Every application runs and its dependencies answer: `{ status: "up", health: "up", checkedAt, applications: [{ name, state, status, dependencies }] }`; each application\'s `status` is up, stopped or down',
      503: 'An application is stopped or a dependency is down: problem+json carrying the same `checkedAt` and `applications`',
    },
    needs: everyDependency(),
  },
  {
    method: 'GET',
    path: '/health/applications/{name}',
    operationId: 'getApplicationHealth',
    summary: 'State of one application and the health of what it depends on (its tables; the secrets store for orch_manager)',
    tag: 'operations',
    handler: 'health/handlers/application',
    roles: ['admin', 'apiread'],
    request: { pathParameters: APPLICATION_PARAMS, body: EMPTY_BODY },
    responses: {
      200: 'The application runs and its dependencies answer: `{ name, state, status: "up", health: "up", checkedAt, dependencies }`',
      400: 'The name is invalid, or a body was sent',
      404: NO_APPLICATION,
      503: 'The application is stopped (`health` "stopped") or a dependency is down (`health` "down"): problem+json carrying the same members',
    },
    needs: everyDependency(),
  },
];

/**
 * The functions that use DynamoDB, and every route of an application, read the active profile
 * (their log level; for the routes of an application, whether it runs): read access to the
 * profiles table unless they write it. The routes of an application are marked with it. A
 * function with no table (`/status`, `/health/server`, the schema routes) depends on nothing
 * and logs at the deployment's `LOG_LEVEL`.
 */
const withRuntimeSettings = (route: LiveRoute): LiveRoute => {
  const application = applicationOf(route.path);
  const reads = (application !== undefined || Object.keys(route.needs.tables ?? {}).length > 0) && route.needs.tables?.profiles === undefined;
  const stopped = `${application} is stopped (\`application-stopped\`, \`application\` names it)`;
  return {
    ...route,
    ...(application
      ? { application, responses: { ...route.responses, 503: route.responses[503] ? `${route.responses[503]}; or ${stopped}` : `A dependency is unavailable, or ${stopped}` } }
      : {}),
    ...(reads ? { needs: { ...route.needs, tables: { ...route.needs.tables, profiles: 'read' } } } : {}),
  };
};

export const liveRoutes: readonly LiveRoute[] = [...serviceRoutes, ...runtimeRoutes, ...healthRoutes()].map(withRuntimeSettings);

/** The live route with this operation id (throws on an unknown id: a programming error). */
export const liveRoute = (operationId: string): LiveRoute => {
  const route = liveRoutes.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`unknown operation ${operationId}`);
  return route;
};
