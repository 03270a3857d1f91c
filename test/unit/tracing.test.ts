import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tracer, parseDaemonAddress, parseTraceHeader, safeUrl } from '../../functions/platform/tracing.js';

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';
const PARENT = '53995c3f42cd8ad8';
const header = (sampled: 0 | 1) => `Root=${ROOT};Parent=${PARENT};Sampled=${sampled};Lineage=a:1`;

/** A stand-in X-Ray daemon: a real UDP socket on loopback that queues what it receives. */
let daemon: Socket;
let port: number;
const received: string[] = [];
const waiters: ((d: string) => void)[] = [];
const nextDatagram = (): Promise<string> => {
  const queued = received.shift();
  return queued !== undefined ? Promise.resolve(queued) : new Promise((resolve) => waiters.push(resolve));
};

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (msg) => {
    const waiter = waiters.shift();
    if (waiter) waiter(msg.toString('utf8'));
    else received.push(msg.toString('utf8'));
  });
  daemon.bind(0, '127.0.0.1');
  await once(daemon, 'listening');
  port = daemon.address().port;
});
afterAll(() => daemon.close());

const parse = (datagram: string) => {
  const [head, body] = datagram.split('\n');
  return { head: JSON.parse(head!) as unknown, doc: JSON.parse(body!) as Record<string, any> };
};

describe('parseDaemonAddress', () => {
  it.each([
    ['169.254.79.129:2000', { host: '169.254.79.129', port: 2000 }],
    ['tcp:127.0.0.1:2000 udp:127.0.0.2:2001', { host: '127.0.0.2', port: 2001 }],
    ['[::1]:2000', { host: '::1', port: 2000 }],
    [undefined, undefined],
    ['', undefined],
    ['nonsense', undefined],
    ['host:70000', undefined],
  ])('reads %j', (raw, expected) => {
    expect(parseDaemonAddress(raw)).toEqual(expected);
  });
});

describe('parseTraceHeader', () => {
  it('reads Root, Parent and Sampled', () => {
    expect(parseTraceHeader(header(1))).toEqual({ root: ROOT, parent: PARENT, sampled: true });
    expect(parseTraceHeader(header(0))?.sampled).toBe(false);
  });
  it('refuses a header without a well-formed root or parent', () => {
    expect(parseTraceHeader(`Root=${ROOT};Sampled=1`)).toBeUndefined();
    expect(parseTraceHeader(`Root=abc;Parent=${PARENT};Sampled=1`)).toBeUndefined();
    expect(parseTraceHeader(undefined)).toBeUndefined();
  });
});

describe('safeUrl', () => {
  it('keeps origin and path, drops credentials, query and fragment', () => {
    expect(safeUrl('https://admin:s3cret@nso.example.net:8888/restconf/data?token=abc#x')).toBe('https://nso.example.net:8888/restconf/data');
    expect(safeUrl('not a url')).toBe('invalid-url');
  });
});

describe('Tracer', () => {
  it('sends a completed subsegment to the daemon under the invocation’s segment', async () => {
    let now = 1_700_000_000_000;
    const tracer = new Tracer(
      { host: '127.0.0.1', port },
      () => header(1),
      () => (now += 250),
    );
    const result = await tracer.trace(
      'orchestrator lab-nso',
      { http: { method: 'patch', url: 'https://admin:s3cret@nso.example.net/restconf/data/x?secret=1' }, annotations: { adapter: 'lab-nso' } },
      async (sub) => {
        sub.setHttpStatus(204);
        sub.addAnnotation('result-class', '2xx');
        return 'answer';
      },
    );
    expect(result).toBe('answer');
    const { head, doc } = parse(await nextDatagram());
    expect(head).toEqual({ format: 'json', version: 1 });
    expect(doc).toMatchObject({
      name: 'orchestrator lab-nso',
      trace_id: ROOT,
      parent_id: PARENT,
      type: 'subsegment',
      namespace: 'remote',
      start_time: 1_700_000_000.25,
      end_time: 1_700_000_000.5,
      http: { request: { method: 'PATCH', url: 'https://nso.example.net/restconf/data/x' }, response: { status: 204 } },
      annotations: { adapter: 'lab-nso', result_class: '2xx' },
    });
    expect(doc['id']).toMatch(/^[0-9a-f]{16}$/);
    expect(doc).not.toHaveProperty('fault');
    expect(JSON.stringify(doc)).not.toContain('s3cret');
  });

  it('marks 4xx as error, 429 as throttle and 5xx as fault', async () => {
    const tracer = new Tracer({ host: '127.0.0.1', port }, () => header(1));
    for (const status of [404, 429, 502]) {
      await tracer.trace('call', {}, async (sub) => sub.setHttpStatus(status));
    }
    const docs = [await nextDatagram(), await nextDatagram(), await nextDatagram()].map((d) => parse(d).doc);
    expect(docs.map((d) => [d['http'].response.status, d['error'] ?? false, d['throttle'] ?? false, d['fault'] ?? false])).toEqual([
      [404, true, false, false],
      [429, true, true, false],
      [502, false, false, true],
    ]);
  });

  it('records a thrown error as a fault with its type only, and rethrows it', async () => {
    const tracer = new Tracer({ host: '127.0.0.1', port }, () => header(1));
    class OutboundError extends Error {
      override name = 'OutboundError';
    }
    await expect(
      tracer.trace('call', {}, async () => {
        throw new OutboundError('connect to https://admin:pw@10.0.0.1 failed');
      }),
    ).rejects.toThrow(OutboundError);
    const { doc } = parse(await nextDatagram());
    expect(doc['fault']).toBe(true);
    expect(doc['cause'].exceptions[0].type).toBe('OutboundError');
    expect(JSON.stringify(doc)).not.toContain('pw@');
  });

  it('sends nothing for an unsampled invocation, yet runs the function', async () => {
    const unsampled = new Tracer({ host: '127.0.0.1', port }, () => header(0));
    expect(await unsampled.trace('skipped', {}, async () => 1)).toBe(1);
    const sampled = new Tracer({ host: '127.0.0.1', port }, () => header(1));
    await sampled.trace('sent', {}, async () => 2);
    // Datagrams on loopback arrive in order: the first one is the sampled call's.
    expect(parse(await nextDatagram()).doc['name']).toBe('sent');
  });

  it('runs untraced without a daemon address or a trace header (tests, local mode)', async () => {
    expect(await new Tracer(undefined, () => header(1)).trace('x', {}, async () => 'ok')).toBe('ok');
    expect(await new Tracer({ host: '127.0.0.1', port }, () => undefined).trace('x', {}, async () => 'ok')).toBe('ok');
    await expect(new Tracer(undefined, () => header(1)).trace('x', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const sampled = new Tracer({ host: '127.0.0.1', port }, () => header(1));
    await sampled.trace('marker', {}, async () => undefined);
    expect(parse(await nextDatagram()).doc['name']).toBe('marker');
  });
});
