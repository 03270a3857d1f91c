/**
 * The audit routes through their real handlers: every adapter action leaves a changelog entry
 * (who, when, what, field diff), read newest first and paged by GET /adapters/{name}/changelogs,
 * kept after the adapter is deleted; the application changelogs at their plural and singular
 * paths; PUT /adapters/{name}/loglevel and what the relay then logs (DynamoDB Local, the local
 * secrets store, the NSO simulator, stdout captured).
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { changelogPut } from '../../functions/runtime/changelog.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { importHandlers, type Handler } from '../support/handlers.js';
import { NSO_PASSWORD, startRelayWorld, type RelayWorld } from '../support/robustness.js';
import { stdoutDuring } from '../support/stdout.js';

type Entry = { kind: string; name: string; at: string; by: string; action: string; changes: { field: string; from?: unknown; to?: unknown }[] };
type Page = { items: Entry[]; next?: string };

const CONFIG = '/restconf/data/tailf-ncs:devices/device=ce0/config';
const PLAIN = 'Audit-Pl4in-S3cret';
const admin = { principalId: 'ops-alice', principal: 'ops-alice', roles: 'admin' };
let world: RelayWorld;
let h: Record<string, Handler> = {};

const call = (
  name: string,
  method: string,
  resource: string,
  o: { pathParameters?: Record<string, string>; body?: unknown; query?: Record<string, string> } = {},
) => invoke(h[name]!, apiEvent({ method, resource, authorizer: admin, ...o }), lambdaContext(20_000));
const adapterBody = (password = PLAIN, extra: Record<string, unknown> = {}) => ({
  type: 'nso',
  baseUrl: world.nso.url,
  auth: { type: 'basic', username: 'admin', password },
  ...extra,
});
const changelogs = (name: string, query?: Record<string, string>) =>
  call('changelogs', 'GET', '/adapters/{name}/changelogs', { pathParameters: { name: encodeURIComponent(name) }, ...(query ? { query } : {}) });
const setLevel = (name: string, level: unknown) => call('loglevel', 'PUT', '/adapters/{name}/loglevel', { pathParameters: { name }, body: { level } });
const relay = (adapterId: string, params: Record<string, unknown>, body: Record<string, unknown> = {}) =>
  call('relay', 'POST', '/orch_manager/restAction/{adapterId}', {
    pathParameters: { adapterId },
    body: { params: { path: CONFIG, accept: 'application/yang-data+json', ...params }, body },
  });
const expectProblem = (res: Awaited<ReturnType<typeof invoke>>, status: number, field?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.contentType).toBe('application/problem+json');
  if (field) expect((res.body as { errors: { field: string }[] }).errors.map((e) => e.field)).toContain(field);
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  world = await startRelayWorld();
  vi.stubEnv('SECRETS_ACCESS', 'write');
  // The bound a new log level takes to reach a warm relay: its adapter cache period.
  vi.stubEnv('ADAPTER_CACHE_TTL_SECONDS', '1');
  vi.stubEnv('HEALTH_PROBE_CACHE_SECONDS', '0');
  vi.resetModules();
  h = await importHandlers({
    create: 'adapters/handlers/create',
    put: 'adapters/handlers/put',
    del: 'adapters/handlers/delete',
    stop: 'adapters/handlers/stop',
    start: 'adapters/handlers/start',
    restart: 'adapters/handlers/restart',
    loglevel: 'adapters/handlers/loglevel',
    changelogs: 'adapters/handlers/changelogs',
    get: 'adapters/handlers/get',
    list: 'adapters/handlers/list',
    applications: 'applications/handlers/changelogs',
    relay: 'relay/handlers/rest-action',
  });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe('GET /adapters/{name}/changelogs', () => {
  it('records every action by the token subject, newest first, and keeps the trail after the adapter is deleted', async () => {
    expect((await call('create', 'POST', '/adapters', { body: { name: 'audited one', ...adapterBody() } })).status).toBe(201);
    expect(
      (await call('put', 'PUT', '/adapters/{name}', { pathParameters: { name: 'audited%20one' }, body: adapterBody(`${PLAIN}-2`, { timeoutMs: 5000 }) }))
        .status,
    ).toBe(200);
    for (const action of ['stop', 'start', 'restart'] as const) {
      expect((await call(action, 'PUT', `/adapters/{name}/${action}`, { pathParameters: { name: 'audited%20one' } })).status).toBe(200);
    }
    expect((await setLevel('audited%20one', 'debug')).status).toBe(200);
    expect((await call('del', 'DELETE', '/adapters/{name}', { pathParameters: { name: 'audited%20one' } })).status).toBe(204);

    const res = await changelogs('audited one');
    expect(res.status).toBe(200);
    const page = res.body as Page;
    expect(page.items.map((e) => e.action)).toEqual(['deleted', 'loglevel', 'restarted', 'started', 'stopped', 'replaced', 'created']);
    expect(page.items.every((e) => e.by === 'ops-alice' && e.kind === 'adapter' && e.name === 'audited one')).toBe(true);
    expect(page.items.map((e) => e.at)).toEqual([...page.items.map((e) => e.at)].sort().reverse());
    const replaced = page.items.find((e) => e.action === 'replaced')!;
    expect(replaced.changes).toEqual([
      {
        field: 'auth.password',
        from: expect.stringMatching(/^\$VAULT_netconfig\/adapters\/audited one\//),
        to: expect.stringMatching(/^\$VAULT_netconfig\/adapters\/audited one\//),
      },
      // Created without a timeoutMs (it follows the active profile's), replaced with one.
      { field: 'timeoutMs', to: 5000 },
    ]);
    expect(page.items.find((e) => e.action === 'loglevel')!.changes).toEqual([{ field: 'logLevel', from: 'info', to: 'debug' }]);
    expect(page.items.find((e) => e.action === 'stopped')!.changes).toEqual([{ field: 'state', from: 'RUNNING', to: 'STOPPED' }]);
    // The adapter is gone: GET is 404, its trail is not.
    expect((await call('get', 'GET', '/adapters/{name}', { pathParameters: { name: 'audited%20one' } })).status).toBe(404);
  });

  it('never holds or shows a plain password: only $VAULT_ references, in the tables and in the answer', async () => {
    const res = await changelogs('audited one');
    expect(JSON.stringify(res.body)).not.toContain(PLAIN);
    const stored = JSON.stringify([...(await world.items('adapters')), ...(await world.items('changelog'))]);
    expect(stored).not.toContain(PLAIN);
    expect(stored).not.toContain(Buffer.from(PLAIN).toString('base64'));
    const passwords = (res.body as Page).items
      .flatMap((e) => e.changes.filter((c) => c.field === 'auth.password'))
      .flatMap((c) => [c.from, c.to].filter(Boolean));
    expect(passwords.length).toBeGreaterThanOrEqual(4);
    for (const value of passwords) expect(value).toMatch(/^\$VAULT_/);
  });

  it('records nothing for a no-op (start on a running adapter, the same log level) or a refused write', async () => {
    await call('create', 'POST', '/adapters', { body: { name: 'quiet', ...adapterBody() } });
    await call('start', 'PUT', '/adapters/{name}/start', { pathParameters: { name: 'quiet' } });
    await setLevel('quiet', 'info');
    expect((await call('create', 'POST', '/adapters', { body: { name: 'quiet', ...adapterBody() } })).status).toBe(409);
    expect((await call('restart', 'PUT', '/adapters/{name}/restart', { pathParameters: { name: 'quiet' } })).status).toBe(200);
    await call('stop', 'PUT', '/adapters/{name}/stop', { pathParameters: { name: 'quiet' } });
    expect((await call('restart', 'PUT', '/adapters/{name}/restart', { pathParameters: { name: 'quiet' } })).status).toBe(409);
    expect(((await changelogs('quiet')).body as Page).items.map((e) => e.action)).toEqual(['stopped', 'restarted', 'created']);
  });

  it('pages with limit and the cursor of the previous page, and refuses a cursor it did not issue or issued for another adapter', async () => {
    const first = await changelogs('audited one', { limit: '3' });
    const one = first.body as Page;
    expect(one.items).toHaveLength(3);
    expect(one.next).toEqual(expect.any(String));
    const second = (await changelogs('audited one', { limit: '3', cursor: one.next! })).body as Page;
    const third = (await changelogs('audited one', { limit: '3', cursor: second.next! })).body as Page;
    expect(third.next).toBeUndefined();
    expect([...one.items, ...second.items, ...third.items].map((e) => e.action)).toEqual([
      'deleted',
      'loglevel',
      'restarted',
      'started',
      'stopped',
      'replaced',
      'created',
    ]);
    expectProblem(await changelogs('quiet', { cursor: one.next! }), 400, 'cursor');
    expectProblem(await changelogs('quiet', { cursor: 'bm90LWEtY3Vyc29y' }), 400, 'cursor');
    expectProblem(await changelogs('quiet', { limit: '0' }), 400, 'limit');
    expectProblem(await changelogs('quiet', { limit: '101' }), 400, 'limit');
    expectProblem(await changelogs('quiet', { order: 'asc' }), 400, 'order');
    expectProblem(await call('changelogs', 'GET', '/adapters/{name}/changelogs', { pathParameters: { name: 'x%2Fy' } }), 400, 'name');
    expectProblem(await call('changelogs', 'GET', '/adapters/{name}/changelogs', { pathParameters: { name: 'quiet' }, body: { x: 1 } }), 400);
  });

  it('answers 404 for a name no adapter has and none ever had, and an empty trail for an adapter written before the changelog', async () => {
    expectProblem(await changelogs('never-was'), 404);
    await world.addAdapter('before-trail', world.nso.url);
    const items = await world.items('changelog');
    const own = items.filter((i) => i['pk'] === 'adapter#before-trail');
    // As a record written before the changelog existed: no entry under its name.
    await documentClient.send(
      new TransactWriteCommand({ TransactItems: own.map((i) => ({ Delete: { TableName: world.tables.changelog, Key: { pk: i['pk'], sk: i['sk'] } } })) }),
    );
    const res = await changelogs('before-trail');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [] });
  });
});

describe('GET /applications/{name}/changelogs and GET /application/{name}/changelogs', () => {
  const apps = (resource: '/applications/{name}/changelogs' | '/application/{name}/changelogs', name: string, query?: Record<string, string>) =>
    call('applications', 'GET', resource, { pathParameters: { name }, ...(query ? { query } : {}) });

  it('answers the same page at both paths, newest first, from entries written with the shared module', async () => {
    expect(await apps('/applications/{name}/changelogs', 'configuration_manager')).toMatchObject({ status: 200, body: { items: [] } });
    for (const [i, action] of (['stopped', 'started', 'loglevel'] as const).entries()) {
      await documentClient.send(
        new TransactWriteCommand({
          TransactItems: [changelogPut({ kind: 'application', name: 'orch_manager', at: `2026-05-01T00:00:0${i}.000Z`, by: 'ops-bob', action })],
        }),
      );
    }
    const plural = await apps('/applications/{name}/changelogs', 'orch_manager', { limit: '2' });
    const singular = await apps('/application/{name}/changelogs', 'orch_manager', { limit: '2' });
    expect(plural.status).toBe(200);
    expect(singular).toEqual(plural);
    const page = plural.body as Page;
    expect(page.items.map((e) => e.action)).toEqual(['loglevel', 'started']);
    const rest = await apps('/application/{name}/changelogs', 'orch_manager', { cursor: page.next! });
    expect((rest.body as Page).items.map((e) => [e.action, e.by, e.kind])).toEqual([['stopped', 'ops-bob', 'application']]);
  });

  it('answers 404 for a name that is not an application, and 400 for a bad cursor or limit', async () => {
    expectProblem(await apps('/applications/{name}/changelogs', 'relay'), 404);
    expectProblem(await apps('/application/{name}/changelogs', 'lab'), 404);
    expectProblem(await apps('/applications/{name}/changelogs', 'orch_manager', { cursor: 'bm90LWEtY3Vyc29y' }), 400, 'cursor');
    expectProblem(await apps('/application/{name}/changelogs', 'orch_manager', { limit: 'ten' }), 400, 'limit');
  });
});

describe('PUT /adapters/{name}/loglevel', () => {
  it('sets the level shown by GET /adapters[/{name}] (info by default)', async () => {
    await world.addAdapter('levelled', world.nso.url);
    expect((await call('get', 'GET', '/adapters/{name}', { pathParameters: { name: 'levelled' } })).body).toMatchObject({ logLevel: 'info' });
    const res = await setLevel('levelled', 'warn');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'levelled', logLevel: 'warn', state: 'RUNNING' });
    expect((await call('get', 'GET', '/adapters/{name}', { pathParameters: { name: 'levelled' } })).body).toEqual(res.body);
    const listed = (await call('list', 'GET', '/adapters')).body as { items: { name: string; logLevel: string }[] };
    expect(listed.items.find((a) => a.name === 'levelled')?.logLevel).toBe('warn');
    // A replace keeps the level: only this route changes it.
    await call('put', 'PUT', '/adapters/{name}', { pathParameters: { name: 'levelled' }, body: adapterBody() });
    expect((await call('get', 'GET', '/adapters/{name}', { pathParameters: { name: 'levelled' } })).body).toMatchObject({ logLevel: 'warn' });
  });

  it.each([
    [{ level: 'verbose' }, 'level'],
    [{ level: 'TRACE' }, 'level'],
    [{}, 'level'],
    [{ level: 'info', extra: 1 }, 'extra'],
  ])('answers 400 for %j', async (body, field) => {
    expectProblem(await call('loglevel', 'PUT', '/adapters/{name}/loglevel', { pathParameters: { name: 'levelled' }, body }), 400, field);
  });

  it('answers 404 for an unknown adapter, and 500 naming nothing secret for a damaged record', async () => {
    expectProblem(await setLevel('nobody', 'debug'), 404);
    await documentClient.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: world.tables.adapters,
              Item: {
                pk: 'ADAPTER#damaged',
                kind: 'adapter',
                name: 'damaged',
                type: 'nso',
                baseUrl: 'x',
                auth: { type: 'basic', username: 'u', password: 'plain-damaged-pw' },
                created: 'x',
                lastUpdated: 'x',
              },
            },
          },
        ],
      }),
    );
    const res = await setLevel('damaged', 'debug');
    expectProblem(res, 500);
    expect(JSON.stringify(res.body)).not.toContain('plain-damaged-pw');
  });
});

describe("what the relay logs at the adapter's level", () => {
  const secretBody = {
    'tailf-ncs:config': {
      'tailf-ned-cisco-ios:hostname': 'body-marker',
      nested: {
        deeper: { deepest: { 'remote-password': 'hunter2-nested', apiKey: 'k-123-value', note: `inline ${NSO_PASSWORD} inline`, token: { any: 'tok-value' } } },
      },
      filler: 'f'.repeat(6000),
    },
  };
  const basic = () => Buffer.from(`admin:${NSO_PASSWORD}`).toString('base64');
  const relayed = async (level: string) => {
    expect((await setLevel('logged', level)).status).toBe(200);
    // Within the adapter cache period (1 s here) every warm relay uses the new level.
    await pause(1_100);
    return stdoutDuring(async () => {
      expect((await relay('logged', { method: 'PATCH' }, secretBody)).status).toBe(200);
      expect((await relay('logged', { method: 'GET' })).status).toBe(200);
    });
  };

  beforeAll(async () => {
    await world.addAdapter('logged', world.nso.url);
  });

  it('at trace, logs both bodies truncated, with the password, the Authorization credentials and every password-like field redacted', async () => {
    const out = await relayed('trace');
    const exchanges = out.entries().filter((e) => e['message'] === 'relay exchange');
    expect(exchanges).toHaveLength(2);
    const [patch, get] = exchanges as [Record<string, any>, Record<string, any>];
    expect(patch).toMatchObject({
      level: 'trace',
      adapter: 'logged',
      request: { method: 'PATCH', path: CONFIG, headers: { Authorization: '[redacted]', Accept: 'application/yang-data+json' } },
    });
    expect(patch['request']['body']).toMatchObject({ truncated: true, bytes: expect.any(Number) });
    expect(patch['request']['body']['text']).toHaveLength(4096);
    expect(patch['request']['body']['text']).toContain('body-marker');
    expect(patch['request']['body']['text']).toContain('"remote-password":"[redacted]"');
    expect(patch['request']['body']['text']).toContain('"note":"inline [redacted] inline"');
    expect(get['answer']).toMatchObject({ status: 200, contentType: expect.stringContaining('json'), body: { truncated: true } });
    expect(get['answer']['body']['text']).toContain('"apiKey":"[redacted]"');
    const raw = out.raw();
    for (const secret of [NSO_PASSWORD, basic(), 'hunter2-nested', 'k-123-value', 'tok-value']) expect(raw).not.toContain(secret);
  });

  it('at debug, logs the request and answer metadata without any body', async () => {
    const out = await relayed('debug');
    const exchanges = out.entries().filter((e) => e['message'] === 'relay exchange');
    expect(exchanges[0]).toMatchObject({
      level: 'debug',
      request: {
        method: 'PATCH',
        path: CONFIG,
        accept: 'application/yang-data+json',
        contentType: 'application/yang-data+json',
        bytes: expect.any(Number),
        headers: ['Accept', 'Authorization', 'Content-Type'],
      },
      answer: { status: expect.any(Number), bytes: expect.any(Number), durationMs: expect.any(Number) },
    });
    expect(exchanges[1]).toMatchObject({ answer: { status: 200, contentType: expect.stringContaining('json'), bytes: expect.any(Number) } });
    expect(out.raw()).not.toMatch(/body-marker|hunter2|ffffffff/);
  });

  it('reaches a warm relay within its adapter cache period (1 s here), never later', async () => {
    // The adapter cache reads the time through Date: it is held still and moved past the
    // period by hand, so that "within the period" does not depend on how long the calls take.
    // An adapter of its own: what the cache holds of it is dated ahead of the real clock.
    await world.addAdapter('clocked', world.nso.url);
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const periodPassed = () => vi.setSystemTime(Date.now() + 1_001);
    // Warm: this relay container holds the adapter at info.
    const warm = await stdoutDuring(async () => expect((await relay('clocked', { method: 'GET' })).status).toBe(200));
    expect(warm.entries().some((e) => e['message'] === 'relay exchange')).toBe(false);
    expect((await setLevel('clocked', 'debug')).status).toBe(200);
    periodPassed();
    const changed = await stdoutDuring(async () => expect((await relay('clocked', { method: 'GET' })).status).toBe(200));
    expect(changed.entries().some((e) => e['message'] === 'relay exchange')).toBe(true);
  });

  it('at info, logs one call line per call and nothing of the bodies; at error, nothing for a call that succeeded', async () => {
    const info = await relayed('info');
    expect(
      info
        .entries()
        .filter((e) => e['message'] === 'relay call')
        .map((e) => e['level']),
    ).toEqual(['info', 'info']);
    expect(info.entries().filter((e) => e['message'] === 'relay exchange')).toEqual([]);
    expect(info.raw()).not.toMatch(/body-marker|hunter2|ffffffff/);
    const error = await relayed('error');
    expect(error.entries().filter((e) => String(e['message']).startsWith('relay '))).toEqual([]);
  });
});
