/** The routes spec section 9.1 removed: each answers 410 with its successors. */
import type { RemovedMethod, RemovedRoute } from '../platform/route.js';

/** Spec section 9.1, row for row. `/appUpdate/changeLog/` keeps the spec's trailing slash. */
const removed = (
  method: RemovedMethod,
  path: string,
  description: string,
  deprecatedIn: string,
  removedIn: string,
  replacement: readonly string[],
): RemovedRoute => ({ method, path, description, deprecatedIn, removedIn, replacement });

/**
 * Every row of spec 9.1. Two rows (`GET /health/system`, `GET /health/server`) name
 * themselves as their replacement: their paths serve the live health routes, so they are
 * listed here for the record and left out of {@link removedRoutes}.
 */
export const deprecatedItems: readonly RemovedRoute[] = [
  removed('ANY', '/isAlive', 'Gets the status of the server', '2018.3', '2021.1', ['/status']),
  removed('DELETE', '/config/profile/delete/{id}', 'Deletes a profile', '2020.2', '2021.2', ['DELETE /profiles/:id']),
  removed('DELETE', '/config/services/delete/{name}', 'Deletes a service config', '2020.2', '2021.2', ['DELETE /adapters/:name']),
  removed('DELETE', '/providers/{id}', 'Deletes an adapter', '2020.2', '2021.2', ['DELETE /adapters/:name']),
  removed('GET', '/config/active_services', 'Gets all active services', '2020.2', '2021.2', ['GET /adapters', 'GET /applications']),
  removed('GET', '/config/active_adapters', 'Gets all active adapters', '2020.2', '2021.2', ['GET /adapters']),
  removed('GET', '/config/profiles', 'Gets all profiles', '2020.2', '2021.2', ['GET /profiles']),
  removed('GET', '/config/profiles/sync', 'Tells whether the active profile is in sync with the system', '2020.2', '2021.2', ['GET /profiles']),
  removed('GET', '/config/property', 'Gets properties of the active profile', '2020.2', '2021.2', ['GET /profiles']),
  removed('GET', '/config/property/id/{id}', 'Gets properties of a profile', '2020.2', '2021.2', ['GET /profiles/:id']),
  removed('GET', '/config/property/schema', 'Gets the properties schema', '2020.2', '2021.2', ['GET /schema/profiles']),
  removed('GET', '/config/services', 'Gets all service configs', '2020.2', '2021.2', ['GET /adapters', 'GET /applications']),
  removed('GET', '/config/services/schema', 'Gets the service config schema', '2020.2', '2021.2', [
    'GET /schema/adapters/:name',
    'GET /schema/applications/:name',
  ]),
  removed('GET', '/config/services/sync', 'Tells which services are in sync', '2020.2', '2021.2', ['GET /adapters', 'GET /applications']),
  removed('GET', '/health/system', 'Gets health of the system', '2020.2', '2021.2', ['GET /health/system']),
  removed('GET', '/health/server', 'Gets health of the server', '2020.2', '2021.2', ['GET /health/server']),
  removed('GET', '/health/modules', 'Gets health of each service', '2020.2', '2021.2', ['GET /health/adapters', 'GET /health/applications']),
  removed('GET', '/health/module/{module}', 'Gets health of one service', '2020.2', '2021.2', ['GET /health/adapters/:name', 'GET /health/applications/:name']),
  removed('GET', '/modules/stop/{module}', 'Stops a running service', '2020.2', '2021.2', ['PUT /adapters/:name/stop', 'PUT /applications/:name/stop']),
  removed('GET', '/modules/start/{module}', 'Starts a service', '2020.2', '2021.2', ['PUT /adapters/:name/start', 'PUT /applications/:name/start']),
  removed('GET', '/modules/restart/{module}', 'Restarts a running service', '2020.2', '2021.2', [
    'PUT /adapters/:name/restart',
    'PUT /applications/:name/restart',
  ]),
  removed('GET', '/providers', 'Gets all adapters', '2020.2', '2021.2', ['GET /adapters']),
  removed('GET', '/providers/{id}', 'Gets an adapter by id', '2020.2', '2021.2', ['GET /adapters/:name']),
  removed('GET', '/providers/{id}/schema', 'Gets the schema for one adapter type', '2020.2', '2021.2', ['GET /schema/adapters/:name']),
  removed('GET', '/providers/schema', 'Gets the schema for adapters', '2020.2', '2021.2', ['GET /schema/adapters/:name']),
  removed('POST', '/config/profile/add', 'Creates a profile', '2020.2', '2021.2', ['POST /profiles']),
  removed('POST', '/config/profiles/change', 'Changes the active profile', '2020.2', '2021.2', ['PUT /profiles/:id/active']),
  removed('POST', '/config/property/new', 'Adds a property to a profile', '2020.2', '2021.2', ['PUT /profiles/:id']),
  removed('POST', '/config/property/update', 'Updates a profile property', '2020.2', '2021.2', ['PUT /profiles/:id']),
  removed('POST', '/config/services/create', 'Creates a service config', '2020.2', '2021.2', ['POST /adapters']),
  removed('POST', '/config/services/save', 'Updates a service config', '2020.2', '2021.2', ['PUT /adapters/:name', 'PUT /applications/:name']),
  removed('POST', '/modules/load', 'Creates a new app at runtime', '2020.2', '2021.2', []),
  removed('POST', '/modules/setLogging', 'Sets log levels of a service at runtime', '2020.2', '2021.2', [
    'PUT /adapters/:name/loglevel',
    'PUT /applications/:name/loglevel',
  ]),
  removed('POST', '/providers/schema/update', 'Gets the current schema for each adapter type', '2020.2', '2021.2', ['GET /schema/adapters/:name']),
  removed('POST', '/appUpdate/changeLog/', 'Gets the changelog of a service', '2020.2', '2021.2', [
    'GET /adapters/:name/changelogs',
    'GET /application/:name/changelogs',
  ]),
  removed('PUT', '/providers/{id}', 'Creates or updates an adapter', '2020.2', '2021.2', ['PUT /adapters/:name']),
];

/** True when a deprecated item's replacement is the very route it names (its path now serves the replacement). */
export const replacesItself = (item: RemovedRoute): boolean => item.replacement.length === 1 && item.replacement[0] === `${item.method} ${item.path}`;

/** The removed routes that answer 410: every row of 9.1 except the two that replace themselves. */
export const removedRoutes: readonly RemovedRoute[] = deprecatedItems.filter((item) => !replacesItself(item));

/** How a removed route is named to users: `METHOD /path`, or the bare path for `ANY`. */
export const removedRouteName = (route: RemovedRoute): string =>
  route.method === 'ANY' ? route.path : `${route.method} ${route.path.replaceAll(/\{(\w+)\}/g, ':$1')}`;

/**
 * The paths a 410's `Link` header points at: each replacement that is a path, its `:params`
 * filled, in order, by the removed route's own path parameters (`GET /config/property/id/:id`
 * → `/profiles/{id}`, `{id}` being the removed route's). A replacement needing a parameter the
 * removed route does not have (`/config/services/schema` → `/schema/adapters/:name`) has no
 * concrete path and gets no link.
 */
export const successorLinks = (route: RemovedRoute): string[] => {
  const own = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return route.replacement.flatMap((r) => {
    let next = 0;
    const path = r.replace(/^[A-Z]+ /, '').replace(/:(\w+)/g, () => (next < own.length ? `{${own[next++]}}` : ':'));
    return path.includes(':') ? [] : [path];
  });
};
