/**
 * The local API Gateway over real HTTP, serving a small hand-built assembly (see
 * `test/support/local-assembly.ts`) with real worker threads: event shape, environment,
 * routing, authorizer (identity source, policy, cache), Mock integrations, limits and
 * failures. The real stack's flows are in `local-stack.test.ts`.
 *
 * Every exchange is recorded; the last test checks that the gateway's own answers (its problem
 * bodies) are the GatewayProblem openapi.json documents. The fixture's routes are not the API's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../tools/local/dynamodb-local.js';
import { serveAssembly, type ServedApi } from '../../tools/local/start.js';
import { parseTemplate, readCloudAssembly, type ApiModel } from '../../tools/local/template.js';
import { FIXTURE_SYNTH_DIR, FIXTURE_SYNTH_PORT, writeFixtureAssembly } from '../support/local-assembly.js';
import { OpenApiSchemas, readOpenApi } from '../support/openapi-conformance.js';
import { accessLogEntries, gatewayAnsweredIds, headerMap, recordingFetch, recordRawAnswer, unrecorded, type Exchange } from '../support/recording.js';

let served: ServedApi;
let model: ApiModel;
let base: string;
let port: number;
let dataDir: string;
let assemblyDir: string;
const logs: string[] = [];
/** Every exchange of this suite with the gateway. */
const exchanges: Exchange[] = [];
const recorded = recordingFetch(exchanges);
/** Records an answer read with `node:http` (for what fetch cannot send). */
const recordResponse = (method: string, pathAndQuery: string, res: IncomingMessage, body: string) =>
  exchanges.push({
    method,
    path: pathAndQuery,
    status: res.statusCode ?? 0,
    contentType: res.headers['content-type'],
    body,
    requestId: [res.headers['x-amzn-requestid']].flat()[0],
    headers: headerMap(res.headers),
  });

beforeAll(async () => {
  assemblyDir = writeFixtureAssembly();
  dataDir = mkdtempSync(path.join(tmpdir(), 'netconfig-gw-data-'));
  const assembly = readCloudAssembly(assemblyDir);
  model = parseTemplate(assembly);
  port = await freePort();
  // Something the functions must not see: the gateway's own environment.
  process.env['HOST_ONLY_SECRET'] = 'must-not-leak';
  served = await serveAssembly({
    assembly,
    model,
    synthInfo: { port: FIXTURE_SYNTH_PORT, localDir: FIXTURE_SYNTH_DIR },
    port,
    dataDir,
    dynamodbEndpoint: process.env['AWS_ENDPOINT_URL_DYNAMODB'] ?? 'http://127.0.0.1:1',
    log: (label, _stream, line) => logs.push(`[${label}] ${line}`),
  });
  base = served.baseUrl;
});

afterAll(async () => {
  delete process.env['HOST_ONLY_SECRET'];
  await served?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(assemblyDir, { recursive: true, force: true });
});

interface Echo {
  event: {
    resource: string;
    path: string;
    httpMethod: string;
    headers: Record<string, string>;
    multiValueHeaders: Record<string, string[]>;
    queryStringParameters: Record<string, string> | null;
    multiValueQueryStringParameters: Record<string, string[]> | null;
    pathParameters: Record<string, string> | null;
    stageVariables: Record<string, string> | null;
    body: string | null;
    isBase64Encoded: boolean;
    requestContext: Record<string, unknown> & { identity: Record<string, unknown>; authorizer?: Record<string, unknown> };
  };
  calls: number;
  remainingMs: number;
  functionName: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  env: Record<string, string>;
}

const call = async (method: string, pathAndQuery: string, init: { headers?: Record<string, string>; body?: string | Buffer } = {}) => {
  const res = await recorded(`${base}${pathAndQuery}`, { method, headers: init.headers ?? {}, ...(init.body !== undefined ? { body: init.body } : {}) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as Record<string, unknown> };
};
const echo = async (method: string, p: string, init: { headers?: Record<string, string>; body?: string | Buffer } = {}) => {
  const r = await call(method, p, init);
  expect(r.status, r.text).toBe(200);
  return { ...r, echo: r.json as unknown as Echo };
};
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('proxy event', () => {
  it('carries the REST v1 shape: resource, raw path and path parameters, decoded query, headers, stage and request context', async () => {
    const { echo: e, headers } = await echo('GET', '/items/a%20b?x=1&x=2&y=h%C3%A9+llo&flag', {
      headers: { ...auth('all'), 'X-Custom': 'one', Accept: 'application/json' },
    });
    const ev = e.event;
    expect(ev.resource).toBe('/items/{id}');
    expect(ev.path).toBe('/items/a%20b');
    expect(ev.httpMethod).toBe('GET');
    // API Gateway passes path parameters as sent and decodes the query string.
    expect(ev.pathParameters).toEqual({ id: 'a%20b' });
    expect(ev.queryStringParameters).toEqual({ x: '2', y: 'hé llo', flag: '' });
    expect(ev.multiValueQueryStringParameters).toEqual({ x: ['1', '2'], y: ['hé llo'], flag: [''] });
    expect(ev.headers['X-Custom']).toBe('one');
    expect(ev.multiValueHeaders['X-Custom']).toEqual(['one']);
    expect(ev.headers['Authorization']).toBe('Bearer all');
    expect(ev.headers['X-Forwarded-For']).toBe('127.0.0.1');
    expect(ev.stageVariables).toEqual({ env: 'test' });
    expect(ev.body).toBeNull();
    expect(ev.isBase64Encoded).toBe(false);
    const ctx = ev.requestContext;
    expect(ctx['requestId']).toBe(headers.get('x-amzn-requestid'));
    expect(ctx['stage']).toBe('v1');
    expect(ctx['resourcePath']).toBe('/items/{id}');
    expect(ctx['httpMethod']).toBe('GET');
    expect(ctx['path']).toBe('/v1/items/a%20b');
    expect(ctx['apiId']).toBe('localapi01');
    expect(ctx.identity['sourceIp']).toBe('127.0.0.1');
    expect(typeof ctx['requestTimeEpoch']).toBe('number');
    expect(ctx['requestTime']).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
  });

  it('passes the authorizer principal and context as flat strings', async () => {
    const { echo: e } = await echo('GET', '/items', { headers: auth('all-context') });
    expect(e.event.requestContext.authorizer).toMatchObject({ principalId: 'user-all-context', roles: 'admin', count: '5', flag: 'true', type: 'REQUEST' });
    expect(e.event.requestContext.authorizer?.['methodArn']).toBe('arn:aws:execute-api:eu-west-1:123456789012:localapi01/v1/GET/items');
  });

  it('keeps repeated request headers in multiValueHeaders and the last one in headers', async () => {
    // fetch folds repeated headers into one line; a raw request sends them as two.
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`${base}/open`, { headers: ['Host', `127.0.0.1:${port}`, 'X-Dup', 'a', 'X-Dup', 'b'] }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          recordResponse('GET', '/v1/open', res, text);
          resolve(text);
        });
      });
      req.on('error', reject);
      req.end();
    });
    const e = JSON.parse(body) as Echo;
    expect(e.event.multiValueHeaders['X-Dup']).toEqual(['a', 'b']);
    expect(e.event.headers['X-Dup']).toBe('b');
  });

  it('sends a text body as text and a binary media type as base64', async () => {
    const text = await echo('POST', '/open', { headers: { 'Content-Type': 'application/json' }, body: '{"a":"é"}' });
    expect(text.echo.event.body).toBe('{"a":"é"}');
    expect(text.echo.event.isBase64Encoded).toBe(false);
    const bytes = Buffer.from([0, 1, 2, 255, 254]);
    const binary = await echo('POST', '/open', { headers: { 'Content-Type': 'application/octet-stream' }, body: bytes });
    expect(binary.echo.event.isBase64Encoded).toBe(true);
    expect(Buffer.from(binary.echo.event.body!, 'base64')).toEqual(bytes);
    const invalidUtf8 = await echo('POST', '/open', { headers: { 'Content-Type': 'text/plain' }, body: Buffer.from([0xc3, 0x28]) });
    expect(invalidUtf8.echo.event.isBase64Encoded).toBe(true);
  });
});

describe('functions', () => {
  it('run with the template environment, local values for its references, and nothing of the host environment', async () => {
    const { echo: e } = await echo('GET', '/open');
    expect(e.env['ITEMS_TABLE']).toBe('Fixture-ItemsTable');
    expect(e.env['ITEMS_TABLE_ARN']).toBe('arn:aws:dynamodb:eu-west-1:123456789012:table/Fixture-ItemsTable');
    expect(e.env['STATIC']).toBe('plain value');
    expect(e.env['REGION_NAME']).toBe('region-eu-west-1');
    // Paths and URLs baked in at synth time point at this run's data directory and port.
    expect(e.env['DATA_FILE']).toBe(path.join(dataDir, 'data.json'));
    expect(e.env['JWKS_URL']).toBe(`http://127.0.0.1:${port}/.well-known/jwks.json`);
    expect(e.env).toMatchObject({
      AWS_REGION: 'eu-west-1',
      AWS_LAMBDA_FUNCTION_NAME: 'Fixture-EchoFunction',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: process.env['AWS_ENDPOINT_URL_DYNAMODB'] ?? 'http://127.0.0.1:1',
    });
    expect(e.env['HOST_ONLY_SECRET']).toBeUndefined();
    expect(e.functionName).toBe('Fixture-EchoFunction');
    expect(e.memoryLimitInMB).toBe('256');
    expect(e.remainingMs).toBeGreaterThan(0);
    expect(e.remainingMs).toBeLessThanOrEqual(3000);
  });

  it('keep module state between invocations (a warm environment) and apart between functions', async () => {
    const first = await echo('GET', '/files/a');
    const second = await echo('GET', '/files/b');
    expect(second.echo.calls).toBe(first.echo.calls + 1);
    const short = await echo('GET', '/short');
    expect(short.echo.functionName).toBe('Fixture-ShortFunction');
    expect(short.echo.calls).toBeLessThan(second.echo.calls);
  });

  it('run concurrent invocations in separate environments, at most the concurrency limit, queueing the rest', async () => {
    const pool = [...served.pools.values()].find((p) => p.fn.label === 'ShortFunction')!;
    const before = pool.coldStarts;
    const results = await Promise.all(Array.from({ length: 14 }, () => call('GET', '/short?mode=sleep&ms=300')));
    expect(results.map((r) => r.status)).toEqual(Array(14).fill(200));
    const started = pool.coldStarts - before;
    expect(started).toBeGreaterThan(1);
    expect(started).toBeLessThanOrEqual(10);
  });

  it('answer with their status, headers and multiValueHeaders (which win for the same name)', async () => {
    const r = await call('GET', '/open?mode=multi');
    expect(r.status).toBe(201);
    expect(r.headers.get('x-one')).toBe('one');
    expect(r.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(r.text).toBe('multi');
  });

  it('default to Content-Type application/json as API Gateway does', async () => {
    const r = await call('GET', '/open?mode=no-type');
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.text).toBe('plain');
  });

  it.each([
    ['throws', 'throw'],
    ['returns a body that is not a string', 'malformed'],
    ['returns a key a proxy response may not have', 'extra-key'],
    ['exits its runtime', 'exit'],
  ])('answer 502 problem+json without internals when the function %s', async (_, mode) => {
    const r = await call('GET', `/open?mode=${mode}`);
    expect(r.status).toBe(502);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:server-error', detail: 'Internal server error', requestId: r.headers.get('x-amzn-requestid') });
    expect(r.text).not.toContain('boom');
    // The environment still serves the next request.
    expect((await call('GET', '/open')).status).toBe(200);
  });

  it('stream their answer through an integration in transfer mode STREAM: metadata first, then the body as written, chunked', async () => {
    const r = await call('GET', '/stream');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv');
    expect(r.headers.get('x-part')).toBe('a, b');
    expect(r.headers.get('content-length')).toBeNull();
    expect(r.headers.get('transfer-encoding')).toBe('chunked');
    expect(r.text).toBe('name\r\nrow0\r\nrow1\r\nrow2\r\n');
    const problem = await call('GET', '/stream?mode=problem');
    expect(problem.status).toBe(404);
    expect(problem.headers.get('content-type')).toBe('application/problem+json');
    expect(problem.json).toEqual({ title: 'Not Found', status: 404 });
  });

  it('answer 502 when a streaming function fails before its metadata, and cut the answer short when it fails after', async () => {
    const before = await call('GET', '/stream?mode=throw-first');
    expect(before.status).toBe(502);
    expect(before.json).toMatchObject({ type: 'urn:netconfig:problem:server-error' });
    // Cut short: its head arrives (recorded here: no body can be read), then the body fails.
    const cut = await fetch(`${base}/stream?mode=throw-later`);
    exchanges.push({
      method: 'GET',
      path: '/stream?mode=throw-later',
      status: cut.status,
      contentType: cut.headers.get('content-type') ?? undefined,
      body: '',
      requestId: cut.headers.get('x-amzn-requestid') ?? undefined,
      headers: Object.fromEntries(cut.headers.entries()),
    });
    await expect(cut.text()).rejects.toThrow();
    // The environment still serves the next request.
    expect((await call('GET', '/stream')).status).toBe(200);
  });

  it('answer 502 when the response is over the 6 MB Lambda limit', async () => {
    const r = await call('GET', '/open?mode=big');
    expect(r.status).toBe(502);
    expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:bad-gateway' });
  });

  it('stop a function at its timeout (502) and throw its environment away', async () => {
    const pool = [...served.pools.values()].find((p) => p.fn.label === 'ShortFunction')!;
    await echo('GET', '/short');
    const environments = pool.size;
    const r = await call('GET', '/short?mode=sleep&ms=5000');
    expect(r.status).toBe(502);
    expect(r.json).toMatchObject({ detail: 'Internal server error' });
    expect(pool.size).toBe(environments - 1);
    expect((await call('GET', '/short')).status).toBe(200);
  });

  it('answer 504 at the integration timeout and throw the stuck environment away', async () => {
    const pool = [...served.pools.values()].find((p) => p.fn.label === 'EchoFunction')!;
    await echo('GET', '/slow');
    const environments = pool.size;
    const r = await call('GET', '/slow?mode=sleep&ms=2500');
    expect(r.status).toBe(504);
    expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:gateway-timeout', status: 504, title: 'Gateway Timeout' });
    expect(pool.size).toBe(environments - 1);
    expect((await call('GET', '/slow')).status).toBe(200);
  });
});

describe('routing', () => {
  it('answers 404 problem+json (the MISSING_AUTHENTICATION_TOKEN response) for an unknown path, a missing method, or outside the stage', async () => {
    for (const [method, p] of [
      ['GET', '/nothing'],
      ['DELETE', '/open'],
      ['GET', '/items/a/b'],
    ] as const) {
      const r = await call(method, p);
      expect(r.status, `${method} ${p}`).toBe(404);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:not-found', status: 404, requestId: r.headers.get('x-amzn-requestid') });
    }
    const outside = await recorded(`http://127.0.0.1:${port}/open`);
    expect(outside.status).toBe(404);
  });

  it('prefers a literal segment over a parameter, ignores a trailing slash, and matches the root and greedy paths', async () => {
    expect((await echo('GET', '/items/secret', { headers: auth('all') })).echo.event.resource).toBe('/items/secret');
    expect((await echo('GET', '/items/other/', { headers: auth('all') })).echo.event.pathParameters).toEqual({ id: 'other' });
    expect((await echo('GET', '/')).echo.event.resource).toBe('/');
    const greedy = await echo('PATCH', '/files/a/b/c.txt');
    expect(greedy.echo.event.resource).toBe('/files/{proxy+}');
    expect(greedy.echo.event.pathParameters).toEqual({ proxy: 'a/b/c.txt' });
    expect(greedy.echo.event.httpMethod).toBe('PATCH');
  });
});

describe('authorizer', () => {
  it('answers 401 without calling the authorizer when the identity source is missing or empty', async () => {
    const calls = async (token: string) => Number((await echo('GET', '/fresh', { headers: auth(token) })).echo.event.requestContext.authorizer?.['calls']);
    const before = await calls(`all-before-${Date.now()}`);
    for (const headers of [{}, { Authorization: '' }] as Record<string, string>[]) {
      const r = await call('GET', '/fresh', { headers });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:unauthorized', status: 401 });
    }
    // The authorizer ran once more for the next token, not for the two rejected requests.
    expect(await calls(`all-after-${Date.now()}`)).toBe(before + 1);
  });

  it('answers 401 when the authorizer rejects the token, 500 when it fails or answers badly', async () => {
    expect((await call('GET', '/items', { headers: auth('bad') })).status).toBe(401);
    const crash = await call('GET', '/items', { headers: auth('crash') });
    expect(crash.status).toBe(500);
    expect(crash.json).toMatchObject({ type: 'urn:netconfig:problem:internal' });
    expect(crash.text).not.toContain('database down');
    expect((await call('GET', '/items', { headers: auth('malformed') })).status).toBe(500);
  });

  it('evaluates the policy against the method ARN: no Allow is 403, an explicit Deny wins over an Allow', async () => {
    expect((await call('GET', '/items', { headers: auth('none') })).status).toBe(403);
    expect((await call('GET', '/items/x', { headers: auth('items') })).status).toBe(200);
    const post = await call('POST', '/items', { headers: auth('items') });
    expect(post.status).toBe(403);
    expect(post.json).toMatchObject({ type: 'urn:netconfig:problem:forbidden', status: 403 });
    expect((await call('GET', '/items/x', { headers: auth('deny-secret') })).status).toBe(200);
    expect((await call('GET', '/items/secret', { headers: auth('deny-secret') })).status).toBe(403);
  });

  it('caches a result by identity for the TTL and evaluates the cached policy for every method', async () => {
    const token = `none-cache-${Date.now()}`;
    // A `none…` token's policy allows nothing, and it is cached as such.
    expect((await call('GET', '/items', { headers: auth(token) })).status).toBe(403);
    const first = await echo('GET', '/items', { headers: auth('items') });
    const second = await echo('GET', '/items/y', { headers: auth('items') });
    // The same identity: the authorizer did not run again (its call counter is unchanged).
    expect(second.echo.event.requestContext.authorizer?.['calls']).toBe(first.echo.event.requestContext.authorizer?.['calls']);
    // The cached policy is evaluated for the new method too.
    expect((await call('POST', '/items', { headers: auth('items') })).status).toBe(403);
  });

  it('calls the authorizer again once the TTL has passed', async () => {
    const first = await echo('GET', '/fresh', { headers: auth('all') });
    await new Promise((r) => setTimeout(r, 1_200));
    const second = await echo('GET', '/fresh', { headers: auth('all') });
    expect(Number(second.echo.event.requestContext.authorizer?.['calls'])).toBeGreaterThan(Number(first.echo.event.requestContext.authorizer?.['calls']));
  });
});

describe('mock integrations', () => {
  it('answer with the integration response: status, mapped headers and the rendered template', async () => {
    for (const method of ['GET', 'DELETE', 'POST']) {
      const r = await call(method, '/gone', method === 'GET' ? {} : { headers: { 'Content-Type': 'application/json' }, body: '{"any":"thing"}' });
      expect(r.status).toBe(410);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(r.headers.get('link')).toBe('</items>; rel="successor-version"');
      expect(r.headers.get('x-request')).toBe(r.headers.get('x-amzn-requestid'));
      expect(r.json).toEqual({ title: 'Gone', status: 410, stage: 'v1', env: 'test' });
    }
  });

  it('answer 500 when a passed-through body has no statusCode, and 415 with passthrough NEVER', async () => {
    const passed = await call('POST', '/gone', { headers: { 'Content-Type': 'text/plain' }, body: 'hello' });
    expect(passed.status).toBe(500);
    expect(passed.json).toMatchObject({ type: 'urn:netconfig:problem:server-error' });
    const never = await call('POST', '/never', { headers: { 'Content-Type': 'text/plain' }, body: 'hello' });
    expect(never.status).toBe(415);
    expect(never.json).toMatchObject({ type: 'urn:netconfig:problem:unsupported-media-type', status: 415 });
  });
});

describe('limits', () => {
  it('answers 413 problem+json to a body over 10 MB', async () => {
    const r = await call('POST', '/open', { headers: { 'Content-Type': 'application/json' }, body: Buffer.alloc(10 * 1024 * 1024 + 1, 0x20) });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:too-large', status: 413 });
    expect((r.json as { detail: string }).detail).toContain('10 MB');
  });

  it('answers 413 to a body over the 6 MB a Lambda invocation takes', async () => {
    const r = await call('POST', '/open', { headers: { 'Content-Type': 'application/json' }, body: Buffer.alloc(7 * 1024 * 1024, 0x20) });
    expect(r.status).toBe(413);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.json).toMatchObject({ type: 'urn:netconfig:problem:too-large', status: 413 });
    // The limit that applied, not API Gateway's 10 MB.
    expect((r.json as { detail: string }).detail).toContain('6 MB');
    expect((r.json as { detail: string }).detail).not.toContain('10 MB');
  });

  it('still serves the next request after an oversized one', async () => {
    expect((await call('GET', '/open')).status).toBe(200);
  });
});

describe('logs', () => {
  it('prefix function output with the function and write one access line per request, with no token in it', () => {
    expect(logs.some((l) => l.startsWith('[gateway] {') && l.includes('"status":200'))).toBe(true);
    expect(logs.some((l) => l.startsWith('[EchoFunction]'))).toBe(true);
    expect(logs.join('\n')).not.toContain('Bearer all');
    expect(model.methods.length).toBeGreaterThan(10);
  });
});

/** Names that are members of every plain object: as request keys they must be keys like any other. */
const PROTOTYPE_NAMES = ['hasOwnProperty', 'toString', 'valueOf', 'constructor', '__proto__', 'isPrototypeOf', '__defineGetter__'];

/** Sends raw bytes and reads the whole answer (the gateway closes the connection after it). */
const rawRequest = (text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const answer = Buffer.concat(chunks).toString('utf8');
      const [method = '', target = ''] = text.split('\r\n', 1)[0]!.split(' ');
      recordRawAnswer(exchanges, method, target, answer);
      resolve(answer);
    });
  });

/** A GET with headers as raw name/value pairs (fetch silently drops a header named `__proto__`). */
const rawGet = (pathAndQuery: string, headers: string[]): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const req = request(`${base}${pathAndQuery}`, { headers: ['Host', new URL(base).host, ...headers] }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        recordResponse('GET', new URL(`${base}${pathAndQuery}`).pathname + new URL(`${base}${pathAndQuery}`).search, res, text);
        resolve({ status: res.statusCode ?? 0, text });
      });
    });
    req.on('error', reject);
    req.end();
  });

const rawProblem = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('hostile requests', () => {
  it.each(PROTOTYPE_NAMES)('passes a header and a query parameter named %s through as data, and keeps serving', async (name) => {
    const res = await rawGet(`/open?${encodeURIComponent(name)}=q1&${encodeURIComponent(name)}=q2`, [name, 'h1']);
    expect(res.status).toBe(200);
    const r = { echo: JSON.parse(res.text) as Echo };
    const lower = name.toLowerCase();
    const header = Object.entries(r.echo.event.headers).find(([k]) => k.toLowerCase() === lower);
    expect(header?.[1]).toBe('h1');
    expect(Object.entries(r.echo.event.queryStringParameters ?? {})).toContainEqual([name, 'q2']);
    expect(Object.entries(r.echo.event.multiValueQueryStringParameters ?? {})).toContainEqual([name, ['q1', 'q2']]);
    expect((await call('GET', '/open')).status).toBe(200);
  });

  it('answers the same names on authorized, mock and unknown routes without a 500', async () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const p of ['/items', '/items/1', '/gone', '/nowhere']) {
        const r = await rawGet(`${p}?${encodeURIComponent(name)}=1`, [name, 'x', 'Authorization', 'Bearer all']);
        expect(r.status, `${name} ${p}`).toBeLessThan(500);
      }
    }
    expect((await call('GET', '/open')).status).toBe(200);
  });

  it('answers 431 problem+json to headers over 16 KB', async () => {
    const answer = await rawRequest(`GET /v1/open HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(rawProblem(answer)).toMatchObject({ type: 'urn:netconfig:problem:headers-too-large', status: 431 });
  });

  it.each(['get', 'Get', 'FOO', 'G\u0000T'])('answers 400 problem+json to the method %j', async (method) => {
    const answer = await rawRequest(`${method} /v1/open HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(rawProblem(answer)).toMatchObject({ type: 'urn:netconfig:problem:validation', status: 400 });
  });

  it('answers 400 problem+json to bytes that are not HTTP, and still serves the next request', async () => {
    const answer = await rawRequest('\u0000\u0001 nonsense\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await call('GET', '/open')).status).toBe(200);
  });
});

describe('what the suite was answered', () => {
  it('was recorded whole: every request the gateway logged under the stage, or could not parse, was recorded', () => {
    expect(accessLogEntries(logs, '/v1').length).toBeGreaterThan(50);
    expect(unrecorded(logs, '/v1', exchanges)).toEqual([]);
  });

  it("answered the GatewayProblem of openapi.json whenever the gateway answered itself (the fixture's own routes are not the API's)", () => {
    const schemas = new OpenApiSchemas(readOpenApi());
    const byGateway = gatewayAnsweredIds(logs);
    const own = exchanges.filter((e) => e.requestId !== undefined && byGateway.has(e.requestId));
    expect(own.length).toBeGreaterThan(20);
    const problems = own.flatMap((e) => {
      const media = e.contentType?.split(';')[0];
      if (media !== 'application/problem+json') return [`${e.method} ${e.path} ${e.status}: ${e.contentType ?? '(no content type)'}`];
      return schemas.errors('#/components/schemas/GatewayProblem', JSON.parse(e.body)).map((p) => `${e.method} ${e.path} ${e.status}: ${p}`);
    });
    expect(problems).toEqual([]);
    // Each status API Gateway gives on a route is one openapi.json documents (a `Gateway<status>…` response). Not on a
    // route: 404 (no route matched: the document's rule for any undocumented method and path), and 400 and 431 (not HTTP).
    const documented = new Set(Object.keys((schemas.doc['components'] as { responses: Record<string, unknown> }).responses).map((n) => Number(n.slice(7, 10))));
    const undocumented = own.filter((e) => !documented.has(e.status) && ![400, 404, 431].includes(e.status));
    expect(undocumented.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([]);
  });
});
