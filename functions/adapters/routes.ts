/** The routes of the adapter registry (`functions/api/routes.ts` assembles the API). */
import { ADAPTER_BODY, ADAPTER_CHANGED, ADAPTER_NAME, ADAPTER_PARAMS } from './schemas.js';
import type { JsonSchema } from '../platform/json-schema.js';
import { LOG_LEVELS } from '../platform/logger.js';
import { PATH_NAME_PATTERN_SOURCE } from '../platform/names.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';

/** Writes, lifecycle and the audit trail of adapters. */
export const adapterRoutes: readonly LiveRoute[] = [
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
    needs: { tables: { adapters: 'write', changelog: 'append' }, secrets: 'write' },
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
          name: {
            type: 'string',
            pattern: PATH_NAME_PATTERN_SOURCE,
            description: '1 to 128 letters, digits, spaces, "-", "_" or ".", no space at either end; unique without regard to case',
          },
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
    needs: { tables: { adapters: 'write', idempotency: 'write', changelog: 'append' }, secrets: 'write' },
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
    needs: { tables: { adapters: 'write', changelog: 'append' } },
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
    needs: { tables: { adapters: 'write', changelog: 'append' } },
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
    needs: { tables: { adapters: 'write', changelog: 'append' }, secrets: 'read', orchestrator: true },
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
    needs: { tables: { adapters: 'write', changelog: 'append' } },
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
];

/** The schema, reads and delete of adapters (listed after the applications' audit trail in the API). */
export const adapterReadRoutes: readonly LiveRoute[] = [
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
    responses: {
      204: 'The adapter was deleted (and the secret the service stored for it)',
      400: 'The name is invalid',
      404: 'No adapter has this name',
      409: ADAPTER_CHANGED,
    },
    needs: { tables: { adapters: 'write', changelog: 'append' }, secrets: 'write' },
  },
];
