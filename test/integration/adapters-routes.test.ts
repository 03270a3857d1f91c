/**
 * The adapter routes through their handlers (API Gateway REST proxy events), against
 * DynamoDB Local and a Vault-compatible server whose AppRole secret id comes from a
 * Secrets Manager stand-in.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as service from '../../functions/adapters/service.js';
import { PENDING_SECRETS_KEY, WriteOutcomeUnknown, createAdapterStore } from '../../functions/adapters/store.js';
import { backendFromEnv } from '../../functions/outbound/secrets/environment.js';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { startSecretsManagerSimulator, type SecretsManagerSimulator } from '../../tools/simulators/secrets-manager-simulator.js';
import { createTables } from '../../tools/local/table-copies.js';
import { startVaultSimulator, type VaultSimulator } from '../../tools/simulators/vault-simulator.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let put: Handler, get: Handler, list: Handler, del: Handler;
let vault: VaultSimulator;
let sm: SecretsManagerSimulator;
let table: string;
const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));

beforeAll(async () => {
  table = (await createTables()).adapters;
  vault = await startVaultSimulator();
  sm = await startSecretsManagerSimulator();
  vault.addAppRole('netconfig-role', 'approle-secret-id');
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.url,
    SECRETS_BACKEND: 'vault',
    VAULT_ADDR: vault.url,
    VAULT_MOUNT: 'secret',
    VAULT_AUTH_METHOD: 'approle',
    VAULT_ROLE_ID: 'netconfig-role',
    VAULT_CREDENTIALS_SECRET_ARN: sm.set('netconfig/vault', 'approle-secret-id'),
    SECRETS_ACCESS: 'write',
    // The secrets under team/ are ones admins may name (the deployment's reference prefixes).
    SECRETS_REFERENCE_PREFIXES: 'team',
  });
  delete process.env['LOCAL_MODE'];
  put = (await import('../../functions/adapters/handlers/put.js')).handler as unknown as Handler;
  get = (await import('../../functions/adapters/handlers/get.js')).handler as unknown as Handler;
  list = (await import('../../functions/adapters/handlers/list.js')).handler as unknown as Handler;
  del = (await import('../../functions/adapters/handlers/delete.js')).handler as unknown as Handler;
});

afterAll(async () => {
  await vault.close();
  await sm.close();
});

const body = (password: string, extra: Record<string, unknown> = {}) => ({
  type: 'nso',
  baseUrl: 'https://nso.example.net:8888',
  auth: { type: 'basic', username: 'admin', password },
  ...extra,
});

const putAdapter = (name: string, payload: unknown, headers?: Record<string, string>) =>
  invoke(
    put,
    apiEvent({
      method: 'PUT',
      resource: '/adapters/{name}',
      pathParameters: { name: encodeURIComponent(name) },
      body: payload,
      ...(headers ? { headers } : {}),
    }),
  );
const getAdapter = (name: string) => invoke(get, apiEvent({ method: 'GET', resource: '/adapters/{name}', pathParameters: { name: encodeURIComponent(name) } }));
const deleteAdapter = (name: string) =>
  invoke(del, apiEvent({ method: 'DELETE', resource: '/adapters/{name}', pathParameters: { name: encodeURIComponent(name) } }));
const listAdapters = (query?: Record<string, string>) => invoke(list, apiEvent({ method: 'GET', resource: '/adapters', ...(query ? { query } : {}) }));
const rawItem = async (name: string) => (await db.send(new GetCommand({ TableName: table, Key: { pk: `ADAPTER#${name}` }, ConsistentRead: true }))).Item;

const expectProblem = (res: Awaited<ReturnType<typeof invoke>>, status: number) => {
  expect(res.status).toBe(status);
  expect(res.contentType).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status, type: expect.stringMatching(/^urn:netconfig:problem:/) });
};

/** A version the service stored for an adapter: `netconfig/adapters/<name>/<version>`. */
const VERSION = (name: string) => new RegExp(`^\\$VAULT_netconfig/adapters/${name.replace(/[.]/g, '\\.')}/v[0-9a-z]+-[0-9a-f]+#password$`);
/** The secret path an adapter's stored reference names. */
const pathOf = (res: Awaited<ReturnType<typeof invoke>>) =>
  (res.body as { auth: { password: string } }).auth.password.replace(/^\$VAULT_/, '').replace(/#password$/, '');

const fieldsOf = (res: Awaited<ReturnType<typeof invoke>>) =>
  (res.body as { errors?: { in: string; field: string }[] }).errors?.map((e) => `${e.in}:${e.field}`);

describe('PUT /adapters/{name}', () => {
  it('creates an adapter (201): the plain password goes to Vault, DynamoDB holds only the reference', async () => {
    const res = await putAdapter('nso-lab', body('Sup3r-s3cret!'));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      name: 'nso-lab',
      type: 'nso',
      baseUrl: 'https://nso.example.net:8888',
      auth: { type: 'basic', username: 'admin', password: expect.stringMatching(VERSION('nso-lab')) },
      state: 'RUNNING',
      logLevel: 'info',
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      lastUpdated: (res.body as { created: string }).created,
    });
    expect(vault.read(pathOf(res))).toEqual({ password: 'Sup3r-s3cret!' });
    const item = await rawItem('nso-lab');
    expect(item).toMatchObject({
      pk: 'ADAPTER#nso-lab',
      kind: 'adapter',
      name: 'nso-lab',
      auth: { password: (res.body as { auth: { password: string } }).auth.password },
    });
    expect(JSON.stringify(item)).not.toContain('Sup3r-s3cret!');
  });

  it('replaces an adapter (200): created is kept, lastUpdated moves, the new password is a new Vault version', async () => {
    const first = await putAdapter('nso-replace', body('first-pw', { timeoutMs: 5000, nsoCommitParams: 'params' }));
    expect(first.body).toMatchObject({ nsoCommitParams: 'params' });
    await new Promise((r) => setTimeout(r, 5));
    const second = await putAdapter('nso-replace', body('second-pw', { baseUrl: 'https://nso2.example.net/' }));
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    const a = first.body as { created: string; lastUpdated: string };
    const b = second.body as { created: string; lastUpdated: string; baseUrl: string; timeoutMs: number };
    expect(b.created).toBe(a.created);
    expect(b.lastUpdated > a.lastUpdated).toBe(true);
    expect(b.baseUrl).toBe('https://nso2.example.net');
    // Replaced without a timeoutMs: the adapter follows the active profile's orchestrator timeout.
    expect(b.timeoutMs).toBeUndefined();
    // A new version: the one the adapter used until the switch is deleted after it.
    expect(pathOf(second)).not.toBe(pathOf(first));
    expect(vault.read(pathOf(second))).toEqual({ password: 'second-pw' });
    expect(vault.read(pathOf(first))).toBeUndefined();
    expect(await rawItem('nso-replace')).toMatchObject({ created: a.created, lastUpdated: b.lastUpdated });
  });

  it('keeps a $VAULT_ reference given by the user (canonical form) once it resolves, and writes nothing to Vault', async () => {
    vault.put('team/nso', { admin: 'team-pw' });
    const writes = vault.requests.filter((r) => r.method === 'POST' && r.path.startsWith('secret/')).length;
    const res = await putAdapter('nso-ref', body('$VAULT_team/nso#admin'));
    expect(res.status).toBe(201);
    expect((res.body as { auth: { password: string } }).auth.password).toBe('$VAULT_team/nso#admin');
    // `$VAULT_team/nso` names no key, so the default key `password` is meant; that secret has none.
    const defaultKey = await putAdapter('nso-ref-default', body('$VAULT_team/nso'));
    expectProblem(defaultKey, 400);
    expect((defaultKey.body as { detail: string }).detail).toContain('$VAULT_team/nso#password');
    expect(vault.requests.filter((r) => r.method === 'POST' && r.path.startsWith('secret/')).length).toBe(writes);
    expect(vault.requests.some((r) => r.path.includes('netconfig/adapters/nso-ref'))).toBe(false);
  });

  it('answers 400 naming auth.password when the reference does not resolve, and stores nothing', async () => {
    const res = await putAdapter('nso-missing-ref', body('$VAULT_team/does-not-exist#password'));
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['body:auth.password']);
    expect((res.body as { detail: string }).detail).toContain('does not exist');
    expect(await rawItem('nso-missing-ref')).toBeUndefined();
  });

  it.each([
    ['$VAULT_', 'empty'],
    ['$VAULT_a/../b', '".."'],
    ['$VAULT_netconfig/adapters/someone-else#password', 'another adapter'],
  ])('answers 400 for the reference %s', async (password, reason) => {
    const res = await putAdapter('nso-bad-ref', body(password));
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['body:auth.password']);
    expect((res.body as { detail: string }).detail).toContain(reason);
  });

  it('refuses a $VAULT_ reference as username', async () => {
    const res = await putAdapter('nso-user-ref', { ...body('pw'), auth: { type: 'basic', username: '$VAULT_team/nso#user', password: 'pw' } });
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['body:auth.username']);
  });

  it.each([
    ['auth.password', { ...body('$ENC(9f86d081884c7d65)') }, 'body:auth.password'],
    ['auth.username', { ...body('pw'), auth: { type: 'basic', username: '$ENC(abc)', password: 'pw' } }, 'body:auth.username'],
    ['an unknown property', { ...body('pw'), legacy: { secret: '  $ENCxyz' } }, 'body:legacy.secret'],
  ])('answers 400 for a $ENC value in %s, saying $ENC was removed in 2021.2 and showing the $VAULT_ form', async (_, payload, field) => {
    const before = vault.paths().length;
    const res = await putAdapter('nso-enc', payload);
    expectProblem(res, 400);
    const detail = (res.body as { detail: string }).detail;
    expect(detail).toContain('$ENC was removed in 2021.2');
    expect(detail).toContain('$VAULT_<path>#<key>');
    expect(fieldsOf(res)?.[0]).toBe(field);
    expect(detail).not.toMatch(/9f86d081884c7d65|abc\)|ENCxyz/);
    expect(await rawItem('nso-enc')).toBeUndefined();
    expect(vault.paths().length).toBe(before);
  });

  it.each([
    ['a@b', 'name'],
    ['a+b', 'name'],
    ['..', 'name'],
    ['x'.repeat(129), 'name'],
    ['ünicode', 'name'],
  ])('answers 400 naming the path parameter for the name %j', async (name) => {
    const res = await putAdapter(name, body('pw'));
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['path:name']);
  });

  it('accepts names with spaces, dots and 128 characters, URL-decoded from the path', async () => {
    const long = `A${'b'.repeat(126)}.`;
    const created = await putAdapter('Core NSO 1.2_x-y', body('pw'));
    expect(created.status).toBe(201);
    expect((await putAdapter(long, body('pw'))).status).toBe(201);
    expect((await getAdapter('Core NSO 1.2_x-y')).body).toMatchObject({
      name: 'Core NSO 1.2_x-y',
      auth: { password: expect.stringMatching(VERSION('Core NSO 1.2_x-y')) },
    });
    expect(vault.read(pathOf(created))).toEqual({ password: 'pw' });
  });

  it.each([
    'http://169.254.169.254',
    'http://[fd00:ec2::254]',
    'http://metadata.google.internal',
    'http://100.100.100.200',
    'http://169.254.1.1',
    'http://[fe80::1]',
    'http://[2002:a9fe:a9fe::1]',
    'http://[64:ff9b:1::a9fe:a9fe]',
    'http://[::ffff:0:a9fe:a9fe]',
    'http://[2001:0:4136:e378:8000:63bf:5601:5601]',
    'http://0.0.0.0:8080',
    'http://127.0.0.1:8080',
    'http://localhost:8080',
    'http://[::1]',
    'https://nso.example.net/restconf',
    'https://admin:pw@nso.example.net',
    'https://nso.example.net?x=1',
    'https://nso.example.net#top',
    'ftp://nso.example.net',
  ])('answers 400 naming baseUrl for %s, and stores nothing (not even the secret)', async (baseUrl) => {
    const res = await putAdapter('nso-bad-url', body('never-stored', { baseUrl }));
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['body:baseUrl']);
    expect(await rawItem('nso-bad-url')).toBeUndefined();
    expect(vault.requests.some((r) => r.path.includes('netconfig/adapters/nso-bad-url'))).toBe(false);
  });

  it.each([
    [{ type: 'nso', baseUrl: 'https://nso.example.net' }, 'body:auth'],
    [{ ...body('pw'), extra: 1 }, 'body:extra'],
    [{ ...body('pw'), type: 'other' }, 'body:type'],
    [{ ...body('pw'), timeoutMs: 99 }, 'body:timeoutMs'],
    [{ ...body('pw'), timeoutMs: 25001 }, 'body:timeoutMs'],
    [{ ...body('pw'), timeoutMs: 1.5 }, 'body:timeoutMs'],
    [{ ...body('pw'), complianceConcurrency: 0 }, 'body:complianceConcurrency'],
    [{ ...body('pw'), complianceConcurrency: 101 }, 'body:complianceConcurrency'],
    [{ ...body('pw'), complianceConcurrency: '5' }, 'body:complianceConcurrency'],
    [{ ...body('pw'), nsoCommitParams: 'header' }, 'body:nsoCommitParams'],
    [{ ...body('') }, 'body:auth.password'],
    [{ ...body('pw'), auth: { type: 'digest', username: 'a', password: 'b' } }, 'body:auth.type'],
  ])('answers 400 naming the field for an invalid body (%#)', async (payload, field) => {
    const res = await putAdapter('nso-invalid', payload);
    expectProblem(res, 400);
    expect(fieldsOf(res)).toContain(field);
  });

  it("keeps an adapter's own compliance fetch cap, and drops it when a PUT leaves it out", async () => {
    const set = await putAdapter('nso-cap', body('pw', { complianceConcurrency: 25 }));
    expect(set.status).toBe(201);
    expect(set.body).toMatchObject({ complianceConcurrency: 25 });
    expect(await rawItem('nso-cap')).toMatchObject({ complianceConcurrency: 25 });
    const cleared = await putAdapter('nso-cap', body('pw'));
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty('complianceConcurrency');
    expect(await rawItem('nso-cap')).not.toHaveProperty('complianceConcurrency');
  });

  it('accepts the timeout bounds', async () => {
    expect((await putAdapter('nso-t-min', body('pw', { timeoutMs: 100 }))).body).toMatchObject({ timeoutMs: 100 });
    expect((await putAdapter('nso-t-max', body('pw', { timeoutMs: 25000 }))).body).toMatchObject({ timeoutMs: 25000 });
  });

  it('answers 400 without a body and 415 for a body that is not JSON', async () => {
    expectProblem(await invoke(put, apiEvent({ method: 'PUT', resource: '/adapters/{name}', pathParameters: { name: 'x' } })), 400);
    expectProblem(await putAdapter('x', 'password=pw', { 'Content-Type': 'text/plain' }), 415);
  });

  it('answers 503 and stores nothing when Vault cannot take the secret', async () => {
    vault.sealed = true;
    try {
      const res = await putAdapter('nso-sealed', body('pw'));
      expectProblem(res, 503);
      expect(res.headers['Retry-After']).toBe('5');
    } finally {
      vault.sealed = false;
    }
    expect(await rawItem('nso-sealed')).toBeUndefined();
  });

  it('deletes the generated secret when a replacement switches to the user’s own reference', async () => {
    const generated = pathOf(await putAdapter('nso-switch', body('generated-pw')));
    expect(vault.read(generated)).toEqual({ password: 'generated-pw' });
    vault.put('team/switch', { password: 'team-pw' });
    const res = await putAdapter('nso-switch', body('$VAULT_team/switch'));
    expect(res.status).toBe(200);
    expect((res.body as { auth: { password: string } }).auth.password).toBe('$VAULT_team/switch#password');
    expect(vault.read(generated)).toBeUndefined();
  });

  it('keeps the generated secret when the user re-sends the adapter as GET returned it', async () => {
    const generated = pathOf(await putAdapter('nso-roundtrip', body('rt-pw')));
    const {
      name: _name,
      created: _c,
      lastUpdated: _l,
      state: _s,
      logLevel: _g,
      ...writable
    } = (await getAdapter('nso-roundtrip')).body as Record<string, unknown>;
    const res = await putAdapter('nso-roundtrip', writable);
    expect(res.status).toBe(200);
    expect(vault.read(generated)).toEqual({ password: 'rt-pw' });
    expect(pathOf(res)).toBe(generated);
  });
});

describe('GET /adapters/{name}', () => {
  it('returns the adapter with its reference, never the value', async () => {
    await putAdapter('nso-get', body('get-secret-value'));
    const res = await getAdapter('nso-get');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'nso-get', auth: { type: 'basic', username: 'admin', password: expect.stringMatching(VERSION('nso-get')) } });
    expect(JSON.stringify(res.body)).not.toContain('get-secret-value');
  });

  it('answers 404 for an unknown adapter and 400 for an invalid name', async () => {
    expectProblem(await getAdapter('nobody-here'), 404);
    const bad = await getAdapter('a/b');
    expectProblem(bad, 400);
    expect(fieldsOf(bad)).toEqual(['path:name']);
  });

  it('answers 400 when a body with a property is sent', async () => {
    const res = await invoke(get, apiEvent({ method: 'GET', resource: '/adapters/{name}', pathParameters: { name: 'x' }, body: { a: 1 } }));
    expectProblem(res, 400);
  });

  it('answers 500 without internals for a damaged item (and never returns a stored literal password)', async () => {
    await db.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk: 'ADAPTER#damaged',
          kind: 'adapter',
          name: 'damaged',
          type: 'nso',
          baseUrl: 'https://x',
          auth: { type: 'basic', username: 'u', password: 'literal-pw' },
          created: 'x',
          lastUpdated: 'x',
        },
      }),
    );
    const res = await getAdapter('damaged');
    expectProblem(res, 500);
    expect(JSON.stringify(res.body)).not.toContain('literal-pw');
    expect(JSON.stringify(res.body)).not.toMatch(/DynamoDB|Exception|TypeError|\bat \//);
    // The list shows the damaged item as damaged (none of its values) instead of failing or hiding it.
    const listed = await listAdapters({ limit: '100' });
    expect(listed.status).toBe(200);
    expect((listed.body as { items: { name: string }[] }).items.find((a) => a.name === 'damaged')).toEqual({
      name: 'damaged',
      status: 'damaged',
      problem: 'secret-reference-invalid',
      detail: expect.stringContaining('not a $VAULT_ reference'),
    });
    expect(JSON.stringify(listed.body)).not.toContain('literal-pw');
    expect((await deleteAdapter('damaged')).status).toBe(204);
  });
});

describe('DELETE /adapters/{name}', () => {
  it('answers 204, then 404; the generated secret is deleted with the adapter', async () => {
    const generated = pathOf(await putAdapter('nso-del', body('del-pw')));
    const res = await deleteAdapter('nso-del');
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expectProblem(await getAdapter('nso-del'), 404);
    expect(vault.read(generated)).toBeUndefined();
    expectProblem(await deleteAdapter('nso-del'), 404);
  });

  it('leaves a secret the user referenced alone', async () => {
    vault.put('team/keep', { password: 'keep-pw' });
    await putAdapter('nso-del-ref', body('$VAULT_team/keep'));
    expect((await deleteAdapter('nso-del-ref')).status).toBe(204);
    expect(vault.read('team/keep')).toEqual({ password: 'keep-pw' });
  });

  it('answers 400 for an invalid name', async () => {
    const res = await deleteAdapter('a@b');
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['path:name']);
  });
});

describe('GET /adapters', () => {
  it('lists adapters sorted by name, page by page with an opaque cursor', async () => {
    // A private table, so that the other tests' adapters do not interleave.
    const shared = process.env['ADAPTERS_TABLE'];
    const tables = await createTables();
    process.env['ADAPTERS_TABLE'] = shared;
    const { createAdapterStore } = await import('../../functions/adapters/store.js');
    const { listAdapters: listCore } = await import('../../functions/adapters/service.js');
    const store = createAdapterStore(undefined, tables.adapters);
    const names = ['zeta', 'Alpha', 'alpha 2', 'beta', 'Beta.1', 'gamma_3', 'delta-4'];
    for (const name of names) {
      await store.put(
        {
          name,
          type: 'nso',
          baseUrl: 'https://nso.example.net',
          auth: { type: 'basic', username: 'u', password: `$VAULT_team/${name.replace(/\W/g, '')}` },
          timeoutMs: 1000,
        },
        new Date().toISOString(),
      );
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listCore(store, { limit: '3', ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((a) => a.name));
      cursor = page.next;
      pages += 1;
    } while (cursor && pages < 10);
    expect(seen).toEqual([...names].sort());
    expect(pages).toBe(3);
  });

  it('answers { items, next } through the handler, with the default page size', async () => {
    // Adapters of its own, so that it holds when run alone (as mutation testing runs it).
    const store = createAdapterStore(undefined, table);
    for (const n of [1, 2, 3, 4, 5, 6]) {
      await store.put(
        { name: `listed-${n}`, type: 'nso', baseUrl: 'https://nso.example.net', auth: { type: 'basic', username: 'u', password: `$VAULT_team/listed-${n}` } },
        new Date().toISOString(),
      );
    }
    const res = await listAdapters();
    expect(res.status).toBe(200);
    const page = res.body as { items: { name: string; auth: { password: string } }[]; next?: string };
    expect(page.items.length).toBeGreaterThan(5);
    expect(page.items.map((a) => a.name)).toEqual([...page.items.map((a) => a.name)].sort());
    for (const a of page.items) expect(a.auth.password.startsWith('$VAULT_')).toBe(true);
    const first = await listAdapters({ limit: '2' });
    const next = (first.body as { next?: string }).next;
    expect(next).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await listAdapters({ limit: '2', cursor: next! });
    expect((second.body as { items: { name: string }[] }).items[0]!.name > (first.body as { items: { name: string }[] }).items[1]!.name).toBe(true);
  });

  it.each([
    [{ limit: '0' }, 'query:limit'],
    [{ limit: '101' }, 'query:limit'],
    [{ limit: 'ten' }, 'query:limit'],
    [{ cursor: 'not-a-cursor' }, 'query:cursor'],
    [{ cursor: 'a b' }, 'query:cursor'],
    [{ page: '2' }, 'query:page'],
  ])('answers 400 for the query %j', async (query, field) => {
    const res = await listAdapters(query);
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual([field]);
  });
});

describe('the secret rule and all-or-nothing writes, against DynamoDB Local and the Vault simulator', () => {
  it('refuses, in DynamoDB itself, a write that keeps the stored reference and moves the origin or the user', async () => {
    const store = createAdapterStore(db, table);
    await putAdapter('nso-bound', body('bound-pw'));
    const item = (await getAdapter('nso-bound')).body as { auth: { password: string } };
    for (const change of [{ baseUrl: 'https://evil.example.net' }, { auth: { type: 'basic' as const, username: 'other', password: item.auth.password } }]) {
      const fields = {
        name: 'nso-bound',
        type: 'nso' as const,
        baseUrl: 'https://nso.example.net:8888',
        auth: { type: 'basic' as const, username: 'admin', password: item.auth.password },
        ...change,
      };
      await expect(store.put(fields, new Date().toISOString())).rejects.toMatchObject({ name: 'AdapterWriteRefused', reason: 'secret-moved' });
    }
    expect(((await getAdapter('nso-bound')).body as { baseUrl: string }).baseUrl).toBe('https://nso.example.net:8888');
  });

  it.each([
    ['another origin', { baseUrl: 'https://attacker.example.net' }],
    ['another user', { auth: { type: 'basic', username: 'root', password: '' } }],
  ])('answers 400 to a PUT that keeps the reference with %s, and the relay keeps the old record', async (_label, change) => {
    await putAdapter('nso-exfil', body('exfil-pw'));
    const before = (await getAdapter('nso-exfil')).body as { auth: { password: string; username: string } };
    const changed = { ...body(before.auth.password), ...change } as { auth: { password: string } };
    changed.auth.password = before.auth.password;
    const res = await putAdapter('nso-exfil', changed);
    expectProblem(res, 400);
    expect(fieldsOf(res)).toEqual(['body:auth.password']);
    expect((await getAdapter('nso-exfil')).body).toEqual(before);
  });

  it('answers 400 to a new adapter naming the reference of another one', async () => {
    await putAdapter('nso-victim', body('victim-pw'));
    const victim = ((await getAdapter('nso-victim')).body as { auth: { password: string } }).auth.password;
    const res = await putAdapter('nso-thief', body(victim, { baseUrl: 'https://attacker.example.net' }));
    expectProblem(res, 400);
    expect(await rawItem('nso-thief')).toBeUndefined();
  });

  it('keeps the live record and password, and leaves no new secret, when DynamoDB fails between the secret write and the record switch', async () => {
    await putAdapter('nso-atomic', body('live-pw'));
    const before = (await getAdapter('nso-atomic')).body as { auth: { password: string } };
    const livePath = before.auth.password.slice('$VAULT_'.length, -'#password'.length);
    const secretPaths = () => vault.paths().filter((p) => p.startsWith('netconfig/adapters/nso-atomic'));
    const pathsBefore = secretPaths();
    // The read goes to DynamoDB Local; the switch to an endpoint where nothing listens (the
    // wire fails as it does when DynamoDB stops).
    const live = createAdapterStore(db, table);
    const dead = createAdapterStore(
      DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 1 })),
      table,
    );
    const store = { ...live, put: dead.put };
    const secrets = backendFromEnv();
    // Not even a read-back reaches DynamoDB: the outcome is unknown, so nothing is deleted.
    await expect(service.putAdapter({ store, secrets, localMode: false }, 'nso-atomic', body('new-pw') as service.AdapterInput)).rejects.toBeInstanceOf(
      WriteOutcomeUnknown,
    );
    expect((await getAdapter('nso-atomic')).body).toEqual(before);
    expect(vault.read(livePath)).toEqual({ password: 'live-pw' });
    // The new version is listed pending (a later write sweeps it), with the live one.
    const added = secretPaths().filter((p) => !pathsBefore.includes(p));
    expect(added).toHaveLength(1);
    expect(
      (await live.pendingSecrets())
        .map((e) => e.slice(e.indexOf(' ') + 1))
        .filter((p) => p.startsWith('netconfig/adapters/nso-atomic/'))
        .sort(),
    ).toEqual([...added, livePath].sort());
  });

  it('leaves no orphan secret when a create fails at the record switch', async () => {
    const dead = createAdapterStore(
      DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 1 })),
      table,
    );
    const store = { ...createAdapterStore(db, table), put: dead.put };
    await expect(
      service.putAdapter({ store, secrets: backendFromEnv(), localMode: false }, 'nso-orphan', body('orphan-pw') as service.AdapterInput),
    ).rejects.toBeInstanceOf(WriteOutcomeUnknown);
    expect(await rawItem('nso-orphan')).toBeUndefined();
    // Not deleted (the outcome is unknown) but listed, and swept once no request can be in flight.
    const written = vault.paths().filter((p) => p.startsWith('netconfig/adapters/nso-orphan'));
    expect(written).toHaveLength(1);
    const later = () => new Date(Date.now() + service.PENDING_SECRET_GRACE_MS + 60_000);
    await service.putAdapter(
      { store: createAdapterStore(db, table), secrets: backendFromEnv(), localMode: false, now: later },
      'nso-orphan',
      body('orphan-pw') as service.AdapterInput,
    );
    expect(vault.paths().filter((p) => p.startsWith('netconfig/adapters/nso-orphan'))).toEqual([
      (await rawItem('nso-orphan'))!['auth'].password.slice('$VAULT_'.length, -'#password'.length),
    ]);
  });

  it('sweeps what a write of one adapter left pending on a write of another, and removes the emptied list', async () => {
    const pendingItem = async () => (await db.send(new GetCommand({ TableName: table, Key: PENDING_SECRETS_KEY, ConsistentRead: true }))).Item;
    const dead = createAdapterStore(
      DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 1 })),
      table,
    );
    const live = createAdapterStore(db, table);
    // Adapter A: a create whose outcome stays unknown leaves its new version listed, and nobody
    // ever writes A again.
    await expect(
      service.putAdapter(
        { store: { ...live, put: dead.put }, secrets: backendFromEnv(), localMode: false },
        'nso-left-a',
        body('left-pw') as service.AdapterInput,
      ),
    ).rejects.toBeInstanceOf(WriteOutcomeUnknown);
    const left = vault.paths().filter((p) => p.startsWith('netconfig/adapters/nso-left-a/'));
    expect(left).toHaveLength(1);
    expect([...(((await pendingItem())?.['pending'] as Set<string> | undefined) ?? [])].some((e) => e.endsWith(` ${left[0]}`))).toBe(true);
    // Adapter B, within the grace period: A's version may still be in flight, so it stays.
    const secrets = backendFromEnv();
    await service.putAdapter({ store: live, secrets, localMode: false }, 'nso-write-b', body('b-pw') as service.AdapterInput);
    expect(vault.paths()).toContain(left[0]);
    // Adapter B, once no request can be in flight: A's version is deleted, and the list with it.
    const later = () => new Date(Date.now() + service.PENDING_SECRET_GRACE_MS + 60_000);
    await service.putAdapter({ store: live, secrets, localMode: false, now: later }, 'nso-write-b', body('b-pw-2') as service.AdapterInput);
    expect(vault.paths().filter((p) => p.startsWith('netconfig/adapters/nso-left-a'))).toEqual([]);
    expect(await rawItem('nso-left-a')).toBeUndefined();
    expect(await pendingItem()).toBeUndefined();
  });
});
