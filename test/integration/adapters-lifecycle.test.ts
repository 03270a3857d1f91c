/**
 * The adapter lifecycle and creation routes through their real handlers: adapters in DynamoDB
 * Local, passwords in the local secrets store, the relay and the health routes against the NSO
 * simulator (whose request log proves what was, and was not, sent).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADAPTER_BODY } from '../../functions/adapters/schemas.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { importHandlers, type Handler } from '../support/handlers.js';
import { startRelayWorld, type RelayWorld } from '../support/robustness.js';

const CONFIG = '/restconf/data/tailf-ncs:devices/device=ce0/config';
const admin = { principalId: 'ops', roles: 'admin' };
let world: RelayWorld;
let h: Record<string, Handler> = {};

const call = (name: string, method: string, resource: string, o: { pathParameters?: Record<string, string>; body?: unknown } = {}) =>
  invoke(h[name]!, apiEvent({ method, resource, authorizer: admin, ...o }), lambdaContext(20_000));
const lifecycle = (action: 'stop' | 'start' | 'restart', name: string) => call(action, 'PUT', `/adapters/{name}/${action}`, { pathParameters: { name } });
const relay = (adapterId: string) =>
  call('relay', 'POST', '/orch_manager/restAction/{adapterId}', {
    pathParameters: { adapterId },
    body: { params: { path: CONFIG, method: 'GET', accept: 'application/yang-data+json' }, body: {} },
  });
const adapterBody = (password = 'create-Pa55') => ({ type: 'nso', baseUrl: world.nso.url, auth: { type: 'basic', username: 'admin', password } });

beforeAll(async () => {
  world = await startRelayWorld();
  vi.stubEnv('SECRETS_ACCESS', 'write');
  // The bound a state change takes to reach a warm relay: its adapter cache period.
  vi.stubEnv('ADAPTER_CACHE_TTL_SECONDS', '1');
  vi.stubEnv('HEALTH_PROBE_CACHE_SECONDS', '0');
  vi.resetModules();
  h = await importHandlers({
    create: 'adapters/handlers/create',
    stop: 'adapters/handlers/stop',
    start: 'adapters/handlers/start',
    restart: 'adapters/handlers/restart',
    schema: 'adapters/handlers/schema',
    get: 'adapters/handlers/get',
    relay: 'relay/handlers/rest-action',
    health: 'health/handlers/adapters',
    healthOne: 'health/handlers/adapter',
  });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe('POST /adapters', () => {
  it('creates an adapter that runs (201 + Location), and refuses the same name (409) without touching it', async () => {
    const res = await call('create', 'POST', '/adapters', { body: { name: 'made by post', ...adapterBody() } });
    expect(res.status).toBe(201);
    expect(res.headers['Location']).toBe('/v1/adapters/made%20by%20post');
    expect(res.body).toMatchObject({ name: 'made by post', state: 'RUNNING', auth: { password: expect.stringMatching(/^\$VAULT_/) } });
    const again = await call('create', 'POST', '/adapters', { body: { name: 'made by post', ...adapterBody('other-Pa55') } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-exists' });
    const read = await call('get', 'GET', '/adapters/{name}', { pathParameters: { name: 'made%20by%20post' } });
    expect(read.body).toEqual(res.body);
    await world.adapters.delete('made by post');
  });

  // Built at collection time: the address is never reached (the body is refused first).
  const fixed = { type: 'nso', baseUrl: 'http://127.0.0.1:1', auth: { type: 'basic', username: 'admin', password: 'x' } };
  it('replays the first 201 for a repeated Idempotency-Key instead of answering 409', async () => {
    const headers = { 'Idempotency-Key': 'create-once' };
    const event = (name: string) => apiEvent({ method: 'POST', resource: '/adapters', authorizer: admin, headers, body: { name, ...adapterBody() } });
    const first = await invoke(h['create']!, event('keyed'), lambdaContext(20_000));
    const retry = await invoke(h['create']!, event('keyed'), lambdaContext(20_000));
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect((await invoke(h['create']!, event('keyed-other'), lambdaContext(20_000))).status).toBe(422);
    await world.adapters.delete('keyed');
  });

  it.each([
    [{ ...fixed }, 'body:name'],
    [{ name: '..', ...fixed }, 'body:name'],
    [{ name: 'x/y', ...fixed }, 'body:name'],
    [{ name: 'ok', ...fixed, state: 'STOPPED' }, 'body:state'],
  ])('answers 400 naming the field (%#)', async (body, field) => {
    const res = await call('create', 'POST', '/adapters', { body });
    expect(res.status).toBe(400);
    expect((res.body as { errors: { in: string; field: string }[] }).errors.map((e) => `${e.in}:${e.field}`)).toContain(field);
  });
});

describe('stop, start, restart', () => {
  it('stops an adapter: the relay refuses it with 409 adapter-stopped and sends nothing; stopping again changes nothing', async () => {
    await world.addAdapter('life', world.nso.url);
    const first = await relay('life');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const stopped = await lifecycle('stop', 'life');
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    expect(stopped.body).toMatchObject({ name: 'life', state: 'STOPPED' });
    const again = await lifecycle('stop', 'life');
    expect(again.body).toEqual(stopped.body);
    // Within the adapter cache period (1 s here) every warm relay sees it.
    await new Promise((r) => setTimeout(r, 1_100));
    world.nso.requests.length = 0;
    const refused = await relay('life');
    expect(refused.status).toBe(409);
    expect(refused.contentType).toBe('application/problem+json');
    expect(refused.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-stopped', status: 409 });
    expect(world.nso.requests).toHaveLength(0);
  });

  it('shows a stopped adapter as stopped in health, unprobed, without making the service down', async () => {
    world.nso.requests.length = 0;
    const page = await call('health', 'GET', '/health/adapters');
    const entry = (page.body as { adapters: { name: string }[] }).adapters.find((a) => a.name === 'life');
    expect(entry).toMatchObject({ state: 'STOPPED', status: 'down', reason: 'stopped' });
    expect(page.body).toMatchObject({ status: 'up' });
    expect(world.nso.requests.filter((r) => r.path === '/restconf')).toHaveLength(world.nso.requests.length);
    const one = await call('healthOne', 'GET', '/health/adapters/{name}', { pathParameters: { name: 'life' } });
    expect(one.status).toBe(503);
    expect(one.body).toMatchObject({ adapter: { reason: 'stopped' } });
  });

  it('refuses restart on a stopped adapter (409), starts it, and the relay serves again', async () => {
    const restart = await lifecycle('restart', 'life');
    expect(restart.status).toBe(409);
    expect(restart.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-stopped' });
    const started = await lifecycle('start', 'life');
    expect(started.body).toMatchObject({ state: 'RUNNING' });
    const again = await lifecycle('start', 'life');
    expect(again.body).toEqual(started.body);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await relay('life')).status).toBe(200);
  });

  it('restarts a running adapter: a new revision, and the answer carries a fresh probe of its orchestrator', async () => {
    const before = await call('get', 'GET', '/adapters/{name}', { pathParameters: { name: 'life' } });
    world.nso.requests.length = 0;
    const res = await lifecycle('restart', 'life');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'life', state: 'RUNNING', probe: { status: 'up', httpStatus: 200, latencyMs: expect.any(Number) } });
    expect((res.body as { lastUpdated: string }).lastUpdated > (before.body as { lastUpdated: string }).lastUpdated).toBe(true);
    expect(world.nso.requests.map((r) => r.path)).toEqual(['/restconf']);
    expect(JSON.stringify((res.body as { probe: unknown }).probe)).not.toMatch(/127\.0\.0\.1|admin|\$VAULT_/);
  });

  it.each(['stop', 'start', 'restart'] as const)('%s answers 404 for an unknown adapter and 400 for a body', async (action) => {
    expect((await lifecycle(action, 'nobody')).status).toBe(404);
    const withBody = await call(action, 'PUT', `/adapters/{name}/${action}`, { pathParameters: { name: 'life' }, body: { state: 'x' } });
    expect(withBody.status).toBe(400);
  });
});

describe('GET /schema/adapters/{name}', () => {
  it('serves the very schema PUT /adapters/{name} validates, and 404 for an unknown adapter', async () => {
    const res = await call('schema', 'GET', '/schema/adapters/{name}', { pathParameters: { name: 'life' } });
    expect(res.status).toBe(200);
    const { schema } = res.body as { schema: Record<string, unknown> };
    expect(schema).toMatchObject(ADAPTER_BODY as Record<string, unknown>);
    expect((await call('schema', 'GET', '/schema/adapters/{name}', { pathParameters: { name: 'nobody' } })).status).toBe(404);
  });
});
