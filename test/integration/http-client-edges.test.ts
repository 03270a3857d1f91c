/**
 * The outbound client's edges, against raw servers and the NSO simulator on loopback: how each
 * failure is classified and worded, the guarded DNS lookup on its own, the deadline and abort
 * before anything is sent, the body cap at the declared length, an answer cut short, the pool's
 * size, and what a settled exchange must leave alone (its socket, back in the pool).
 *
 * The module is loaded afresh for each test: its tables (the TLS error codes, the methods sent
 * twice) are built when it loads, and mutation testing's runner would otherwise keep the copy
 * loaded before any change was made to them.
 */
import { getEventListeners } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as clientModule from '../../functions/outbound/http-client.js';
import type { OutboundError as OutboundErrorType, OutboundRequest, ResolveAll } from '../../functions/outbound/http-client.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../support/relay-tls.js';

let { createHttpClient, guardedLookup, OutboundError } = clientModule;
beforeEach(async () => {
  vi.resetModules();
  ({ createHttpClient, guardedLookup, OutboundError } = await import('../../functions/outbound/http-client.js'));
});

const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const PATH = '/restconf/data/tailf-ncs:devices/device=ce0/config';

const request = (origin: string, extra: Partial<OutboundRequest> = {}): OutboundRequest => ({
  target: { origin: new URL(origin), path: PATH },
  method: 'GET',
  headers: { Accept: 'application/yang-data+json', Authorization: AUTH },
  timeoutMs: 5_000,
  maxBodyBytes: 1024 * 1024,
  ...extra,
});

/** The error an exchange failed with (it must fail, with an OutboundError). */
const errorOf = async (promise: Promise<unknown>): Promise<OutboundErrorType> => {
  const error = await promise.then(
    () => new Error('expected the exchange to fail'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundErrorType;
};

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
};
const stop = async (server: Server): Promise<void> => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
};

describe('failures, classified by their error code', () => {
  // A lookup that fails with a given code reaches the client the way a socket error does.
  const failingWith =
    (code: string | undefined, extra: Record<string, unknown> = {}): ResolveAll =>
    async () => {
      throw Object.assign(new Error(`lookup failed (${code})`), { code, ...extra });
    };

  it.each([
    ['ENOTFOUND', 'connect', 'connection failed'],
    ['ECONNREFUSED', 'connect', 'connection failed'],
    ['CERT_HAS_EXPIRED', 'tls', 'TLS handshake failed'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls', 'TLS handshake failed'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls', 'TLS handshake failed'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'tls', 'TLS handshake failed'],
    ['EPROTO', 'tls', 'TLS handshake failed'],
    ['HPE_INVALID_CONSTANT', 'protocol', 'the answer is not valid HTTP'],
    // Only whole codes, at their start: these merely contain one.
    ['EPROTONOSUPPORT', 'connect', 'connection failed'],
    ['XEPROTO', 'connect', 'connection failed'],
    ['E_ERR_TLS_X', 'connect', 'connection failed'],
    ['E_ERR_SSL_X', 'connect', 'connection failed'],
    ['XHPE_X', 'connect', 'connection failed'],
  ])('%s is a %s failure (%s), raised before sending', async (code, failure, message) => {
    const client = createHttpClient({ allowLoopback: true, resolve: failingWith(code) });
    const error = await errorOf(client.send(request('http://nso.example.test:8080')));
    expect([error.name, error.failure, error.message, error.code, error.mayHaveReached]).toEqual(['OutboundError', failure, message, code, false]);
    client.close();
  });

  it("is a TLS failure when OpenSSL's library says so, whatever the code", async () => {
    const client = createHttpClient({ allowLoopback: true, resolve: failingWith(undefined, { library: 'SSL routines' }) });
    const error = await errorOf(client.send(request('http://nso.example.test:8080')));
    expect([error.failure, error.message]).toEqual(['tls', 'TLS handshake failed']);
    const other = createHttpClient({ allowLoopback: true, resolve: failingWith(undefined, { library: 'BIO routines' }) });
    expect((await errorOf(other.send(request('http://nso.example.test:8080')))).failure).toBe('connect');
    client.close();
    other.close();
  });
});

describe('guardedLookup on its own', () => {
  const addresses = [
    { address: '10.0.0.7', family: 4 },
    { address: '2001:db8::7', family: 6 },
  ];
  const resolveTo =
    (answer: { address: string; family: number }[]): ResolveAll =>
    async () =>
      answer;
  const lookupWith = (lookup: ReturnType<typeof guardedLookup>, options: { all?: boolean }) =>
    new Promise<unknown[]>((resolve) => lookup('nso.example.test', options as never, (...args: unknown[]) => resolve(args)));

  it('answers every address when asked for all, and the first one (with its family) otherwise', async () => {
    const lookup = guardedLookup(false, resolveTo(addresses));
    expect(await lookupWith(lookup, { all: true })).toEqual([null, addresses]);
    expect(await lookupWith(lookup, {})).toEqual([null, '10.0.0.7', 4]);
  });

  it('asks the resolver for every address, whatever the caller asked', async () => {
    const asked: unknown[] = [];
    const lookup = guardedLookup(false, async (hostname, options) => {
      asked.push([hostname, options.all]);
      return addresses;
    });
    await lookupWith(lookup, {});
    expect(asked).toEqual([['nso.example.test', true]]);
  });

  it('fails with its own code when an address is refused, or when there is none', async () => {
    const [refused] = (await lookupWith(guardedLookup(false, resolveTo([...addresses, { address: '127.0.0.1', family: 4 }])), { all: true })) as [
      NodeJS.ErrnoException,
    ];
    expect([refused.code, refused.message]).toEqual([
      'ERR_RELAY_BLOCKED_ADDRESS',
      'host name resolves to a refused address (is a loopback address (allowed in local mode only))',
    ]);
    expect(await lookupWith(guardedLookup(true, resolveTo([{ address: '127.0.0.1', family: 4 }])), {})).toEqual([null, '127.0.0.1', 4]);
    const [none] = (await lookupWith(guardedLookup(false, resolveTo([])), {})) as [NodeJS.ErrnoException];
    expect([none.code, none.message]).toEqual(['ERR_RELAY_BLOCKED_ADDRESS', 'host name resolves to a refused address (no address)']);
  });

  it('passes a resolver failure through', async () => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND nso.example.test'), { code: 'ENOTFOUND' });
    const lookup = guardedLookup(false, async () => {
      throw failure;
    });
    const [error] = await lookupWith(lookup, {});
    expect(error).toBe(failure);
  });

  it('is what the client connects through: a refused name is a blocked failure with that code', async () => {
    const client = createHttpClient({ allowLoopback: true, resolve: resolveTo([{ address: '169.254.169.254', family: 4 }]) });
    const error = await errorOf(client.send(request('http://nso.example.test:8080')));
    expect([error.failure, error.code, error.message, error.mayHaveReached]).toEqual([
      'blocked',
      'ERR_RELAY_BLOCKED_ADDRESS',
      'host name resolves to a refused address (is a cloud metadata address)',
      false,
    ]);
    client.close();
  });
});

describe('before anything is sent', () => {
  let sim: NsoSimulator;
  beforeAll(async () => {
    sim = await startNsoSimulator();
  });
  afterAll(async () => {
    await sim.close();
  });
  afterEach(() => {
    sim.setKnobs({});
    sim.requests.length = 0;
  });

  it('refuses an IP literal, IPv6 in brackets too, saying why', async () => {
    const client = createHttpClient({ allowLoopback: true });
    for (const [origin, reason] of [
      ['http://169.254.169.254', 'is a cloud metadata address'],
      [`http://[fe80::1]:${sim.port}`, 'is a link-local address'],
      [`http://[::ffff:a9fe:a9fe]:${sim.port}`, 'is a cloud metadata address'],
    ] as const) {
      const error = await errorOf(client.send(request(origin)));
      expect([error.failure, error.message, error.mayHaveReached], origin).toEqual(['blocked', `refused address (${reason})`, false]);
    }
    expect(sim.requests).toHaveLength(0);
    client.close();
  });

  it('sends nothing when no time is left', async () => {
    const client = createHttpClient({ allowLoopback: true });
    for (const timeoutMs of [0, -1]) {
      const error = await errorOf(client.send(request(sim.url, { timeoutMs })));
      expect([error.failure, error.message, error.mayHaveReached]).toEqual(['timeout', 'no time left to send', false]);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sim.requests).toHaveLength(0);
    client.close();
  });

  it('sends nothing when the caller has already aborted', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const before = sim.connections;
    const error = await errorOf(client.send(request(sim.url, { signal: AbortSignal.abort() })));
    expect([error.failure, error.message, error.mayHaveReached]).toEqual(['aborted', 'aborted before sending', false]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sim.requests).toHaveLength(0);
    expect(sim.connections).toBe(before);
    client.close();
  });
});

describe('the exchange, over the simulator', () => {
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
  afterEach(() => {
    sim.setKnobs({});
    tlsSim.setKnobs({});
  });

  it('words a timeout and an abort', async () => {
    const client = createHttpClient({ allowLoopback: true });
    // Held until the connection closes: no answer can beat the deadline, nor the abort below.
    sim.setKnobs({ hold: new Promise(() => undefined) });
    const late = await errorOf(client.send(request(sim.url, { timeoutMs: 1_000 })));
    expect([late.failure, late.mayHaveReached]).toEqual(['timeout', true]);
    // The time left when the exchange started: at most the deadline, less only what ran before it.
    const within = Number(/^no complete answer within (\d+) ms$/.exec(late.message)?.[1]);
    expect(within).toBeGreaterThan(500);
    expect(within).toBeLessThanOrEqual(1_000);
    const controller = new AbortController();
    const received = sim.requests.length;
    const pending = client.send(request(sim.url, { signal: controller.signal }));
    // Aborted once the simulator holds the request, not after a guess.
    await vi.waitFor(() => expect(sim.requests.length).toBeGreaterThan(received), { timeout: 20_000, interval: 5 });
    controller.abort();
    const aborted = await errorOf(pending);
    expect([aborted.failure, aborted.message, aborted.mayHaveReached]).toEqual(['aborted', 'aborted', true]);
    client.close();
  });

  it('refuses a declared length one byte over the cap before reading, and takes one at the cap', async () => {
    const client = createHttpClient({ allowLoopback: true });
    sim.setKnobs({ hugeBodyBytes: 64 * 1024, hugeBodyDeclared: true });
    expect((await client.send(request(sim.url, { maxBodyBytes: 64 * 1024 }))).body.length).toBe(64 * 1024);
    const error = await errorOf(client.send(request(sim.url, { maxBodyBytes: 64 * 1024 - 1 })));
    expect([error.failure, error.message]).toEqual(['too-large', 'declared body of 65536 bytes exceeds 65535']);
    sim.setKnobs({ hugeBodyBytes: 64 * 1024 });
    const streamed = await errorOf(client.send(request(sim.url, { maxBodyBytes: 64 * 1024 - 1 })));
    expect([streamed.failure, streamed.message]).toEqual(['too-large', 'body exceeds 65535 bytes']);
    client.close();
  });

  it('leaves the socket of a settled exchange alone: a later deadline or abort does not close it', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const controller = new AbortController();
    const before = sim.connections;
    expect((await client.send(request(sim.url, { timeoutMs: 2_000, signal: controller.signal }))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await client.send(request(sim.url))).status).toBe(200);
    expect(sim.connections - before).toBe(1);
    client.close();
  });

  it('leaves no timer and no abort listener behind once an exchange settled', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const controller = new AbortController();
    // The client's own timers, not the process's count: sockets and the simulator start and
    // end timers of their own, at moments that depend on the machine's load.
    const set = vi.spyOn(globalThis, 'setTimeout');
    const cleared = vi.spyOn(globalThis, 'clearTimeout');
    try {
      // One signal for many calls, as a relay invocation shares its own.
      for (let i = 0; i < 12; i++) expect((await client.send(request(sim.url, { timeoutMs: 60_000, signal: controller.signal }))).status).toBe(200);
      const created = set.mock.results.map((result) => result.value as unknown);
      expect(created).toHaveLength(12);
      const gone = new Set(cleared.mock.calls.map(([timer]) => timer as unknown));
      expect(created.filter((timer) => !gone.has(timer))).toEqual([]);
    } finally {
      set.mockRestore();
      cleared.mockRestore();
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    client.close();
  });

  it('sends a GET, a PUT or a DELETE again, once, when a pooled connection turns out dead', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const client = createHttpClient({ allowLoopback: true });
      await client.send(request(sim.url));
      sim.setKnobs({ resetReusedConnections: true });
      const before = sim.connections;
      const requestsBefore = sim.requests.length;
      const body = method === 'PUT' ? JSON.stringify({ 'tailf-ncs:config': {} }) : undefined;
      const headers = { Accept: 'application/yang-data+json', Authorization: AUTH, ...(body ? { 'Content-Type': 'application/yang-data+json' } : {}) };
      const answer = await client.send(request(sim.url, { method, headers, ...(body ? { body } : {}) }));
      expect(answer.status, method).toBeLessThan(500);
      expect(sim.connections - before, method).toBe(1);
      // The pooled connection saw the request die; the fresh one answered it: two, not one or three.
      expect(sim.requests.length - requestsBefore, method).toBe(2);
      sim.setKnobs({});
      client.close();
    }
  });

  it('opens at most maxSockets connections, 32 by default', async () => {
    sim.setKnobs({ delayMs: 300 });
    const one = createHttpClient({ allowLoopback: true, maxSockets: 1 });
    let before = sim.connections;
    await Promise.all(Array.from({ length: 3 }, () => one.send(request(sim.url))));
    expect(sim.connections - before).toBe(1);
    one.close();
    const byDefault = createHttpClient({ allowLoopback: true });
    before = sim.connections;
    await Promise.all(Array.from({ length: 34 }, () => byDefault.send(request(sim.url))));
    expect(sim.connections - before).toBe(32);
    byDefault.close();
  });

  it('over https, says maybe for a request that timed out after the handshake, and calls it a timeout', async () => {
    const client = createHttpClient({ allowLoopback: true, ca: TEST_TLS_CERT });
    tlsSim.setKnobs({ delayMs: 5_000 });
    const error = await errorOf(client.send(request(tlsSim.url, { method: 'POST', body: '{}', timeoutMs: 2_000 })));
    expect([error.failure, error.mayHaveReached]).toEqual(['timeout', true]);
    client.close();
  });

  it('over https, says maybe for a reset after the handshake, and calls it a connection failure', async () => {
    const client = createHttpClient({ allowLoopback: true, ca: TEST_TLS_CERT });
    tlsSim.setKnobs({ reset: true });
    const error = await errorOf(client.send(request(tlsSim.url, { method: 'POST', body: '{}' })));
    expect([error.failure, error.mayHaveReached]).toEqual(['connect', true]);
    client.close();
  });

  it('words the failure of a server that does not speak TLS', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const error = await errorOf(client.send(request(sim.url.replace('http:', 'https:'))));
    expect([error.failure, error.message, error.mayHaveReached]).toEqual(['tls', 'TLS handshake failed', false]);
    client.close();
  });

  it('over https, says maybe for a request that waited for the one pooled socket', async () => {
    let served = 0;
    const server = (await import('node:https')).createServer({ key: TEST_TLS_KEY, cert: TEST_TLS_CERT }, (_req, res) => {
      if (served++ === 0) res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
    const client = createHttpClient({ allowLoopback: true, ca: TEST_TLS_CERT, maxSockets: 1 });
    try {
      const [first, queued] = await Promise.all([
        client.send(request(origin)),
        errorOf(client.send(request(origin, { method: 'POST', body: '{}', timeoutMs: 1_000 }))),
      ]);
      expect(first.status).toBe(200);
      expect([queued.failure, queued.mayHaveReached]).toEqual(['timeout', true]);
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('an answer cut short, and closing the client', () => {
  let server: Server;
  let origin: string;
  const sockets = new Set<Socket>();
  const closed: Socket[] = [];
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      if (req.url === '/cut') {
        // Headers promise 100 bytes; 10 come, then the connection ends.
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
        res.write('{"a":"1234');
        setTimeout(() => res.socket?.end(), 20);
        return;
      }
      res.end('{}');
    });
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => closed.push(socket));
    });
    origin = await listen(server);
  });
  afterAll(async () => {
    await stop(server);
  });

  it('fails an answer whose connection closed before it was complete, as one that may have run', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const error = await errorOf(client.send({ ...request(origin), target: { origin: new URL(origin), path: '/cut' } }));
    // Node reports the cut as an error of the answer (ECONNRESET, "aborted") before it closes.
    expect([error.failure, error.message, error.code, error.mayHaveReached]).toEqual(['connect', 'connection failed', 'ECONNRESET', true]);
    client.close();
  });

  it('closes its pooled connections when closed', async () => {
    const client = createHttpClient({ allowLoopback: true });
    const known = new Set(sockets);
    expect((await client.send(request(origin))).status).toBe(200);
    const mine = [...sockets].filter((socket) => !known.has(socket));
    expect(mine).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).not.toContain(mine[0]);
    client.close();
    await vi.waitFor(() => expect(closed).toContain(mine[0]), { timeout: 2_000, interval: 10 });
  });
});
