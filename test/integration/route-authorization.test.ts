/**
 * Every route function checks the caller again, behind the authorizer: for each non-public
 * route of the route table, its real handler, given the route's own `ROUTE_ROLES` (as the stack
 * sets it), refuses with 403 an event without the authorizer's context, one whose context lacks
 * the principal or the roles, and one whose roles allow none of the route's; with a role the
 * route allows, the same event gets past the check (whatever the handler answers next, never
 * this 403). A public route lets every event through.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildConsole } from '../../console/build.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { CONSOLE_ENV, consoleEnvironment } from '../../functions/console/model.js';
import { ROUTE_ROLES_VARIABLE, parseRouteRoles, routeRolesValue } from '../../functions/platform/route-authorization.js';
import { ROLES, type LiveRoute, type Role } from '../../functions/platform/route.js';
import { tableEnv, tableSpecs } from '../../functions/platform/tables.js';
import type { TableKey } from '../../functions/platform/route.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { importHandlers, type Handler } from '../support/handlers.js';

const guarded = liveRoutes.filter((r): r is LiveRoute & { roles: readonly Role[] } => r.roles !== 'public');
const publicRoutes = liveRoutes.filter((r) => r.roles === 'public');
let handlers: Record<string, Handler>;

beforeAll(async () => {
  // What the handlers read at load; no request in this file reaches a table or a secret.
  for (const key of Object.keys(tableSpecs) as TableKey[]) vi.stubEnv(tableEnv(key), `absent-${key}`);
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', path.join(mkdtempSync(path.join(tmpdir(), 'route-authorization-')), 'secrets.json'));
  vi.stubEnv('COMPLIANCE_FUNCTION', 'arn:aws:lambda:eu-west-1:123456789012:function:absent');
  // The console's routes serve its build and sign-in settings, as the stack gives them.
  const built = buildConsole();
  firstScript = built.manifest.firstLoad.scripts[0]!;
  const signIn = {
    authorizationEndpoint: 'https://idp/oauth2/authorize',
    tokenEndpoint: 'https://idp/oauth2/token',
    clientId: 'c',
    scopes: ['openid'],
    rolesClaim: 'roles',
  };
  for (const [key, value] of Object.entries({ ...consoleEnvironment(signIn), [CONSOLE_ENV.files]: built.dir })) vi.stubEnv(key, value);
  handlers = await importHandlers(Object.fromEntries(liveRoutes.map((r) => [r.operationId, r.handler])));
});
afterAll(() => vi.unstubAllEnvs());

/** The route's event as API Gateway would send it, with this authorizer context (or none). */
let firstScript: string;
const eventOf = (route: LiveRoute, authorizer: Record<string, string> | undefined) => {
  // The one public route with a path parameter names a file of the console's build.
  const pathParameters = route.path === '/console/assets/{file}' ? { file: firstScript } : undefined;
  const event = apiEvent({ method: route.method, resource: route.path, authorizer: authorizer ?? {}, ...(pathParameters ? { pathParameters } : {}) });
  if (authorizer === undefined) delete (event.requestContext as { authorizer?: unknown }).authorizer;
  return event;
};

const call = async (route: LiveRoute, authorizer: Record<string, string> | undefined) => {
  vi.stubEnv(ROUTE_ROLES_VARIABLE, routeRolesValue(route.roles));
  return invoke(handlers[route.operationId]!, eventOf(route, authorizer), lambdaContext(10_000, route.operationId, { frozen: true }));
};

const expectRefused = (res: Awaited<ReturnType<typeof invoke>>) => {
  expect(res.status).toBe(403);
  expect(res.contentType).toBe('application/problem+json');
  expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:forbidden', status: 403, title: 'Forbidden' });
};

describe('every non-public route function checks the caller again', () => {
  it('covers the route table', () => {
    expect(guarded.length).toBeGreaterThan(40);
    expect(publicRoutes.length).toBeGreaterThan(0);
  });

  it.each(guarded.map((r) => [r.operationId, r] as const))('%s refuses an event without the authorizer context', async (_id, route) => {
    expectRefused(await call(route, undefined));
    expectRefused(await call(route, {}));
    expectRefused(await call(route, { principalId: 'p', principal: 'p' }));
    expectRefused(await call(route, { roles: route.roles[0]! }));
    expectRefused(await call(route, { principalId: '', roles: route.roles[0]! }));
  });

  it.each(guarded.map((r) => [r.operationId, r] as const))('%s refuses roles that do not allow it, and lets an allowed one through', async (_id, route) => {
    const others = ROLES.filter((role) => !route.roles.includes(role));
    for (const roles of [...others, 'operator', 'Admin', `${route.roles[0]} `, '']) {
      const res = await call(route, { principalId: 'p', principal: 'p', roles });
      expectRefused(res);
    }
    for (const role of route.roles) {
      const res = await call(route, { principalId: 'p', principal: 'p', roles: `operator,${role}` });
      expect(res.body?.type, `${route.operationId} with ${role}`).not.toBe('urn:netconfig:problem:forbidden');
    }
  });

  it.each(publicRoutes.map((r) => [r.operationId, r] as const))('%s (public) answers without any authorizer context', async (_id, route) => {
    const res = await call(route, undefined);
    expect(res.status).toBe(200);
  });
});

describe('the route roles a function is given', () => {
  it('reads a list of known roles or public, and nothing else', () => {
    expect(parseRouteRoles('admin,apiread')).toEqual(['admin', 'apiread']);
    expect(parseRouteRoles('admin')).toEqual(['admin']);
    expect(parseRouteRoles('public')).toBe('public');
    for (const bad of [undefined, '', ',', 'admin,', 'operator', 'PUBLIC', 'admin,public']) expect(parseRouteRoles(bad), String(bad)).toBeUndefined();
  });

  it('refuses every request (500) when the function was given none: it cannot tell who may call it', async () => {
    const route = guarded[0]!;
    for (const value of ['', 'operator']) {
      vi.stubEnv(ROUTE_ROLES_VARIABLE, value);
      const res = await invoke(
        handlers[route.operationId]!,
        eventOf(route, { principalId: 'p', roles: 'admin' }),
        lambdaContext(10_000, 'x', { frozen: true }),
      );
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:internal' });
    }
  });
});
