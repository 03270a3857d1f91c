import { describe, expect, it } from 'vitest';
import type { Adapter, SecretResolver } from '../../functions/adapters/model.js';
import { OutboundError, type HttpClient, type OutboundRequest, type OutboundResponse } from '../../functions/outbound/http-client.js';
import {
  DEFAULT_LIMITS,
  MAX_LAMBDA_RESPONSE_BYTES,
  MAX_RESULT_GROWTH,
  checkRequest,
  fitsLambdaResponse,
  relayRestAction,
  type RelayDeps,
  type RelayLogLine,
  type RestActionRequest,
} from '../../functions/relay/service.js';
import { HttpProblem, type FieldError } from '../../functions/platform/problem.js';
import { REFUSED_PATHS } from '../support/relay-paths.js';

const PASSWORD = 's3cret-pa55';
const adapter = (overrides: Partial<Adapter> = {}): Adapter => ({
  name: 'nso-lab',
  type: 'nso',
  baseUrl: 'https://nso.example.net:8888',
  auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/nso-lab#password' },
  created: '2024-01-01T00:00:00.000Z',
  lastUpdated: '2024-01-01T00:00:00.000Z',
  ...overrides,
});

interface Harness {
  deps: RelayDeps;
  sent: OutboundRequest[];
  logs: RelayLogLine[];
  resolved: string[];
}

const harness = (
  options: {
    adapters?: Adapter[];
    answer?: (request: OutboundRequest) => OutboundResponse | Promise<OutboundResponse>;
    remainingMs?: number;
    secrets?: SecretResolver;
  } = {},
): Harness => {
  const sent: OutboundRequest[] = [];
  const logs: RelayLogLine[] = [];
  const resolved: string[] = [];
  const client: HttpClient = {
    send: async (request) => {
      sent.push(request);
      return (options.answer ?? (() => response(204)))(request);
    },
    close: () => undefined,
  };
  const byName = new Map((options.adapters ?? [adapter()]).map((a) => [a.name, a]));
  return {
    sent,
    logs,
    resolved,
    deps: {
      adapters: { get: async (name) => byName.get(name) },
      secrets: options.secrets ?? {
        resolve: async (reference) => {
          resolved.push(reference);
          return PASSWORD;
        },
      },
      client,
      remainingTimeMs: () => options.remainingMs ?? 28_000,
      log: (line) => logs.push(line),
    },
  };
};

const response = (status: number, body = '', contentType?: string): OutboundResponse => ({
  status,
  contentType,
  body: Buffer.from(body),
});

const request = (params: Partial<RestActionRequest['params']> = {}, body: Record<string, unknown> = {}): RestActionRequest => ({
  params: { path: '/restconf/data/tailf-ncs:devices', accept: 'application/yang-data+json', ...params },
  body,
});

const problemOf = async (promise: Promise<unknown>): Promise<HttpProblem> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    throw error;
  }
  throw new Error('expected a problem');
};

const fields = (problem: HttpProblem): string[] => ((problem.extensions['errors'] ?? []) as FieldError[]).map((e) => e.field);

describe('relayRestAction: what is sent', () => {
  it('POSTs the body as JSON when params.method is absent', async () => {
    const h = harness();
    await relayRestAction({ adapterId: 'nso-lab', request: request({ contentType: 'application/yang-data+json' }, { a: 1 }) }, h.deps);
    expect(h.sent).toHaveLength(1);
    expect(h.sent[0]).toMatchObject({ method: 'POST', body: '{"a":1}' });
    expect(h.sent[0]!.headers['Content-Type']).toBe('application/yang-data+json');
  });

  it('sends to the adapter origin and the path unchanged, with Accept and basic auth', async () => {
    const h = harness();
    await relayRestAction({ adapterId: 'nso-lab', request: request({ method: 'get', path: '/restconf/data/tailf-ncs:devices/device=ce0?depth=2' }) }, h.deps);
    const sent = h.sent[0]!;
    expect(sent.target.origin.origin).toBe('https://nso.example.net:8888');
    expect(sent.target.path).toBe('/restconf/data/tailf-ncs:devices/device=ce0?depth=2');
    expect(sent.headers['Accept']).toBe('application/yang-data+json');
    expect(sent.headers['Authorization']).toBe(`Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`);
    expect(h.resolved).toEqual(['$VAULT_netconfig/adapters/nso-lab#password']);
  });

  it.each(['get', 'GET', 'Get', 'delete', 'DELETE'])('sends no body and no Content-Type for method %s', async (method) => {
    const h = harness();
    await relayRestAction({ adapterId: 'nso-lab', request: request({ method, contentType: 'application/yang-data+json' }, { ignored: true }) }, h.deps);
    expect(h.sent[0]!.method).toBe(method.toUpperCase());
    expect(h.sent[0]!.body).toBeUndefined();
    expect(h.sent[0]!.headers['Content-Type']).toBeUndefined();
  });

  it.each(['put', 'PATCH', 'post'])('sends the body for method %s', async (method) => {
    const h = harness();
    await relayRestAction({ adapterId: 'nso-lab', request: request({ method }, { x: [1, 'two'] }) }, h.deps);
    expect(h.sent[0]).toMatchObject({ method: method.toUpperCase(), body: '{"x":[1,"two"]}' });
  });

  it('labels the body with the Accept type when contentType is absent and Accept is JSON', async () => {
    const h = harness();
    await relayRestAction({ adapterId: 'nso-lab', request: request({ method: 'PATCH', accept: 'application/vnd.yang.data+json' }) }, h.deps);
    expect(h.sent[0]!.headers['Content-Type']).toBe('application/vnd.yang.data+json');
  });

  it('labels the body application/json when contentType is absent and Accept is not JSON', async () => {
    const h = harness();
    await relayRestAction({ adapterId: 'nso-lab', request: request({ method: 'PUT', accept: 'application/yang-data+xml' }) }, h.deps);
    expect(h.sent[0]!.headers['Content-Type']).toBe('application/json');
  });

  it("uses the adapter's timeout when the function has more time than that", async () => {
    const h = harness({ adapters: [adapter({ timeoutMs: 3_000 })], remainingMs: 28_000 });
    await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps);
    expect(h.sent[0]!.timeoutMs).toBe(3_000);
    expect(h.sent[0]!.maxBodyBytes).toBe(DEFAULT_LIMITS.maxBodyBytes);
  });

  it('uses the default timeout when the adapter sets none', async () => {
    const h = harness({ remainingMs: 60_000 });
    await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps);
    expect(h.sent[0]!.timeoutMs).toBe(DEFAULT_LIMITS.defaultTimeoutMs);
  });

  it("ends before the function's deadline: the time left minus the safety margin", async () => {
    const h = harness({ adapters: [adapter({ timeoutMs: 25_000 })], remainingMs: 2_000 });
    await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps);
    expect(h.sent[0]!.timeoutMs).toBe(2_000 - DEFAULT_LIMITS.safetyMarginMs);
  });

  it('answers 504 without sending when the function has no time left', async () => {
    const h = harness({ remainingMs: DEFAULT_LIMITS.safetyMarginMs + 10 });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem.status).toBe(504);
    expect(problem.detail).toContain("'nso-lab'");
    expect(h.sent).toHaveLength(0);
  });
});

describe('relayRestAction: the request is checked first', () => {
  it.each(REFUSED_PATHS)('refuses %s with a 400 naming params.path, and sends nothing', async (_label, path) => {
    const h = harness();
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request({ path }) }, h.deps));
    expect(problem.status).toBe(400);
    expect(fields(problem)).toEqual(['params.path']);
    expect(h.sent).toHaveLength(0);
    expect(h.resolved).toHaveLength(0);
  });

  it.each([
    ['params.accept', { accept: 'application/json\r\nX-Evil: 1' }],
    ['params.accept', { accept: 'json' }],
    ['params.accept', { accept: 'application/json, text/plain' }],
    ['params.contentType', { contentType: 'application/json\nX-Evil: 1' }],
    ['params.contentType', { contentType: 'yang' }],
    ['params.contentType', { method: 'PATCH', contentType: 'application/yang-data+xml' }],
  ])('refuses a bad media type with a 400 naming %s', async (field, params) => {
    const h = harness();
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request(params) }, h.deps));
    expect(problem.status).toBe(400);
    expect(fields(problem)).toEqual([field]);
    expect(h.sent).toHaveLength(0);
  });

  it('accepts a non-JSON contentType when no body is sent (GET)', () => {
    expect(checkRequest(request({ method: 'GET', contentType: 'application/yang-data+xml' })).method).toBe('GET');
  });

  it('reports every bad field at once', async () => {
    const h = harness();
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request({ path: '//x', accept: 'x', contentType: 'y' }) }, h.deps));
    expect(fields(problem)).toEqual(['params.path', 'params.accept', 'params.contentType']);
  });

  it('checks the request before looking up the adapter (400 wins over 404)', async () => {
    const h = harness({ adapters: [] });
    const problem = await problemOf(relayRestAction({ adapterId: 'ghost', request: request({ path: '/../x' }) }, h.deps));
    expect(problem.status).toBe(400);
  });

  it('answers 404 naming the adapter when no adapter has the name, and sends nothing', async () => {
    const h = harness();
    const problem = await problemOf(relayRestAction({ adapterId: 'ghost', request: request() }, h.deps));
    expect(problem.status).toBe(404);
    expect(problem.detail).toContain("'ghost'");
    expect(h.sent).toHaveLength(0);
  });
});

describe('relayRestAction: the answer', () => {
  it.each([200, 201, 204, 400, 401, 404, 409, 500, 503])('returns the orchestrator status %i as a result, not a failure', async (status) => {
    const h = harness({ answer: () => response(status) });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: String(status) }]);
  });

  it('parses JSON bodies of +json media types', async () => {
    const h = harness({ answer: () => response(200, '{"tailf-ncs:devices":{"device":[]}}', 'application/yang-data+json; charset=utf-8') });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([
      { result: '200', data: { 'tailf-ncs:devices': { device: [] } } },
    ]);
  });

  it('keeps RESTCONF error bodies as data of the result', async () => {
    const errors = { 'ietf-restconf:errors': { error: [{ 'error-type': 'application', 'error-tag': 'invalid-value' }] } };
    const h = harness({ answer: () => response(400, JSON.stringify(errors), 'application/yang-data+json') });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '400', data: errors }]);
  });

  it('returns other media types as text', async () => {
    const h = harness({ answer: () => response(200, '<hostname>ce0</hostname>', 'application/yang-data+xml') });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '200', data: '<hostname>ce0</hostname>' }]);
  });

  it('returns a body without Content-Type as text', async () => {
    const h = harness({ answer: () => response(200, '{"a":1}') });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '200', data: '{"a":1}' }]);
  });

  it('decodes text in its declared charset', async () => {
    const h = harness({
      answer: () => ({ status: 200, contentType: 'text/plain; charset=iso-8859-1', body: Buffer.from([0x63, 0x61, 0x66, 0xe9]) }),
    });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '200', data: 'café' }]);
  });

  it('leaves data out when the body is empty, even for a JSON media type', async () => {
    const h = harness({ answer: () => response(204, '', 'application/yang-data+json') });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '204' }]);
  });

  it('answers 502 when a JSON media type carries a body that does not parse', async () => {
    const h = harness({ answer: () => response(200, '{"broken":', 'application/vnd.yang.data+json') });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem.status).toBe(502);
    expect(problem.detail).toContain("'nso-lab'");
  });

  it.each([
    ['arrays', (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`],
    ['objects', (n: number) => `${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`],
  ])('answers JSON nested 128 levels deep in %s, and a 502 marked as sent for 129 levels or 100,000', async (_kind, nested) => {
    const at = harness({ answer: () => response(200, nested(128), 'application/yang-data+json') });
    await expect(relayRestAction({ adapterId: 'nso-lab', request: request() }, at.deps)).resolves.toHaveLength(1);
    for (const depth of [129, 100_000]) {
      const h = harness({ answer: () => response(200, nested(depth), 'application/yang-data+json') });
      const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
      expect(problem).toMatchObject({ status: 502, slug: 'bad-gateway', outcomeUnknown: true });
      expect(problem.detail).toBe("The orchestrator of adapter 'nso-lab' answered with JSON nested deeper than 128 levels, which the relay does not accept.");
      expect(h.logs).toEqual([expect.objectContaining({ status: 502, upstreamStatus: 200, outcome: 'too-deep' })]);
    }
  });

  it('turns any unexpected failure once the orchestrator answered into a 500 marked as sent, logged as 500', async () => {
    const h = harness({
      answer: () => ({
        status: 200,
        contentType: 'application/json',
        get body(): Buffer {
          throw new TypeError('a body that cannot be read');
        },
      }),
    });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem).toMatchObject({ status: 500, outcomeUnknown: true });
    expect(JSON.stringify(problem.toBody())).not.toContain('cannot be read');
    expect(h.logs).toEqual([expect.objectContaining({ status: 500, upstreamStatus: 200, outcome: 'error' })]);
  });

  it.each([301, 302, 303, 307, 308])('answers 502 to a redirect (%i) and does not follow it', async (status) => {
    const h = harness({ answer: () => response(status, 'moved', 'text/plain') });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem.status).toBe(502);
    expect(problem.detail).toMatch(/redirect/);
    expect(h.sent).toHaveLength(1);
  });

  it.each([
    ['timeout', 504],
    ['aborted', 504],
    ['connect', 502],
    ['tls', 502],
    ['blocked', 502],
    ['too-large', 502],
    ['protocol', 502],
  ] as const)('maps a %s failure to %i, naming the adapter but not its URL or password', async (failure, status) => {
    const h = harness({
      answer: () => {
        throw new OutboundError(failure, 'details for the log', 'ECODE');
      },
    });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem.status).toBe(status);
    const body = JSON.stringify(problem.toBody());
    expect(body).toContain("'nso-lab'");
    expect(body).not.toContain('nso.example.net');
    expect(body).not.toContain(PASSWORD);
    expect(h.logs[0]).toMatchObject({ status, outcome: failure, errorCode: 'ECODE' });
  });

  it('answers 502 when the answer would not fit in a Lambda response', async () => {
    // A text body of quotes doubles twice when serialised: 4 MiB of them cannot be returned.
    const h = harness({ answer: () => response(200, '"'.repeat(DEFAULT_LIMITS.maxBodyBytes), 'text/plain') });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem.status).toBe(502);
    expect(problem.detail).toMatch(/too large/);
  });

  it('returns a 4 MiB JSON body, which fits', async () => {
    const big = JSON.stringify({ filler: 'x'.repeat(DEFAULT_LIMITS.maxBodyBytes - 20) });
    const h = harness({ answer: () => response(200, big, 'application/json') });
    const [result] = await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps);
    expect((result!.data as { filler: string }).filler).toHaveLength(DEFAULT_LIMITS.maxBodyBytes - 20);
  });

  it('drops the cached password when the orchestrator answers 401, so a rotated one is read next time', async () => {
    const forgotten: string[] = [];
    const h = harness({ answer: () => response(401) });
    const secrets = { ...h.deps.secrets, forget: (reference: string) => forgotten.push(reference) };
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, { ...h.deps, secrets })).toEqual([{ result: '401' }]);
    expect(forgotten).toEqual(['$VAULT_netconfig/adapters/nso-lab#password']);
  });

  it('keeps the cached password on other answers', async () => {
    const forgotten: string[] = [];
    const h = harness({ answer: () => response(403) });
    const secrets = { ...h.deps.secrets, forget: (reference: string) => forgotten.push(reference) };
    await relayRestAction({ adapterId: 'nso-lab', request: request() }, { ...h.deps, secrets });
    expect(forgotten).toEqual([]);
  });

  it('lets a secrets-store problem through and sends nothing', async () => {
    const unavailable = new HttpProblem(503, 'unavailable', 'Service Unavailable', 'The secrets store is unavailable; try again shortly.');
    const h = harness({ secrets: { resolve: () => Promise.reject(unavailable) } });
    expect(await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps))).toBe(unavailable);
    expect(h.sent).toHaveLength(0);
  });

  it('answers 500 (logged, not shown) when the stored adapter has a broken baseUrl', async () => {
    const h = harness({ adapters: [adapter({ baseUrl: 'https://user:pw@nso.example.net' })] });
    const problem = await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(problem.status).toBe(500);
    expect(problem.detail).not.toContain('pw@');
    expect(h.sent).toHaveLength(0);
  });
});

describe('relayRestAction: a cached adapter that may be stale', () => {
  /** The harness with an adapter reader that records `forget`. */
  const forgetting = (options: Parameters<typeof harness>[0] = {}) => {
    const h = harness(options);
    const forgotten: string[] = [];
    const deps: RelayDeps = { ...h.deps, adapters: { get: h.deps.adapters.get, forget: (name) => forgotten.push(name) } };
    return { ...h, deps, forgotten };
  };

  it('drops the adapter when the orchestrator answers 401 (another user name or secret may be stored by now)', async () => {
    const h = forgetting({ answer: () => response(401) });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '401' }]);
    expect(h.forgotten).toEqual(['nso-lab']);
  });

  it.each(['connect', 'tls', 'blocked', 'timeout', 'protocol'] as const)(
    'drops the adapter after a %s failure (its orchestrator may have moved)',
    async (failure) => {
      const h = forgetting({
        answer: () => {
          throw new OutboundError(failure, 'details for the log');
        },
      });
      await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
      expect(h.forgotten).toEqual(['nso-lab']);
    },
  );

  it('drops the adapter when its secret reference points at nothing (it may name another secret by now)', async () => {
    const missing = new HttpProblem(500, 'secret-missing', 'Secret Missing', 'The secret that … refers to does not exist.');
    const h = forgetting({ secrets: { resolve: () => Promise.reject(missing) } });
    expect(await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps))).toBe(missing);
    expect(h.forgotten).toEqual(['nso-lab']);
  });

  it.each([
    ['a 2xx answer', () => response(200, '{}', 'application/json')],
    ['a 403 answer', () => response(403)],
    ['a 5xx answer', () => response(503)],
    ['a redirect', () => response(307)],
    [
      'a body over the cap',
      () => {
        throw new OutboundError('too-large', 'details for the log');
      },
    ],
    [
      'the function running out of time',
      () => {
        throw new OutboundError('aborted', 'details for the log');
      },
    ],
  ] as const)('keeps the adapter after %s', async (_label, answer) => {
    const h = forgetting({ answer });
    await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps).catch(() => undefined);
    expect(h.sent).toHaveLength(1);
    expect(h.forgotten).toEqual([]);
  });

  it('keeps the adapter when the secrets store is down (503: not the adapter’s fault)', async () => {
    const unavailable = new HttpProblem(503, 'unavailable', 'Service Unavailable', 'The secrets store is unavailable; try again shortly.');
    const h = forgetting({ secrets: { resolve: () => Promise.reject(unavailable) } });
    await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps));
    expect(h.forgotten).toEqual([]);
  });

  it('works with an adapter reader that has nothing to forget', async () => {
    const h = harness({ answer: () => response(401) });
    expect(await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps)).toEqual([{ result: '401' }]);
  });
});

describe('relayRestAction: the log line', () => {
  it('writes one line per call with adapter, method, path, status and duration, without query values or secrets', async () => {
    let clock = 1_000;
    const h = harness({
      answer: () => {
        clock += 42;
        return response(200, '{"a":1}', 'application/json');
      },
    });
    await relayRestAction(
      { adapterId: 'nso-lab', request: request({ method: 'get', path: '/restconf/data/x?depth=2&fields=name' }) },
      { ...h.deps, now: () => clock },
    );
    expect(h.logs).toEqual([
      {
        adapter: 'nso-lab',
        logLevel: 'info',
        method: 'GET',
        path: '/restconf/data/x',
        queryKeys: ['depth', 'fields'],
        status: 200,
        upstreamStatus: 200,
        outcome: 'answered',
        durationMs: 42,
        upstreamMs: 42,
      },
    ]);
    expect(JSON.stringify(h.logs)).not.toContain(PASSWORD);
  });

  it('hands the exchange to the tracing wrapper, with the adapter name', async () => {
    const traced: string[] = [];
    const h = harness({ answer: () => response(200) });
    await relayRestAction(
      { adapterId: 'nso-lab', request: request() },
      {
        ...h.deps,
        traceCall: async (adapterName, outbound, send) => {
          traced.push(`${adapterName} ${outbound.method} ${outbound.target.path}`);
          return send();
        },
      },
    );
    expect(traced).toEqual(['nso-lab POST /restconf/data/tailf-ncs:devices']);
    expect(h.sent).toHaveLength(1);
  });

  it('leaves upstreamMs out when nothing was sent', async () => {
    const h = harness();
    await problemOf(relayRestAction({ adapterId: 'ghost', request: request() }, h.deps));
    expect(h.logs[0]).not.toHaveProperty('upstreamMs');
  });

  it('logs a refused path as [refused], never its text', async () => {
    const h = harness();
    await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request({ path: '//user:pw@evil.example/' }) }, h.deps));
    expect(h.logs).toEqual([expect.objectContaining({ path: '[refused]', status: 400, outcome: 'invalid' })]);
  });

  it('logs an unknown adapter as 404', async () => {
    const h = harness();
    await problemOf(relayRestAction({ adapterId: 'ghost', request: request() }, h.deps));
    expect(h.logs).toEqual([expect.objectContaining({ adapter: 'ghost', status: 404, outcome: 'not-found' })]);
  });
});

describe('fitsLambdaResponse', () => {
  it('measures the doubly serialised body', () => {
    expect(fitsLambdaResponse([{ result: '200', data: 'x'.repeat(1000) }], 1100)).toBe(true);
    expect(fitsLambdaResponse([{ result: '200', data: '"'.repeat(1000) }], 1100)).toBe(false);
    expect(MAX_LAMBDA_RESPONSE_BYTES).toBeLessThan(6 * 1024 * 1024);
  });
});

describe('the bound under which an answer is not measured', () => {
  /** What the relay returns for a body, doubly serialised as the Lambda response carries it. */
  const returnedBytes = async (body: Buffer, contentType: string): Promise<number> => {
    const h = harness({ answer: () => ({ status: 200, contentType, body }) });
    const results = await relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps);
    return Buffer.byteLength(JSON.stringify(JSON.stringify(results)));
  };

  // The worst growth each kind of body can show: control bytes in text (\u00XX), bytes that
  // are not UTF-8 (U+FFFD), quotes and backslashes (escaped twice), JSON numbers that
  // serialise longer than they were written, and a single-byte charset whose high bytes are
  // three UTF-8 bytes each.
  it.each([
    ['control bytes in text', Buffer.alloc(1000, 0x01), 'text/plain'],
    ['bytes that are not UTF-8', Buffer.alloc(1000, 0xff), 'text/plain'],
    ['quotes and backslashes', Buffer.from('"\\'.repeat(333)), 'text/plain'],
    ['windows-1252 high bytes', Buffer.alloc(1000, 0x80), 'text/plain; charset=windows-1252'],
    ['JSON numbers that grow', Buffer.from(`[${Array(200).fill('1e20').join(',')}]`), 'application/json'],
    ['JSON strings of control escapes', Buffer.from(JSON.stringify('\u0001'.repeat(150))), 'application/json'],
  ])('holds for %s', async (_label, body, contentType) => {
    expect(await returnedBytes(body, contentType)).toBeLessThanOrEqual(body.length * MAX_RESULT_GROWTH + 64);
  });

  it('still measures, and refuses, a body above the bound that does not fit', async () => {
    // Over the bound (so it is measured), and 4 MiB of quotes double twice: too large.
    const h = harness({ answer: () => response(200, '"'.repeat(DEFAULT_LIMITS.maxBodyBytes), 'text/plain') });
    expect(DEFAULT_LIMITS.maxBodyBytes * MAX_RESULT_GROWTH).toBeGreaterThan(MAX_LAMBDA_RESPONSE_BYTES);
    expect((await problemOf(relayRestAction({ adapterId: 'nso-lab', request: request() }, h.deps))).status).toBe(502);
  });
});
