/**
 * The first call each function gets in the cold-start measurement: a request it answers with
 * a 2xx, served by the benchmark's dependencies (see `services.ts`). A call that answers
 * otherwise fails the run: a cold start that ends in an error is not the one being measured.
 *
 * Routes without a call of their own here get one built from the route: path parameters by
 * name, a valid body when they take one. Those that act on one object name one that does not
 * exist and are measured on their 404 (import, validation, the DynamoDB read): a benchmark
 * must not stop an adapter or delete the sample trees it measures the other routes on.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { EMPTY_BODY } from '../functions/platform/route.js';
import { liveRoutes } from '../functions/api/routes.js';
import { authorizerEvent } from '../tools/simulators/jwks.js';
import { apiEvent, type EventInput } from '../tools/simulators/api-events.js';
import { SIMULATOR_ADAPTER } from './services.js';

/** What a first call needs to know about the run and its dependencies. */
export interface CallContext {
  /** Round number: names of things created in this round carry it. */
  readonly round: number;
  /** A tree that exists. */
  readonly treeId: string;
  readonly simulatorUrl: string;
  readonly simulatorCredentials: { readonly username: string; readonly password: string };
  readonly token: string;
  /** Unique per benchmark run, so that names never collide with an earlier run's. */
  readonly runId: string;
}

/** The adapter the putAdapter run of round `round` creates (and the deleteAdapter run of round `round + 1` deletes). */
export const putAdapterName = (ctx: Pick<CallContext, 'runId'>, round: number): string => `bench-${ctx.runId}-${round}`;

/** The relay call every relay measurement makes: read one device's config from the simulator. */
export const RELAY_BODY = {
  params: { path: '/restconf/data/tailf-ncs:devices/device=ce0/config', accept: 'application/yang-data+json', method: 'GET' },
  body: {},
} as const;

/** An adapter on the benchmark's NSO simulator, as PUT and POST /adapters take it. */
const adapterBody = (ctx: CallContext) => ({ type: 'nso', baseUrl: ctx.simulatorUrl, auth: { type: 'basic', ...ctx.simulatorCredentials } });

const route = (operationId: string) => {
  const found = liveRoutes.find((r) => r.operationId === operationId);
  if (!found) throw new Error(`no live route ${operationId}`);
  return found;
};

const call = (operationId: string, input: Omit<EventInput, 'method' | 'resource'>): APIGatewayProxyEvent => {
  const r = route(operationId);
  return apiEvent({ method: r.method, resource: r.path, ...input });
};

/** The first-call event of an operation (`getTree`…), or of the authorizer (`authorizer`). */
export const firstCallEvent = (operationId: string, ctx: CallContext): unknown => {
  switch (operationId) {
    case 'authorizer':
      return authorizerEvent({ token: ctx.token, method: 'GET', path: `/configuration_manager/configs/${ctx.treeId}` });
    case 'getTree':
      return call('getTree', { pathParameters: { treeId: ctx.treeId } });
    case 'listTrees':
      return call('listTrees', { query: { limit: '10' } });
    case 'createTree':
      // Unique: the function and the Lambda-lith both create a tree in every round.
      return call('createTree', { body: { name: `bench ${ctx.runId} ${ctx.round} ${randomUUID()}`, deviceType: 'cisco-ios', description: 'benchmark' } });
    case 'relayRestAction':
      return call('relayRestAction', { pathParameters: { adapterId: SIMULATOR_ADAPTER }, body: RELAY_BODY });
    case 'putAdapter':
      return call('putAdapter', { pathParameters: { name: putAdapterName(ctx, ctx.round) }, body: adapterBody(ctx) });
    case 'getAdapter':
      return call('getAdapter', { pathParameters: { name: SIMULATOR_ADAPTER } });
    case 'listAdapters':
      return call('listAdapters', {});
    case 'deleteAdapter':
      return call('deleteAdapter', { pathParameters: { name: putAdapterName(ctx, ctx.round - 1) } });
    case 'getAdapterHealth':
      return call('getAdapterHealth', { pathParameters: { name: SIMULATOR_ADAPTER } });
    default:
      return generic(operationId, ctx);
  }
};

/** Path parameter values for {@link generic} calls: the sample tree, a version and node it has, objects that do not exist. */
const GENERIC_PATH_VALUES: Readonly<Record<string, (ctx: CallContext) => string>> = {
  treeId: (ctx) => ctx.treeId,
  version: () => 'initial',
  nodePath: () => 'base',
  name: () => 'bench-absent',
  adapterId: () => 'bench-absent',
  id: () => 'bench-absent',
  batchId: () => '0'.repeat(24),
  reportId: () => `${'0'.repeat(24)}-p${'0'.repeat(16)}`,
  remediationId: () => '0'.repeat(24),
  planId: () => '0'.repeat(24),
  exemptionId: () => '0'.repeat(24),
  device: () => 'bench-absent',
  // A console asset name the build does not make: 404, as for the other absent names.
  file: () => 'bench-absent.js',
  configId: () => `20200101T000000000Z-${'0'.repeat(24)}`,
};

/** A plan of a tree that does not exist. */
const ABSENT_PLAN = { name: 'bench plan', treeId: 'f'.repeat(24), version: 'initial', adapterId: SIMULATOR_ADAPTER, enabled: false } as const;

/** An exemption valid for a day from the call. */
const ABSENT_EXEMPTION = () => ({ ruleId: 'bench', devices: ['bench-absent'], until: new Date(Date.now() + 86_400_000).toISOString(), reason: 'benchmark' });

/** Bodies that pass validation, for the routes that take one and have no call of their own. */
const GENERIC_BODIES: Readonly<Record<string, (ctx: CallContext) => unknown>> = {
  createVersion: (ctx) => ({ name: `bench-${ctx.runId}-${ctx.round}`, base: 'initial' }),
  updateVersion: () => ({ variables: {} }),
  putNode: () => ({ devices: [] }),
  importTree: (ctx) => ({
    name: `bench ${ctx.runId} ${ctx.round} ${randomUUID()}`,
    deviceType: 'cisco-ios',
    versions: [{ name: 'initial', root: { name: 'base' } }],
  }),
  // Unique names: the function creates one in every round (201).
  createAdapter: (ctx) => ({ name: `bench-create-${ctx.runId}-${ctx.round}`, ...adapterBody(ctx) }),
  createProfile: (ctx) => ({ id: `bench-${ctx.runId}-${ctx.round}` }),
  setAdapterLogLevel: () => ({ level: 'info' }),
  setApplicationLogLevel: () => ({ level: 'info' }),
  putProfile: () => ({}),
  putApplication: () => ({}),
  // A tree that does not exist (404): a started batch would outlive the round it was measured in.
  startComplianceBatch: () => ({ treeId: 'f'.repeat(24), version: 'initial', adapterId: SIMULATOR_ADAPTER }),
  // An adapter that does not exist (404), for the same reason.
  startBackupBatch: () => ({ adapterId: 'bench-absent' }),
  // On a batch that does not exist (404 with the batch id above), for the same reason.
  startRemediation: () => ({ mode: 'dry-run' }),
  // A tree that does not exist (404): a stored plan would outlive the round (and could run).
  createCompliancePlan: () => ABSENT_PLAN,
  // On a plan that does not exist (404 with the plan id above).
  putCompliancePlan: () => ABSENT_PLAN,
  // Sent to a tree (create) or an exemption (replace) that does not exist (404): a stored one would exempt the sample tree's rule.
  createExemption: () => ABSENT_EXEMPTION(),
  putExemption: () => ABSENT_EXEMPTION(),
};

/** Writes that would change the sample tree: sent to a tree or version that does not exist (404). */
const ABSENT: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  deleteTree: { treeId: 'f'.repeat(24) },
  createExemption: { treeId: 'f'.repeat(24) },
  updateVersion: { version: 'bench-absent' },
  deleteVersion: { version: 'bench-absent' },
  putNode: { version: 'bench-absent' },
  deleteNode: { version: 'bench-absent', nodePath: 'base/bench-absent' },
};

/** The operations {@link firstCallEvent} has a call of its own for (answered 2xx); the others are built by {@link generic}. */
const TAILORED = new Set([
  'authorizer',
  'getTree',
  'listTrees',
  'createTree',
  'relayRestAction',
  'putAdapter',
  'getAdapter',
  'listAdapters',
  'deleteAdapter',
  'getAdapterHealth',
]);

/** What a first call may answer: 2xx; for a call built from its route, also 404 (it names an object that does not exist). */
export const firstCallAccepts =
  (operationId: string) =>
  (status: number): boolean =>
    (status >= 200 && status < 300) || (!TAILORED.has(operationId) && status === 404);

const generic = (operationId: string, ctx: CallContext): APIGatewayProxyEvent => {
  const r = route(operationId);
  const names = [...r.path.matchAll(/\{(\w+)\+?\}/g)].map((m) => m[1]!);
  const pathParameters = Object.fromEntries(
    names.map((n) => {
      const absent = ABSENT[operationId]?.[n];
      const value = absent !== undefined ? () => absent : GENERIC_PATH_VALUES[n];
      if (!value) throw new Error(`bench: no first-call value for path parameter ${n} of ${operationId}: add one in bench/events.ts`);
      return [n, value(ctx)];
    }),
  );
  const body = GENERIC_BODIES[operationId]?.(ctx);
  if (body === undefined && r.request.body && ['POST', 'PUT', 'PATCH'].includes(r.method) && r.request.body !== EMPTY_BODY) {
    throw new Error(`bench: no first-call body for ${operationId}: add one in bench/events.ts`);
  }
  const query = GENERIC_QUERIES[operationId];
  return call(operationId, { ...(names.length ? { pathParameters } : {}), ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) });
};

/** Queries a route requires, for the routes that have no call of their own. */
const GENERIC_QUERIES: Readonly<Record<string, Record<string, string>>> = {
  listConfigDevices: { adapterId: 'bench-absent' },
  diffDeviceConfigs: { against: '20260101T000000000Z-bench' },
};

/** The route a Lambda-lith first call goes to, for each operation the lith serves. */
export const LITH_OPERATIONS = ['getTree', 'createTree', 'relayRestAction'] as const;
