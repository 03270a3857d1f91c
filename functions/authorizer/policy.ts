/**
 * Roles → IAM policy, as plain code over the route index (`functions/generated/route-index.ts`, generated from the
 * route table; no I/O, no clock).
 *
 * API Gateway caches an authorizer's policy per token (the `Authorization` header) for the
 * whole API, not per route. A policy that allowed only the route being called would be
 * reused for every other route the same token calls within the cache TTL, and one that
 * allowed `*` would let an apiread caller who first read a tree through to the relay a
 * second later. So the policy lists exactly the routes the caller's roles allow, each as
 * its own resource, whatever route triggered the authorizer.
 */
import type { PolicyDocument, Statement } from 'aws-lambda';
import { indexedRoutes } from '../generated/route-index.js';
import { ROLES, type HttpMethod, type IndexedRoute, type Role } from '../platform/route.js';

/** The parts of an invoked method ARN the policy is built from. */
export interface MethodArnParts {
  readonly region: string;
  readonly accountId: string;
  readonly apiId: string;
  readonly stage: string;
  /** `arn:aws:execute-api:region:account:apiId/stage/`: every resource of the policy starts with it. */
  readonly prefix: string;
}

/** The ARN prefix's own segments: no `/`, `:` or `*` may appear in them. */
const SEGMENT = /^[A-Za-z0-9_.-]+$/;
const PARTITION = /^aws(-[a-z]+)*$/;

/**
 * Splits `arn:<partition>:execute-api:<region>:<account>:<apiId>/<stage>/<METHOD>/<path…>`.
 * Throws on anything else: the gateway builds this value, so a malformed one is a
 * configuration fault (the gateway answers 500), not the caller's.
 */
export const parseMethodArn = (methodArn: string): MethodArnParts => {
  const fields = methodArn.split(':');
  // The resource part (the sixth field) may itself contain `:` inside the request path.
  const [arn, partition, service, region, accountId] = fields;
  const resource = fields.slice(5).join(':');
  const [apiId, stage] = resource.split('/');
  if (
    arn !== 'arn' ||
    partition === undefined ||
    !PARTITION.test(partition) ||
    service !== 'execute-api' ||
    region === undefined ||
    !SEGMENT.test(region) ||
    accountId === undefined ||
    !SEGMENT.test(accountId) ||
    apiId === undefined ||
    !SEGMENT.test(apiId) ||
    stage === undefined ||
    !SEGMENT.test(stage)
  ) {
    throw new Error('authorizer: the invoked method ARN is not an execute-api method ARN');
  }
  return { region, accountId, apiId, stage, prefix: `arn:${partition}:execute-api:${region}:${accountId}:${apiId}/${stage}/` };
};

/**
 * The resource suffix of a route: `METHOD/path` with each `{param}` turned into `*`, e.g.
 * `GET/configuration_manager/configs/*`. Only whole path parameters become wildcards. IAM's `*`
 * spans slashes, so `GET/applications/*` also matches `GET/applications/x/changelogs`: a route
 * that a pattern of the caller's covers but the caller may not call is denied explicitly
 * ({@link policyFor}).
 */
export const routeResource = (route: Pick<IndexedRoute, 'method' | 'path'>): string => `${route.method}${route.path.replaceAll(/\{[^}/]+\}/g, '*')}`;

/** IAM's wildcard match of a resource pattern (`*`: any run of characters, `/` included). */
const covers = (pattern: string, resource: string): boolean =>
  // Mutation: the flag `'s'` → `''` is equivalent: the resources matched are built from route table paths, which
  // never hold a line break.
  new RegExp(`^${pattern.replaceAll(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`, 's').test(resource);

/** A request path of a route as a caller sends it, each parameter one plain value. */
// Mutation: the parameter regex (`[^}/]` → one character, or `[}/]+`) and `'x1'` → `''` are equivalent: the sample is
// only matched against `*`, which matches any value.
const sampleResource = (route: Pick<IndexedRoute, 'method' | 'path'>): string => `${route.method}${route.path.replaceAll(/\{[^}/]+\}/g, 'x1')}`;

/** The known roles in a roles claim: only an array counts, and only exact names in it. */
export const rolesFromClaim = (claim: unknown): Role[] => {
  if (!Array.isArray(claim)) return [];
  // Mutation: the filter removed or → `true` is equivalent: a non-string never equals a role name, so
  // `names.has(role)` answers alike.
  const names = new Set(claim.filter((v): v is string => typeof v === 'string'));
  return ROLES.filter((role) => names.has(role));
};

/** The live, non-public routes at least one of these roles may call, in route-table order. */
export const allowedRoutes = (roles: readonly Role[], routes: readonly IndexedRoute[] = indexedRoutes): IndexedRoute[] =>
  routes.filter((route) => route.roles !== 'public' && route.roles.some((role) => roles.includes(role)));

/** One allowed route as the policy names it. */
export interface AllowedResource {
  readonly method: HttpMethod;
  readonly path: string;
  readonly resource: string;
}

/**
 * The policy for a caller with these roles, for the API and stage of `methodArn`:
 * one Allow statement listing every route the roles allow, or, when they allow none, one
 * explicit Deny over the stage (API Gateway answers 403 either way for what is not allowed).
 */
export const policyFor = (roles: readonly Role[], methodArn: string, routes: readonly IndexedRoute[] = indexedRoutes): PolicyDocument => {
  // The policy depends on the ARN's API and stage and on the roles only: the few combinations a
  // container meets are built once (parsing and walking the route table cost more per call than
  // the rest of the authorizer's own work). Only for the route table itself, which never changes.
  // Mutation: `join(',')` → `join('')` is equivalent: no two role lists join to the same string (`admin`, `apiread`).
  const key = routes === indexedRoutes ? `${arnHead(methodArn)}|${roles.join(',')}` : undefined;
  const cached = key === undefined ? undefined : policies.get(key);
  if (cached) return cached;
  const { prefix } = parseMethodArn(methodArn);
  const allowed = allowedRoutes(roles, routes);
  const patterns = [...new Set(allowed.map(routeResource))];
  const statements: Statement[] =
    patterns.length > 0
      ? [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: patterns.map((p) => `${prefix}${p}`) }]
      : [{ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: `${prefix}*` }];
  const denied = deniedPatterns(allowed, patterns, routes);
  // Mutation: `patterns.length > 0` → `true`, `>= 0`, or `&&` → `||` is equivalent: `denied` is empty whenever
  // `patterns` is, so `denied.length` alone decides.
  if (patterns.length > 0 && denied.length > 0) statements.push({ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: denied.map((p) => `${prefix}${p}`) });
  const policy: PolicyDocument = { Version: '2012-10-17', Statement: statements };
  if (key !== undefined) {
    if (policies.size >= MAX_CACHED_POLICIES) policies.clear();
    // Shared between calls, so never to be changed by one of them.
    for (const statement of statements) {
      if ('Resource' in statement && Array.isArray(statement.Resource)) Object.freeze(statement.Resource);
      Object.freeze(statement);
    }
    Object.freeze(policy.Statement);
    policies.set(key, Object.freeze(policy));
  }
  return policy;
};

/**
 * The routes an allowed pattern covers although the caller may not call them (`GET/applications/*`
 * covers `GET/applications/{name}/changelogs`): each is denied explicitly, and an explicit Deny
 * wins over every Allow. A Deny may never catch a route the caller is allowed: that would be a
 * route table no policy can express, so it throws (the tests walk the route table).
 */
const deniedPatterns = (allowed: readonly IndexedRoute[], patterns: readonly string[], routes: readonly IndexedRoute[]): string[] => {
  // API Gateway serves a path with one trailing slash as the route itself, and the method ARN
  // keeps the slash: each form is covered, and denied, on its own.
  const samples = (route: IndexedRoute) => [sampleResource(route), `${sampleResource(route)}/`];
  const forbidden = routes.filter((route) => route.roles !== 'public' && !allowed.includes(route));
  const covered = forbidden.filter((route) => samples(route).some((sample) => patterns.some((p) => covers(p, sample))));
  const denied = [...new Set(covered.flatMap((route) => [routeResource(route), `${routeResource(route)}/`]))];
  for (const route of allowed) {
    for (const sample of samples(route)) {
      const caught = denied.find((p) => covers(p, sample));
      if (caught) throw new Error(`authorizer: the Deny ${caught} would also refuse the allowed route ${route.method} ${route.path}`);
    }
  }
  return denied;
};

/** Policies built so far, by ARN head and roles (see {@link policyFor}). */
const policies = new Map<string, PolicyDocument>();
/** One API and stage per container in practice; the bound only guards against a flood of forged ARNs. */
const MAX_CACHED_POLICIES = 64;

/**
 * The part of a method ARN a policy depends on: everything up to the `/` after the stage
 * (`arn:…:apiId/stage/`). An ARN whose head {@link parseMethodArn} refuses is never cached.
 */
const arnHead = (methodArn: string): string => {
  const afterApi = methodArn.indexOf('/');
  // Mutation: `afterApi < 0` (→ `false`, `<= 0`), its `-1` → `+1` (uncovered) and `afterStage < 0` on the next line
  // are equivalent: they change the key only for an ARN `parseMethodArn` refuses before anything is cached.
  const afterStage = afterApi < 0 ? -1 : methodArn.indexOf('/', afterApi + 1);
  return afterStage < 0 ? methodArn : methodArn.slice(0, afterStage + 1);
};
