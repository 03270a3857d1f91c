/**
 * The first call each function gets in the cold-start measurement: a request it answers with
 * a 2xx, served by the benchmark's dependencies (see `services.ts`). A call that answers
 * otherwise fails the run: a cold start that ends in an error is not the one being measured.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { liveRoutes } from '../functions/shared/routes.js';
import { authorizerEvent } from '../test/support/authorizer.js';
import { apiEvent, type EventInput } from '../test/support/events.js';
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
      return call('putAdapter', {
        pathParameters: { name: putAdapterName(ctx, ctx.round) },
        body: { type: 'nso', baseUrl: ctx.simulatorUrl, auth: { type: 'basic', ...ctx.simulatorCredentials } },
      });
    case 'getAdapter':
      return call('getAdapter', { pathParameters: { name: SIMULATOR_ADAPTER } });
    case 'listAdapters':
      return call('listAdapters', {});
    case 'deleteAdapter':
      return call('deleteAdapter', { pathParameters: { name: putAdapterName(ctx, ctx.round - 1) } });
    case 'getAdapterHealth':
      return call('getAdapterHealth', { pathParameters: { name: SIMULATOR_ADAPTER } });
    default:
      // Routes without parameters or body: the status and health routes.
      return call(operationId, {});
  }
};

/** The operation id of a route handler module (`trees/get` → `getTree`); `authorizer` for the authorizer. */
export const operationOfEntry = (entry: string): string =>
  entry === 'authorizer/handler' ? 'authorizer' : (liveRoutes.find((r) => r.handler === entry)?.operationId ?? entry);

/** The route a Lambda-lith first call goes to, for each operation the lith serves. */
export const LITH_OPERATIONS = ['getTree', 'createTree', 'relayRestAction'] as const;
