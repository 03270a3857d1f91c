/**
 * `Idempotency-Key` on the relay and on tree creation, through the real handlers: keys in
 * DynamoDB Local, the NSO simulator counting what reaches the orchestrator.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { environmentFingerprintKey } from '../../functions/platform/fingerprint-key.js';
import { DEFAULT_TTL_SECONDS, recordKey, requestFingerprint } from '../../functions/platform/idempotency.js';
import { freePort } from '../support/dynamodb-local.js';
import { stdoutDuring } from '../support/stdout.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import { CONFIG_PATH, RELAY_RESOURCE, TREES_RESOURCE, headerOf, startRelayWorld, until, type RelayWorld } from '../support/robustness.js';
import { HANG_MS } from '../support/timeouts.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let world: RelayWorld;
let relayHandler: Handler;
let createHandler: Handler;
let getHandler: Handler;

const caller = (principal: string) => ({ principalId: principal, principal, roles: 'admin' });

const relayEvent = (body: unknown, options: { key?: string; adapter?: string; principal?: string; headers?: Record<string, string> } = {}) =>
  apiEvent({
    method: 'POST',
    resource: RELAY_RESOURCE,
    pathParameters: { adapterId: options.adapter ?? 'lab' },
    body,
    headers: { ...(options.key !== undefined ? { 'Idempotency-Key': options.key } : {}), ...options.headers },
    authorizer: caller(options.principal ?? 'alice'),
  });

const createEvent = (body: unknown, options: { key?: string; principal?: string } = {}) =>
  apiEvent({
    method: 'POST',
    resource: TREES_RESOURCE,
    body,
    headers: options.key !== undefined ? { 'Idempotency-Key': options.key } : {},
    authorizer: caller(options.principal ?? 'alice'),
  });

const addDevice = (name: string) => ({
  params: { method: 'POST', path: '/restconf/data/tailf-ncs:devices', accept: 'application/yang-data+json', contentType: 'application/yang-data+json' },
  body: { device: [{ name, address: '10.0.0.99' }] },
});
const getConfig = { params: { method: 'GET', path: CONFIG_PATH, accept: 'application/yang-data+json' }, body: {} };

const call = (handler: Handler, event: APIGatewayProxyEvent, context = lambdaContext()) => handler(event, context);
/** A promise the test settles: what the orchestrator simulator's `hold` knob waits for. */
const holdGate = (): { held: Promise<void>; release: () => void } => {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  return { held, release };
};
const parsed = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown> & { type?: string; errors?: { field: string }[] };
const withoutReplayHeader = (headers: APIGatewayProxyResult['headers']) =>
  Object.fromEntries(Object.entries(headers ?? {}).filter(([k]) => k.toLowerCase() !== 'idempotent-replayed'));
const treesNamed = async (name: string) => (await world.items('trees')).filter((i) => i['kind'] === 'tree' && i['name'] === name);
const newKey = () => randomUUID();

beforeAll(async () => {
  world = await startRelayWorld();
  relayHandler = (await import('../../functions/relay/handlers/rest-action.js')).handler as Handler;
  createHandler = (await import('../../functions/trees/handlers/create.js')).handler as Handler;
  getHandler = (await import('../../functions/trees/handlers/get.js')).handler as Handler;
});

afterAll(async () => {
  await world?.close();
});

afterEach(() => {
  world.nso.setKnobs({});
  world.nso.resetData();
  world.nso.requests.length = 0;
});

describe('a retry with the same key and the same request', () => {
  it('returns the first answer of the relay byte for byte, and the orchestrator sees one call', async () => {
    const key = newKey();
    const first = await call(relayHandler, relayEvent(addDevice('ce9'), { key }));
    expect(first.statusCode).toBe(200);
    expect(parsed(first)).toEqual([{ result: '201' }]);
    expect(headerOf(first, 'Idempotent-Replayed')).toBeUndefined();

    const again = await call(relayHandler, relayEvent(addDevice('ce9'), { key }));
    expect(again.statusCode).toBe(first.statusCode);
    expect(again.body).toBe(first.body);
    expect(withoutReplayHeader(again.headers)).toEqual(first.headers);
    expect(headerOf(again, 'Idempotent-Replayed')).toBe('true');
    // Without the key, a second POST would have reached NSO and answered 409 data-exists.
    expect(world.nso.requests).toHaveLength(1);
  });

  it('treats a body whose members come in another order as the same request', async () => {
    const key = newKey();
    const first = await call(relayHandler, relayEvent(addDevice('ce10'), { key }));
    const reordered = { body: addDevice('ce10').body, params: { ...addDevice('ce10').params } };
    const again = await call(relayHandler, relayEvent(JSON.parse(JSON.stringify(reordered)), { key }));
    expect(again.body).toBe(first.body);
    expect(headerOf(again, 'Idempotent-Replayed')).toBe('true');
    expect(world.nso.requests).toHaveLength(1);
  });

  it('accepts the key as a quoted Structured Field string, the same key as its bare form', async () => {
    const key = newKey();
    const first = await call(relayHandler, relayEvent(getConfig, { key }));
    const again = await call(relayHandler, relayEvent(getConfig, { key: `"${key}"` }));
    expect(again.body).toBe(first.body);
    expect(headerOf(again, 'Idempotent-Replayed')).toBe('true');
    expect(world.nso.requests).toHaveLength(1);
  });

  it('returns the first 201 of a tree create, and one tree exists', async () => {
    const key = newKey();
    const body = { name: 'idem-core', deviceType: 'cisco-ios-xr' };
    const first = await call(createHandler, createEvent(body, { key }));
    expect(first.statusCode).toBe(201);
    const again = await call(createHandler, createEvent(body, { key }));
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(headerOf(again, 'Location')).toBe(headerOf(first, 'Location'));
    expect(headerOf(again, 'Idempotent-Replayed')).toBe('true');

    const trees = await treesNamed('idem-core');
    expect(trees).toHaveLength(1);
    expect(trees[0]!['id']).toBe(parsed(first)['id']);
    const read = await call(
      getHandler,
      apiEvent({ method: 'GET', resource: `${TREES_RESOURCE}/{treeId}`, pathParameters: { treeId: String(parsed(first)['id']) } }),
    );
    expect(read.statusCode).toBe(200);
  });

  it('replays a 4xx of the business function: the answer was final', async () => {
    await call(createHandler, createEvent({ name: 'idem-taken', deviceType: 'x' }));
    const key = newKey();
    const first = await call(createHandler, createEvent({ name: 'idem-taken', deviceType: 'y' }, { key }));
    expect(first.statusCode).toBe(409);
    expect(parsed(first).type).toBe('urn:netconfig:problem:tree-name-taken');
    const again = await call(createHandler, createEvent({ name: 'idem-taken', deviceType: 'y' }, { key }));
    expect(again.statusCode).toBe(409);
    expect(again.body).toBe(first.body);
    expect(headerOf(again, 'Idempotent-Replayed')).toBe('true');
  });

  it('keeps the answer for 24 hours (the record expires through DynamoDB TTL)', async () => {
    const key = newKey();
    const before = Math.floor(Date.now() / 1000);
    await call(relayHandler, relayEvent(getConfig, { key }));
    const out = await documentClient.send(
      new GetCommand({ TableName: world.tables.idempotency, Key: { pk: recordKey('relayRestAction', 'alice', key) }, ConsistentRead: true }),
    );
    expect(out.Item).toMatchObject({ status: 'COMPLETED', response: { statusCode: 200 } });
    expect(Number(out.Item!['expiresAt'])).toBeGreaterThanOrEqual(before + DEFAULT_TTL_SECONDS);
    expect(Number(out.Item!['expiresAt'])).toBeLessThanOrEqual(before + DEFAULT_TTL_SECONDS + 5);
  });
});

describe('the same key for something else', () => {
  it('answers 422 for a different body, and sends nothing', async () => {
    const key = newKey();
    await call(relayHandler, relayEvent(addDevice('ce11'), { key }));
    const other = await call(relayHandler, relayEvent(addDevice('ce12'), { key }));
    expect(other.statusCode).toBe(422);
    expect(headerOf(other, 'Content-Type')).toBe('application/problem+json');
    expect(parsed(other)).toMatchObject({ status: 422, type: 'urn:netconfig:problem:idempotency-key-reused' });
    expect(world.nso.requests).toHaveLength(1);
  });

  it('answers 422 for another adapter (path parameter) with the same body', async () => {
    await world.addAdapter('lab-two', world.nso.url);
    const key = newKey();
    await call(relayHandler, relayEvent(getConfig, { key }));
    const other = await call(relayHandler, relayEvent(getConfig, { key, adapter: 'lab-two' }));
    expect(other.statusCode).toBe(422);
    expect(world.nso.requests).toHaveLength(1);
  });

  it('answers 422 for a tree create with another name, and creates nothing', async () => {
    const key = newKey();
    await call(createHandler, createEvent({ name: 'idem-a', deviceType: 'x' }, { key }));
    const other = await call(createHandler, createEvent({ name: 'idem-b', deviceType: 'x' }, { key }));
    expect(other.statusCode).toBe(422);
    expect(await treesNamed('idem-b')).toHaveLength(0);
  });

  it('is independent per operation: a relay key does not collide with a create key', async () => {
    const key = newKey();
    expect((await call(relayHandler, relayEvent(getConfig, { key }))).statusCode).toBe(200);
    const created = await call(createHandler, createEvent({ name: 'idem-op', deviceType: 'x' }, { key }));
    expect(created.statusCode).toBe(201);
    expect(headerOf(created, 'Idempotent-Replayed')).toBeUndefined();
  });
});

describe('two callers with the same key', () => {
  it('are independent: each gets its own answer, never the other one', async () => {
    const key = newKey();
    const alice = await call(createHandler, createEvent({ name: 'idem-alice', deviceType: 'x' }, { key, principal: 'alice' }));
    const bob = await call(createHandler, createEvent({ name: 'idem-bob', deviceType: 'x' }, { key, principal: 'bob' }));
    expect(alice.statusCode).toBe(201);
    expect(bob.statusCode).toBe(201);
    expect(parsed(bob)['id']).not.toBe(parsed(alice)['id']);
    expect(headerOf(bob, 'Idempotent-Replayed')).toBeUndefined();

    const bobAgain = await call(createHandler, createEvent({ name: 'idem-bob', deviceType: 'x' }, { key, principal: 'bob' }));
    expect(bobAgain.body).toBe(bob.body);
    const aliceAgain = await call(createHandler, createEvent({ name: 'idem-alice', deviceType: 'x' }, { key, principal: 'alice' }));
    expect(aliceAgain.body).toBe(alice.body);
  });

  it('relay the same request twice: once per caller', async () => {
    const key = newKey();
    await call(relayHandler, relayEvent(getConfig, { key, principal: 'alice' }));
    await call(relayHandler, relayEvent(getConfig, { key, principal: 'bob' }));
    expect(world.nso.requests).toHaveLength(2);
  });
});

describe('a retry while the first request still runs', () => {
  it('answers 409 with Retry-After, and the first answer is replayed once it is done', async () => {
    // The orchestrator holds the first request until the retry has been answered.
    const { held, release } = holdGate();
    world.nso.setKnobs({ hold: held });
    const key = newKey();
    const first = call(relayHandler, relayEvent(addDevice('ce13'), { key }));
    await until(() => world.nso.requests.length === 1, HANG_MS);
    const concurrent = await call(relayHandler, relayEvent(addDevice('ce13'), { key }));
    release();
    expect(concurrent.statusCode).toBe(409);
    expect(headerOf(concurrent, 'Content-Type')).toBe('application/problem+json');
    expect(headerOf(concurrent, 'Retry-After')).toMatch(/^[1-9][0-9]*$/);
    expect(parsed(concurrent)).toMatchObject({ status: 409, type: 'urn:netconfig:problem:idempotency-request-in-progress' });

    const done = await first;
    expect(done.statusCode).toBe(200);
    world.nso.setKnobs({});
    const later = await call(relayHandler, relayEvent(addDevice('ce13'), { key }));
    expect(later.body).toBe(done.body);
    expect(headerOf(later, 'Idempotent-Replayed')).toBe('true');
    expect(world.nso.requests).toHaveLength(1);
  });

  it('lets one of many simultaneous requests run; the others get 409', async () => {
    // The orchestrator holds the one that runs until the seven others have been answered.
    const { held, release } = holdGate();
    world.nso.setKnobs({ hold: held });
    const key = newKey();
    let answered = 0;
    const pending = Array.from({ length: 8 }, () =>
      call(relayHandler, relayEvent(addDevice('ce14'), { key })).then((result) => {
        answered++;
        return result;
      }),
    );
    await until(() => answered === 7, HANG_MS);
    release();
    const statuses = (await Promise.all(pending)).map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    expect(world.nso.requests).toHaveLength(1);
  });

  it('takes over the key of an attempt that crashed once its lock has lapsed, not before', async () => {
    const body = { name: 'idem-crashed', deviceType: 'x' };
    const key = newKey();
    const event = createEvent(body, { key });
    // The key the handlers use (this run's key file).
    const fingerprintKey = await environmentFingerprintKey()();
    // What a crashed attempt leaves behind: an IN_PROGRESS claim for the same request.
    const crashed = (lockedUntil: number) =>
      documentClient.send(
        new PutCommand({
          TableName: world.tables.idempotency,
          Item: {
            pk: recordKey('createTree', 'alice', key),
            status: 'IN_PROGRESS',
            fingerprint: requestFingerprint({ ...event, body }, fingerprintKey),
            attempt: randomUUID(),
            lockedUntil,
            expiresAt: Math.floor(Date.now() / 1000) + 3600,
          },
        }),
      );
    await crashed(Date.now() + 60_000);
    const locked = await call(createHandler, event);
    expect(locked.statusCode).toBe(409);
    expect(await treesNamed('idem-crashed')).toHaveLength(0);

    await crashed(Date.now() - 1);
    const retried = await call(createHandler, createEvent(body, { key }));
    expect(retried.statusCode).toBe(201);
    expect(await treesNamed('idem-crashed')).toHaveLength(1);
  });

  it('treats an expired record that DynamoDB has not deleted yet as absent', async () => {
    const key = newKey();
    await documentClient.send(
      new PutCommand({
        TableName: world.tables.idempotency,
        Item: {
          pk: recordKey('relayRestAction', 'alice', key),
          status: 'COMPLETED',
          fingerprint: 'another request',
          attempt: 'old',
          expiresAt: Math.floor(Date.now() / 1000) - 10,
          response: { statusCode: 200, headers: {} },
        },
      }),
    );
    const res = await call(relayHandler, relayEvent(getConfig, { key }));
    expect(res.statusCode).toBe(200);
    expect(headerOf(res, 'Idempotent-Replayed')).toBeUndefined();
    expect(world.nso.requests).toHaveLength(1);
  });
});

describe('answers that are not kept', () => {
  it('does not store a 5xx raised before anything was sent: the retry reaches the orchestrator', async () => {
    const key = newKey();
    // The lookups use up the time: 10 s left when the invocation starts (middy's early-timeout
    // timer is set from that first read, far away), 300 ms once the relay looks after them (less
    // than its margin): its own 504 that sent nothing, however long the lookups really take.
    const context = lambdaContext(10_000, 'test', { frozen: true });
    let reads = 0;
    context.getRemainingTimeInMillis = () => (reads++ === 0 ? 10_000 : 300);
    const failed = await call(relayHandler, relayEvent(addDevice('ce15'), { key }), context);
    expect(failed.statusCode).toBe(504);
    expect(parsed(failed)).toMatchObject({ detail: expect.stringContaining('no time left to call the orchestrator') });
    expect(world.nso.requests).toHaveLength(0);
    const record = await documentClient.send(
      new GetCommand({ TableName: world.tables.idempotency, Key: { pk: recordKey('relayRestAction', 'alice', key) }, ConsistentRead: true }),
    );
    expect(record.Item).toBeUndefined();

    const retried = await call(relayHandler, relayEvent(addDevice('ce15'), { key }));
    expect(retried.statusCode).toBe(200);
    expect(parsed(retried)).toEqual([{ result: '201' }]);
    expect(headerOf(retried, 'Idempotent-Replayed')).toBeUndefined();
    expect(world.nso.requests).toHaveLength(1);
  });

  it.each([
    ['a refused connection (nothing listens)', async () => `http://127.0.0.1:${await freePort()}`],
    ['a failed TLS handshake (the server does not speak TLS)', async () => world.nso.url.replace('http:', 'https:')],
  ])('does not store a 502 of %s: once the adapter is fixed, the retry reaches the orchestrator', async (_label, brokenUrl) => {
    const key = newKey();
    const adapter = `moving-${randomUUID().slice(0, 8)}`;
    await world.addAdapter(adapter, await brokenUrl());
    const failed = await call(relayHandler, relayEvent(addDevice('ce17'), { key, adapter }));
    expect(failed.statusCode).toBe(502);
    expect(world.nso.requests).toHaveLength(0);
    const record = await documentClient.send(
      new GetCommand({ TableName: world.tables.idempotency, Key: { pk: recordKey('relayRestAction', 'alice', key) }, ConsistentRead: true }),
    );
    expect(record.Item).toBeUndefined();

    await world.addAdapter(adapter, world.nso.url);
    const retried = await call(relayHandler, relayEvent(addDevice('ce17'), { key, adapter }));
    expect(retried.statusCode).toBe(200);
    expect(headerOf(retried, 'Idempotent-Replayed')).toBeUndefined();
    expect(world.nso.requests).toHaveLength(1);
  });

  it('does not store the 404 of an unknown adapter: once it exists, the retry runs', async () => {
    const key = newKey();
    const adapter = `later-${randomUUID().slice(0, 8)}`;
    const missing = await call(relayHandler, relayEvent(getConfig, { key, adapter }));
    expect(missing.statusCode).toBe(404);
    await world.addAdapter(adapter, world.nso.url);
    const retried = await call(relayHandler, relayEvent(getConfig, { key, adapter }));
    expect(retried.statusCode).toBe(200);
    expect(world.nso.requests).toHaveLength(1);
  });

  it('keeps a 502 raised after the action reached the orchestrator: the retry replays it and sends nothing', async () => {
    const key = newKey();
    // The orchestrator ran the action and answered garbage: its outcome is unknown to the caller.
    world.nso.setKnobs({ malformedJson: true });
    const failed = await call(relayHandler, relayEvent(addDevice('ce16'), { key }));
    expect(failed.statusCode).toBe(502);
    expect(world.nso.requests).toHaveLength(1);

    world.nso.setKnobs({});
    const retried = await call(relayHandler, relayEvent(addDevice('ce16'), { key }));
    expect(retried.statusCode).toBe(502);
    expect(headerOf(retried, 'Idempotent-Replayed')).toBe('true');
    expect(retried.body).toBe(failed.body);
    expect(world.nso.requests).toHaveLength(1);
  });

  it('keeps the 502 of an answer nested 100,000 levels: the retry replays it, sends nothing, and the call line says so', async () => {
    const key = newKey();
    world.nso.setKnobs({ nestedBody: { depth: 100_000 } });
    let failed: APIGatewayProxyResult | undefined;
    const logged = await stdoutDuring(async () => {
      failed = await call(relayHandler, relayEvent(addDevice('ce18'), { key }));
    });
    expect(failed!.statusCode).toBe(502);
    expect(parsed(failed!)).toMatchObject({
      type: 'urn:netconfig:problem:bad-gateway',
      status: 502,
      detail: expect.stringMatching(/nested deeper than 128 levels/),
    });
    expect(world.nso.requests).toHaveLength(1);
    const line = logged.entries().find((e) => e['message'] === 'relay call');
    expect(line).toMatchObject({ level: 'error', status: 502, upstreamStatus: 200, outcome: 'too-deep' });

    world.nso.setKnobs({});
    const retried = await call(relayHandler, relayEvent(addDevice('ce18'), { key }));
    expect(retried.statusCode).toBe(502);
    expect(headerOf(retried, 'Idempotent-Replayed')).toBe('true');
    expect(retried.body).toBe(failed!.body);
    expect(world.nso.requests).toHaveLength(1);
  });

  it('does not claim a key for a request the schema refuses', async () => {
    const key = newKey();
    const invalid = await call(relayHandler, relayEvent({ params: { path: CONFIG_PATH } }, { key }));
    expect(invalid.statusCode).toBe(400);
    const valid = await call(relayHandler, relayEvent(getConfig, { key }));
    expect(valid.statusCode).toBe(200);
    expect(world.nso.requests).toHaveLength(1);
  });

  it('answers 409 to a retry whose first answer was too large to keep, without sending it again', async () => {
    // A config that does not compress: a megabyte of random text.
    const blob = randomBytes(768 * 1024).toString('base64');
    const put = await call(
      relayHandler,
      relayEvent({
        params: { method: 'PATCH', path: CONFIG_PATH, accept: 'application/yang-data+json', contentType: 'application/yang-data+json' },
        body: { 'tailf-ncs:config': { 'tailf-ned-cisco-ios:banner': blob } },
      }),
    );
    expect(parsed(put)).toEqual([{ result: '204' }]);
    const key = newKey();
    const first = await call(relayHandler, relayEvent(getConfig, { key }));
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain(blob);
    const again = await call(relayHandler, relayEvent(getConfig, { key }));
    expect(again.statusCode).toBe(409);
    expect(parsed(again)).toMatchObject({ type: 'urn:netconfig:problem:idempotent-response-not-kept' });
    expect(world.nso.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
  });

  it('behaves as before without the header: a second create is a 409 name-taken', async () => {
    const body = { name: 'idem-none', deviceType: 'x' };
    expect((await call(createHandler, createEvent(body))).statusCode).toBe(201);
    const second = await call(createHandler, createEvent(body));
    expect(second.statusCode).toBe(409);
    expect(parsed(second).type).toBe('urn:netconfig:problem:tree-name-taken');
    expect(headerOf(second, 'Idempotent-Replayed')).toBeUndefined();
  });
});

describe('an invalid key', () => {
  it.each([
    ['too long', 'k'.repeat(256)],
    ['not ASCII', 'clé-1'],
    ['a control character', 'key\u0001'],
    ['empty', '   '],
    ['an empty quoted string', '""'],
    ['a broken quoted string', '"a"b"'],
  ])('is refused with 400 naming the header when %s, and nothing is sent', async (_label, key) => {
    const res = await call(relayHandler, relayEvent(getConfig, { key }));
    expect(res.statusCode).toBe(400);
    expect(headerOf(res, 'Content-Type')).toBe('application/problem+json');
    expect(parsed(res).errors).toEqual([expect.objectContaining({ in: 'header', field: 'Idempotency-Key' })]);
    expect(world.nso.requests).toHaveLength(0);
  });

  it('is refused with 400 when sent twice with different values', async () => {
    const event = relayEvent(getConfig, { key: 'one' });
    event.multiValueHeaders['Idempotency-Key'] = ['one', 'two'];
    const res = await call(relayHandler, event);
    expect(res.statusCode).toBe(400);
    expect(world.nso.requests).toHaveLength(0);
  });

  it('accepts 255 printable ASCII characters, spaces included', async () => {
    const key = `${'k'.repeat(250)} ~!{}`;
    expect((await call(relayHandler, relayEvent(getConfig, { key }))).statusCode).toBe(200);
    expect(headerOf(await call(relayHandler, relayEvent(getConfig, { key })), 'Idempotent-Replayed')).toBe('true');
  });
});
