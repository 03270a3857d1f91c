/**
 * The idempotency key store against DynamoDB Local: every condition of the claim, the
 * attempt check of `complete()` and `release()`, what a record reads back as, the table it
 * defaults to, and every way a call can fail (a missing table, DynamoDB down, for writes only or
 * reads only), alone and under `idempotent()`, and the claim's retries when the key changes hands
 * between its write and its read.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { httpHandler, json } from '../../functions/runtime/http.js';
import { idempotent, type IdempotencyRecord, type StoredResponse } from '../../functions/platform/idempotency.js';
import { createIdempotencyStore } from '../../functions/platform/idempotency-store.js';
import { documentClientWith } from '../support/dynamo-hook.js';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

let table: string;
const store = () => createIdempotencyStore(documentClient, table);

const NOW_MS = 1_900_000_000_000;
const NOW_SEC = NOW_MS / 1000;

const record = (overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  pk: `op#caller#${randomUUID()}`,
  status: 'IN_PROGRESS',
  fingerprint: 'fp-1',
  attempt: randomUUID(),
  lockedUntil: NOW_MS + 60_000,
  expiresAt: NOW_SEC + 3600,
  ...overrides,
});

const stored = (text: string): StoredResponse => ({
  statusCode: 201,
  headers: { 'Content-Type': 'application/json', Location: '/x/1' },
  body: new Uint8Array(Buffer.from(text)),
});

const itemOf = async (pk: string) => (await documentClient.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;

const putItem = (item: Record<string, unknown>) => documentClient.send(new PutCommand({ TableName: table, Item: item }));

/** A document client whose DynamoDB is down: nothing listens on its port. */
const downClient = async () => DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 1 }));
/** Up for the first call (the claim), down from then on. */
const upForTheClaimOnly = async () => {
  const down = await downClient();
  let claimed = false;
  return { send: (command: unknown) => (claimed ? down : ((claimed = true), documentClient)).send(command as PutCommand) } as unknown as DynamoDBDocumentClient;
};
/** Down for writes, up for reads: the claim's put fails for a reason other than its condition. */
const writesDown = async () => {
  const down = await downClient();
  return {
    send: (command: unknown) => (command instanceof PutCommand ? down : documentClient).send(command as PutCommand),
  } as unknown as DynamoDBDocumentClient;
};
/** Up for writes, down for reads: a claim whose put loses its condition cannot read the holder. */
const readsDown = async () => {
  const down = await downClient();
  return {
    send: (command: unknown) => (command instanceof GetCommand ? down : documentClient).send(command as PutCommand),
  } as unknown as DynamoDBDocumentClient;
};

beforeAll(async () => {
  table = (await createTables()).idempotency;
});

describe('claim', () => {
  it('writes the record when no record holds the key', async () => {
    const mine = record();
    expect(await store().claim(mine, NOW_MS)).toEqual({ kind: 'claimed' });
    expect(await itemOf(mine.pk)).toEqual(mine);
  });

  it('reports a live record that holds the key, as it reads back, and leaves it alone', async () => {
    const held = record({ status: 'COMPLETED', response: stored('{"id":1}') });
    await putItem({ ...held });
    const outcome = await store().claim(record({ pk: held.pk }), NOW_MS);
    expect(outcome).toEqual({ kind: 'taken', record: held });
    expect(await itemOf(held.pk)).toEqual(held);
  });

  it('takes over a record past its expiry that DynamoDB has not deleted yet, not one expiring this second', async () => {
    const expired = record({ status: 'COMPLETED', fingerprint: 'other', expiresAt: NOW_SEC - 1 });
    await putItem({ ...expired });
    const mine = record({ pk: expired.pk });
    expect(await store().claim(mine, NOW_MS)).toEqual({ kind: 'claimed' });
    expect(await itemOf(mine.pk)).toEqual(mine);

    const lastSecond = record({ status: 'COMPLETED', expiresAt: NOW_SEC });
    await putItem({ ...lastSecond });
    expect(await store().claim(record({ pk: lastSecond.pk }), NOW_MS)).toEqual({ kind: 'taken', record: lastSecond });
  });

  it('takes over a claim of the same request whose lock has lapsed (a crashed attempt)', async () => {
    const crashed = record({ lockedUntil: NOW_MS - 1 });
    await putItem({ ...crashed });
    const mine = record({ pk: crashed.pk });
    expect(await store().claim(mine, NOW_MS)).toEqual({ kind: 'claimed' });
    expect((await itemOf(mine.pk))?.['attempt']).toBe(mine.attempt);
  });

  it.each([
    ['its lock has not lapsed', { lockedUntil: NOW_MS + 1 }],
    ['its lock lapses this very millisecond', { lockedUntil: NOW_MS }],
    ['it is for another request', { lockedUntil: NOW_MS - 1, fingerprint: 'fp-other' }],
    ['it is completed', { lockedUntil: NOW_MS - 1, status: 'COMPLETED' as const }],
  ])('leaves a claim alone when %s', async (_label, overrides) => {
    const held = record(overrides);
    await putItem({ ...held });
    const outcome = await store().claim(record({ pk: held.pk }), NOW_MS);
    expect(outcome).toEqual({ kind: 'taken', record: held });
    expect((await itemOf(held.pk))?.['attempt']).toBe(held.attempt);
  });

  it('reads a record written without the optional fields with safe defaults', async () => {
    const pk = `op#caller#${randomUUID()}`;
    await putItem({ pk, status: 'SOMETHING', expiresAt: NOW_SEC + 10, lockedUntil: NOW_MS + 10, response: { headers: {} } });
    expect(await store().claim(record({ pk }), NOW_MS)).toEqual({
      kind: 'taken',
      record: { pk, status: 'IN_PROGRESS', fingerprint: '', attempt: '', lockedUntil: NOW_MS + 10, expiresAt: NOW_SEC + 10 },
    });
  });

  it('reads a kept answer without headers or body as such', async () => {
    const pk = `op#caller#${randomUUID()}`;
    await putItem({ pk, status: 'COMPLETED', fingerprint: 'f', attempt: 'a', expiresAt: NOW_SEC + 10, response: { statusCode: 409 } });
    const outcome = await store().claim(record({ pk }), NOW_MS);
    expect(outcome).toEqual({
      kind: 'taken',
      record: { pk, status: 'COMPLETED', fingerprint: 'f', attempt: 'a', lockedUntil: 0, expiresAt: NOW_SEC + 10, response: { statusCode: 409, headers: {} } },
    });
  });

  it('reports no record when the holder vanished between the write and the read', async () => {
    const held = record();
    await putItem({ ...held });
    // DynamoDB as another attempt changes it: the holder releases its claim right after our put failed.
    const racing = {
      send: async (command: unknown) => {
        if (command instanceof GetCommand) await documentClient.send(new DeleteCommand({ TableName: table, Key: { pk: held.pk } }));
        return documentClient.send(command as PutCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    expect(await createIdempotencyStore(racing, table).claim(record({ pk: held.pk }), NOW_MS)).toEqual({ kind: 'taken', record: undefined });
  });

  it('reads the holder with a strongly consistent read (an eventually consistent one may miss the holder that made its put fail)', async () => {
    const held = record();
    await putItem({ ...held });
    const reads: unknown[] = [];
    const recording = documentClientWith((command) => command instanceof GetCommand && reads.push(command.input));
    expect(await createIdempotencyStore(recording, table).claim(record({ pk: held.pk }), NOW_MS)).toEqual({ kind: 'taken', record: held });
    expect(reads).toEqual([{ TableName: table, Key: { pk: held.pk }, ConsistentRead: true }]);
  });

  it('reports no record when the holder expired between the write and the read', async () => {
    const held = record({ status: 'COMPLETED' });
    await putItem({ ...held });
    const racing = {
      send: async (command: unknown) => {
        if (command instanceof GetCommand) await putItem({ ...held, expiresAt: NOW_SEC - 1 });
        return documentClient.send(command as PutCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    expect(await createIdempotencyStore(racing, table).claim(record({ pk: held.pk }), NOW_MS)).toEqual({ kind: 'taken', record: undefined });
  });
});

describe('complete', () => {
  it('stores the answer for the attempt that holds the claim, until the new expiry, and drops the lock', async () => {
    const mine = record();
    await store().claim(mine, NOW_MS);
    const answer = stored('{"done":true}');
    expect(await store().complete(mine.pk, mine.attempt, answer, NOW_SEC + 86_400)).toBe(true);
    const item = await itemOf(mine.pk);
    expect(item).toEqual({
      pk: mine.pk,
      status: 'COMPLETED',
      fingerprint: mine.fingerprint,
      attempt: mine.attempt,
      expiresAt: NOW_SEC + 86_400,
      response: answer,
    });
  });

  it('changes nothing for a stale attempt whose claim another attempt took over', async () => {
    const stale = record({ lockedUntil: NOW_MS - 1 });
    await store().claim(stale, NOW_MS - 60_000);
    const newer = record({ pk: stale.pk });
    expect(await store().claim(newer, NOW_MS)).toEqual({ kind: 'claimed' });

    expect(await store().complete(stale.pk, stale.attempt, stored('stale'), NOW_SEC + 86_400)).toBe(false);
    expect(await itemOf(stale.pk)).toEqual(newer);
    expect(await store().complete(newer.pk, newer.attempt, stored('newer'), NOW_SEC + 86_400)).toBe(true);
    expect((await itemOf(newer.pk))?.['response']).toEqual(stored('newer'));
  });

  it('creates nothing when the claim is gone', async () => {
    const pk = `op#caller#${randomUUID()}`;
    expect(await store().complete(pk, randomUUID(), stored('late'), NOW_SEC + 10)).toBe(false);
    expect(await itemOf(pk)).toBeUndefined();
  });
});

describe('release', () => {
  it('deletes the claim of the attempt that holds it', async () => {
    const mine = record();
    await store().claim(mine, NOW_MS);
    await store().release(mine.pk, mine.attempt);
    expect(await itemOf(mine.pk)).toBeUndefined();
  });

  it('leaves the claim of a newer attempt, and of a completed answer, alone', async () => {
    const stale = record({ lockedUntil: NOW_MS - 1 });
    await store().claim(stale, NOW_MS - 60_000);
    const newer = record({ pk: stale.pk });
    await store().claim(newer, NOW_MS);
    await expect(store().release(stale.pk, stale.attempt)).resolves.toBeUndefined();
    expect(await itemOf(stale.pk)).toEqual(newer);

    await store().complete(newer.pk, newer.attempt, stored('kept'), NOW_SEC + 10);
    await store().release(newer.pk, 'someone else');
    expect((await itemOf(newer.pk))?.['status']).toBe('COMPLETED');
  });

  it('does nothing, without failing, when the claim is already gone', async () => {
    const pk = `op#caller#${randomUUID()}`;
    await expect(store().release(pk, randomUUID())).resolves.toBeUndefined();
    expect(await itemOf(pk)).toBeUndefined();
  });
});

describe('failures other than a lost condition', () => {
  it('are thrown by every call when the table does not exist', async () => {
    const missing = createIdempotencyStore(documentClient, `missing-${randomUUID()}`);
    const mine = record();
    await expect(missing.claim(mine, NOW_MS)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await expect(missing.complete(mine.pk, mine.attempt, stored('x'), NOW_SEC)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    await expect(missing.release(mine.pk, mine.attempt)).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('are thrown by every call when DynamoDB is down', async () => {
    const down = createIdempotencyStore(await downClient(), table);
    const mine = record();
    const unreachable = { name: 'Error', code: 'ECONNREFUSED' };
    await expect(down.claim(mine, NOW_MS)).rejects.toMatchObject(unreachable);
    await expect(down.complete(mine.pk, mine.attempt, stored('x'), NOW_SEC)).rejects.toMatchObject(unreachable);
    await expect(down.release(mine.pk, mine.attempt)).rejects.toMatchObject(unreachable);
  });

  it('are thrown by a claim whose write fails, never read as a lost condition, whether or not a record holds the key', async () => {
    const writeFails = createIdempotencyStore(await writesDown(), table);
    const free = record();
    await expect(writeFails.claim(free, NOW_MS)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await itemOf(free.pk)).toBeUndefined();

    const held = record({ status: 'COMPLETED', response: stored('{"id":1}') });
    await putItem({ ...held });
    await expect(writeFails.claim(record({ pk: held.pk }), NOW_MS)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await itemOf(held.pk)).toEqual(held);
  });

  it('are thrown by a claim whose read of the holder fails after its write lost the condition', async () => {
    const held = record();
    await putItem({ ...held });
    await expect(createIdempotencyStore(await readsDown(), table).claim(record({ pk: held.pk }), NOW_MS)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await itemOf(held.pk)).toEqual(held);
  });
});

describe('the table', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is IDEMPOTENCY_TABLE unless one is given', async () => {
    vi.stubEnv('IDEMPOTENCY_TABLE', table);
    const mine = record();
    expect(await createIdempotencyStore().claim(mine, NOW_MS)).toEqual({ kind: 'claimed' });
    expect(await itemOf(mine.pk)).toEqual(mine);
  });

  it('fails at once, naming the variable, when IDEMPOTENCY_TABLE is not set and none is given', () => {
    vi.stubEnv('IDEMPOTENCY_TABLE', '');
    expect(() => createIdempotencyStore()).toThrow('environment variable IDEMPOTENCY_TABLE is required');
  });
});

/** A handler that honours Idempotency-Key over the store on `client`; `runs` records each run of its business function. */
const handlerOver = (client: Pick<DynamoDBDocumentClient, 'send'>, runs: string[], status = 201, tableName = table) =>
  httpHandler(
    { operation: 'storeTest', timeoutEarlyInMillis: 0, idempotency: idempotent({ store: createIdempotencyStore(client, tableName) }) },
    async (event) => {
      runs.push(event.path);
      return status < 400 ? json(status, { ran: true }) : json(status, { type: 'urn:netconfig:problem:unavailable', status });
    },
  );
const event = (key?: string) =>
  apiEvent({
    method: 'POST',
    resource: '/things',
    body: { a: 1 },
    headers: key === undefined ? {} : { 'Idempotency-Key': key },
    authorizer: { principal: 'p', roles: 'admin' },
  });
const body = (result: APIGatewayProxyResult) => JSON.parse(result.body) as Record<string, unknown>;

describe('a keyed request through idempotent() while the key changes hands', () => {
  /** Another attempt, for another request, holds `pk` for the next minute. */
  const anotherAttemptHolds = (pk: unknown) =>
    putItem({
      pk,
      status: 'IN_PROGRESS',
      fingerprint: 'other',
      attempt: 'other',
      lockedUntil: Date.now() + 60_000,
      expiresAt: Math.ceil(Date.now() / 1000) + 60,
    });
  /** The record of `key` as `handlerOver` stores it, read from the table. */
  const keyItems = async (key: string) => {
    const { Items } = await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return (Items ?? []).filter((i) => String(i['pk']).endsWith(`#${key}`));
  };

  it("runs once when its own claim was written but the answer lost, and the SDK's retry of the put lost the condition", async () => {
    let first = true;
    // The put reaches DynamoDB, then is sent again (as the SDK retries after a timeout): the
    // second one fails on the record the first one wrote.
    const retried = {
      send: async (command: unknown) => {
        if (command instanceof PutCommand && first) {
          first = false;
          await documentClient.send(command);
        }
        return documentClient.send(command as PutCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    const runs: string[] = [];
    const key = `k-${randomUUID()}`;
    const res = (await handlerOver(retried, runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(res.statusCode).toBe(201);
    expect(runs).toHaveLength(1);
    expect((await keyItems(key)).map((i) => i['status'])).toEqual(['COMPLETED']);
  });

  it('claims again when the holder is gone by the time it is read, and runs once', async () => {
    const runs: string[] = [];
    const key = `k-${randomUUID()}`;
    // Another attempt holds the key at the first put and releases it before the read.
    let raced = false;
    const racing = {
      send: async (command: unknown) => {
        if (command instanceof PutCommand && !raced) await anotherAttemptHolds(command.input.Item!['pk']);
        if (command instanceof GetCommand && !raced) {
          raced = true;
          await documentClient.send(new DeleteCommand({ TableName: table, Key: command.input.Key }));
        }
        return documentClient.send(command as PutCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    const res = (await handlerOver(racing, runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(res.statusCode).toBe(201);
    expect(runs).toHaveLength(1);
    expect((await keyItems(key)).map((i) => [i['status'], i['fingerprint']])).toEqual([['COMPLETED', expect.not.stringMatching(/^other$/)]]);
  });

  it('answers 409 and runs nothing when the holder vanishes at every read, three claims in a row', async () => {
    const runs: string[] = [];
    const key = `k-${randomUUID()}`;
    let claims = 0;
    const flapping = {
      send: async (command: unknown) => {
        if (command instanceof PutCommand) {
          claims++;
          await anotherAttemptHolds(command.input.Item!['pk']);
        }
        if (command instanceof GetCommand) await documentClient.send(new DeleteCommand({ TableName: table, Key: command.input.Key }));
        return documentClient.send(command as PutCommand);
      },
    } as unknown as DynamoDBDocumentClient;
    const res = (await handlerOver(flapping, runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(res.statusCode).toBe(409);
    expect(body(res)).toMatchObject({ type: 'urn:netconfig:problem:idempotency-request-in-progress' });
    expect(claims).toBe(3);
    expect(runs).toHaveLength(0);
  });
});

describe('a keyed request through idempotent() while DynamoDB is down', () => {
  it('answers 503 with Retry-After and does not run the request', async () => {
    const runs: string[] = [];
    const res = (await handlerOver(await downClient(), runs)(event('k-down'), lambdaContext())) as APIGatewayProxyResult;
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Content-Type']).toBe('application/problem+json');
    expect(res.headers?.['Retry-After']).toMatch(/^[1-9][0-9]*$/);
    expect(body(res)).toMatchObject({ status: 503, type: 'urn:netconfig:problem:unavailable' });
    expect(JSON.stringify(body(res))).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|Dynamo/i);
    expect(runs).toHaveLength(0);
  });

  it('answers 503 and does not run the request when the store goes down between the claim and the read of its holder', async () => {
    const key = `k-${randomUUID()}`;
    // Another attempt holds the key, so the claim's put loses its condition and reads the holder.
    const runs: string[] = [];
    const first = (await handlerOver(documentClient, runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(first.statusCode).toBe(201);
    const retry = (await handlerOver(await readsDown(), runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(retry.statusCode).toBe(503);
    expect(body(retry)).toMatchObject({ status: 503, type: 'urn:netconfig:problem:unavailable' });
    expect(runs).toHaveLength(1);
  });

  it('answers 500, not 503, and does not run the request when the store fails for good (no such table)', async () => {
    const runs: string[] = [];
    const res = (await handlerOver(documentClient, runs, 201, `missing-${randomUUID()}`)(event('k-missing'), lambdaContext())) as APIGatewayProxyResult;
    expect(res.statusCode).toBe(500);
    expect(res.headers?.['Content-Type']).toBe('application/problem+json');
    expect(JSON.stringify(body(res))).not.toMatch(/ResourceNotFound|missing-/);
    expect(runs).toHaveLength(0);
  });

  it('still answers a failure when DynamoDB goes down before the claim is released, and the retry is refused while the lock holds', async () => {
    const runs: string[] = [];
    const key = `k-${randomUUID()}`;
    const first = (await handlerOver(await upForTheClaimOnly(), runs, 503)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(first.statusCode).toBe(503);
    expect(runs).toHaveLength(1);
    // The release was lost with DynamoDB: the claim stays until its lock lapses.
    const retry = (await handlerOver(documentClient, runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(retry.statusCode).toBe(409);
    expect(runs).toHaveLength(1);
  });

  it('runs a request without a key as if the store did not exist', async () => {
    const runs: string[] = [];
    const res = (await handlerOver(await downClient(), runs)(event(), lambdaContext())) as APIGatewayProxyResult;
    expect(res.statusCode).toBe(201);
    expect(runs).toHaveLength(1);
  });

  it('still answers when DynamoDB goes down after the claim, and the retry is refused while the lock holds', async () => {
    const runs: string[] = [];
    const key = `k-${randomUUID()}`;
    const first = (await handlerOver(await upForTheClaimOnly(), runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(first.statusCode).toBe(201);
    expect(runs).toHaveLength(1);

    const retry = (await handlerOver(documentClient, runs)(event(key), lambdaContext())) as APIGatewayProxyResult;
    expect(retry.statusCode).toBe(409);
    expect(body(retry)).toMatchObject({ type: 'urn:netconfig:problem:idempotency-request-in-progress' });
    expect(runs).toHaveLength(1);
  });
});
