/** The relay's route (`functions/api/routes.ts` assembles the API). */
import { ADAPTER_NAME } from '../adapters/schemas.js';
import { anyCase, type LiveRoute } from '../platform/route.js';

/** `POST /orch_manager/restAction/{adapterId}`. */
export const relayRoutes: readonly LiveRoute[] = [
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
];
