/**
 * `idempotent()` around a small business function, its keys in DynamoDB Local: what the claim
 * writes (lock and expiry on an injected clock), the replay of a kept answer, the refusals (same
 * key for another request, a request still running, an answer too large to keep), which answers
 * are kept and which released under `keep: 'final'` and `keep: 'effects'`, and every store call
 * failing (DynamoDB down, a table gone, the claim lost while the function ran), each asserted at
 * the boundary: status, headers, problem body, log lines and what the table holds afterwards.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import fc from 'fast-check';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../functions/platform/canonical-json.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { httpHandler, json, type HttpEvent, type HttpRun } from '../../functions/runtime/http.js';
import {
  DEFAULT_TTL_SECONDS,
  idempotent,
  recordKey,
  requestFingerprint,
  type IdempotencyOptions,
  type KeptAnswers,
} from '../../functions/platform/idempotency.js';
import { createIdempotencyStore } from '../../functions/platform/idempotency-store.js';
import { logger } from '../../functions/platform/logger.js';
import { BadGateway, Conflict, HttpProblem, InternalError, NotFound } from '../../functions/platform/problem.js';
import { documentClientWith } from '../support/dynamo-hook.js';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import { stdoutDuring } from '../support/stdout.js';
import { createTables } from '../../tools/local/table-copies.js';

const OPERATION = 'makeThing';
/** Epoch milliseconds a quarter of a second into a second: rounding up and down differ. */
const NOW_MS = 1_900_000_000_250;
/** What the function has left when it starts, in every test (middy's early timeout is off). */
const REMAINING_MS = 5_000;
/** This stack's fingerprint key. */
const KEY = randomBytes(32);

let table: string;

beforeAll(async () => {
  table = (await createTables()).idempotency;
});

type Client = Pick<DynamoDBDocumentClient, 'send'>;
type Business = (event: HttpEvent<unknown>, run: number) => Promise<APIGatewayProxyResult>;

/** A Lambda context whose remaining time stands still. */
const context = (): Context => ({ ...lambdaContext(), getRemainingTimeInMillis: () => REMAINING_MS });

/**
 * The function `business` behind the HTTP stack with `idempotent()` over DynamoDB Local.
 * `runs` counts the business function's runs; `send` makes a request as `principal`.
 */
const service = (business: Business, options: Partial<Omit<IdempotencyOptions, 'store'>> & { client?: Client } = {}) => {
  const { client = documentClient, ...rest } = options;
  const runs: HttpEvent<unknown>[] = [];
  const handler = httpHandler(
    {
      operation: OPERATION,
      timeoutEarlyInMillis: 0,
      idempotency: idempotent({ store: createIdempotencyStore(client, table), fingerprintKey: async () => KEY, ...rest }),
    },
    async (event, _context) => {
      runs.push(event);
      return business(event, runs.length);
    },
  );
  const send = async (key: string | undefined, body: unknown = { name: 'one' }, principal = 'alice'): Promise<APIGatewayProxyResult> =>
    (await handler(request(key, body, principal), context())) as APIGatewayProxyResult;
  return { runs, send };
};

const request = (key: string | undefined, body: unknown, principal: string) =>
  apiEvent({
    method: 'POST',
    resource: '/things/{group}',
    pathParameters: { group: 'g1' },
    body,
    headers: key === undefined ? {} : { 'Idempotency-Key': key },
    authorizer: { principalId: principal, principal, roles: 'admin' },
  });

const newKey = () => `key-${randomUUID()}`;
const pkOf = (key: string, principal = 'alice') => recordKey(OPERATION, principal, key);
const itemOf = async (key: string, principal = 'alice') =>
  (await documentClient.send(new GetCommand({ TableName: table, Key: { pk: pkOf(key, principal) }, ConsistentRead: true }))).Item;
const problemOf = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown>;
/** A problem body as the error middleware renders it, for a request id of its own. */
const problemBody = (slug: string, title: string, status: number, detail: string) => ({
  type: `urn:netconfig:problem:${slug}`,
  title,
  status,
  detail,
  requestId: expect.any(String),
});
const NOT_KEPT = problemBody(
  'idempotent-response-not-kept',
  'Conflict',
  409,
  'The request with this Idempotency-Key was already processed (status 200), but its answer was too large to keep for replay, and it is not run twice. Read the outcome another way, or send a new key to run it again.',
);
const KEY_REUSED = problemBody(
  'idempotency-key-reused',
  'Unprocessable Content',
  422,
  'This Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request.',
);
const IN_PROGRESS = problemBody(
  'idempotency-request-in-progress',
  'Conflict',
  409,
  'A request with this Idempotency-Key is still being processed; retry after it has finished.',
);
const UNAVAILABLE = problemBody(
  'unavailable',
  'Service Unavailable',
  503,
  'The idempotency key store is unavailable at the moment; retry with the same key shortly.',
);
/** Asserts that `result` is `problem` as `application/problem+json`, with these headers besides. */
const expectProblem = (result: APIGatewayProxyResult | undefined, problem: ReturnType<typeof problemBody>, headers: Record<string, string> = {}) => {
  expect(result?.statusCode).toBe(problem.status);
  expect(result?.headers).toEqual({ 'Content-Type': 'application/problem+json', ...headers });
  expect(problemOf(result!)).toEqual(problem);
};
const created = (id = 1) => json(201, { id }, { Location: `/things/g1/${id}` });

/** A document client over DynamoDB Local that can be taken down (nothing listens on its port then). */
const outage = async () => {
  const unreachable = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 1 }));
  const state = { down: false };
  const client = { send: (command: unknown) => (state.down ? unreachable : documentClient).send(command as GetCommand) } as unknown as Client;
  return { state, client };
};

/** Log lines written with `message`, without their timestamp. */
const linesOf = (captured: Awaited<ReturnType<typeof stdoutDuring>>, message: string) =>
  captured
    .entries()
    .filter((e) => e['message'] === message)
    .map(({ timestamp: _t, ...rest }) => rest);

describe('the first request with a key', () => {
  it('claims the key while it runs, locked for the time the function has left and 2 s more, then keeps its answer for 24 hours', async () => {
    let clock = NOW_MS;
    const key = newKey();
    let during: Record<string, unknown> | undefined;
    let fingerprint = '';
    const { send } = service(
      async (event) => {
        during = await itemOf(key);
        fingerprint = requestFingerprint(event, KEY);
        clock = NOW_MS + 1_500;
        return created();
      },
      { now: () => clock },
    );
    const first = await send(key);
    expect(first.statusCode).toBe(201);
    expect(first.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect(during).toEqual({
      pk: pkOf(key),
      status: 'IN_PROGRESS',
      fingerprint,
      attempt: expect.stringMatching(/^[0-9a-f-]{36}$/),
      lockedUntil: NOW_MS + REMAINING_MS + 2_000,
      expiresAt: 1_900_000_001 + DEFAULT_TTL_SECONDS,
    });

    const kept = await itemOf(key);
    // Completed: the answer, a new expiry counted from the end of the run, no lock.
    expect(kept).toEqual({
      pk: pkOf(key),
      status: 'COMPLETED',
      fingerprint,
      attempt: during!['attempt'],
      expiresAt: 1_900_000_002 + DEFAULT_TTL_SECONDS,
      response: { statusCode: 201, headers: { 'Content-Type': 'application/json', Location: '/things/g1/1' }, body: expect.any(Uint8Array) },
    });
    expect(gunzipSync((kept!['response'] as { body: Uint8Array }).body).toString('utf8')).toBe(first.body);
  });

  it('keeps the answer for ttlSeconds when given', async () => {
    const key = newKey();
    let during: Record<string, unknown> | undefined;
    const { send } = service(
      async () => {
        during = await itemOf(key);
        return created();
      },
      { now: () => NOW_MS, ttlSeconds: 60 },
    );
    await send(key);
    expect(during?.['expiresAt']).toBe(1_900_000_001 + 60);
    expect((await itemOf(key))?.['expiresAt']).toBe(1_900_000_001 + 60);
  });

  it('reads the time from the system clock without an injected one', async () => {
    const key = newKey();
    let during: Record<string, unknown> | undefined;
    const { send } = service(async () => {
      during = await itemOf(key);
      return created();
    });
    const before = Date.now();
    await send(key);
    const after = Date.now();
    expect(during?.['lockedUntil']).toBeGreaterThanOrEqual(before + REMAINING_MS + 2_000);
    expect(during?.['lockedUntil']).toBeLessThanOrEqual(after + REMAINING_MS + 2_000);
    expect((await itemOf(key))?.['expiresAt']).toBeGreaterThanOrEqual(Math.ceil(before / 1000) + DEFAULT_TTL_SECONDS);
    expect((await itemOf(key))?.['expiresAt']).toBeLessThanOrEqual(Math.ceil(after / 1000) + DEFAULT_TTL_SECONDS);
  });

  it('runs a request without a key as if the module did not exist, and writes nothing', async () => {
    const { client, state } = await outage();
    state.down = true;
    const { send, runs } = service(async () => created(), { client });
    expect((await send(undefined)).statusCode).toBe(201);
    expect((await send(undefined)).statusCode).toBe(201);
    expect(runs).toHaveLength(2);
  });
});

describe('a retry with the same key and the same request', () => {
  it('gets the kept answer byte for byte, its headers as text, with Idempotent-Replayed: true, and the function does not run again', async () => {
    const key = newKey();
    const { send, runs } = service(async () => ({
      statusCode: 201,
      // A number is a valid header value of a proxy result: kept and replayed as text.
      headers: { 'Content-Type': 'application/json', 'X-Count': 3 as unknown as string },
      body: '{"id":7, "note": "kept as sent"}',
    }));
    const first = await send(key);
    const again = await send(key);
    expect(again).toEqual({
      statusCode: 201,
      headers: { 'Content-Type': 'application/json', 'X-Count': '3', 'Idempotent-Replayed': 'true' },
      body: first.body,
    });
    expect(runs).toHaveLength(1);
  });

  it('replays an answer that had no headers with the replay header alone', async () => {
    const key = newKey();
    const { send } = service(async () => ({ statusCode: 200, body: 'plain' }));
    await send(key);
    expect(await send(key)).toEqual({ statusCode: 200, headers: { 'Idempotent-Replayed': 'true' }, body: 'plain' });
  });

  it('replays an answer returned without a body with an empty one', async () => {
    const key = newKey();
    const { send } = service(async () => ({ statusCode: 204 }) as APIGatewayProxyResult);
    await send(key);
    expect(await send(key)).toEqual({ statusCode: 204, headers: { 'Idempotent-Replayed': 'true' }, body: '' });
  });

  it('logs the replay with the operation and the replayed status', async () => {
    const key = newKey();
    const run: HttpRun<unknown> = async () => created();
    const wrapped = idempotent({ store: createIdempotencyStore(documentClient, table) })('replayedOperation', run);
    const event = { ...request(key, { name: 'one' }, 'alice'), headers: { 'idempotency-key': key }, body: { name: 'one' } } as HttpEvent<unknown>;
    await wrapped(event, context(), { signal: new AbortController().signal });
    logger.setContext({});
    logger.setLevel('info');
    try {
      const captured = await stdoutDuring(() => wrapped(event, context(), { signal: new AbortController().signal }));
      expect(linesOf(captured, 'idempotent replay')).toEqual([
        { level: 'info', service: 'netconfig', message: 'idempotent replay', operation: 'replayedOperation', status: 201 },
      ]);
    } finally {
      logger.setLevel('warn');
    }
  });

  it('answers 409 idempotent-response-not-kept, naming the first status, when the answer was too large to keep, and runs nothing', async () => {
    const key = newKey();
    // Random text does not compress: about 530 kB, over the 300 KiB kept.
    const large = randomBytes(400 * 1024).toString('base64');
    const { send, runs } = service(async () => json(200, { large }));
    const first = await send(key);
    expect(first.statusCode).toBe(200);
    expect(problemOf(first)).toEqual({ large });
    expect((await itemOf(key))?.['response']).toEqual({ statusCode: 200, headers: { 'Content-Type': 'application/json' } });

    expectProblem(await send(key), NOT_KEPT);
    expect(runs).toHaveLength(1);
  });
});

describe('the same key for another request', () => {
  it('answers 422 idempotency-key-reused, runs nothing and leaves the first answer kept', async () => {
    const key = newKey();
    const { send, runs } = service(async () => created());
    await send(key, { name: 'one' });
    const kept = await itemOf(key);
    expectProblem(await send(key, { name: 'two' }), KEY_REUSED);
    expect(runs).toHaveLength(1);
    expect(await itemOf(key)).toEqual(kept);
  });

  it('is another key for another caller: each runs once and has its own record', async () => {
    const key = newKey();
    const { send, runs } = service(async (_event, run) => created(run));
    const alice = await send(key, { name: 'one' }, 'alice');
    const bob = await send(key, { name: 'two' }, 'bob');
    expect([alice.statusCode, bob.statusCode]).toEqual([201, 201]);
    expect(bob.body).not.toBe(alice.body);
    expect(runs).toHaveLength(2);
    expect((await itemOf(key, 'alice'))?.['status']).toBe('COMPLETED');
    expect((await itemOf(key, 'bob'))?.['status']).toBe('COMPLETED');
  });
});

describe('what the table keeps of a request that carries a secret', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  /** Every string in a JSON value, members and values. */
  const strings = (value: unknown): string[] =>
    typeof value === 'string' ? [value] : value !== null && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]) : [];

  it('is a keyed hash: not the SHA-256 of the request, of its body or of any member, and equal requests still match, different ones conflict', async () => {
    const { send, runs } = service(async (_event, run) => created(run));
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 40 }), async (password, other) => {
        fc.pre(password !== other);
        const key = newKey();
        const body = { name: 'nso-lab', auth: { type: 'basic', username: 'admin', password } };
        const ran = runs.length;
        expect((await send(key, body)).statusCode).toBe(201);
        const stored = String((await itemOf(key))!['fingerprint']);
        const request = { httpMethod: 'POST', resource: '/things/{group}', path: '/things/g1', pathParameters: { group: 'g1' }, body };
        const guesses = [canonicalJson(['POST', '/things/{group}', { group: 'g1' }, body]), canonicalJson(body), JSON.stringify(body), ...strings(body)].map(
          sha256,
        );
        expect(guesses).not.toContain(stored);
        // What it is: the HMAC under this stack's key; another stack's key gives another value.
        expect(stored).toBe(requestFingerprint(request, KEY));
        expect(requestFingerprint(request, randomBytes(32))).not.toBe(stored);
        // The same request, members in another order: the kept answer, not a second run.
        const again = await send(key, { auth: { password, username: 'admin', type: 'basic' }, name: 'nso-lab' });
        expect(again.statusCode).toBe(201);
        expect(again.headers?.['Idempotent-Replayed']).toBe('true');
        // Another password under the same key: 422, nothing run.
        const changed = await send(key, { ...body, auth: { ...body.auth, password: other } });
        expect(changed.statusCode).toBe(422);
        expect((JSON.parse(changed.body) as { type: string }).type).toBe('urn:netconfig:problem:idempotency-key-reused');
        expect(runs.length).toBe(ran + 1);
      }),
      { numRuns: 25 },
    );
  });
});

describe('records written before fingerprints were keyed', () => {
  const legacy = (body: unknown) =>
    createHash('sha256')
      .update(canonicalJson(['POST', '/things/{group}', { group: 'g1' }, body]))
      .digest('hex');
  /** A completed record as the release before keyed fingerprints wrote it: a plain SHA-256, no version prefix. */
  const oldRecord = async (key: string, body: unknown) => {
    const answer = created(7);
    await documentClient.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk: pkOf(key),
          status: 'COMPLETED',
          fingerprint: legacy(body),
          attempt: 'before-the-upgrade',
          lockedUntil: NOW_MS - 1,
          expiresAt: Math.ceil(NOW_MS / 1000) + 60,
          response: { statusCode: answer.statusCode, headers: answer.headers, body: new Uint8Array(gzipSync(answer.body)) },
        },
      }),
    );
    return answer;
  };

  it('replays the kept answer to the same request, and refuses another request under the key with 422', async () => {
    const { send, runs } = service(async () => created(1), { now: () => NOW_MS });
    const key = newKey();
    const body = { name: 'one', auth: { password: 'p' } };
    const answer = await oldRecord(key, body);
    const again = await send(key, { auth: { password: 'p' }, name: 'one' });
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(answer.body);
    expect(again.headers?.['Idempotent-Replayed']).toBe('true');
    expectProblem(await send(key, { ...body, name: 'two' }), KEY_REUSED);
    expect(runs).toHaveLength(0);
  });

  it('stores new records only in the keyed, versioned form', async () => {
    const { send } = service(async () => created(1), { now: () => NOW_MS });
    const key = newKey();
    const body = { name: 'three' };
    expect((await send(key, body)).statusCode).toBe(201);
    const stored = String((await itemOf(key))!['fingerprint']);
    expect(stored).toMatch(/^h1:[0-9a-f]{64}$/);
    expect(stored).not.toContain(legacy(body));
  });
});

describe('a retry while the first request runs', () => {
  it('answers 409 with Retry-After: 1 and runs nothing; once the first is done, the retry gets its answer', async () => {
    const key = newKey();
    let concurrent: APIGatewayProxyResult | undefined;
    const svc = service(async (_event, run) => {
      if (run === 1) concurrent = await svc.send(key);
      return created();
    });
    const first = await svc.send(key);
    expectProblem(concurrent, IN_PROGRESS, { 'Retry-After': '1' });
    expect(svc.runs).toHaveLength(1);
    expect((await svc.send(key)).body).toBe(first.body);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a completed record that holds no answer', { status: 'COMPLETED' }],
    ['a claim that holds an answer', { status: 'IN_PROGRESS', response: { statusCode: 200, headers: {}, body: new Uint8Array(gzipSync('{}')) } }],
  ])('answers 409 in progress, replaying nothing, for %s', async (_label, fields) => {
    const key = newKey();
    const { send, runs } = service(async () => created());
    const body = { name: 'one' };
    // The record as it reads back for this very request (its fingerprint), locked for a minute.
    const held = { ...request(key, body, 'alice'), body, pathParameters: { group: 'g1' } };
    await documentClient.send(
      new PutCommand({
        TableName: table,
        Item: {
          pk: pkOf(key),
          fingerprint: requestFingerprint(held, KEY),
          attempt: 'another',
          lockedUntil: Date.now() + 60_000,
          expiresAt: Math.ceil(Date.now() / 1000) + 60,
          ...fields,
        },
      }),
    );
    expectProblem(await send(key, body), IN_PROGRESS, { 'Retry-After': '1' });
    expect(runs).toHaveLength(0);
  });
});

describe('which answers are kept', () => {
  type Outcome = 'kept' | 'released';
  const cases: [string, Outcome, KeptAnswers | undefined, () => Promise<APIGatewayProxyResult>][] = [
    ['a success (default keep)', 'kept', undefined, async () => created()],
    ['a 4xx returned (default keep)', 'kept', undefined, async () => json(404, { missing: true })],
    ['a 4xx thrown (default keep)', 'kept', undefined, async () => Promise.reject(new Conflict('Taken.'))],
    ['a 4xx thrown (keep: final)', 'kept', 'final', async () => Promise.reject(new NotFound('No such thing.'))],
    ['a 500 thrown', 'released', undefined, async () => Promise.reject(new InternalError('broken'))],
    ['a 502 thrown before anything was sent', 'released', undefined, async () => Promise.reject(new BadGateway('Refused.'))],
    ['a 502 thrown after the request was sent', 'kept', undefined, async () => Promise.reject(new BadGateway('Garbled.').afterSending())],
    ['a 500 returned', 'released', undefined, async () => json(500, { failed: true })],
    ['a 503 returned', 'released', undefined, async () => json(503, { failed: true })],
    [
      'an error that is no problem, even one carrying a 4xx status',
      'released',
      undefined,
      async () => Promise.reject(Object.assign(new Error('x'), { status: 404 })),
    ],
    ['a success (keep: effects)', 'kept', 'effects', async () => created()],
    ['a 4xx thrown before anything was sent (keep: effects)', 'released', 'effects', async () => Promise.reject(new NotFound('No such thing.'))],
    ['a 4xx thrown after the request was sent (keep: effects)', 'kept', 'effects', async () => Promise.reject(new Conflict('Exists.').afterSending())],
    ['a 502 thrown after the request was sent (keep: effects)', 'kept', 'effects', async () => Promise.reject(new BadGateway('Garbled.').afterSending())],
    ['a 502 thrown before anything was sent (keep: effects)', 'released', 'effects', async () => Promise.reject(new BadGateway('Refused.'))],
  ];

  it.each(cases)('%s: %s', async (_label, outcome, keep, answer) => {
    const key = newKey();
    const { send, runs } = service(answer, keep ? { keep } : {});
    const first = await send(key);
    const again = await send(key);
    if (outcome === 'kept') {
      expect((await itemOf(key))?.['status']).toBe('COMPLETED');
      // The same bytes, a problem's request id included: the first request's, not the retry's.
      expect(again.statusCode).toBe(first.statusCode);
      expect(again.body).toBe(first.body);
      expect(again.headers).toEqual({ ...first.headers, 'Idempotent-Replayed': 'true' });
      expect(runs).toHaveLength(1);
    } else {
      expect(await itemOf(key)).toBeUndefined();
      expect(again.headers?.['Idempotent-Replayed']).toBeUndefined();
      expect(runs).toHaveLength(2);
    }
  });

  it('keeps a thrown problem as the error middleware renders it, with the first request id', async () => {
    const key = newKey();
    const problem = () => new HttpProblem(409, 'thing-exists', 'Conflict', 'It exists.', { thing: 'one' }, { 'X-Why': 'exists' });
    let clock = NOW_MS;
    const { send } = service(
      async () => {
        clock = NOW_MS + 1_500;
        throw problem();
      },
      { now: () => clock },
    );
    const first = await send(key);
    expect(first.headers).toEqual({ 'Content-Type': 'application/problem+json', 'X-Why': 'exists' });
    const body = problemOf(first);
    expect(body).toEqual({ ...problemBody('thing-exists', 'Conflict', 409, 'It exists.'), thing: 'one' });
    const kept = (await itemOf(key))!['response'] as { statusCode: number; headers: Record<string, string>; body: Uint8Array };
    expect(kept.statusCode).toBe(409);
    expect(kept.headers).toEqual(first.headers);
    expect(gunzipSync(kept.body).toString('utf8')).toBe(first.body);
    // Kept for 24 hours from the moment the answer was decided.
    expect((await itemOf(key))?.['expiresAt']).toBe(1_900_000_002 + DEFAULT_TTL_SECONDS);
    expect(problemOf(await send(key))['requestId']).toBe(body['requestId']);
  });

  it("keeps the refusal of a request without a request context (a direct invocation) as the anonymous caller's, rethrowing it as thrown", async () => {
    const key = newKey();
    const refusal = new Conflict('Taken.');
    const run: HttpRun<unknown> = async () => Promise.reject(refusal);
    const wrapped = idempotent({ store: createIdempotencyStore(documentClient, table) })(OPERATION, run);
    const { requestContext: _none, ...bare } = request(key, {}, 'alice');
    const event = { ...bare, headers: { 'idempotency-key': key }, body: {} } as unknown as HttpEvent<unknown>;
    const signal = new AbortController().signal;
    await expect(wrapped(event, context(), { signal })).rejects.toBe(refusal);
    const kept = (await itemOf(key, 'anonymous'))?.['response'] as { statusCode: number; body: Uint8Array };
    expect(kept.statusCode).toBe(409);
    expect(JSON.parse(gunzipSync(kept.body).toString('utf8'))).toEqual({
      type: 'urn:netconfig:problem:conflict',
      title: 'Conflict',
      status: 409,
      detail: 'Taken.',
    });
    expect((await wrapped(event, context(), { signal })).headers?.['Idempotent-Replayed']).toBe('true');
  });
});

describe('when the store fails', () => {
  it('answers 503 with Retry-After when DynamoDB is down at the claim, logs why, and runs nothing', async () => {
    const { client, state } = await outage();
    state.down = true;
    const { send, runs } = service(async () => created(), { client });
    const key = newKey();
    let res: APIGatewayProxyResult | undefined;
    const captured = await stdoutDuring(async () => (res = await send(key)));
    expectProblem(res, UNAVAILABLE, { 'Retry-After': '5' });
    expect(linesOf(captured, 'idempotency store unavailable')).toEqual([
      expect.objectContaining({ level: 'warn', operation: OPERATION, storeOperation: 'claim', reason: 'unreachable' }),
    ]);
    expect(runs).toHaveLength(0);
    state.down = false;
    expect(await itemOf(key)).toBeUndefined();
  });

  it('answers 500, not 503, when the claim fails for good (no such table), and runs nothing', async () => {
    const missing = documentClientWith((command) => {
      if (command instanceof PutCommand) command.input.TableName = `missing-${randomUUID()}`;
    });
    const { send, runs } = service(async () => created(), { client: missing });
    let res: APIGatewayProxyResult | undefined;
    const captured = await stdoutDuring(async () => (res = await send(newKey())));
    expect(res?.statusCode).toBe(500);
    expect(problemOf(res!)['type']).toBe('urn:netconfig:problem:internal');
    expect(linesOf(captured, 'idempotency store unavailable')).toEqual([]);
    expect(runs).toHaveLength(0);
  });

  it.each([
    ['a success, when its completion is lost', async () => created(), 201, 'complete'],
    ['a kept refusal, when its completion is lost', async () => Promise.reject(new Conflict('Taken.')), 409, 'complete'],
    ['a failure returned, when its release is lost', async () => json(503, { failed: true }), 503, 'release'],
    ['a failure thrown, when its release is lost', async () => Promise.reject(new BadGateway('Refused.')), 502, 'release'],
  ])('still answers %s (DynamoDB down after the claim), logs it, and the claim holds until its lock lapses', async (_label, answer, status, storeOperation) => {
    const { client, state } = await outage();
    const { send, runs } = service(
      async () => {
        state.down = true;
        return answer();
      },
      { client },
    );
    const key = newKey();
    let res: APIGatewayProxyResult | undefined;
    const captured = await stdoutDuring(async () => (res = await send(key)));
    expect(res?.statusCode).toBe(status);
    expect(linesOf(captured, 'idempotency record not updated')).toEqual([
      expect.objectContaining({ level: 'warn', operation: OPERATION, storeOperation, reason: 'unreachable', error: expect.anything() }),
    ]);
    expect(runs).toHaveLength(1);
    state.down = false;
    expect((await itemOf(key))?.['status']).toBe('IN_PROGRESS');
  });

  it('logs a completion that fails for good (the table gone) with reason "error", and still answers', async () => {
    const gone = documentClientWith((command) => {
      if (command instanceof UpdateCommand) command.input.TableName = `missing-${randomUUID()}`;
    });
    const { send } = service(async () => created(), { client: gone });
    let res: APIGatewayProxyResult | undefined;
    const captured = await stdoutDuring(async () => (res = await send(newKey())));
    expect(res?.statusCode).toBe(201);
    expect(linesOf(captured, 'idempotency record not updated')).toEqual([
      expect.objectContaining({ storeOperation: 'complete', reason: 'error', error: expect.objectContaining({ name: 'ResourceNotFoundException' }) }),
    ]);
  });

  it('answers, and logs the lost claim, when another attempt took the key while the function ran; its record is left alone', async () => {
    const key = newKey();
    const run: HttpRun<unknown> = async () => {
      // The lock lapsed and another attempt claimed the key meanwhile.
      await documentClient.send(
        new PutCommand({
          TableName: table,
          Item: {
            pk: recordKey('lostOperation', 'alice', key),
            status: 'IN_PROGRESS',
            fingerprint: 'f',
            attempt: 'newer',
            lockedUntil: NOW_MS,
            expiresAt: 1_900_000_100,
          },
        }),
      );
      return created();
    };
    const wrapped = idempotent({ store: createIdempotencyStore(documentClient, table) })('lostOperation', run);
    const event = { ...request(key, {}, 'alice'), headers: { 'idempotency-key': key }, body: {} } as HttpEvent<unknown>;
    logger.setContext({});
    let res: APIGatewayProxyResult | undefined;
    const captured = await stdoutDuring(async () => (res = await wrapped(event, context(), { signal: new AbortController().signal })));
    expect(res).toEqual(created());
    expect(linesOf(captured, 'idempotency claim lost before completion')).toEqual([
      { level: 'warn', service: 'netconfig', message: 'idempotency claim lost before completion', operation: 'lostOperation' },
    ]);
    const held = await documentClient.send(new GetCommand({ TableName: table, Key: { pk: recordKey('lostOperation', 'alice', key) }, ConsistentRead: true }));
    expect(held.Item).toMatchObject({ status: 'IN_PROGRESS', attempt: 'newer' });
  });

  it('logs no lost claim when the answer was kept', async () => {
    const { send } = service(async () => created());
    const captured = await stdoutDuring(() => send(newKey()));
    expect(linesOf(captured, 'idempotency claim lost before completion')).toEqual([]);
    expect(linesOf(captured, 'idempotency record not updated')).toEqual([]);
  });
});
