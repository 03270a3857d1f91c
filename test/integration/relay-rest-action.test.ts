/**
 * POST /orch_manager/restAction/{adapterId} through the handler with API Gateway events:
 * adapters in DynamoDB Local (written through the adapter store), passwords in the local
 * secrets store, and the NSO simulator over loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { REFUSED_PATHS } from '../support/relay-paths.js';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../support/relay-tls.js';
import { createTables } from '../../tools/local/table-copies.js';
import { captureStdout } from '../support/stdout.js';

type Handler = Parameters<typeof invoke>[0];

const PASSWORD = 'nso-Pa55-word';
const RESOURCE = '/orch_manager/restAction/{adapterId}';
const CONFIG = '/restconf/data/tailf-ncs:devices/device=ce0/config';

let nso: NsoSimulator;
let reuseNso: NsoSimulator;
let tlsNso: NsoSimulator;
let dir: string;
let handler: Handler;
let tables: Awaited<ReturnType<typeof createTables>>;
let secretsFile: string;
let closedPort: number;

const event = (adapterId: string, body: unknown) => apiEvent({ method: 'POST', resource: RESOURCE, pathParameters: { adapterId }, body });
const relay = (adapterId: string, params: Record<string, unknown>, body: unknown = {}, context = lambdaContext()) =>
  invoke(handler, event(adapterId, { params: { accept: 'application/yang-data+json', ...params }, body }), context);
const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);

/** Nothing a client sees may reveal where the orchestrator is or how to log in to it. */
const expectNothingRevealed = (body: unknown) => {
  const text = JSON.stringify(body);
  for (const sim of [nso, reuseNso, tlsNso]) {
    expect(text).not.toContain(String(sim.port));
  }
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(Buffer.from(`admin:${PASSWORD}`).toString('base64'));
};

beforeAll(async () => {
  tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'relay-'));
  const credentials = { username: 'admin', password: PASSWORD };
  nso = await startNsoSimulator({ credentials });
  reuseNso = await startNsoSimulator({ credentials });
  tlsNso = await startNsoSimulator({ credentials, tls: { key: TEST_TLS_KEY, cert: TEST_TLS_CERT } });
  closedPort = await freePort();

  secretsFile = path.join(dir, 'secrets.json');
  const secrets = createLocalBackend({ file: secretsFile });
  await secrets.write('netconfig/adapters/lab', { password: PASSWORD });
  await secrets.write('netconfig/adapters/wrong', { password: 'not-the-password' });
  const store = createAdapterStore(documentClient, tables['adapters']);
  const now = new Date().toISOString();
  const put = (name: string, baseUrl: string, extra: { timeoutMs?: number; password?: string } = {}) =>
    store.put(
      {
        name,
        type: 'nso',
        baseUrl,
        auth: { type: 'basic', username: 'admin', password: extra.password ?? '$VAULT_netconfig/adapters/lab#password' },
        ...(extra.timeoutMs ? { timeoutMs: extra.timeoutMs } : {}),
      },
      now,
    );
  await put('lab', nso.url);
  await put('lab quick', nso.url, { timeoutMs: 300 });
  await put('reuse', reuseNso.url);
  await put('wrong-password', nso.url, { password: '$VAULT_netconfig/adapters/wrong#password' });
  await put('no-secret', nso.url, { password: '$VAULT_netconfig/adapters/nobody#password' });
  await put('dead', `http://127.0.0.1:${closedPort}`);
  await put('self-signed', tlsNso.url);

  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.resetModules();
  handler = (await import('../../functions/relay/handlers/rest-action.js')).handler;
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([nso?.close(), reuseNso?.close(), tlsNso?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const sim of [nso, reuseNso, tlsNso]) {
    sim.setKnobs({});
    sim.resetData();
    sim.requests.length = 0;
  }
});

describe('relaying to the orchestrator', () => {
  it('returns the configuration of a device with GET', async () => {
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        result: '200',
        data: { 'tailf-ncs:config': expect.objectContaining({ 'tailf-ned-cisco-ios:hostname': 'ce0' }) },
      },
    ]);
    expect(nso.requests).toHaveLength(1);
    expect(nso.requests[0]).toMatchObject({ method: 'GET', path: CONFIG, body: '', user: 'admin' });
    expect(nso.requests[0]!.headers['accept']).toBe('application/yang-data+json');
    expect(nso.requests[0]!.headers['content-type']).toBeUndefined();
  });

  it('shows a PATCH in the next GET', async () => {
    const patch = await relay(
      'lab',
      { method: 'patch', path: CONFIG, contentType: 'application/yang-data+json' },
      { 'tailf-ncs:config': { 'tailf-ned-cisco-ios:hostname': 'ce0-renamed' } },
    );
    expect(patch).toMatchObject({ status: 200, body: [{ result: '204' }] });
    expect(patch.body[0]).not.toHaveProperty('data');
    expect(nso.requests[0]!.headers['content-type']).toBe('application/yang-data+json');

    const get = await relay('lab', { method: 'GET', path: `${CONFIG}/tailf-ned-cisco-ios:hostname` });
    expect(get.body).toEqual([{ result: '200', data: { 'tailf-ned-cisco-ios:hostname': 'ce0-renamed' } }]);
  });

  it('creates with POST, and returns the 409 of a second POST as a result', async () => {
    const device = { device: [{ name: 'ce9', address: '10.0.0.99' }] };
    const first = await relay('lab', { method: 'POST', path: '/restconf/data/tailf-ncs:devices', contentType: 'application/yang-data+json' }, device);
    expect(first.body).toEqual([{ result: '201' }]);
    const second = await relay('lab', { method: 'POST', path: '/restconf/data/tailf-ncs:devices', contentType: 'application/yang-data+json' }, device);
    expect(second.status).toBe(200);
    expect(second.body).toEqual([
      {
        result: '409',
        data: { 'ietf-restconf:errors': { error: [expect.objectContaining({ 'error-type': 'application', 'error-tag': 'data-exists' })] } },
      },
    ]);
  });

  it('replaces with PUT and removes with DELETE (a later GET answers 404 as a result)', async () => {
    const put = await relay('lab', { method: 'PUT', path: '/restconf/data/tailf-ncs:devices/device=pe0/address' }, { 'tailf-ncs:address': '10.9.9.9' });
    expect(put.body).toEqual([{ result: '204' }]);
    expect((await relay('lab', { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=pe0/address' })).body).toEqual([
      { result: '200', data: { 'tailf-ncs:address': '10.9.9.9' } },
    ]);
    const del = await relay('lab', { method: 'delete', path: '/restconf/data/tailf-ncs:devices/device=pe0' }, { ignored: true });
    expect(del.body).toEqual([{ result: '204' }]);
    expect(nso.requests.at(-1)!.body).toBe('');
    const gone = await relay('lab', { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=pe0' });
    expect(gone.body).toEqual([{ result: '404', data: { 'ietf-restconf:errors': expect.anything() } }]);
  });

  it('POSTs when params.method is absent (invoking a device action)', async () => {
    const res = await relay('lab', { path: '/restconf/data/tailf-ncs:devices/device=ce0/sync-from' });
    expect(res.body).toEqual([{ result: '200', data: { 'tailf-ncs:output': { result: true } } }]);
    expect(nso.requests[0]).toMatchObject({ method: 'POST', body: '{}' });
    // The body is labelled with the Accept type when contentType is absent.
    expect(nso.requests[0]!.headers['content-type']).toBe('application/yang-data+json');
  });

  it("speaks NSO's legacy media type when asked", async () => {
    const res = await relay('lab', { method: 'GET', path: `${CONFIG}/tailf-ned-cisco-ios:hostname`, accept: 'application/vnd.yang.data+json' });
    expect(res.body).toEqual([{ result: '200', data: { 'tailf-ned-cisco-ios:hostname': 'ce0' } }]);
    expect(nso.requests[0]!.headers['accept']).toBe('application/vnd.yang.data+json');
  });

  it('returns non-JSON answers as text', async () => {
    const res = await relay('lab', { method: 'GET', path: `${CONFIG}/tailf-ned-cisco-ios:hostname`, accept: 'application/yang-data+xml' });
    expect(res.body).toEqual([{ result: '200', data: '<hostname xmlns="urn:tailf-ned-cisco-ios">ce0</hostname>' }]);
  });

  it('passes the query string through', async () => {
    expect((await relay('lab', { method: 'GET', path: '/restconf/data/tailf-ncs:devices?depth=2' })).body[0].result).toBe('200');
    const unknown = await relay('lab', { method: 'GET', path: '/restconf/data/tailf-ncs:devices?bogus=1' });
    expect(unknown.body[0].result).toBe('400');
    expect(nso.requests.map((r) => r.path)).toEqual(['/restconf/data/tailf-ncs:devices?depth=2', '/restconf/data/tailf-ncs:devices?bogus=1']);
  });

  it('returns the 401 of a wrong password as a result', async () => {
    const res = await relay('wrong-password', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(200);
    expect(res.body[0].result).toBe('401');
    expect(res.body[0].data['ietf-restconf:errors'].error[0]['error-tag']).toBe('access-denied');
  });

  it('returns an orchestrator 5xx as a result, not a relay failure', async () => {
    nso.setKnobs({ status: 503 });
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ result: '503', data: { 'ietf-restconf:errors': expect.anything() } }]);
  });

  it('decodes an adapter name that API Gateway passes percent-encoded', async () => {
    const res = await relay('lab%20quick', { method: 'GET', path: CONFIG });
    expect(res.body[0].result).toBe('200');
  });

  it('reuses one connection across invocations', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await relay('reuse', { method: 'GET', path: CONFIG });
      expect(res.body[0].result).toBe('200');
    }
    expect(reuseNso.requests).toHaveLength(20);
    expect(reuseNso.connections).toBe(1);
  });
});

describe('refusing requests before anything is sent', () => {
  it.each(REFUSED_PATHS)('answers 400 naming params.path for %s, and sends nothing', async (_label, badPath) => {
    const res = await relay('lab', { method: 'GET', path: badPath });
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(fieldsOf(res.body)).toEqual(['params.path']);
    expect(nso.requests).toHaveLength(0);
  });

  it.each([
    ['params.accept', { accept: 'application/yang-data+json\r\nX-Injected: yes' }],
    ['params.accept', { accept: 'yang' }],
    ['params.contentType', { method: 'PATCH', contentType: 'application/yang-data+json\nX-Injected: yes' }],
    ['params.contentType', { method: 'PATCH', contentType: 'application/yang-data+xml' }],
  ])('answers 400 naming %s for a malformed media type, and sends nothing', async (field, params) => {
    const res = await relay('lab', { path: CONFIG, ...params });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual([field]);
    expect(nso.requests).toHaveLength(0);
  });

  it.each([
    ['params', { body: {} }],
    ['body', { params: { path: CONFIG, accept: 'application/yang-data+json' } }],
    ['params.path', { params: { accept: 'application/yang-data+json' }, body: {} }],
    ['params.accept', { params: { path: CONFIG }, body: {} }],
    ['extra', { params: { path: CONFIG, accept: 'application/yang-data+json' }, body: {}, extra: 1 }],
    ['params.method', { params: { path: CONFIG, accept: 'application/yang-data+json', method: 'HEAD' }, body: {} }],
    ['body', { params: { path: CONFIG, accept: 'application/yang-data+json' }, body: [1, 2] }],
    // Unknown members of params are refused as at the top level: a misspelt one would change the action.
    ['params.Method', { params: { path: CONFIG, accept: 'application/yang-data+json', Method: 'GET' }, body: {} }],
    ['params.content-type', { params: { path: CONFIG, accept: 'application/yang-data+json', 'content-type': 'application/json' }, body: {} }],
    ['params.__proto__', JSON.parse('{"params":{"path":"/x","accept":"application/json","__proto__":{"method":"GET"}},"body":{}}') as object],
    ['params.headers', { params: { path: CONFIG, accept: 'application/yang-data+json', headers: { Authorization: 'x' } }, body: {} }],
    ['params.path', { params: { path: 42, accept: 'application/yang-data+json' }, body: {} }],
  ])('answers 400 naming %s when the schema is broken', async (field, body) => {
    const res = await invoke(handler, event('lab', body));
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toContain(field);
    expect(nso.requests).toHaveLength(0);
  });

  it('answers 400 for an adapter name outside the rule', async () => {
    const res = await relay('..', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual(['adapterId']);
  });

  it('answers 404 for an unknown adapter, naming it', async () => {
    const res = await relay('ghost', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain("'ghost'");
    expect(nso.requests).toHaveLength(0);
  });
});

describe('when the orchestrator does not answer properly', () => {
  it('answers 504 before the function deadline when the orchestrator is slower than the time left', async () => {
    nso.setKnobs({ delayMs: 5_000 });
    const context = lambdaContext(1_500);
    const res = await relay('lab', { method: 'GET', path: CONFIG }, {}, context);
    expect(res.status).toBe(504);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
    // Our own timeout answered (naming the adapter), not the function's last-resort one.
    expect(res.body.detail).toContain("'lab'");
    expect(nso.requests).toHaveLength(1);
    expectNothingRevealed(res.body);
  });

  it("answers 504 at the adapter's own timeout", async () => {
    nso.setKnobs({ delayMs: 3_000 });
    const res = await relay('lab quick', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(504);
    expect(res.body.detail).toMatch(/'lab quick'.*300 ms/);
  });

  it('answers 504 when a body drips in past the deadline', async () => {
    nso.setKnobs({ dripMs: 200 });
    const res = await relay('lab quick', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(504);
  });

  it('answers 502 to a redirect and does not follow it', async () => {
    nso.setKnobs({ redirect: { status: 307, location: `${nso.url}/restconf/data` } });
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/redirect/);
    expect(nso.requests).toHaveLength(1);
    expectNothingRevealed(res.body);
  });

  it('answers 502 to a body over the cap and drops the connection', async () => {
    await relay('lab', { method: 'GET', path: CONFIG });
    const before = nso.connections;
    nso.setKnobs({ hugeBodyBytes: 5 * 1024 * 1024 });
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/larger than/);
    nso.setKnobs({});
    expect((await relay('lab', { method: 'GET', path: CONFIG })).body[0].result).toBe('200');
    expect(nso.connections - before).toBe(1);
  });

  it('returns a body just under the cap', async () => {
    nso.setKnobs({ hugeBodyBytes: 4 * 1024 * 1024 });
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(200);
    expect(res.body[0].data['tailf-ncs:filler']).toHaveLength(4 * 1024 * 1024 - 23);
  });

  it('answers 502 to a JSON media type whose body does not parse', async () => {
    nso.setKnobs({ malformedJson: true });
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/not valid JSON/);
  });

  it('answers 502 when the connection is reset', async () => {
    nso.setKnobs({ reset: true });
    const res = await relay('lab', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(502);
    expectNothingRevealed(res.body);
  });

  it('answers 502 when nothing listens', async () => {
    const res = await relay('dead', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(502);
    expect(res.body.detail).toContain("'dead'");
    expectNothingRevealed(res.body);
  });

  it('answers 502 when the TLS certificate is not trusted, and sends nothing', async () => {
    const res = await relay('self-signed', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/TLS/);
    expect(tlsNso.requests).toHaveLength(0);
    expectNothingRevealed(res.body);
  });

  it('answers the documented secret-reference-invalid problem, without sending, for a $ENC password met at run time', async () => {
    await documentClient.send(
      new PutCommand({
        TableName: tables['adapters'],
        Item: {
          pk: 'ADAPTER#legacy-enc',
          kind: 'adapter',
          name: 'legacy-enc',
          type: 'nso',
          baseUrl: nso.url,
          auth: { type: 'basic', username: 'admin', password: '$ENC(c2VjcmV0)' },
          created: 'x',
          lastUpdated: 'x',
        },
      }),
    );
    const res = await relay('legacy-enc', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:secret-reference-invalid', status: 500 });
    expect(res.body.detail).toContain('$ENC was removed in 2021.2');
    expect(JSON.stringify(res.body)).not.toContain('c2VjcmV0');
    expect(nso.requests).toHaveLength(0);
  });

  it('answers 500 without sending when the password reference points at nothing', async () => {
    const res = await relay('no-secret', { method: 'GET', path: CONFIG });
    expect(res.status).toBe(500);
    expect(nso.requests).toHaveLength(0);
    expectNothingRevealed(res.body);
  });
});

describe('logging', () => {
  /**
   * The stdout lines of `run` with orch_manager at `info` in the active profile (the relay logs
   * at that level, read again once forgotten), and `warn` again afterwards.
   */
  const atInfoLevel = async (run: () => Promise<void>) => {
    const { createProfileStore } = await import('../../functions/runtime/profile-store.js');
    const { containerSettings } = await import('../../functions/runtime/settings.js');
    const profiles = createProfileStore(documentClient, tables['profiles'], () => tables['changelog']);
    const change = { now: new Date().toISOString(), by: 'test' };
    await profiles.setApplicationLogLevel('orch_manager', 'info', change);
    containerSettings()!.forget();
    const out = captureStdout();
    try {
      await run();
    } finally {
      out.restore();
      await profiles.setApplicationLogLevel('orch_manager', 'warn', change);
      containerSettings()!.forget();
    }
    return out;
  };

  it('writes one line per call without secrets, bodies or query values', async () => {
    const out = await atInfoLevel(async () => {
      await relay(
        'lab',
        { method: 'PATCH', path: `${CONFIG}?depth=secret-looking-value` },
        { 'tailf-ncs:config': { 'tailf-ned-cisco-ios:hostname': 'body-marker' } },
      );
    });
    const calls = out.entries().filter((l) => l['message'] === 'relay call');
    expect(calls).toEqual([expect.objectContaining({ adapter: 'lab', method: 'PATCH', path: CONFIG, queryKeys: ['depth'], status: 200, outcome: 'answered' })]);
    expect(calls[0]!['durationMs']).toEqual(expect.any(Number));
    const all = out.raw();
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain('body-marker');
    expect(all).not.toContain('secret-looking-value');
    expect(all).not.toContain(Buffer.from(`admin:${PASSWORD}`).toString('base64'));
  });

  it('names the caller (token subject and roles) on the call line of what was sent to NSO', async () => {
    const out = await atInfoLevel(async () => {
      const body = { params: { method: 'GET', path: CONFIG, accept: 'application/yang-data+json' }, body: {} };
      const authorizer = { principalId: 'ops-7f3a@bank.example', principal: 'ops-7f3a@bank.example', roles: 'admin' };
      const res = await invoke(handler, apiEvent({ method: 'POST', resource: RESOURCE, pathParameters: { adapterId: 'lab' }, body, authorizer }));
      expect(res.status).toBe(200);
    });
    const calls = out.entries().filter((l) => l['message'] === 'relay call');
    expect(calls).toEqual([
      expect.objectContaining({
        adapter: 'lab',
        method: 'GET',
        path: CONFIG,
        operation: 'relayRestAction',
        caller: { subject: 'ops-7f3a@bank.example', roles: ['admin'] },
      }),
    ]);
  });
});

describe('outside local mode', () => {
  let deployed: Handler;
  beforeAll(async () => {
    vi.stubEnv('LOCAL_MODE', '');
    vi.resetModules();
    deployed = (await import('../../functions/relay/handlers/rest-action.js')).handler;
    vi.stubEnv('LOCAL_MODE', 'true');
  });

  it('refuses a loopback orchestrator with 502 and never connects', async () => {
    const before = nso.connections;
    const res = await invoke(deployed, event('lab', { params: { method: 'GET', path: CONFIG, accept: 'application/yang-data+json' }, body: {} }));
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/not one the relay may connect to/);
    expect(nso.connections).toBe(before);
    expect(nso.requests).toHaveLength(0);
    expectNothingRevealed(res.body);
  });
});
