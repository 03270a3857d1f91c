/** The routes of the service's applications (`functions/api/routes.ts` assembles the API). */
import { APPLICATION_PARAMS, NO_APPLICATION } from './schemas.js';
import { APPLICATIONS } from '../platform/applications.js';
import type { JsonSchema } from '../platform/json-schema.js';
import { LOG_LEVELS } from '../platform/logger.js';
import { EMPTY_BODY, type LiveRoute, pageQuery } from '../platform/route.js';
import { APPLICATION_SETTINGS_SCHEMAS } from '../runtime/profile-model.js';

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

/** The audit trail of an application, under its spec 9.1 singular path too. */
export const applicationChangelogRoutes: readonly LiveRoute[] = [
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
        pathParameters: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', minLength: 1, maxLength: 128, description: `An application: ${APPLICATIONS.join(', ')}` } },
        },
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
];

/** The applications: list, read, settings, lifecycle, log level, schema. */
export const applicationRoutes: readonly LiveRoute[] = [
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
    needs: { tables: { profiles: 'write', changelog: 'append' } },
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
        409:
          action === 'restart'
            ? 'The application is stopped (`application-stopped`): start it instead; or another change landed meanwhile'
            : 'Another change of its state landed meanwhile; nothing was changed',
      },
      needs: { tables: { profiles: 'write', changelog: 'append' } },
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
    needs: { tables: { profiles: 'write', changelog: 'append' } },
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
