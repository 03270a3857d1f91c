/**
 * The outbound client against the NSO simulator (and a few raw servers) over loopback.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  OutboundError,
  createHttpClient,
  type HttpClient,
  type OutboundFailure,
  type OutboundRequest,
  type ResolveAll,
} from '../../functions/outbound/http-client.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { freePort } from '../support/dynamodb-local.js';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../support/relay-tls.js';

const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

const get = (origin: string, path = '/restconf/data/tailf-ncs:devices/device=ce0/config', extra: Partial<OutboundRequest> = {}): OutboundRequest => ({
  target: { origin: new URL(origin), path },
  method: 'GET',
  headers: { Accept: 'application/yang-data+json', Authorization: AUTH },
  timeoutMs: 5_000,
  maxBodyBytes: 1024 * 1024,
  ...extra,
});

const failureOf = async (promise: Promise<unknown>): Promise<OutboundFailure> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OutboundError) return error.failure;
    throw error;
  }
  throw new Error('expected the exchange to fail');
};

describe('orchestrator client over plain HTTP', () => {
  let sim: NsoSimulator;
  let client: HttpClient;

  beforeAll(async () => {
    sim = await startNsoSimulator();
  });
  afterAll(async () => {
    await sim.close();
  });
  afterEach(() => {
    client?.close();
    sim.setKnobs({});
    sim.resetData();
    sim.requests.length = 0;
  });

  const fresh = (): HttpClient => {
    client = createHttpClient({ allowLoopback: true });
    return client;
  };

  it('reuses one keep-alive connection for many calls', async () => {
    const c = fresh();
    const before = sim.connections;
    for (let i = 0; i < 25; i++) {
      const answer = await c.send(get(sim.url));
      expect(answer.status).toBe(200);
    }
    expect(sim.connections - before).toBe(1);
    expect(sim.requests).toHaveLength(25);
  });

  it('sends the method, the path verbatim, the headers and the body', async () => {
    const c = fresh();
    const answer = await c.send({
      ...get(sim.url, '/restconf/data/tailf-ncs:devices/device=ce0/config'),
      method: 'PATCH',
      headers: { Accept: 'application/yang-data+json', Authorization: AUTH, 'Content-Type': 'application/yang-data+json' },
      body: JSON.stringify({ 'tailf-ncs:config': { 'tailf-ned-cisco-ios:hostname': 'ce0-patched' } }),
    });
    expect(answer.status).toBe(204);
    expect(sim.requests[0]).toMatchObject({
      method: 'PATCH',
      path: '/restconf/data/tailf-ncs:devices/device=ce0/config',
      body: '{"tailf-ncs:config":{"tailf-ned-cisco-ios:hostname":"ce0-patched"}}',
      user: 'admin',
    });
    expect(sim.requests[0]!.headers['content-type']).toBe('application/yang-data+json');
    expect(sim.requests[0]!.headers['content-length']).toBe(String(sim.requests[0]!.body.length));
  });

  it('returns the status, media type and body of an answer', async () => {
    const answer = await fresh().send(get(sim.url, '/restconf/data/tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:hostname'));
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe('application/yang-data+json');
    expect(JSON.parse(answer.body.toString())).toEqual({ 'tailf-ned-cisco-ios:hostname': 'ce0' });
  });

  it('gives up at the deadline and destroys the connection', async () => {
    const c = fresh();
    await c.send(get(sim.url));
    const before = sim.connections;
    sim.setKnobs({ delayMs: 3_000 });
    expect(await failureOf(c.send(get(sim.url, undefined, { timeoutMs: 200 })))).toBe('timeout');
    sim.setKnobs({});
    await c.send(get(sim.url));
    expect(sim.connections - before).toBe(1); // the timed-out socket was not reused
  });

  it('times out on a body that drips in slower than the deadline', async () => {
    sim.setKnobs({ dripMs: 100 });
    expect(await failureOf(fresh().send(get(sim.url, undefined, { timeoutMs: 400 })))).toBe('timeout');
  });

  it('stops reading past the body cap and destroys the connection (chunked body)', async () => {
    const c = fresh();
    await c.send(get(sim.url));
    const before = sim.connections;
    sim.setKnobs({ hugeBodyBytes: 2 * 1024 * 1024 });
    expect(await failureOf(c.send(get(sim.url, undefined, { maxBodyBytes: 64 * 1024 })))).toBe('too-large');
    sim.setKnobs({});
    await c.send(get(sim.url));
    expect(sim.connections - before).toBe(1);
  });

  it('accepts a body of exactly the cap', async () => {
    sim.setKnobs({ hugeBodyBytes: 64 * 1024 });
    const answer = await fresh().send(get(sim.url, undefined, { maxBodyBytes: 64 * 1024 }));
    expect(answer.body.length).toBe(64 * 1024);
  });

  it('reports a connection reset as a connection failure', async () => {
    sim.setKnobs({ reset: true });
    expect(await failureOf(fresh().send(get(sim.url)))).toBe('connect');
  });

  it('does not send a POST or PATCH again when a pooled connection turns out dead: it may have run', async () => {
    for (const method of ['POST', 'PATCH'] as const) {
      const c = fresh();
      await c.send(get(sim.url));
      sim.setKnobs({ resetReusedConnections: true });
      const requestsBefore = sim.requests.length;
      const failure = await failureOf(
        c.send(
          get(sim.url, undefined, {
            method,
            body: '{}',
            headers: { Accept: 'application/yang-data+json', 'Content-Type': 'application/yang-data+json', Authorization: AUTH },
          }),
        ),
      );
      expect(failure, method).toBe('connect');
      expect(sim.requests.length - requestsBefore, method).toBeLessThanOrEqual(1);
      sim.setKnobs({});
    }
  });

  it('reports a refused connection as a connection failure', async () => {
    const port = await freePort();
    expect(await failureOf(fresh().send(get(`http://127.0.0.1:${port}`)))).toBe('connect');
  });

  it('stops when the caller aborts', async () => {
    // Held until the connection closes: the answer cannot come before the abort.
    sim.setKnobs({ hold: new Promise(() => undefined) });
    const controller = new AbortController();
    const pending = fresh().send(get(sim.url, undefined, { signal: controller.signal }));
    // Aborted once the simulator holds the request: after a fixed pause, a loaded machine could
    // abort before it arrived, and the simulator would log it after this test had ended.
    await vi.waitFor(() => expect(sim.requests).toHaveLength(1), { timeout: 20_000, interval: 5 });
    controller.abort();
    expect(await failureOf(pending)).toBe('aborted');
  });

  it('does not follow a redirect: it returns the 3xx as it came', async () => {
    sim.setKnobs({ redirect: { status: 302, location: 'http://169.254.169.254/latest/meta-data' } });
    const answer = await fresh().send(get(sim.url));
    expect(answer.status).toBe(302);
    expect(sim.requests).toHaveLength(1);
  });
});

describe('orchestrator client refusing addresses', () => {
  let sim: NsoSimulator;
  beforeAll(async () => {
    sim = await startNsoSimulator();
  });
  afterAll(async () => {
    await sim.close();
  });

  it.each(['http://127.0.0.1', 'http://localhost', 'http://[::ffff:127.0.0.1]'])(
    'refuses loopback (%s) outside local mode without connecting',
    async (host) => {
      const client = createHttpClient({ allowLoopback: false });
      const before = sim.connections;
      expect(await failureOf(client.send(get(`${host}:${sim.port}`)))).toBe('blocked');
      expect(sim.connections).toBe(before);
      expect(sim.requests).toHaveLength(0);
      client.close();
    },
  );

  it('refuses a name that resolves to the metadata address (DNS rebinding)', async () => {
    const asked: string[] = [];
    const resolve: ResolveAll = async (hostname) => {
      asked.push(hostname);
      return [{ address: '169.254.169.254', family: 4 }];
    };
    const client = createHttpClient({ allowLoopback: true, resolve });
    expect(await failureOf(client.send(get('http://nso.example.test:8080')))).toBe('blocked');
    expect(asked).toEqual(['nso.example.test']);
    client.close();
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const resolve: ResolveAll = async () => [
      { address: '10.0.0.1', family: 4 },
      { address: 'fe80::1', family: 6 },
    ];
    const client = createHttpClient({ allowLoopback: false, resolve });
    expect(await failureOf(client.send(get('http://nso.example.test:8080')))).toBe('blocked');
    client.close();
  });

  it('connects to what the guarded lookup resolved when the address is allowed', async () => {
    const resolve: ResolveAll = async () => [{ address: '127.0.0.1', family: 4 }];
    const client = createHttpClient({ allowLoopback: true, resolve });
    const answer = await client.send(get(`http://nso.example.test:${sim.port}`));
    expect(answer.status).toBe(200);
    expect(sim.requests.at(-1)!.headers['host']).toBe(`nso.example.test:${sim.port}`);
    client.close();
  });

  it('refuses a literal link-local address before connecting', async () => {
    const client = createHttpClient({ allowLoopback: true });
    expect(await failureOf(client.send(get('http://169.254.169.254')))).toBe('blocked');
    client.close();
  });
});

describe('orchestrator client over HTTPS', () => {
  let tlsSim: NsoSimulator;
  beforeAll(async () => {
    tlsSim = await startNsoSimulator({ tls: { key: TEST_TLS_KEY, cert: TEST_TLS_CERT } });
  });
  afterAll(async () => {
    await tlsSim.close();
  });

  it('talks HTTPS to an orchestrator whose certificate it trusts, over one connection', async () => {
    const client = createHttpClient({ allowLoopback: true, ca: TEST_TLS_CERT });
    const before = tlsSim.connections;
    for (let i = 0; i < 5; i++) expect((await client.send(get(tlsSim.url))).status).toBe(200);
    expect(tlsSim.connections - before).toBe(1);
    client.close();
  });

  it('fails the TLS handshake with an untrusted (self-signed) certificate and sends nothing', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const before = tlsSim.requests.length;
    expect(await failureOf(client.send(get(tlsSim.url)))).toBe('tls');
    expect(tlsSim.requests).toHaveLength(before);
    client.close();
  });
});

describe('orchestrator client against a server that does not speak HTTP', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reports a protocol failure', async () => {
    const client = createHttpClient({ allowLoopback: true });
    expect(await failureOf(client.send(get(`http://127.0.0.1:${port}`)))).toBe('protocol');
    client.close();
  });
});

/** Whether the client says the failed request may have reached the server. */
const reachedOf = async (promise: Promise<unknown>): Promise<boolean> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OutboundError) return error.mayHaveReached;
    throw error;
  }
  throw new Error('expected the exchange to fail');
};

describe('whether a failed request may have reached the orchestrator', () => {
  let sim: NsoSimulator;
  let tlsSim: NsoSimulator;
  beforeAll(async () => {
    sim = await startNsoSimulator();
    tlsSim = await startNsoSimulator({ tls: { key: TEST_TLS_KEY, cert: TEST_TLS_CERT } });
  });
  afterAll(async () => {
    await sim.close();
    await tlsSim.close();
  });
  afterEach(() => sim.setKnobs({}));

  const enotfound: ResolveAll = async () => {
    throw Object.assign(new Error('getaddrinfo ENOTFOUND nso.example.test'), { code: 'ENOTFOUND' });
  };
  const eaiAgain: ResolveAll = async () => {
    throw Object.assign(new Error('getaddrinfo EAI_AGAIN nso.example.test'), { code: 'EAI_AGAIN' });
  };
  const metadata: ResolveAll = async () => [{ address: '169.254.169.254', family: 4 }];

  const cases: [string, () => Promise<string>, { resolve?: ResolveAll }][] = [
    ['a refused connection', async () => `http://127.0.0.1:${await freePort()}`, {}],
    ['an unknown host name', async () => 'http://nso.example.test:8080', { resolve: enotfound }],
    ['a failed DNS lookup', async () => 'http://nso.example.test:8080', { resolve: eaiAgain }],
    ['a name resolving to a refused address', async () => 'http://nso.example.test:8080', { resolve: metadata }],
    ['a refused address literal', async () => 'http://169.254.169.254', {}],
    ['an untrusted certificate', async () => tlsSim.url, {}],
    ['a server that does not speak TLS', async () => sim.url.replace('http:', 'https:'), {}],
  ];
  it.each(cases)('says no for %s', async (_label, origin, options) => {
    const client = createHttpClient({ allowLoopback: true, ...options });
    const before = sim.requests.length + tlsSim.requests.length;
    expect(await reachedOf(client.send(get(await origin(), undefined, { method: 'POST', body: '{}' })))).toBe(false);
    expect(sim.requests.length + tlsSim.requests.length).toBe(before);
    client.close();
  });

  it.each([
    ['a connection reset after the request was sent', { reset: true }],
    ['no answer in time', { delayMs: 2_000 }],
  ] as const)('says maybe for %s', async (_label, knobs) => {
    sim.setKnobs(knobs);
    const client = createHttpClient({ allowLoopback: true });
    expect(await reachedOf(client.send(get(sim.url, undefined, { method: 'POST', body: '{}', timeoutMs: 500 })))).toBe(true);
    client.close();
  });

  it('says maybe for a request that waited for a pooled socket, and leaves no listener behind', async () => {
    // The first request on the connection is answered; every later one is read and never answered.
    let served = 0;
    let answerAll = false;
    const server = createHttpServer((_req, res) => {
      if (answerAll || served++ === 0) res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    // One socket: the requests after the first wait for it and get it already connected,
    // without Node marking it reused.
    const client = createHttpClient({ allowLoopback: true, maxSockets: 1 });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const [first, queued] = await Promise.all([
        client.send(get(origin)),
        reachedOf(client.send(get(origin, undefined, { method: 'POST', body: '{}', timeoutMs: 1_000 }))),
      ]);
      expect(first.status).toBe(200);
      expect(queued).toBe(true);
      // Thirty requests queued on one keep-alive socket: none may add a listener that stays.
      answerAll = true;
      const answers = await Promise.all(Array.from({ length: 30 }, () => client.send(get(origin))));
      expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
