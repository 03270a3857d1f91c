/**
 * DynamoDB failing under the functions: a second DynamoDB Local of this file's own (data on
 * disk), stopped in the middle of a stream of writes, frozen, and started again on the same
 * port and data. The handlers are imported once: what recovers is the same warm container.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EMPTY_BODY, type LiveRoute } from '../../functions/platform/route.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { transientReason } from '../../functions/platform/transient.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../support/dynamodb-local.js';
import { proxyHandler } from '../../tools/local/response-stream.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import type { RelayWorld } from '../support/robustness.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const CONFIG = '/restconf/data/tailf-ncs:devices/device=ce0/config';
const caller = { principalId: 'faults', principal: 'faults', roles: 'admin' };

let dataDir: string;
let port: number;
let dynamo: DynamoDbLocal;
let world: RelayWorld;
const handlers = new Map<string, Handler>();
/** The relay with a 5-minute adapter cache: once warm, only its idempotency claim needs DynamoDB. */
let cachingRelay: Handler;
let headerOf: (result: Pick<APIGatewayProxyResult, 'headers'>, name: string) => string | undefined;
let knownTreeId: string;

/** A valid request for each route that uses DynamoDB. */
/** A valid value for each path parameter of the live routes, by its name. */
const pathValue = (name: string): string => {
  switch (name) {
    case 'treeId':
      return knownTreeId;
    case 'version':
      return 'initial';
    case 'nodePath':
      return 'base';
    case 'name':
    case 'adapterId':
      return 'lab';
    case 'id':
      return 'default';
    case 'batchId':
      return '0'.repeat(24);
    case 'reportId':
      return `${'0'.repeat(24)}-${'0'.repeat(32)}`;
    case 'remediationId':
    case 'planId':
    case 'exemptionId':
      return '0'.repeat(24);
    case 'device':
      return 'ce0';
    case 'configId':
      return '20260101T000000000Z-fault';
    default:
      throw new Error(`no test value for path parameter ${name}: add one`);
  }
};

/** A request body that passes the route's validation, for the routes that take one. */
const validBody = (route: LiveRoute): unknown => {
  const unique = `fault-${Math.random().toString(36).slice(2)}`;
  switch (route.operationId) {
    case 'relayRestAction':
      return { params: { method: 'GET', path: CONFIG, accept: 'application/yang-data+json' }, body: {} };
    case 'createTree':
      return { name: unique, deviceType: 'x' };
    case 'createAdapter':
      return {
        name: `fault-${Math.random().toString(36).slice(2, 8)}`,
        type: 'nso',
        baseUrl: world.nso.url,
        auth: { type: 'basic', username: 'admin', password: 'fault-Pa55' },
      };
    case 'putAdapter':
      return { type: 'nso', baseUrl: world.nso.url, auth: { type: 'basic', username: 'admin', password: 'fault-Pa55' } };
    case 'createVersion':
      return { name: unique, base: 'initial' };
    case 'updateVersion':
      return { variables: {} };
    case 'putNode':
      return { devices: [] };
    case 'importTree':
      return { name: unique, deviceType: 'x', versions: [{ name: 'initial', root: { name: 'base' } }] };
    case 'setAdapterLogLevel':
      return { level: 'debug' };
    case 'startComplianceBatch':
      return { treeId: knownTreeId, version: 'initial', adapterId: 'lab' };
    case 'startBackupBatch':
      return { adapterId: 'lab', devices: ['ce0'] };
    case 'startRemediation':
      return { mode: 'dry-run' };
    case 'createCompliancePlan':
      return { name: unique, treeId: knownTreeId, version: 'initial', adapterId: 'lab', enabled: true };
    case 'putCompliancePlan':
      return { name: unique, treeId: knownTreeId, version: 'initial', adapterId: 'lab', enabled: true };
    case 'createExemption':
    case 'putExemption':
      return { ruleId: 'ntp', devices: ['ce0'], until: new Date(Date.now() + 86_400_000).toISOString(), reason: unique };
    case 'createProfile':
      return { id: unique };
    case 'putProfile':
    case 'putApplication':
      return {};
    case 'setApplicationLogLevel':
      return { level: 'warn' };
    default:
      if (route.request.body && route.request.body !== EMPTY_BODY && ['POST', 'PUT', 'PATCH'].includes(route.method))
        throw new Error(`no test body for ${route.operationId}: add one`);
      return undefined;
  }
};

/** Writes that must not touch the shared fixtures (the root node cannot be deleted at all). */
const OWN_PATH_VALUES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  putAdapter: { name: 'fault-adapter' },
  deleteAdapter: { name: 'ghost' },
  stopAdapter: { name: 'fault-adapter' },
  startAdapter: { name: 'fault-adapter' },
  restartAdapter: { name: 'fault-adapter' },
  setAdapterLogLevel: { name: 'fault-adapter' },
  listApplicationChangelogs: { name: 'orch_manager' },
  listApplicationChangelogsSingular: { name: 'orch_manager' },
  deleteNode: { nodePath: 'base/gone' },
  deleteProfile: { id: 'ghost' },
  activateProfile: { id: 'default' },
  ...Object.fromEntries(
    liveRoutes
      .filter((r) => r.path.startsWith('/applications/') || r.path.startsWith('/health/applications/'))
      .map((r) => [r.operationId, { name: 'configuration_manager' }]),
  ),
};

/** Query parameters the routes that require some are sent. */
const OWN_QUERY: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  listConfigDevices: { adapterId: 'lab' },
  diffDeviceConfigs: { against: '20260101T000000000Z-fault' },
};

/** A request each route accepts, with path parameters filled by name from the route's path. */
const validEvent = (route: LiveRoute): APIGatewayProxyEvent => {
  const names = [...route.path.matchAll(/\{(\w+)\+?\}/g)].map((m) => m[1]!);
  const pathParameters = names.length > 0 ? Object.fromEntries(names.map((n) => [n, OWN_PATH_VALUES[route.operationId]?.[n] ?? pathValue(n)])) : undefined;
  const body = validBody(route);
  return apiEvent({
    method: route.method,
    resource: route.path,
    authorizer: caller,
    ...(pathParameters ? { pathParameters } : {}),
    ...(OWN_QUERY[route.operationId] ? { query: { ...OWN_QUERY[route.operationId] } } : {}),
    ...(body === undefined ? {} : { body }),
  });
};

const call = (operationId: string, event?: APIGatewayProxyEvent, context = lambdaContext(10_000)) =>
  handlers.get(operationId)!(event ?? validEvent(liveRoutes.find((r) => r.operationId === operationId)!), context);

const relayEvent = (headers: Record<string, string> = {}) => {
  const event = validEvent(liveRoutes.find((r) => r.operationId === 'relayRestAction')!);
  return {
    ...event,
    headers: { ...event.headers, ...headers },
    multiValueHeaders: { ...event.multiValueHeaders, ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])) },
  };
};

const createTree = (name: string) =>
  call('createTree', apiEvent({ method: 'POST', resource: '/configuration_manager/configs', body: { name, deviceType: 'x' }, authorizer: caller }));
const getTree = (treeId: string) =>
  call('getTree', apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId }, authorizer: caller }));

/** Runs `count` creates, `parallel` at a time; `onResult` sees each answer as it comes. */
const createStream = async (prefix: string, count: number, parallel: number, onResult: (name: string, result: APIGatewayProxyResult) => void) => {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const name = `${prefix}-${next++}`;
      onResult(name, await createTree(name));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
};

/**
 * The JVM's pid: the child itself, or (when a process supervisor wraps spawned commands in a
 * shell) the `java` process below it. Signals must reach the JVM, not a wrapper.
 */
const processName = (pid: number): string => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
const childrenOf = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
const jvmPid = (pid: number, depth = 0): number | undefined => {
  if (processName(pid) === 'java') return pid;
  if (depth >= 3) return undefined;
  for (const child of childrenOf(pid)) {
    const found = jvmPid(child, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
};
const signalJvm = (signal: NodeJS.Signals): void => {
  const pid = jvmPid(dynamo.process.pid!);
  if (pid === undefined) throw new Error('DynamoDB Local has no java process');
  process.kill(pid, signal);
};

const expectUnavailable = (result: APIGatewayProxyResult, label: string) => {
  expect(result.statusCode, `${label}: ${result.body.slice(0, 200)}`).toBe(503);
  expect(headerOf(result, 'Content-Type'), label).toBe('application/problem+json');
  expect(headerOf(result, 'Retry-After'), label).toMatch(/^[1-9][0-9]*$/);
  const problem = JSON.parse(result.body) as { status: number; detail: string };
  expect(problem.status).toBe(503);
  // Neither the endpoint nor an AWS error name reaches the client.
  expect(result.body).not.toContain(String(port));
  expect(result.body).not.toMatch(/ECONNREFUSED|TimeoutError|Exception/);
};

/**
 * Starts DynamoDB Local again on the same port and data, and returns once every table serves a
 * read of its items. The emulator's own start check (it answers ListTables) touches no table;
 * after a crash the first reads of the data on disk can be slower than the client's limits on a
 * starved machine. So each table is read until a read succeeds, a bounded number of times, and
 * only a transient failure (the client's time limit) is read again.
 */
const restartDynamo = async (attempts = 10): Promise<void> => {
  dynamo = await startDynamoDbLocal({ port, path: dataDir });
  for (const table of Object.keys(world.tables) as (keyof RelayWorld['tables'])[]) {
    for (let attempt = 1; ; attempt++) {
      try {
        await world.items(table);
        break;
      } catch (error) {
        if (attempt >= attempts || transientReason(error) === undefined) throw error;
      }
    }
  }
};

/**
 * The answer of `request` once DynamoDB serves again. `startDynamoDbLocal` returns when the
 * emulator answers, but on a starved machine its first requests (tables loaded from disk, a cold
 * JIT) may still exceed the client's limits, and then the documented answer is 503 with
 * `Retry-After`: each such answer is checked and the request sent again, a bounded number of
 * times. Anything else (500 above all) is returned at once for the caller to check. A create
 * names each attempt anew: a create that answered 503 may have landed (a name then taken).
 */
const onceServed = async (label: string, request: (attempt: number) => Promise<APIGatewayProxyResult>, attempts = 5): Promise<APIGatewayProxyResult> => {
  for (let attempt = 1; ; attempt++) {
    const result = await request(attempt);
    if (result.statusCode !== 503 || attempt >= attempts) return result;
    expectUnavailable(result, `${label} (attempt ${attempt})`);
  }
};

/**
 * Nothing half-written: every tree has its name lock and every lock its tree; a create that
 * answered 503 either committed whole (its transaction had reached DynamoDB) or not at all.
 */
const expectWholeTrees = async (unavailable: readonly string[]) => {
  const items = await world.items('trees');
  const trees = items.filter((i) => String(i['pk']).startsWith('TREE#'));
  const locks = new Map(items.filter((i) => String(i['pk']).startsWith('NAME#')).map((i) => [String(i['pk']).slice('NAME#'.length), String(i['treeId'])]));
  for (const tree of trees) expect(locks.get(String(tree['name'])), String(tree['name'])).toBe(tree['id']);
  const treeIds = new Set(trees.map((t) => String(t['id'])));
  for (const [name, id] of locks) expect(treeIds.has(id), `lock ${name}`).toBe(true);
  for (const name of unavailable) {
    const tree = trees.find((t) => t['name'] === name);
    if (tree) expect(locks.get(name), name).toBe(tree['id']);
    else expect(locks.has(name), name).toBe(false);
  }
};

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'faults-dynamodb-'));
  // A free port of its choosing (tried again if another process takes it first); restarts reuse it.
  dynamo = await startDynamoDbLocal({ path: dataDir });
  port = Number(new URL(dynamo.endpoint).port);
  // Everything below, the handlers included, talks to this DynamoDB Local.
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = dynamo.endpoint;
  // As the stack configures putAdapter and deleteAdapter.
  process.env['SECRETS_ACCESS'] = 'write';
  // The relay reads its adapter on every call here: what is under test is DynamoDB failing
  // under each route, not the relay's adapter cache riding it out for a few seconds.
  process.env['ADAPTER_CACHE_TTL_SECONDS'] = '0';
  vi.resetModules();
  const support = await import('../support/robustness.js');
  headerOf = support.headerOf;
  world = await support.startRelayWorld();
  const fileOf = (route: LiveRoute) => pathToFileURL(path.join(PROJECT_ROOT, 'functions', `${route.handler}.ts`)).href;
  for (const route of liveRoutes) {
    handlers.set(route.operationId, proxyHandler(((await import(/* @vite-ignore */ fileOf(route))) as { handler: unknown }).handler));
  }
  process.env['ADAPTER_CACHE_TTL_SECONDS'] = '300';
  vi.resetModules();
  cachingRelay = ((await import(/* @vite-ignore */ fileOf(liveRoutes.find((r) => r.operationId === 'relayRestAction')!))) as { handler: Handler }).handler;
  process.env['ADAPTER_CACHE_TTL_SECONDS'] = '0';
}, 120_000);

afterAll(async () => {
  if (dynamo?.process.exitCode === null && dynamo.process.signalCode === null) signalJvm('SIGCONT');
  await dynamo?.stop();
  await world?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('DynamoDB stopped in the middle of a run', () => {
  const created = new Map<string, string>();
  const unavailable: string[] = [];

  it('serves while it runs', async () => {
    const first = await createTree('before-stop');
    expect(first.statusCode).toBe(201);
    knownTreeId = (JSON.parse(first.body) as { id: string }).id;
    expect((await call('relayRestAction')).statusCode).toBe(200);
    expect((await cachingRelay(relayEvent(), lambdaContext(10_000))).statusCode).toBe(200);
  });

  it('answers every create in flight 201 or 503 with Retry-After when it stops, never 500 or 504', async () => {
    const answers: number[] = [];
    let killed = false;
    await createStream('stream', 60, 4, (name, result) => {
      answers.push(result.statusCode);
      if (result.statusCode === 201) created.set(name, (JSON.parse(result.body) as { id: string }).id);
      else {
        expectUnavailable(result, name);
        unavailable.push(name);
      }
      // Stopped while creates are in flight.
      if (!killed && created.size >= 10) {
        killed = true;
        signalJvm('SIGTERM');
      }
    });
    expect(killed).toBe(true);
    expect(answers.every((s) => s === 201 || s === 503)).toBe(true);
    expect(unavailable.length).toBeGreaterThan(0);
    console.log(`faults: DynamoDB stopped after ${created.size} confirmed creates; ${unavailable.length} creates answered 503`);
  }, 120_000);

  it('answers 503 with Retry-After on every route that needs it, inside the function deadline', async () => {
    const dependent = liveRoutes.filter((r) => Object.keys(r.needs.tables ?? {}).length > 0);
    expect(dependent.length).toBeGreaterThanOrEqual(10);
    for (const route of dependent) {
      const context = lambdaContext(10_000);
      const result = await call(route.operationId, validEvent(route), context);
      expectUnavailable(result, route.operationId);
      // The function's own early timeout (504) did not have to answer: DynamoDB failed fast.
      expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
    }
  }, 120_000);

  it('refuses a keyed request 503 and runs nothing, where the request alone could run without DynamoDB', async () => {
    const sent = world.nso.requests.length;
    const keyed = await cachingRelay(relayEvent({ 'Idempotency-Key': 'while-down' }), lambdaContext(10_000));
    expectUnavailable(keyed, 'keyed relay request');
    expect(world.nso.requests.length).toBe(sent);
    // The same request without a key runs from the cached adapter: only the claim was missing.
    expect((await cachingRelay(relayEvent(), lambdaContext(10_000))).statusCode).toBe(200);
    expect(world.nso.requests.length).toBe(sent + 1);
  });

  it('answers again once it is back on the same port and data, without re-importing the handlers', async () => {
    await restartDynamo();
    const after = await onceServed('create after restart', (n) => createTree(`after-restart-${n}`));
    expect(after.statusCode).toBe(201);
    expect((await getTree((JSON.parse(after.body) as { id: string }).id)).statusCode).toBe(200);
    // Every read answers from DynamoDB again: 200, or 404 for the compliance, remediation, plan and exemption ids no batch, run, plan or exemption has and the device with no history.
    for (const route of liveRoutes.filter((r) => r.method === 'GET' && Object.keys(r.needs.tables ?? {}).length > 0)) {
      const expected = /\{(batchId|reportId|remediationId|planId|exemptionId|device)\}/.test(route.path) ? 404 : 200;
      expect((await onceServed(route.operationId, () => call(route.operationId))).statusCode, route.operationId).toBe(expected);
    }
    expect((await onceServed('relay', () => call('relayRestAction'))).statusCode).toBe(200);
  }, 120_000);

  it('lost nothing it confirmed and half-wrote nothing: each tree has its name lock and each lock its tree', async () => {
    for (const [name, id] of created) {
      const read = await getTree(id);
      expect(read.statusCode, name).toBe(200);
      expect((JSON.parse(read.body) as { name: string }).name).toBe(name);
    }
    await expectWholeTrees(unavailable);
  });
});

describe('DynamoDB that hangs', () => {
  it('answers 503 before the function deadline while it is frozen, and 200 once it thaws', async () => {
    signalJvm('SIGSTOP');
    try {
      const context = lambdaContext(10_000);
      const frozen = await call(
        'getTree',
        apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId: knownTreeId }, authorizer: caller }),
        context,
      );
      expectUnavailable(frozen, 'getTree while frozen');
      expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
    } finally {
      signalJvm('SIGCONT');
    }
    expect((await getTree(knownTreeId)).statusCode).toBe(200);
  }, 60_000);
});

describe('DynamoDB that crashes', () => {
  it('leaves no half-written tree, and the same handlers answer once it is back', async () => {
    const unavailable: string[] = [];
    let confirmed = 0;
    let killed = false;
    await createStream('crash', 40, 4, (name, result) => {
      if (result.statusCode === 201) confirmed++;
      else {
        expectUnavailable(result, name);
        unavailable.push(name);
      }
      if (!killed && confirmed >= 5) {
        killed = true;
        // No chance to finish anything. (DynamoDB Local may then lose the writes it
        // acknowledged last, which DynamoDB never does: only wholeness is checked here.)
        signalJvm('SIGKILL');
      }
    });
    expect(killed).toBe(true);
    expect(unavailable.length).toBeGreaterThan(0);
    await restartDynamo();
    await expectWholeTrees(unavailable);
    expect((await onceServed('create after crash', (n) => createTree(`after-crash-${n}`))).statusCode).toBe(201);
    console.log(`faults: DynamoDB killed after ${confirmed} confirmed creates; ${unavailable.length} creates answered 503`);
  }, 120_000);
});
