/** The routes of the service's status and health. */
import { ADAPTER_NAME } from '../adapters/schemas.js';
import { APPLICATION_PARAMS, NO_APPLICATION } from '../applications/schemas.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';

/** The service's status and the health of the system, the server and the adapters. */
export const operationsRoutes: readonly LiveRoute[] = [
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
];

/**
 * The health of the applications: `needs` is every dependency of every application
 * (`applicationDependencies` in `functions/api/routes.ts`).
 */
export const applicationHealthRoutes = (needs: LiveRoute['needs']): readonly LiveRoute[] => [
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
    needs,
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
    needs,
  },
];
