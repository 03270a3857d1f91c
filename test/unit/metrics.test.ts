import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getTree } from '../../functions/generated/validators.js';
import {
  Metrics,
  dimensionValue,
  recordAuthorizerDenial,
  recordAuthorizerFailure,
  recordRelayCall,
  recordValidationFailure,
  relayResultClass,
} from '../../functions/platform/metrics.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { captureStdout } from '../support/stdout.js';

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit: string }[];
}
type Emf = { _aws: { Timestamp: number; CloudWatchMetrics: Directive[] } } & Record<string, unknown>;

const sink = () => {
  const lines: string[] = [];
  const m = new Metrics(
    'Test',
    'svc',
    (line) => lines.push(line),
    () => 1_700_000_000_000,
  );
  const docs = () => lines.map((l) => JSON.parse(l) as Emf);
  return { m, lines, docs };
};

describe('Metrics (embedded metric format)', () => {
  it('writes nothing until flushed, then one JSON line per dimension set, and empties the buffer', () => {
    const { m, lines, docs } = sink();
    m.add('Hits', 'Count', 1, { Adapter: 'a' });
    m.add('Hits', 'Count', 1, { Adapter: 'b' });
    m.add('Hits', 'Count', 2, { Adapter: 'a' });
    expect(lines).toHaveLength(0);
    m.flush();
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    const [a, b] = docs();
    expect(a).toEqual({
      _aws: {
        Timestamp: 1_700_000_000_000,
        CloudWatchMetrics: [{ Namespace: 'Test', Dimensions: [['Service', 'Adapter']], Metrics: [{ Name: 'Hits', Unit: 'Count' }] }],
      },
      Service: 'svc',
      Adapter: 'a',
      Hits: [1, 2],
    });
    expect(b).toMatchObject({ Adapter: 'b', Hits: 1 });
    m.flush();
    expect(lines).toHaveLength(2);
  });

  it('publishes rollups as extra dimension sets of the same document', () => {
    const { m, docs } = sink();
    recordRelayCall({ adapter: 'lab-nso', outcome: 204, latencyMs: 12.5 }, m);
    m.flush();
    const all = docs();
    const calls = all.find((d) => 'RelayCalls' in d)!;
    expect(calls).toMatchObject({ Service: 'svc', Adapter: 'lab-nso', ResultClass: '2xx', RelayCalls: 1 });
    expect(calls._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['Service', 'Adapter', 'ResultClass'], ['Service', 'ResultClass'], ['Service']]);
    const latency = all.find((d) => 'RelayLatency' in d)!;
    expect(latency).toMatchObject({ Adapter: 'lab-nso', RelayLatency: 12.5 });
    expect(latency).not.toHaveProperty('ResultClass');
    expect(latency._aws.CloudWatchMetrics[0]!.Metrics).toEqual([{ Name: 'RelayLatency', Unit: 'Milliseconds' }]);
    expect(latency._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['Service', 'Adapter'], ['Service']]);
  });

  it.each([
    [200, '2xx'],
    [204, '2xx'],
    [301, '3xx'],
    [404, '4xx'],
    [429, '4xx'],
    [500, '5xx'],
    [503, '5xx'],
    ['timeout', 'timeout'],
    ['error', 'error'],
    [0, 'error'],
    [999, 'error'],
  ] as const)('classes relay outcome %s as %s', (outcome, expected) => {
    expect(relayResultClass(outcome)).toBe(expected);
  });

  it('starts a new document after 100 values of one metric (the EMF limit)', () => {
    const { m, docs } = sink();
    for (let i = 0; i < 150; i++) m.add('Latency', 'Milliseconds', i);
    m.flush();
    const values = docs().map((d) => d['Latency'] as number[]);
    expect(values.map((v) => v.length)).toEqual([100, 50]);
    expect(values.flat()).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it('starts a new document past 100 metrics in one dimension set', () => {
    const { m, docs } = sink();
    for (let i = 0; i < 101; i++) m.add(`M${i}`, 'Count', 1);
    m.flush();
    expect(docs().map((d) => d._aws.CloudWatchMetrics[0]!.Metrics.length)).toEqual([100, 1]);
  });

  it('carries the correlation id on every line without making it a dimension', () => {
    const { m, docs } = sink();
    m.setContext({ correlationId: 'req-1' });
    m.add('Hits', 'Count', 1, { Operation: 'x' });
    m.flush();
    const [doc] = docs();
    expect(doc!['correlationId']).toBe('req-1');
    expect(doc!._aws.CloudWatchMetrics[0]!.Dimensions.flat()).not.toContain('correlationId');
  });

  it('ignores values that are not finite numbers', () => {
    const { m, lines } = sink();
    m.add('Bad', 'Count', Number.NaN);
    m.add('Bad', 'Count', Number.POSITIVE_INFINITY);
    m.flush();
    expect(lines).toHaveLength(0);
  });

  it('keeps dimension values printable and bounded', () => {
    expect(dimensionValue('nso\nlab\u00e9')).toBe('nso?lab?');
    expect(dimensionValue('x'.repeat(500))).toHaveLength(128);
    expect(dimensionValue('   ')).toBe('none');
  });

  it('flushes an authorizer denial at once, with an unknown reason counted as other', () => {
    const { m, docs } = sink();
    recordAuthorizerDenial('expired', m);
    recordAuthorizerDenial('Bearer eyJhbGciOi...', m);
    const all = docs();
    expect(all.map((d) => [d['Reason'], d['AuthorizerDenials']])).toEqual([
      ['expired', 1],
      ['other', 1],
    ]);
    expect(JSON.stringify(all)).not.toContain('eyJ');
  });

  it('flushes an authorizer failure at once, by reason and in total, apart from the denials', () => {
    const { m, docs } = sink();
    recordAuthorizerFailure('issuer-keys-unavailable', m);
    recordAuthorizerDenial('expired', m);
    const [failure, denial] = docs();
    expect(failure).toMatchObject({ Service: 'svc', Reason: 'issuer-keys-unavailable', AuthorizerFailures: 1 });
    expect(failure!._aws.CloudWatchMetrics).toEqual([
      { Namespace: 'Test', Dimensions: [['Service', 'Reason'], ['Service']], Metrics: [{ Name: 'AuthorizerFailures', Unit: 'Count' }] },
    ]);
    expect(denial).not.toHaveProperty('AuthorizerFailures');
    expect(denial).toMatchObject({ Reason: 'expired', AuthorizerDenials: 1 });
  });

  it('counts validation failures by operation', () => {
    const { m, docs } = sink();
    recordValidationFailure('getTree', m);
    recordValidationFailure('getTree', m);
    m.flush();
    expect(docs()).toMatchObject([{ Operation: 'getTree', ValidationFailures: [1, 1] }]);
  });
});

describe('httpHandler metrics', () => {
  type Handler = Parameters<typeof invoke>[0];
  let read: Handler;
  let flushContainer: () => void;
  const resource = '/configuration_manager/configs/{treeId}';

  /** Fresh modules, so that the container's metrics follow this environment. */
  const load = async (env: Record<string, string>) => {
    vi.resetModules();
    for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
    const http = await import('../../functions/runtime/http.js');
    const m = await import('../../functions/platform/metrics.js');
    flushContainer = () => m.metrics.flush();
    read = http.httpHandler({ operation: 'getTree', validate: getTree, timeoutEarlyInMillis: 0 }, async () => {
      m.recordRelayCall({ adapter: 'lab', outcome: 'timeout', latencyMs: 3 });
      return http.json(200, {});
    });
  };

  beforeEach(async () => {
    await load({ METRICS_DISABLED: 'false' });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  const capture = () => {
    const out = captureStdout();
    return () => out.entries();
  };

  it('counts a request the validator refused (400) and writes it with the request id as correlation id', async () => {
    const lines = capture();
    const event = apiEvent({ method: 'GET', resource, pathParameters: { treeId: 'not-hex' } });
    const res = await invoke(read, event);
    expect(res.status).toBe(400);
    const emf = lines().filter((l) => '_aws' in l);
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({ ValidationFailures: 1, Operation: 'getTree', correlationId: event.requestContext.requestId });
  });

  it('flushes what the business function recorded when the invocation ends', async () => {
    const lines = capture();
    const event = apiEvent({ method: 'GET', resource, pathParameters: { treeId: 'a'.repeat(24) } });
    expect((await invoke(read, event)).status).toBe(200);
    const emf = lines().filter((l) => '_aws' in l);
    expect(emf.find((l) => 'RelayCalls' in l)).toMatchObject({ ResultClass: 'timeout', Adapter: 'lab', correlationId: event.requestContext.requestId });
    expect(emf.find((l) => 'ValidationFailures' in l)).toBeUndefined();
    // Nothing is left for the next invocation.
    const after = capture();
    flushContainer();
    expect(after()).toEqual([]);
  });

  it('writes no metrics when METRICS_DISABLED is true', async () => {
    await load({ METRICS_DISABLED: 'true' });
    const lines = capture();
    expect((await invoke(read, apiEvent({ method: 'GET', resource, pathParameters: { treeId: 'bad' } }))).status).toBe(400);
    expect(lines().filter((l) => '_aws' in l)).toEqual([]);
  });
});
