/**
 * The profile routes through their real handlers against DynamoDB Local: the built-in `default`
 * profile before anything is stored, create, read, replace, delete, activate (atomic: never two
 * active profiles, never none), and the schema that refuses a bad profile.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { PROFILE_SCHEMA } from '../../functions/runtime/profile-model.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { conformanceRecorder } from '../support/conformance-recorder.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
const h: Record<string, Handler> = {};
const admin = { principalId: 'ops-admin', roles: 'admin' };

const answers = conformanceRecorder();
/** Calls a handler as API Gateway would, keeping its answer for the openapi.json check at the end. */
const call = (
  name: string,
  method: string,
  resource: string,
  o: { id?: string; body?: unknown; query?: Record<string, string>; headers?: Record<string, string> } = {},
) => {
  const event = apiEvent({
    method,
    resource,
    authorizer: admin,
    ...(o.id !== undefined ? { pathParameters: { id: o.id } } : {}),
    ...(o.body !== undefined ? { body: o.body } : {}),
    ...(o.query ? { query: o.query } : {}),
    ...(o.headers ? { headers: o.headers } : {}),
  });
  return invoke(
    async (e, c) => {
      const result = await h[name]!(e, c);
      answers.record(e, result);
      return result;
    },
    event,
    lambdaContext(20_000),
  );
};
const list = (query?: Record<string, string>) => call('list', 'GET', '/profiles', query ? { query } : {});
const get = (id: string) => call('get', 'GET', '/profiles/{id}', { id });
const create = (body: unknown, headers?: Record<string, string>) => call('create', 'POST', '/profiles', { body, ...(headers ? { headers } : {}) });
const put = (id: string, body: unknown) => call('put', 'PUT', '/profiles/{id}', { id, body });
const remove = (id: string) => call('delete', 'DELETE', '/profiles/{id}', { id });
const activate = (id: string) => call('activate', 'PUT', '/profiles/{id}/active', { id });
const activeIds = async () => ((await list({ limit: '100' })).body.items as { id: string; active: boolean }[]).filter((p) => p.active).map((p) => p.id);

beforeAll(async () => {
  await createTables();
  vi.resetModules();
  for (const [key, file] of Object.entries({
    list: 'list',
    get: 'get',
    create: 'create',
    put: 'put',
    delete: 'delete',
    activate: 'activate',
    schema: 'schema',
  })) {
    const url = pathToFileURL(path.join(PROJECT_ROOT, 'functions', 'profiles', 'handlers', `${file}.ts`)).href;
    h[key] = ((await import(/* @vite-ignore */ url)) as { handler: Handler }).handler;
  }
}, 60_000);

describe('profiles', () => {
  it('has the default profile, active, before anything is stored', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0]).toMatchObject({
      id: 'default',
      active: true,
      applications: {
        orch_manager: { orchestratorTimeoutMs: 10_000, adapterCacheSeconds: 5 },
        configuration_manager: { complianceConcurrency: 10, reportRetentionDays: 90, configRetentionDays: 365, historyRetentionDays: 400 },
      },
    });
    expect((await get('default')).body).toEqual(res.body.items[0]);
    expect((await get('other')).status).toBe(404);
  });

  it('serves the schema POST /profiles validates', async () => {
    const res = await call('schema', 'GET', '/schema/profiles');
    expect(res.status).toBe(200);
    expect(res.body.schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...PROFILE_SCHEMA });
  });

  it('creates a profile, inactive, defaults filled in (201 + Location); a duplicate id is 409', async () => {
    const res = await create({ id: 'lab', logLevel: 'debug', applications: { orch_manager: { orchestratorTimeoutMs: 2_000 } } });
    expect(res.status).toBe(201);
    expect(res.headers['Location']).toBe('/v1/profiles/lab');
    expect(res.body).toMatchObject({ id: 'lab', active: false, logLevel: 'debug', createdBy: 'ops-admin' });
    expect(res.body.applications.orch_manager).toEqual({ orchestratorTimeoutMs: 2_000, adapterCacheSeconds: 5, maxConcurrentCallsPerAdapter: 0 });
    expect((await get('lab')).body).toEqual(res.body);
    const again = await create({ id: 'lab' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: 'urn:netconfig:problem:profile-exists' });
    expect((await get('lab')).body.logLevel).toBe('debug');
    // The first write stored the default profile beside it.
    expect(await activeIds()).toEqual(['default']);
  });

  it('answers a retried create with its first 201 (Idempotency-Key)', async () => {
    const first = await create({ id: 'keyed' }, { 'Idempotency-Key': 'profile-once' });
    const retry = await create({ id: 'keyed' }, { 'Idempotency-Key': 'profile-once' });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
  });

  it('refuses a profile that fails its schema (400, each field named) and never stores or activates it', async () => {
    const res = await create({ id: 'broken', logLevel: 'loud', applications: { orch_manager: { adapterCacheSeconds: 301 }, nope: {} } });
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ in: 'body', field: 'logLevel' }),
        expect.objectContaining({ in: 'body', field: 'applications.orch_manager.adapterCacheSeconds' }),
        expect.objectContaining({ in: 'body', field: 'applications.nope', message: 'is not allowed' }),
      ]),
    );
    expect((await get('broken')).status).toBe(404);
    expect((await activate('broken')).status).toBe(404);
    expect((await create({ id: '-bad id' })).status).toBe(400);
    const bad = await put('lab', { applications: { configuration_manager: { complianceConcurrency: 0 } } });
    expect(bad.status).toBe(400);
    expect((await get('lab')).body.applications.configuration_manager.complianceConcurrency).toBe(10);
  });

  it('replaces a profile (200), omitted settings back to their defaults; 404 for no profile', async () => {
    const res = await put('lab', { description: 'lab settings', applications: { configuration_manager: { reportRetentionDays: 7 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'lab', description: 'lab settings', logLevel: 'warn', lastUpdatedBy: 'ops-admin' });
    expect(res.body.applications.configuration_manager).toEqual({
      complianceConcurrency: 10,
      reportRetentionDays: 7,
      configRetentionDays: 365,
      historyRetentionDays: 400,
    });
    expect(res.body.applications.orch_manager.orchestratorTimeoutMs).toBe(10_000);
    expect((await put('ghost', {})).status).toBe(404);
    expect((await get('bad id')).status).toBe(400);
  });

  it('activates a profile and deactivates the previous one (200), 404 for no profile', async () => {
    const res = await activate('lab');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'lab', active: true, previous: 'default' });
    expect(await activeIds()).toEqual(['lab']);
    expect((await get('default')).body.active).toBe(false);
    expect((await activate('ghost')).status).toBe(404);
    expect(await activeIds()).toEqual(['lab']);
  });

  it('refuses to delete the active profile (409) and deletes another (204, then 404)', async () => {
    const refused = await remove('lab');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ type: 'urn:netconfig:problem:profile-active' });
    expect((await get('lab')).status).toBe(200);
    expect((await remove('keyed')).status).toBe(204);
    expect((await remove('keyed')).status).toBe(404);
    expect((await get('keyed')).status).toBe(404);
  });

  it('keeps exactly one profile active under concurrent activations', async () => {
    await create({ id: 'blue' });
    await create({ id: 'green' });
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(['blue', 'green', 'lab'].map((id) => activate(id)));
      for (const a of answers) expect([200, 409]).toContain(a.status);
      expect(answers.some((a) => a.status === 200)).toBe(true);
      expect(await activeIds()).toHaveLength(1);
    }
    await activate('lab');
  });

  it('pages the list by id', async () => {
    const first = await list({ limit: '2' });
    expect(first.body.items.map((p: { id: string }) => p.id)).toEqual(['blue', 'default']);
    const second = await list({ limit: '2', cursor: first.body.next });
    expect(second.body.items.map((p: { id: string }) => p.id)).toEqual(['green', 'lab']);
    expect(second.body.next).toBeUndefined();
    expect((await list({ cursor: 'bm90LW91cnM' })).status).toBe(400);
  });
});

describe('refusals', () => {
  it('answers 422 when an Idempotency-Key comes back with another profile', async () => {
    const headers = { 'Idempotency-Key': 'profile-reused' };
    expect((await create({ id: 'reused-a' }, headers)).status).toBe(201);
    const other = await create({ id: 'reused-b' }, headers);
    expect(other.status).toBe(422);
    expect((await get('reused-b')).status).toBe(404);
  });

  it('answers 400 to an invalid id, a body where none is taken, or an unknown query parameter, changing nothing', async () => {
    expect((await remove('-x')).status).toBe(400);
    expect((await activate('a'.repeat(65))).status).toBe(400);
    expect((await call('activate', 'PUT', '/profiles/{id}/active', { id: 'default', body: { now: true } })).status).toBe(400);
    expect((await call('schema', 'GET', '/schema/profiles', { query: { v: '1' } })).status).toBe(400);
    expect((await list({ limit: '0' })).status).toBe(400);
    expect(await activeIds()).toEqual(['lab']);
  });
});

describe('openapi.json', () => {
  it('documents every answer the calls above got: status, content type, headers, problem bodies', () => {
    const { problems, checked } = answers.check();
    expect(checked).toBeGreaterThan(40);
    expect(problems).toEqual([]);
  });
});
