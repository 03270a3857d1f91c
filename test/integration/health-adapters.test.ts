/**
 * GET /health/adapters and /health/adapters/{name} against the NSO simulator over loopback,
 * adapters in DynamoDB Local, passwords in the local secrets store, and a UDP socket standing
 * in for the X-Ray daemon.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { stdoutDuring } from '../support/stdout.js';
import { freePort } from '../support/dynamodb-local.js';

type Handler = Parameters<typeof invoke>[0];

const PASSWORD = 'nso-Secret-42';
const TRACE_ROOT = '1-5759e988-bd862e3fe1be46a994272793';
let nso: NsoSimulator;
let dir: string;
let listHandler: Handler;
let oneHandler: Handler;
let daemon: UdpSocket;
let adaptersTable: string;
const datagrams: string[] = [];

const list = (query?: Record<string, string>) =>
  invoke(
    listHandler,
    apiEvent({ method: 'GET', resource: '/health/adapters', ...(query ? { query } : {}), authorizer: { principalId: 'reader', roles: 'apiread' } }),
  );
const one = (name: string) =>
  invoke(oneHandler, apiEvent({ method: 'GET', resource: '/health/adapters/{name}', pathParameters: { name: encodeURIComponent(name) } }));

beforeAll(async () => {
  const tables = await createTables();
  adaptersTable = tables['adapters'];
  dir = await mkdtemp(path.join(tmpdir(), 'health-adapters-'));
  nso = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD } });
  const closedPort = await freePort();

  daemon = createSocket('udp4');
  daemon.on('message', (msg) => datagrams.push(msg.toString('utf8')));
  daemon.bind(0, '127.0.0.1');
  await once(daemon, 'listening');

  const secretsFile = path.join(dir, 'secrets.json');
  const secrets = createLocalBackend({ file: secretsFile });
  await secrets.write('netconfig/adapters/lab-nso', { password: PASSWORD });
  await secrets.write('netconfig/adapters/wrong-pass', { password: 'not-the-password' });
  await secrets.write('netconfig/adapters/dead', { password: PASSWORD });
  const store = createAdapterStore(documentClient, tables['adapters']);
  const now = new Date().toISOString();
  const adapter = (name: string, baseUrl: string, password = `$VAULT_netconfig/adapters/${name}#password`) =>
    store.put({ name, type: 'nso', baseUrl, auth: { type: 'basic', username: 'admin', password } }, now);
  await adapter('lab-nso', nso.url);
  await adapter('wrong-pass', nso.url);
  await adapter('dead', `http://127.0.0.1:${closedPort}`);
  await adapter('no-secret', nso.url, '$VAULT_netconfig/adapters/nobody#password');

  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('HEALTH_ADAPTER_TIMEOUT_MS', '500');
  // These tests change the orchestrator between requests: every request probes afresh.
  vi.stubEnv('HEALTH_PROBE_CACHE_SECONDS', '0');
  vi.stubEnv('LOG_LEVEL', 'warn');
  vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${daemon.address().port}`);
  vi.resetModules();
  listHandler = (await import('../../functions/health/handlers/adapters.js')).handler;
  oneHandler = (await import('../../functions/health/handlers/adapter.js')).handler;
});

afterEach(() => {
  vi.restoreAllMocks();
  nso.setKnobs({});
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await nso.close();
  daemon.close();
  await rm(dir, { recursive: true, force: true });
});

describe('GET /health/adapters', () => {
  it('probes every adapter, sorted by name, and tells up from down with a reason', async () => {
    nso.requests.length = 0;
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.headers['Cache-Control']).toBe('no-store');
    expect(res.body).toEqual({
      status: 'down',
      health: 'down',
      checkedAt: expect.any(String),
      adapters: [
        { name: 'dead', type: 'nso', state: 'RUNNING', status: 'down', reason: 'unreachable', latencyMs: expect.any(Number), checkedAt: expect.any(String) },
        { name: 'lab-nso', type: 'nso', state: 'RUNNING', status: 'up', latencyMs: expect.any(Number), httpStatus: 200, checkedAt: expect.any(String) },
        { name: 'no-secret', type: 'nso', state: 'RUNNING', status: 'down', reason: 'secret-unusable', checkedAt: expect.any(String) },
        {
          name: 'wrong-pass',
          type: 'nso',
          state: 'RUNNING',
          status: 'down',
          reason: 'unauthorized',
          latencyMs: expect.any(Number),
          httpStatus: 401,
          checkedAt: expect.any(String),
        },
      ],
    });
    // The light call: GET /restconf, authenticated, asking for RESTCONF JSON.
    expect(nso.requests).toHaveLength(2);
    for (const r of nso.requests) {
      expect(r).toMatchObject({ method: 'GET', path: '/restconf' });
      expect(r.headers['accept']).toBe('application/yang-data+json');
      expect(r.headers['authorization']).toMatch(/^Basic /);
    }
    expect(nso.requests.map((r) => r.user)).toContain('admin');
  });

  it('never shows an address, a username or a password', async () => {
    const text = JSON.stringify((await list()).body);
    for (const secret of [PASSWORD, 'not-the-password', 'admin', nso.url, '127.0.0.1', '$VAULT_']) expect(text).not.toContain(secret);
  });

  it('pages like GET /adapters', async () => {
    const first = await list({ limit: '3' });
    expect(first.body.adapters.map((a: { name: string }) => a.name)).toEqual(['dead', 'lab-nso', 'no-secret']);
    expect(first.body.next).toEqual(expect.any(String));
    const second = await list({ limit: '3', cursor: first.body.next });
    expect(second.body.adapters.map((a: { name: string }) => a.name)).toEqual(['wrong-pass']);
    expect(second.body).not.toHaveProperty('next');
  });

  it.each<Record<string, string>>([{ limit: '0' }, { limit: '21' }, { cursor: 'not a cursor' }, { verbose: 'true' }])(
    'answers 400 for the query %j',
    async (query) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.contentType).toBe('application/problem+json');
    },
  );
});

describe('GET /health/adapters/{name}', () => {
  it('answers 200 when the orchestrator answers', async () => {
    const res = await one('lab-nso');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'up',
      health: 'up',
      checkedAt: expect.any(String),
      adapter: { name: 'lab-nso', type: 'nso', state: 'RUNNING', status: 'up', latencyMs: expect.any(Number), httpStatus: 200, checkedAt: res.body.checkedAt },
    });
  });

  it('answers 503 problem+json carrying the health fields when the orchestrator is down', async () => {
    const res = await one('dead');
    expect(res.status).toBe(503);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.headers['Retry-After']).toBe('30');
    expect(res.body).toMatchObject({
      type: 'urn:netconfig:problem:adapter-down',
      status: 503,
      health: 'down',
      adapter: { name: 'dead', status: 'down', reason: 'unreachable' },
    });
    expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
  });

  it('reports an orchestrator slower than the probe’s time limit as down by timeout', async () => {
    nso.setKnobs({ delayMs: 3_000 });
    const res = await one('lab-nso');
    expect(res.status).toBe(503);
    expect(res.body.adapter).toMatchObject({ status: 'down', reason: 'timeout' });
  });

  it('reports an orchestrator answering 5xx as down with its status', async () => {
    nso.setKnobs({ status: 503 });
    const res = await one('lab-nso');
    expect(res.status).toBe(503);
    expect(res.body.adapter).toMatchObject({ status: 'down', reason: 'unexpected-status', httpStatus: 503 });
  });

  it('answers 404 for an unknown adapter and 400 for an invalid name', async () => {
    expect((await one('nobody')).status).toBe(404);
    const bad = await one('../etc');
    expect(bad.status).toBe(400);
    expect(bad.contentType).toBe('application/problem+json');
  });

  it('logs a failed probe with the request id as correlation id and no secret', async () => {
    const ev = apiEvent({ method: 'GET', resource: '/health/adapters/{name}', pathParameters: { name: 'wrong-pass' } });
    let res: Awaited<ReturnType<typeof invoke>> | undefined;
    const out = await stdoutDuring(async () => (res = await invoke(oneHandler, ev)));
    expect(res?.status).toBe(503);
    const logs = out.entries();
    const failure = logs.find((l) => l['message'] === 'adapter health check failed');
    expect(failure).toMatchObject({
      level: 'warn',
      adapter: 'wrong-pass',
      reason: 'unauthorized',
      httpStatus: 401,
      correlationId: ev.requestContext.requestId,
    });
    expect(logs.every((l) => l['correlationId'] === ev.requestContext.requestId)).toBe(true);
    const all = out.raw();
    for (const secret of ['not-the-password', PASSWORD, 'Basic ', nso.url]) expect(all).not.toContain(secret);
  });

  it('sends the orchestrator call to X-Ray as its own subsegment when the invocation is sampled', async () => {
    datagrams.length = 0;
    vi.stubEnv('_X_AMZN_TRACE_ID', `Root=${TRACE_ROOT};Parent=53995c3f42cd8ad8;Sampled=1`);
    try {
      expect((await one('lab-nso')).status).toBe(200);
    } finally {
      vi.stubEnv('_X_AMZN_TRACE_ID', '');
    }
    // The tracer awaits the send before the call returns; loopback delivery is then a matter of the event loop.
    for (let i = 0; i < 50 && datagrams.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(datagrams).toHaveLength(1);
    const doc = JSON.parse(datagrams[0]!.split('\n')[1]!) as Record<string, any>;
    expect(doc).toMatchObject({
      name: 'orchestrator lab-nso',
      type: 'subsegment',
      trace_id: TRACE_ROOT,
      parent_id: '53995c3f42cd8ad8',
      namespace: 'remote',
      http: { request: { method: 'GET', url: `${nso.url}/restconf` }, response: { status: 200 } },
      annotations: { adapter: 'lab-nso', purpose: 'health' },
    });
    expect(datagrams[0]).not.toContain(PASSWORD);
  });
});

describe('damaged adapter records (a $ENC password from before 2021.2, a missing field)', () => {
  const ENC = '$ENC(bGVnYWN5LXBhc3N3b3Jk)';
  beforeAll(async () => {
    const raw = (name: string, auth: Record<string, unknown>) =>
      documentClient.send(
        new PutCommand({
          TableName: adaptersTable,
          Item: {
            pk: `ADAPTER#${name}`,
            kind: 'adapter',
            name,
            type: 'nso',
            baseUrl: nso.url,
            auth: { type: 'basic', username: 'admin', ...auth },
            created: 'x',
            lastUpdated: 'x',
          },
        }),
      );
    await raw('zz-legacy-enc', { password: ENC });
    await raw('zz-no-password', {});
  });

  it('are reported misconfigured by the list, which is degraded overall, and nothing is sent for them', async () => {
    nso.requests.length = 0;
    const res = await list();
    expect(res.status).toBe(200);
    const body = res.body as { status: string; health: string; adapters: { name: string; status: string; reason?: string }[] };
    expect(body.status).toBe('degraded');
    expect(body.health).toBe('degraded');
    expect(body.adapters.filter((a) => a.name.startsWith('zz-'))).toEqual([
      { name: 'zz-legacy-enc', type: 'nso', status: 'down', reason: 'misconfigured', checkedAt: expect.any(String) },
      { name: 'zz-no-password', type: 'nso', status: 'down', reason: 'misconfigured', checkedAt: expect.any(String) },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('bGVnYWN5');
  });

  it.each(['zz-legacy-enc', 'zz-no-password'])('answer 503 for %s alone, with the reason', async (name) => {
    const res = await one(name);
    expect(res.status).toBe(503);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status: 503, adapter: { name, status: 'down', reason: 'misconfigured' } });
    expect(JSON.stringify(res.body)).not.toContain('bGVnYWN5');
  });
});

describe('probe results reused for a few seconds (HEALTH_PROBE_CACHE_SECONDS, default 10)', () => {
  let cachedList: Handler;
  let cachedOne: Handler;

  beforeAll(async () => {
    vi.stubEnv('HEALTH_PROBE_CACHE_SECONDS', '30');
    vi.resetModules();
    cachedList = (await import('../../functions/health/handlers/adapters.js')).handler;
    cachedOne = (await import('../../functions/health/handlers/adapter.js')).handler;
  });

  const listOnce = () => invoke(cachedList, apiEvent({ method: 'GET', resource: '/health/adapters', authorizer: { principalId: 'reader', roles: 'apiread' } }));
  const oneOnce = (name: string) => invoke(cachedOne, apiEvent({ method: 'GET', resource: '/health/adapters/{name}', pathParameters: { name } }));
  const probesOf = () => nso.requests.filter((r) => r.path === '/restconf').length;

  it('probes each adapter once for many requests, sequential or concurrent, and says when it probed', async () => {
    nso.requests.length = 0;
    const first = await listOnce();
    const probed = probesOf();
    expect(probed).toBeGreaterThan(0);
    const again = await Promise.all([...Array.from({ length: 6 }, listOnce), ...Array.from({ length: 6 }, () => oneOnce('lab-nso'))]);
    expect(probesOf()).toBe(probed);
    const labOf = (body: { adapters: { name: string; checkedAt: string }[] }) => body.adapters.find((a) => a.name === 'lab-nso')!;
    for (const r of again.slice(0, 6)) expect(labOf(r.body).checkedAt).toBe(labOf(first.body).checkedAt);
    expect(again[6]!.body.adapter.checkedAt).toBe(labOf(first.body).checkedAt);
  });

  it('probes again as soon as the adapter record changes (address, username, password or any write)', async () => {
    await oneOnce('lab-nso');
    nso.requests.length = 0;
    const store = createAdapterStore(documentClient, adaptersTable);
    await store.put(
      { name: 'lab-nso', type: 'nso', baseUrl: nso.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/lab-nso#password' } },
      new Date(Date.now() + 1_000).toISOString(),
    );
    expect((await oneOnce('lab-nso')).status).toBe(200);
    expect(probesOf()).toBe(1);
  });

  it('shares one probe between concurrent requests while it is in flight', async () => {
    const store = createAdapterStore(documentClient, adaptersTable);
    await store.put(
      { name: 'lab-nso', type: 'nso', baseUrl: nso.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/lab-nso#password' } },
      new Date(Date.now() + 2_000).toISOString(),
    );
    nso.requests.length = 0;
    nso.setKnobs({ delayMs: 200 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => oneOnce('lab-nso')));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(probesOf()).toBe(1);
  });
});
