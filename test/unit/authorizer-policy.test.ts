import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as policyModule from '../../functions/authorizer/policy.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { ROLES, type LiveRoute, type Role } from '../../functions/platform/route.js';
import { methodArn, policyAllows, resourceMatches, TEST_ACCOUNT, TEST_API, TEST_REGION, TEST_STAGE } from '../../tools/simulators/jwks.js';

// Each test gets the module afresh: policies the route table yields are cached in the module, and a
// policy built by an earlier test (or by mutation testing's first run) would otherwise be returned
// without the code under test running at all. The module's constants (the ARN segment patterns)
// are built at load, so every function comes from the fresh module, not from a static import.
let { policyFor, allowedRoutes, parseMethodArn, rolesFromClaim, routeResource } = policyModule;
beforeEach(async () => {
  vi.resetModules();
  ({ policyFor, allowedRoutes, parseMethodArn, rolesFromClaim, routeResource } = await import('../../functions/authorizer/policy.js'));
});

const ROLE_SETS: readonly (readonly Role[])[] = [[], ['admin'], ['apiread'], ['admin', 'apiread']];
const PREFIX = `arn:aws:execute-api:${TEST_REGION}:${TEST_ACCOUNT}:${TEST_API}/${TEST_STAGE}/`;
const TREE_ARN = methodArn('GET', '/configuration_manager/configs/0123456789abcdef01234567');

/** A concrete request path of a route: every `{param}` filled with a plausible value. */
const concretePath = (route: LiveRoute, value = 'x1'): string => route.path.replaceAll(/\{[^}]+\}/g, value);
const mayCall = (roles: readonly Role[], route: LiveRoute): boolean => route.roles !== 'public' && route.roles.some((r) => roles.includes(r));

describe('policyFor over the route table', () => {
  for (const roles of ROLE_SETS) {
    for (const route of liveRoutes) {
      const expected = mayCall(roles, route);
      it(`${expected ? 'allows' : 'does not allow'} ${route.method} ${route.path} for roles [${roles.join(',')}]`, () => {
        const policy = policyFor(roles, TREE_ARN);
        for (const value of ['x1', '0123456789abcdef01234567', 'with space', 'a.b-c_d']) {
          expect(policyAllows(policy, methodArn(route.method, concretePath(route, value)))).toBe(expected);
        }
      });
    }
  }

  it('lists every allowed route as its own resource, parameters as *, whatever route was called', () => {
    const expected = [
      'GET/configuration_manager/configs/*',
      'GET/configuration_manager/configs',
      'GET/configuration_manager/configs/*/*',
      'GET/configuration_manager/configs/*/*/nodes/*',
      'GET/configuration_manager/exports/*',
      'GET/configuration_manager/configs/*/exemptions',
      'GET/configuration_manager/configs/*/exemptions/*',
      'GET/configuration_manager/configs/*/changelogs',
      'GET/schema/adapters/*',
      'GET/health/system',
      'GET/health/server',
      'GET/health/adapters',
      'GET/health/adapters/*',
      'GET/configuration_manager/compliance_reports/batches',
      'GET/configuration_manager/compliance_reports/batches/*/delta',
      'GET/configuration_manager/compliance_reports/batches/*',
      'GET/configuration_manager/compliance_reports/batches/*/reports',
      'GET/configuration_manager/compliance_reports/*',
      'GET/configuration_manager/compliance_plans',
      'GET/configuration_manager/compliance_plans/*',
      'GET/configuration_manager/compliance_plans/*/trend',
      'GET/configuration_manager/compliance_plans/*/devices/*',
      'GET/configuration_manager/remediations/*',
      'GET/configuration_manager/remediations/*/devices',
      'GET/configuration_manager/devices',
      'GET/configuration_manager/devices/*/*/configs',
      'GET/configuration_manager/devices/*/*/configs/*',
      'GET/configuration_manager/devices/*/*/configs/*/diff',
      'GET/profiles',
      'GET/profiles/*',
      'GET/schema/profiles',
      'GET/applications',
      'GET/applications/*',
      'GET/schema/applications/*',
      'GET/health/applications',
      'GET/health/applications/*',
    ].map((r) => `${PREFIX}${r}`);
    for (const arn of [TREE_ARN, methodArn('GET', '/health/server'), methodArn('POST', '/orch_manager/restAction/nso')]) {
      expect(policyFor(['apiread'], arn)).toEqual({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: expected },
          // `GET/applications/*` covers the admin-only changelogs of an application (IAM's * spans slashes).
          { Effect: 'Deny', Action: 'execute-api:Invoke', Resource: [`${PREFIX}GET/applications/*/changelogs`, `${PREFIX}GET/applications/*/changelogs/`] },
        ],
      });
    }
  });

  it('gives admin one resource per non-public live route and nothing for public ones', () => {
    const [statement] = policyFor(['admin'], TREE_ARN).Statement;
    const resources = (statement as { Resource: string[] }).Resource;
    const guarded = liveRoutes.filter((r) => r.roles !== 'public');
    expect(resources).toHaveLength(guarded.length);
    expect(resources).toEqual(guarded.map((r) => `${PREFIX}${routeResource(r)}`));
    expect(resources.some((r) => r.includes('/status'))).toBe(false);
  });

  it('never grants a wildcard over routes: a * only stands for a path parameter', () => {
    for (const roles of ROLE_SETS.slice(1)) {
      const [statement] = policyFor(roles, TREE_ARN).Statement;
      for (const resource of (statement as { Resource: string[] }).Resource) {
        const suffix = resource.slice(PREFIX.length);
        expect(suffix).toMatch(/^(GET|POST|PUT|PATCH|DELETE)\/[A-Za-z0-9_/*-]+$/);
        expect(
          suffix
            .split('/')
            .filter((s) => s.includes('*'))
            .every((s) => s === '*'),
        ).toBe(true);
        expect(suffix.startsWith('*')).toBe(false);
      }
    }
  });

  it('denies explicitly every route the roles may not call that an allowed pattern covers (IAM * spans slashes), and nothing else', () => {
    for (const roles of ROLE_SETS) {
      const policy = policyFor(roles, TREE_ARN);
      const resources = (effect: string): string[] =>
        policy.Statement.filter((s) => s.Effect === effect).flatMap((s) => ('Resource' in s && s.Resource !== undefined ? [s.Resource].flat() : []));
      const allows = resources('Allow');
      const denies = resources('Deny');
      for (const route of liveRoutes) {
        // A path with one trailing slash is served as the route itself: it must be refused alike.
        for (const [value, slash] of [
          ['x1', ''],
          ['x1', '/'],
          ['a/b', ''],
          ['a/b', '/'],
        ] as const) {
          const arn = methodArn(route.method, `${concretePath(route, value)}${slash}`);
          const covered = allows.some((p) => resourceMatches(p, arn));
          const denied = denies.some((p) => resourceMatches(p, arn));
          if (mayCall(roles, route) && value === 'x1') expect(denied, `${route.method} ${route.path}`).toBe(false);
          if (!mayCall(roles, route) && covered) expect(denied, `${route.method} ${route.path} for [${roles.join(',')}]`).toBe(true);
        }
      }
    }
    // The route table has such a case today: apiread reads one application, never its changelogs.
    const apiread = policyFor(['apiread'], TREE_ARN);
    expect(policyAllows(apiread, methodArn('GET', '/applications/orch_manager'))).toBe(true);
    expect(policyAllows(apiread, methodArn('GET', '/applications/orch_manager/changelogs'))).toBe(false);
    expect(policyAllows(apiread, methodArn('GET', '/applications/orch_manager/changelogs/'))).toBe(false);
    expect(policyAllows(policyFor(['admin'], TREE_ARN), methodArn('GET', '/applications/orch_manager/changelogs'))).toBe(true);
  });

  it('refuses to build a policy whose Deny would also catch a route the roles may call', () => {
    const route = (method: 'GET', path: string, roles: LiveRoute['roles']) => ({ ...liveRoutes[0]!, method, path, roles, operationId: path });
    // `GET/a/*` covers the admin route `GET/a/*/b`, whose Deny would also catch `GET/a/x1/x1/b`.
    const routes = [route('GET', '/a/{id}', ['apiread']), route('GET', '/a/{id}/b', ['admin']), route('GET', '/a/{id}/{y}/b', ['apiread'])];
    expect(() => policyFor(['apiread'], TREE_ARN, routes)).toThrow(/would also refuse the allowed route GET \/a\/\{id\}\/\{y\}\/b/);
  });

  const tableRoute = (path: string, roles: LiveRoute['roles']): LiveRoute => ({ ...liveRoutes[0]!, method: 'GET', path, roles, operationId: path });
  const denyOf = (policy: ReturnType<typeof policyFor>): unknown => policy.Statement.find((s) => s.Effect === 'Deny');

  it('denies a route an allowed pattern covers only in its trailing-slash form', () => {
    // `GET/a/*` matches `GET/a/` (the route `GET /a` as served with one slash) but not `GET/a`.
    const policy = policyFor(['apiread'], TREE_ARN, [tableRoute('/a/{id}', ['apiread']), tableRoute('/a', ['admin'])]);
    expect(denyOf(policy)).toEqual({ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: [`${PREFIX}GET/a`, `${PREFIX}GET/a/`] });
  });

  it('never lists a public route in the Deny, even one an allowed pattern covers', () => {
    const policy = policyFor(['apiread'], TREE_ARN, [tableRoute('/a/{id}', ['apiread']), tableRoute('/a/{id}/open', 'public')]);
    expect(policy.Statement).toEqual([{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: [`${PREFIX}GET/a/*`] }]);
  });

  it('matches a pattern literally but for its *: a dot in a path is a dot', () => {
    const routes = [tableRoute('/v1.0/{id}', ['apiread']), tableRoute('/v1.0/{id}/y', ['admin']), tableRoute('/v1x0/{id}/y', ['admin'])];
    expect(denyOf(policyFor(['apiread'], TREE_ARN, routes))).toEqual({
      Effect: 'Deny',
      Action: 'execute-api:Invoke',
      Resource: [`${PREFIX}GET/v1.0/*/y`, `${PREFIX}GET/v1.0/*/y/`],
    });
  });

  it('adds no Deny statement when nothing allowed covers a forbidden route', () => {
    expect(policyFor(['admin'], TREE_ARN).Statement).toHaveLength(1);
    expect(policyFor(['admin', 'apiread'], TREE_ARN).Statement).toHaveLength(1);
  });

  it('builds a policy over a given route table afresh, never from or into the cache of the route table', () => {
    const routes = [tableRoute('/a/{id}', ['apiread'])];
    policyFor(['apiread'], TREE_ARN);
    const policy = policyFor(['apiread'], TREE_ARN, routes);
    expect(policy.Statement).toEqual([{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: [`${PREFIX}GET/a/*`] }]);
    expect(policyFor(['apiread'], TREE_ARN, routes)).not.toBe(policy);
    expect(Object.isFrozen(policy)).toBe(false);
    expect(Object.isFrozen(policy.Statement[0])).toBe(false);
  });

  it('keeps an apiread policy produced for GET tree from allowing POST relay (policy cache)', () => {
    const policy = policyFor(['apiread'], TREE_ARN);
    expect(policyAllows(policy, TREE_ARN)).toBe(true);
    expect(policyAllows(policy, methodArn('POST', '/orch_manager/restAction/nso-1'))).toBe(false);
    expect(policyAllows(policy, methodArn('POST', '/configuration_manager/configs'))).toBe(false);
    expect(policyAllows(policyFor(['admin'], TREE_ARN), methodArn('POST', '/orch_manager/restAction/nso-1'))).toBe(true);
  });

  it('scopes every resource to the API and stage of the invoked method', () => {
    const policy = policyFor(['admin'], methodArn('GET', '/adapters', 'otherapi', 'prod'));
    expect(policyAllows(policy, methodArn('GET', '/adapters', 'otherapi', 'prod'))).toBe(true);
    expect(policyAllows(policy, methodArn('GET', '/adapters'))).toBe(false);
    expect(policyAllows(policy, methodArn('GET', '/adapters', 'otherapi', 'v1'))).toBe(false);
  });

  it('returns an explicit Deny over the stage when the roles allow nothing', () => {
    const policy = policyFor([], TREE_ARN);
    expect(policy.Statement).toEqual([{ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: `${PREFIX}*` }]);
    for (const route of liveRoutes) expect(policyAllows(policy, methodArn(route.method, concretePath(route)))).toBe(false);
  });
});

describe('policyFor cache', () => {
  it('shares one frozen policy per API, stage and roles, whatever the route called', () => {
    const policy = policyFor(['apiread'], TREE_ARN);
    expect(policyFor(['apiread'], methodArn('POST', '/orch_manager/restAction/nso'))).toBe(policy);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.Statement)).toBe(true);
    for (const statement of policy.Statement) {
      expect(Object.isFrozen(statement)).toBe(true);
      expect(Object.isFrozen((statement as { Resource: string[] }).Resource)).toBe(true);
    }
    expect(policyFor(['admin'], TREE_ARN)).not.toBe(policy);
  });

  it('keeps apart the stages of one API, and the APIs of one stage', () => {
    const v1 = policyFor(['admin'], methodArn('GET', '/adapters', TEST_API, 'v1'));
    const v2 = policyFor(['admin'], methodArn('GET', '/adapters', TEST_API, 'v2'));
    expect(policyAllows(v1, methodArn('GET', '/adapters', TEST_API, 'v1'))).toBe(true);
    expect(policyAllows(v2, methodArn('GET', '/adapters', TEST_API, 'v2'))).toBe(true);
    expect(policyAllows(v2, methodArn('GET', '/adapters', TEST_API, 'v1'))).toBe(false);
    const other = policyFor(['admin'], methodArn('GET', '/adapters', 'b1', 'v1'));
    expect(policyAllows(other, methodArn('GET', '/adapters', 'b1', 'v1'))).toBe(true);
    expect(policyAllows(other, methodArn('GET', '/adapters', TEST_API, 'v1'))).toBe(false);
  });

  it('holds at most 64 policies, then starts over', async () => {
    vi.resetModules();
    const fresh = await import('../../functions/authorizer/policy.js');
    const arnOf = (i: number) => methodArn('GET', '/adapters', TEST_API, `s${i}`);
    const first = fresh.policyFor(['admin'], arnOf(0));
    for (let i = 1; i < 64; i += 1) fresh.policyFor(['admin'], arnOf(i));
    expect(fresh.policyFor(['admin'], arnOf(0))).toBe(first);
    fresh.policyFor(['admin'], arnOf(64));
    const again = fresh.policyFor(['admin'], arnOf(0));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});

describe('routeResource', () => {
  it('turns only whole parameters into *: braces spanning a slash are not a parameter', () => {
    expect(routeResource({ method: 'GET', path: '/a/{id}/b/{name}' })).toBe('GET/a/*/b/*');
    expect(routeResource({ method: 'GET', path: '/a/{x/y}' })).toBe('GET/a/{x/y}');
  });
});

describe('allowedRoutes', () => {
  it('allows a route to a caller holding any one of its roles', () => {
    const shared = { ...liveRoutes[0]!, roles: ['admin', 'apiread'] as Role[] };
    expect(allowedRoutes(['apiread'], [shared])).toEqual([shared]);
    expect(allowedRoutes(['admin'], [shared])).toEqual([shared]);
    expect(allowedRoutes([], [shared])).toEqual([]);
  });
});

describe('rolesFromClaim', () => {
  it.each([
    ['a string', 'admin', []],
    ['a near miss', ['admins'], []],
    ['another case', ['Admin', 'APIREAD'], []],
    ['missing', undefined, []],
    ['an object', { admin: true }, []],
    ['a comma list in one string', ['admin,apiread'], []],
    ['unknown names beside a known one', ['auditor', 'admin', 7, null], ['admin']],
    ['both roles, repeated, any order', ['apiread', 'admin', 'apiread'], ['admin', 'apiread']],
  ] as const)('counts exact members of an array only: %s', (_label, claim, expected) => {
    expect(rolesFromClaim(claim)).toEqual(expected);
  });

  it('knows exactly the roles of the route table', () => {
    expect(rolesFromClaim([...ROLES])).toEqual([...ROLES]);
  });
});

describe('parseMethodArn', () => {
  it('splits a method ARN, keeping a colon inside the request path out of the prefix', () => {
    expect(parseMethodArn(`${PREFIX}GET/adapters/a:b`)).toEqual({
      region: TEST_REGION,
      accountId: TEST_ACCOUNT,
      apiId: TEST_API,
      stage: TEST_STAGE,
      prefix: PREFIX,
    });
    expect(parseMethodArn('arn:aws-cn:execute-api:cn-north-1:123456789012:abc/dev/GET/x').prefix).toBe(
      'arn:aws-cn:execute-api:cn-north-1:123456789012:abc/dev/',
    );
  });

  it.each([
    'arn:aws:lambda:eu-west-1:123456789012:function/x',
    'arn:aws:execute-api:eu-west-1:123456789012:*/v1/GET/x',
    'arn:aws:execute-api:eu-west-1:123456789012:abc',
    'arn:aws:execute-api:eu-west-1::abc/v1/GET/x',
    'not an arn',
    '',
    'arx:aws:execute-api:eu-west-1:123456789012:abc/v1/GET/x',
    'arn:xaws:execute-api:eu-west-1:123456789012:abc/v1/GET/x',
    'arn:aws1:execute-api:eu-west-1:123456789012:abc/v1/GET/x',
    'arn:aws-:execute-api:eu-west-1:123456789012:abc/v1/GET/x',
    'arn:aws-CN:execute-api:eu-west-1:123456789012:abc/v1/GET/x',
    'arn::execute-api:eu-west-1:123456789012:abc/v1/GET/x',
    'arn:aws:execute-api:*eu-west-1:123456789012:abc/v1/GET/x',
    'arn:aws:execute-api:eu-west-1*:123456789012:abc/v1/GET/x',
    'arn:aws:execute-api:eu-west-1:1234 56789012:abc/v1/GET/x',
    'arn:aws:execute-api:eu-west-1:123456789012:ab:c/v1/GET/x',
    'arn:aws:execute-api:eu-west-1:123456789012:abc/v*/GET/x',
    'arn:aws:execute-api:eu-west-1:123456789012:abc//GET/x',
  ])('refuses %j', (arn) => {
    expect(() => parseMethodArn(arn)).toThrow(/method ARN/);
  });
});
