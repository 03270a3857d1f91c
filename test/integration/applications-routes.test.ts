/**
 * The application routes through their real handlers: tables in DynamoDB Local, the relay
 * against the NSO simulator (whose request log proves what was, and was not, sent). The clock is
 * vitest's fake `Date` (advancing with real time), moved past the settings cache period where a
 * warm function must see a change.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { APPLICATION_SETTINGS_SCHEMAS } from '../../functions/runtime/profile-model.js';
import { listChangelog } from '../../functions/runtime/changelog.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SETTINGS_CACHE_MS } from '../../functions/runtime/settings.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { conformanceRecorder } from '../support/conformance-recorder.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { CONFIG_PATH, RELAY_RESOURCE, headerOf, startRelayWorld, type RelayWorld } from '../support/robustness.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
const h: Record<string, Handler> = {};
const admin = { principalId: 'ops-admin', roles: 'admin' };
let world: RelayWorld;

const answers = conformanceRecorder();
/** Calls a handler as API Gateway would, keeping its answer for the openapi.json check at the end. */
const call = (name: string, method: string, resource: string, o: { pathParameters?: Record<string, string>; body?: unknown } = {}) =>
  invoke(
    async (e, c) => {
      const result = await h[name]!(e, c);
      answers.record(e, result);
      return result;
    },
    apiEvent({ method, resource, authorizer: admin, ...o }),
    lambdaContext(20_000),
  );
const app = (name: string, suffix = '', method = 'PUT', body?: unknown) =>
  call(suffix ? suffix.slice(1) : method === 'GET' ? 'get' : 'put', method, `/applications/{name}${suffix}`, {
    pathParameters: { name },
    ...(body !== undefined ? { body } : {}),
  });
const relay = (adapterId = 'lab') =>
  call('relay', 'POST', RELAY_RESOURCE, {
    pathParameters: { adapterId },
    body: { params: { path: CONFIG_PATH, method: 'GET', accept: 'application/yang-data+json' }, body: {} },
  });
const trees = () => call('trees', 'GET', '/configuration_manager/configs');
const health = (name?: string) =>
  name === undefined ? call('healthAll', 'GET', '/health/applications') : call('healthOne', 'GET', '/health/applications/{name}', { pathParameters: { name } });
/** Moves the clock past the settings cache period: every warm function reads the settings again. */
const afterCachePeriod = () => vi.setSystemTime(Date.now() + SETTINGS_CACHE_MS);

beforeAll(async () => {
  world = await startRelayWorld();
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.resetModules();
  for (const [key, file] of Object.entries({
    list: 'applications/handlers/list',
    get: 'applications/handlers/get',
    put: 'applications/handlers/put',
    stop: 'applications/handlers/stop',
    start: 'applications/handlers/start',
    restart: 'applications/handlers/restart',
    loglevel: 'applications/handlers/loglevel',
    schema: 'applications/handlers/schema',
    healthAll: 'health/handlers/applications',
    healthOne: 'health/handlers/application',
    relay: 'relay/handlers/rest-action',
    trees: 'trees/handlers/list',
    createProfile: 'profiles/handlers/create',
    activate: 'profiles/handlers/activate',
  })) {
    const url = pathToFileURL(path.join(PROJECT_ROOT, 'functions', `${file}.ts`)).href;
    h[key] = ((await import(/* @vite-ignore */ url)) as { handler: Handler }).handler;
  }
}, 60_000);

afterAll(async () => {
  vi.useRealTimers();
  await world?.close();
});

describe('applications', () => {
  it('lists both applications, running, with their settings and their routes', async () => {
    const res = await call('list', 'GET', '/applications');
    expect(res.status).toBe(200);
    expect(res.body.items.map((a: { name: string }) => a.name)).toEqual(['orch_manager', 'configuration_manager']);
    const [orch, config] = res.body.items;
    expect(orch).toMatchObject({ state: 'RUNNING', profile: 'default', logLevel: 'warn', settings: { orchestratorTimeoutMs: 10_000 } });
    expect(orch.routes).toEqual(['POST /orch_manager/restAction/{adapterId}']);
    expect(config.routes).toEqual(expect.arrayContaining(['GET /configuration_manager/configs', 'POST /configuration_manager/compliance_reports']));
    expect(config.routes.every((r: string) => r.split(' ')[1]!.startsWith('/configuration_manager/'))).toBe(true);
    expect((await app('configuration_manager', '', 'GET')).body).toEqual(config);
    const unknown = await app('module_x', '', 'GET');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('orch_manager and configuration_manager');
  });

  it("serves each application's settings schema (404 for no application)", async () => {
    const res = await call('schema', 'GET', '/schema/applications/{name}', { pathParameters: { name: 'orch_manager' } });
    expect(res.status).toBe(200);
    expect(res.body.schema).toMatchObject(APPLICATION_SETTINGS_SCHEMAS.orch_manager);
    expect((await call('schema', 'GET', '/schema/applications/{name}', { pathParameters: { name: 'nope' } })).status).toBe(404);
  });

  it("replaces an application's settings in the active profile (200), refusing another application's or out-of-bounds ones (400)", async () => {
    const res = await app('configuration_manager', '', 'PUT', { complianceConcurrency: 4 });
    expect(res.status).toBe(200);
    expect(res.body.settings).toEqual({ complianceConcurrency: 4, reportRetentionDays: 90, configRetentionDays: 365, historyRetentionDays: 400 });
    const foreign = await app('configuration_manager', '', 'PUT', { orchestratorTimeoutMs: 1_000 });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([{ in: 'body', field: 'orchestratorTimeoutMs', message: 'is not a setting of configuration_manager' }]);
    const bounds = await app('orch_manager', '', 'PUT', { orchestratorTimeoutMs: 5 });
    expect(bounds.status).toBe(400);
    expect(bounds.body.errors[0]).toMatchObject({ field: 'orchestratorTimeoutMs' });
    expect((await app('nope', '', 'PUT', {})).status).toBe(404);
    expect((await app('configuration_manager', '', 'GET')).body.settings.complianceConcurrency).toBe(4);
  });

  it("sets an application's log level (200; 400 for an unknown level, 404 for no application)", async () => {
    const res = await app('configuration_manager', '/loglevel', 'PUT', { level: 'debug' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ logLevel: 'debug', settings: { logLevel: 'debug', complianceConcurrency: 4 } });
    expect((await app('configuration_manager', '/loglevel', 'PUT', { level: 'loud' })).status).toBe(400);
    expect((await app('nope', '/loglevel', 'PUT', { level: 'info' })).status).toBe(404);
    expect((await app('orch_manager', '', 'GET')).body.logLevel).toBe('warn');
    await app('configuration_manager', '/loglevel', 'PUT', { level: 'warn' });
  });

  it('reports both applications up with their dependencies', async () => {
    const all = await health();
    expect(all.status).toBe(200);
    expect(all.body.status).toBe('up');
    const orch = await health('orch_manager');
    expect(orch.status).toBe(200);
    expect(Object.keys(orch.body.dependencies).sort()).toEqual(['dynamodb:adapters', 'dynamodb:idempotency', 'dynamodb:profiles', 'secrets']);
    const config = await health('configuration_manager');
    expect(Object.keys(config.body.dependencies)).toEqual(expect.arrayContaining(['dynamodb:trees', 'dynamodb:compliance', 'dynamodb:profiles']));
    // Backups read the device list from NSO through the relay: the adapter's secret with it.
    expect(config.body.dependencies['secrets']).toMatchObject({ status: 'up' });
    expect((await health('nope')).status).toBe(404);
  });

  it('stops an application: its routes answer 503 with Retry-After, sending nothing; the other application serves', async () => {
    expect((await relay()).status).toBe(200);
    const stopped = await app('orch_manager', '/stop');
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ state: 'STOPPED', changedBy: 'ops-admin' });
    afterCachePeriod();
    const sent = world.nso.requests.length;
    const refused = await relay();
    expect(refused.status).toBe(503);
    expect(refused.contentType).toBe('application/problem+json');
    expect(headerOf({ headers: refused.headers }, 'Retry-After')).toBe('30');
    expect(refused.body).toMatchObject({ type: 'urn:netconfig:problem:application-stopped', application: 'orch_manager' });
    expect(world.nso.requests.length).toBe(sent);
    expect((await trees()).status).toBe(200);
    // The application routes themselves are never stopped.
    expect((await app('orch_manager', '', 'GET')).body.state).toBe('STOPPED');
    const one = await health('orch_manager');
    expect(one.status).toBe(503);
    expect(one.body).toMatchObject({
      type: 'urn:netconfig:problem:application-unhealthy',
      status: 503,
      name: 'orch_manager',
      state: 'STOPPED',
      health: 'stopped',
    });
    const all = await health();
    expect(all.status).toBe(503);
    expect(all.body.applications.map((a: { status: string }) => a.status)).toEqual(['stopped', 'up']);
    expect((await health('configuration_manager')).status).toBe(200);
  });

  it('keeps a stopped application stopped (200), refuses to restart it (409), and starts it again', async () => {
    const again = await app('orch_manager', '/stop');
    expect(again.status).toBe(200);
    expect(again.body.state).toBe('STOPPED');
    const restart = await app('orch_manager', '/restart');
    expect(restart.status).toBe(409);
    expect(restart.body).toMatchObject({ type: 'urn:netconfig:problem:application-stopped' });
    const started = await app('orch_manager', '/start');
    expect(started.status).toBe(200);
    expect(started.body.state).toBe('RUNNING');
    expect((await app('orch_manager', '/start')).body.state).toBe('RUNNING');
    afterCachePeriod();
    expect((await relay()).status).toBe(200);
    for (const action of ['/stop', '/start', '/restart']) expect((await app('nope', action)).status).toBe(404);
  });

  it('restarts a running application (200, restarted now)', async () => {
    const before = Date.now();
    const res = await app('orch_manager', '/restart');
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('RUNNING');
    expect(Date.parse(res.body.restarted)).toBeGreaterThanOrEqual(before - 1);
    afterCachePeriod();
    expect((await relay()).status).toBe(200);
  });

  it('records every change of an application in its changelog, newest first, with the change it records', async () => {
    const trail = async (name: string) => (await listChangelog(documentClient, { kind: 'application', name }, { limit: '100' }, world.tables.changelog)).items;
    const orch = await trail('orch_manager');
    // Stop, start, restart: the no-op stop and start wrote nothing, the refused restart nothing.
    expect(orch.map((e) => e.action)).toEqual(['restarted', 'started', 'stopped']);
    expect(orch.every((e) => e.by === 'ops-admin')).toBe(true);
    expect(orch[2]!.changes).toEqual(expect.arrayContaining([{ field: 'state', from: 'RUNNING', to: 'STOPPED' }]));
    expect(orch[1]!.changes).toEqual(expect.arrayContaining([{ field: 'state', from: 'STOPPED', to: 'RUNNING' }]));
    expect(orch[0]!.changes.map((c) => c.field)).toContain('restarted');
    const config = await trail('configuration_manager');
    expect(config.map((e) => e.action)).toEqual(['loglevel', 'loglevel', 'replaced']);
    expect(config[1]!.changes).toEqual([{ field: 'logLevel', to: 'debug' }]);
    expect(config[0]!.changes).toEqual([{ field: 'logLevel', from: 'debug', to: 'warn' }]);
    expect(config[2]!.changes).toEqual([{ field: 'complianceConcurrency', from: 10, to: 4 }]);
  });

  it("caps the calls in flight through one adapter at the profile's maxConcurrentCallsPerAdapter (429, nothing sent)", async () => {
    expect((await app('orch_manager', '', 'PUT', { maxConcurrentCallsPerAdapter: 2 })).status).toBe(200);
    afterCachePeriod();
    world.nso.setKnobs({ delayMs: 300 });
    try {
      const sent = world.nso.requests.length;
      const answers = await Promise.all([relay(), relay(), relay(), relay()]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([200, 200, 429, 429]);
      const busy = answers.find((a) => a.status === 429)!;
      expect(busy.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-busy', adapter: 'lab', limit: 2 });
      expect(headerOf({ headers: busy.headers }, 'Retry-After')).toBe('1');
      expect(world.nso.requests.length - sent).toBe(2);
      // Every slot is free again once the calls ended.
      expect((await Promise.all([relay(), relay()])).map((a) => a.status)).toEqual([200, 200]);
      // A lease left by a container that died mid-call is swept once past its time.
      await documentClient.send(
        new UpdateCommand({
          TableName: world.tables.idempotency,
          Key: { pk: 'LEASES#lab' },
          UpdateExpression: 'SET leases.#a = :past, leases.#b = :past',
          ExpressionAttributeNames: { '#a': 'dead-a', '#b': 'dead-b' },
          ExpressionAttributeValues: { ':past': Date.now() - 1 },
        }),
      );
      expect((await relay()).status).toBe(200);
    } finally {
      world.nso.setKnobs({});
      await app('orch_manager', '', 'PUT', {});
      afterCachePeriod();
    }
  });

  it('answers 400 to an invalid name, a body where none is taken, or an unknown query parameter', async () => {
    const long = 'x'.repeat(65);
    expect((await app(long, '', 'GET')).status).toBe(400);
    expect((await app('orch_manager', '/stop', 'PUT', { now: true })).status).toBe(400);
    expect((await app('orch_manager', '/start', 'PUT', { now: true })).status).toBe(400);
    expect((await app('orch_manager', '/restart', 'PUT', { now: true })).status).toBe(400);
    expect((await call('schema', 'GET', '/schema/applications/{name}', { pathParameters: { name: long } })).status).toBe(400);
    expect((await call('healthOne', 'GET', '/health/applications/{name}', { pathParameters: { name: long } })).status).toBe(400);
    const withQuery = (name: string, resource: string) =>
      invoke(h[name]!, apiEvent({ method: 'GET', resource, authorizer: admin, query: { x: '1' } }), lambdaContext(20_000));
    expect((await withQuery('list', '/applications')).status).toBe(400);
    expect((await withQuery('healthAll', '/health/applications')).status).toBe(400);
    expect((await app('orch_manager', '', 'GET')).body.state).toBe('RUNNING');
  });

  it('brings a profile switch to a warm relay within the cache period', async () => {
    await world.addAdapter('slowpoke', world.nso.url);
    world.nso.setKnobs({ delayMs: 400 });
    try {
      // Warm: this container has read the default profile (timeout 10 s).
      expect((await relay('slowpoke')).status).toBe(200);
      expect(
        (await call('createProfile', 'POST', '/profiles', { body: { id: 'brisk', applications: { orch_manager: { orchestratorTimeoutMs: 150 } } } })).status,
      ).toBe(201);
      expect((await call('activate', 'PUT', '/profiles/{id}/active', { pathParameters: { id: 'brisk' } })).status).toBe(200);
      // Within the period the container may keep the settings it read.
      vi.setSystemTime(Date.now() + SETTINGS_CACHE_MS / 2);
      expect((await relay('slowpoke')).status).toBe(200);
      // Past it, it runs with the new profile: the 400 ms orchestrator is now too slow.
      vi.setSystemTime(Date.now() + SETTINGS_CACHE_MS / 2);
      const late = await relay('slowpoke');
      expect(late.status).toBe(504);
      expect(late.body.detail).toContain('150 ms');
    } finally {
      world.nso.setKnobs({});
      await call('activate', 'PUT', '/profiles/{id}/active', { pathParameters: { id: 'default' } });
      afterCachePeriod();
    }
  });
});

describe('openapi.json', () => {
  it('documents every answer the calls above got: status, content type, headers, problem bodies', () => {
    const { problems, checked } = answers.check();
    expect(checked).toBeGreaterThan(40);
    expect(problems).toEqual([]);
  });
});
