/**
 * The adapters store against DynamoDB Local: its last guard (only a `$VAULT_` reference ever
 * reaches the table as a password), how a record reads back (and when it reads as damaged),
 * what a write is checked against, and every write (create, replace, state, log level, delete)
 * with its changelog entry, its retries when another write lands first, and the failures it
 * passes on; the list's pages.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Adapter } from '../../functions/adapters/model.js';
import { AdapterWriteRefused, adapterKey, createAdapterStore, isDamaged, type AdapterFields, type DamagedAdapter } from '../../functions/adapters/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { InternalError } from '../../functions/platform/problem.js';
import { SecretReferenceInvalid } from '../../functions/outbound/secrets/errors.js';
import { documentClientWith } from '../support/dynamo-hook.js';
import { captureStdout } from '../support/stdout.js';
import { createTables } from '../../tools/local/table-copies.js';

let table: string;
let changelog: string;
const NOW = '2026-03-04T05:06:07.089Z';

const fields = (name: string, password: string): AdapterFields => ({
  name,
  type: 'nso',
  baseUrl: 'https://nso.example.net',
  auth: { type: 'basic', username: 'admin', password },
});
const itemOf = async (name: string) => (await documentClient.send(new GetCommand({ TableName: table, Key: adapterKey(name), ConsistentRead: true }))).Item;

beforeAll(async () => {
  ({ adapters: table, changelog } = await createTables());
});

/** Another copy of the tables, for a test that reads every adapter of its table; the functions stay on the first. */
const privateAdaptersTable = async (): Promise<string> => {
  const saved = { ...process.env };
  const { adapters } = await createTables();
  Object.assign(process.env, saved);
  return adapters;
};

describe('the adapters store', () => {
  it.each([
    ['a plain password', 'Sup3r-secret'],
    ['an empty password', ''],
    ['a reference after a space', ' $VAULT_netconfig/adapters/x#password'],
    ['a reference in another case', '$vault_netconfig/adapters/x#password'],
    ['an $ENC value', '$ENCabcdef'],
  ])('refuses to store %s, writes nothing and never names the value', async (_label, password) => {
    const store = createAdapterStore(documentClient, table);
    const name = `guard-${Math.random().toString(36).slice(2, 10)}`;
    const error = await store.put(fields(name, password), NOW).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).logDetail).toMatch(/not a \$VAULT_ reference/);
    expect((error as InternalError).logFields).toEqual({ adapter: name });
    if (password !== '') expect(JSON.stringify({ ...(error as InternalError), message: (error as Error).message })).not.toContain(password);
    expect(await itemOf(name)).toBeUndefined();
  });

  it('refuses to replace a stored reference with a plain password, and leaves the stored item as it was', async () => {
    const store = createAdapterStore(documentClient, table);
    await store.put(fields('guard-kept', '$VAULT_netconfig/adapters/guard-kept#password'), NOW);
    const before = await itemOf('guard-kept');
    for (const expected of [undefined, await store.current('guard-kept')]) {
      await expect(store.put(fields('guard-kept', 'Sup3r-secret'), '2026-03-05T00:00:00.000Z', expected)).rejects.toBeInstanceOf(InternalError);
    }
    expect(await itemOf('guard-kept')).toEqual(before);
  });

  it('stores a $VAULT_ reference, and replaces it with another', async () => {
    const store = createAdapterStore(documentClient, table);
    const first = await store.put(fields('guard-ok', '$VAULT_netconfig/adapters/guard-ok#password'), NOW);
    expect(first.created).toBe(true);
    expect((await itemOf('guard-ok'))?.['auth']).toEqual({ type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/guard-ok#password' });
    const second = await store.put(fields('guard-ok', '$VAULT_team/nso#pw'), NOW);
    expect(second).toMatchObject({ created: false, previousPassword: '$VAULT_netconfig/adapters/guard-ok#password' });
  });

  it('reads an item whose password is not a reference as damaged, naming the adapter only', async () => {
    await documentClient.send(
      new PutCommand({
        TableName: table,
        Item: { ...adapterKey('guard-damaged'), kind: 'adapter', ...fields('guard-damaged', 'plain-Pa55'), created: NOW, lastUpdated: NOW },
      }),
    );
    const error = await createAdapterStore(documentClient, table)
      .get('guard-damaged')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // The documented problem for a password that is not a reference, naming the adapter only.
    expect(error).toBeInstanceOf(SecretReferenceInvalid);
    const body = (error as SecretReferenceInvalid).toBody();
    expect(body.detail).toContain('guard-damaged');
    expect(JSON.stringify(body)).not.toContain('plain-Pa55');
  });
});

/** An adapter record as DynamoDB holds it, written directly (`extra` overrides or adds attributes). */
const rawRecord = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...adapterKey(name),
  kind: 'adapter',
  name,
  type: 'nso',
  baseUrl: 'https://nso.example.net',
  auth: { type: 'basic', username: 'admin', password: `$VAULT_netconfig/adapters/${name}/v1#password` },
  created: NOW,
  lastUpdated: NOW,
  ...extra,
});
const putRaw = (item: Record<string, unknown>) => documentClient.send(new PutCommand({ TableName: table, Item: item }));
const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;
const store = () => createAdapterStore(documentClient, table);
const reference = (name: string, version = 'v1') => `$VAULT_netconfig/adapters/${name}/${version}#password`;
const LATER = '2026-03-05T00:00:00.000Z';

/** The changelog entries of `name`, oldest first. */
const entriesOf = async (name: string) =>
  (
    await documentClient.send(
      new QueryCommand({
        TableName: changelog,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `adapter#${name}` },
        ConsistentRead: true,
      }),
    )
  ).Items ?? [];

/** Another writer: the record of `name` at its next revision, with `change` applied. */
const writeBetween = async (name: string, change: Record<string, unknown>) => {
  const item = (await itemOf(name))!;
  await putRaw({ ...item, ...change, revision: (typeof item['revision'] === 'number' ? item['revision'] : 0) + 1 });
};

/** DynamoDB Local, with another writer changing the record just before each of the first `races` transactions. */
const racing = (name: string, races: number, change: Record<string, unknown> = {}) => {
  const seen = { transactions: 0 };
  const client = documentClientWith(async (command) => {
    if (command instanceof TransactWriteCommand && ++seen.transactions <= races) await writeBetween(name, change);
  });
  return { client, seen };
};

/**
 * DynamoDB Local, except that the first transaction is cancelled with `reasons`, as DynamoDB
 * cancels one (DynamoDB Local runs transactions one at a time, so it never reports a conflict).
 */
const cancelledOnce = (reasons?: { Code: string }[]) => {
  const seen = { transactions: 0 };
  const client = documentClientWith((command) => {
    if (command instanceof TransactWriteCommand && ++seen.transactions === 1) {
      throw new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, ...(reasons ? { CancellationReasons: reasons } : {}) });
    }
  });
  return { client, seen };
};

describe('reading an adapter', () => {
  it('reads a record as the adapter, with its own settings and nothing of how it is stored', async () => {
    const name = unique('read-full');
    await putRaw(
      rawRecord(name, {
        timeoutMs: 2500,
        complianceConcurrency: 4,
        nsoCommitParams: 'params',
        state: 'STOPPED',
        logLevel: 'debug',
        revision: 3,
        lastUpdated: LATER,
      }),
    );
    expect(await store().get(name)).toStrictEqual({
      name,
      type: 'nso',
      baseUrl: 'https://nso.example.net',
      auth: { type: 'basic', username: 'admin', password: reference(name) },
      timeoutMs: 2500,
      complianceConcurrency: 4,
      nsoCommitParams: 'params',
      state: 'STOPPED',
      logLevel: 'debug',
      created: NOW,
      lastUpdated: LATER,
    });
  });

  it('reads a record written before lifecycles and log levels as running at info, without settings of its own', async () => {
    const name = unique('read-old');
    await putRaw(rawRecord(name));
    expect(await store().get(name)).toStrictEqual({
      name,
      type: 'nso',
      baseUrl: 'https://nso.example.net',
      auth: { type: 'basic', username: 'admin', password: reference(name) },
      state: 'RUNNING',
      logLevel: 'info',
      created: NOW,
      lastUpdated: NOW,
    });
    await putRaw(rawRecord(name, { state: 'RUNNING', logLevel: 'warn' }));
    expect(await store().get(name)).toMatchObject({ state: 'RUNNING', logLevel: 'warn' });
  });

  it('reads strongly consistent, for a reader and for a write (an eventually consistent read may miss the last write)', async () => {
    const name = unique('consistent');
    await putRaw(rawRecord(name));
    const reads: unknown[] = [];
    const s = createAdapterStore(
      documentClientWith((command) => command instanceof GetCommand && reads.push(command.input)),
      table,
    );
    await s.get(name);
    await s.current(name);
    expect(reads).toEqual([
      { TableName: table, Key: adapterKey(name), ConsistentRead: true },
      { TableName: table, Key: adapterKey(name), ConsistentRead: true },
    ]);
  });

  it('answers undefined for no such adapter', async () => {
    expect(await store().get(unique('nobody'))).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>]>([
    ['no name (named by its key)', { name: undefined }],
    ['another type', { type: 'junos' }],
    ['no base URL', { baseUrl: undefined }],
    ['a base URL that is not a string', { baseUrl: 443 }],
    ['no auth', { auth: undefined }],
    ['a null auth', { auth: null }],
    ['an auth that is a string', { auth: '$VAULT_x#password' }],
    ['another auth type', { auth: { type: 'digest', username: 'admin', password: '$VAULT_x#password' } }],
    ['no user name', { auth: { type: 'basic', password: '$VAULT_x#password' } }],
    ['a user name that is not a string', { auth: { type: 'basic', username: 7, password: '$VAULT_x#password' } }],
    ['no password', { auth: { type: 'basic', username: 'admin' } }],
    ['a password that is not a string', { auth: { type: 'basic', username: 'admin', password: 12345 } }],
    ['a timeout that is a string', { timeoutMs: '2500' }],
    ['a timeout that is not an integer', { timeoutMs: 2.5 }],
    ['a fetch cap that is a string', { complianceConcurrency: '4' }],
    ['a fetch cap that is not an integer', { complianceConcurrency: 1.5 }],
    ['an unknown state', { state: 'PAUSED' }],
    ['an unknown log level', { logLevel: 'verbose' }],
    ['an unknown form of NSO commit parameters', { nsoCommitParams: 'header' }],
    ['no creation time', { created: undefined }],
    ['a creation time that is not a string', { created: 1_700_000_000 }],
    ['no update time', { lastUpdated: undefined }],
  ])('reads a record with %s as damaged, naming the adapter only', async (_label, damage) => {
    const name = unique('damaged');
    const item = rawRecord(name, damage);
    for (const [field, value] of Object.entries(damage)) if (value === undefined) delete item[field];
    await putRaw(item);
    const error = await store()
      .get(name)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalError);
    expect(error).toMatchObject({ logDetail: 'damaged adapter item', logFields: { adapter: name } });
  });

  it.each([
    ['an $ENC value', '$ENCabcdef', /^The adapter '(.+)' holds a \$ENC password\. .*removed/],
    ['a literal', 'plain-Pa55', /^The adapter '(.+)' holds a password that is not a \$VAULT_ reference; store it again \(PUT \/adapters\/\{name\}\)\.$/],
  ])('reads a record whose password is %s as an invalid reference, named by its key when its name is damaged', async (_label, password, detail) => {
    const name = unique('enc');
    // (DynamoDB refuses a name that is not a string: the byName index sorts by it.)
    const { name: _lost, ...item } = rawRecord(name, { auth: { type: 'basic', username: 'admin', password } });
    await putRaw(item);
    const error = await store()
      .get(name)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretReferenceInvalid);
    const body = (error as SecretReferenceInvalid).toBody();
    expect(body['detail']).toMatch(detail);
    expect(String(body['detail']).match(detail)![1]).toBe(name);
    expect(JSON.stringify(body)).not.toContain(password.slice(4));
  });
});

describe('what a write is checked against', () => {
  it('is the revision, origin, user name and reference of the record, with the record; null when there is none', async () => {
    const name = unique('current');
    const stored = (await store().put(fields(name, reference(name)), NOW)).adapter;
    const item = await itemOf(name);
    expect(item).toMatchObject({ revision: 1 });
    expect(await store().current(name)).toStrictEqual({ revision: 1, baseUrl: stored.baseUrl, username: 'admin', password: reference(name), item });
    expect(await store().current(unique('absent'))).toBeNull();
  });

  it('counts a record written before revisions as revision 0, and leaves out what a damaged record lacks', async () => {
    const name = unique('legacy');
    await putRaw({ ...adapterKey(name), kind: 'adapter', name, revision: 'seven' });
    expect(await store().current(name)).toStrictEqual({ revision: 0, item: { ...adapterKey(name), kind: 'adapter', name, revision: 'seven' } });
    await putRaw({ ...adapterKey(name), kind: 'adapter', name, baseUrl: 'https://nso.example.net', auth: { username: 5, password: 6 } });
    expect(await store().current(name)).toStrictEqual({ revision: 0, baseUrl: 'https://nso.example.net', item: await itemOf(name) });
  });

  it('lets every write land on a record written before revisions, checked against revision 0', async () => {
    const s = store();
    for (const write of ['put', 'put-checked', 'state', 'loglevel', 'delete'] as const) {
      const name = unique(`legacy-${write}`);
      const { revision: _none, ...legacy } = rawRecord(name);
      await putRaw(legacy);
      if (write === 'put') expect((await s.put(fields(name, reference(name, 'v2')), LATER)).created).toBe(false);
      if (write === 'put-checked') expect((await s.put(fields(name, reference(name, 'v2')), LATER, await s.current(name))).created).toBe(false);
      if (write === 'state') expect(await s.setState(name, 'STOPPED', LATER)).toMatchObject({ state: 'STOPPED' });
      if (write === 'loglevel') expect(await s.setLogLevel(name, 'debug', LATER)).toMatchObject({ logLevel: 'debug' });
      if (write === 'delete') {
        expect(await s.delete(name)).toStrictEqual({ password: reference(name) });
        expect(await itemOf(name)).toBeUndefined();
      } else expect(await itemOf(name)).toMatchObject({ revision: 1, lastUpdated: LATER });
    }
  });
});

describe('put', () => {
  it('creates the adapter as given, running at info, by the system unless told, with no previous password', async () => {
    const name = unique('create');
    const result = await store().put({ ...fields(name, reference(name)), timeoutMs: 3000 }, NOW);
    const adapter = { ...fields(name, reference(name)), timeoutMs: 3000, state: 'RUNNING', logLevel: 'info', created: NOW, lastUpdated: NOW };
    expect(result).toStrictEqual({ created: true, adapter });
    expect(await store().get(name)).toStrictEqual(adapter);
    expect(await itemOf(name)).toStrictEqual({
      ...adapterKey(name),
      kind: 'adapter',
      ...fields(name, reference(name)),
      timeoutMs: 3000,
      state: 'RUNNING',
      revision: 1,
      created: NOW,
      lastUpdated: NOW,
      // What a read-back after an unconfirmed write checks: this very write landed.
      writeId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect((await entriesOf(name)).map((e) => [e['action'], e['by'], e['at']])).toEqual([['created', 'system', NOW]]);
  });

  it('replaces it keeping its creation time, state and log level, dropping the settings left out, and returns the reference it held', async () => {
    const name = unique('replace');
    const s = store();
    await s.put({ ...fields(name, reference(name)), timeoutMs: 3000, complianceConcurrency: 2, nsoCommitParams: 'params' }, NOW);
    expect(await s.get(name)).toMatchObject({ nsoCommitParams: 'params' });
    await s.setState(name, 'STOPPED', NOW);
    await s.setLogLevel(name, 'trace', NOW);
    const result = await s.put(fields(name, reference(name, 'v2')), LATER, undefined, 'alice');
    const adapter = { ...fields(name, reference(name, 'v2')), state: 'STOPPED', logLevel: 'trace', created: NOW, lastUpdated: LATER };
    expect(result).toStrictEqual({ created: false, adapter, previousPassword: reference(name) });
    expect(await s.get(name)).toStrictEqual(adapter);
    expect(await itemOf(name)).toMatchObject({ revision: 4 });
    expect(Object.keys((await itemOf(name))!)).not.toContain('timeoutMs');
    expect(Object.keys((await itemOf(name))!)).not.toContain('complianceConcurrency');
    expect(Object.keys((await itemOf(name))!)).not.toContain('nsoCommitParams');
    const replaced = (await entriesOf(name)).find((e) => e['action'] === 'replaced')!;
    expect(replaced).toMatchObject({ by: 'alice', at: LATER });
    expect(replaced['changes']).toEqual([
      { field: 'auth.password', from: reference(name), to: reference(name, 'v2') },
      { field: 'complianceConcurrency', from: 2 },
      { field: 'nsoCommitParams', from: 'params' },
      { field: 'timeoutMs', from: 3000 },
    ]);
  });

  it('replaces a damaged record: created now, no previous password', async () => {
    const name = unique('replace-damaged');
    await putRaw({ ...adapterKey(name), kind: 'adapter', name, revision: 2, state: 'STOPPED', logLevel: 'debug', auth: { type: 'basic' } });
    const result = await store().put(fields(name, reference(name)), LATER);
    expect(result).toStrictEqual({
      created: false,
      adapter: { ...fields(name, reference(name)), state: 'STOPPED', logLevel: 'debug', created: LATER, lastUpdated: LATER },
    });
    expect(await store().get(name)).toStrictEqual(result.adapter);
  });

  it('reads the record again and writes when another write landed between its read and its write', async () => {
    const name = unique('race-once');
    await store().put(fields(name, reference(name)), NOW);
    const { client, seen } = racing(name, 1, { logLevel: 'debug' });
    const result = await createAdapterStore(client, table).put(fields(name, reference(name, 'v2')), LATER);
    expect(seen.transactions).toBe(2);
    expect(result).toMatchObject({
      created: false,
      adapter: { logLevel: 'debug', auth: { password: reference(name, 'v2') } },
      previousPassword: reference(name),
    });
    expect(await itemOf(name)).toMatchObject({ revision: 3, logLevel: 'debug', auth: { password: reference(name, 'v2') } });
  });

  it('gives up as changed after three lost races, having written nothing', async () => {
    const name = unique('race-always');
    await store().put(fields(name, reference(name)), NOW);
    const { client, seen } = racing(name, Number.POSITIVE_INFINITY);
    const error = await createAdapterStore(client, table)
      .put(fields(name, reference(name, 'v2')), LATER)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterWriteRefused);
    expect(error).toMatchObject({ reason: 'changed', message: 'the adapter changed since it was read' });
    expect(seen.transactions).toBe(3);
    expect(await itemOf(name)).toMatchObject({ revision: 4, auth: { password: reference(name) } });
    expect(await entriesOf(name)).toHaveLength(1);
  });

  it('refuses as secret-moved when the race it lost moved the record to another origin under the same reference', async () => {
    for (const checked of [false, true]) {
      const name = unique('race-moved');
      const s = store();
      await s.put(fields(name, reference(name)), NOW);
      const expected = checked ? await s.current(name) : undefined;
      const { client, seen } = racing(name, 1, { baseUrl: 'https://other.example.net' });
      const error = await createAdapterStore(client, table)
        .put({ ...fields(name, reference(name)), timeoutMs: 1000 }, LATER, expected)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AdapterWriteRefused);
      expect(error).toMatchObject({ reason: 'secret-moved', message: 'the stored secret would follow the adapter to another origin or user name' });
      expect(seen.transactions).toBe(1);
      expect(await itemOf(name)).toMatchObject({ revision: 2, baseUrl: 'https://other.example.net' });
    }
  });

  it('refuses as secret-moved before writing when the record it reads holds the reference for another user', async () => {
    const name = unique('moved');
    const s = store();
    await s.put(fields(name, reference(name)), NOW);
    const other = { ...fields(name, reference(name)), auth: { type: 'basic' as const, username: 'root', password: reference(name) } };
    await expect(s.put(other, LATER)).rejects.toMatchObject({ name: 'AdapterWriteRefused', reason: 'secret-moved' });
    await expect(s.put(other, LATER, await s.current(name))).rejects.toMatchObject({ reason: 'secret-moved' });
    expect(await itemOf(name)).toMatchObject({ revision: 1, auth: { username: 'admin' } });
  });

  it('tries again when DynamoDB cancels the transaction for a conflict with another one', async () => {
    const name = unique('conflict');
    const { client, seen } = cancelledOnce([{ Code: 'None' }, { Code: 'TransactionConflict' }]);
    expect(await createAdapterStore(client, table).put(fields(name, reference(name)), NOW)).toMatchObject({ created: true });
    expect(seen.transactions).toBe(2);
    expect(await entriesOf(name)).toHaveLength(1);
  });

  it.each([
    ['another reason', [{ Code: 'ValidationError' }, { Code: 'None' }]],
    ['no reason given', undefined],
  ])('throws a cancellation for %s as it is, once, having written nothing', async (_label, reasons) => {
    const name = unique('cancelled');
    const { client, seen } = cancelledOnce(reasons);
    const error = await createAdapterStore(client, table)
      .put(fields(name, reference(name)), NOW)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect(seen.transactions).toBe(1);
    expect(await itemOf(name)).toBeUndefined();
  });

  it('throws what DynamoDB refuses outright (an item over its size limit), having written nothing', async () => {
    const name = unique('too-big');
    const error = await store()
      .put({ ...fields(name, reference(name)), baseUrl: `https://${'x'.repeat(410_000)}.example.net` }, NOW)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ValidationException' });
    expect(await itemOf(name)).toBeUndefined();
    expect(await entriesOf(name)).toEqual([]);
  });
});

describe('setState and setLogLevel', () => {
  it('set the field at a new revision and update time, recorded by the system unless told, and return the adapter as stored', async () => {
    const name = unique('transition');
    const s = store();
    await s.put(fields(name, reference(name)), NOW);
    const stopped = await s.setState(name, 'STOPPED', LATER);
    expect(stopped).toStrictEqual({ ...fields(name, reference(name)), state: 'STOPPED', logLevel: 'info', created: NOW, lastUpdated: LATER });
    expect(await s.get(name)).toStrictEqual(stopped);
    expect(await itemOf(name)).toMatchObject({ revision: 2, state: 'STOPPED', lastUpdated: LATER });
    const started = await s.setState(name, 'RUNNING', '2026-03-06T00:00:00.000Z', 'bob');
    expect(started).toMatchObject({ state: 'RUNNING', lastUpdated: '2026-03-06T00:00:00.000Z' });
    const traced = await s.setLogLevel(name, 'trace', '2026-03-07T00:00:00.000Z');
    expect(traced).toStrictEqual({
      ...fields(name, reference(name)),
      state: 'RUNNING',
      logLevel: 'trace',
      created: NOW,
      lastUpdated: '2026-03-07T00:00:00.000Z',
    });
    expect(await s.get(name)).toStrictEqual(traced);
    expect(await itemOf(name)).toMatchObject({ revision: 4 });
    expect((await entriesOf(name)).map((e) => [e['action'], e['by'], e['at']])).toEqual([
      ['created', 'system', NOW],
      ['stopped', 'system', LATER],
      ['started', 'bob', '2026-03-06T00:00:00.000Z'],
      ['loglevel', 'system', '2026-03-07T00:00:00.000Z'],
    ]);
  });

  it('answer undefined for no such adapter, and write nothing', async () => {
    const name = unique('transition-none');
    expect(await store().setState(name, 'STOPPED', LATER)).toBeUndefined();
    expect(await store().setLogLevel(name, 'debug', LATER)).toBeUndefined();
    expect(await itemOf(name)).toBeUndefined();
    expect(await entriesOf(name)).toEqual([]);
  });

  it('refuse a damaged record before writing anything', async () => {
    const name = unique('transition-damaged');
    const damaged = rawRecord(name, { revision: 1, created: undefined });
    delete damaged['created'];
    await putRaw(damaged);
    await expect(store().setState(name, 'STOPPED', LATER)).rejects.toBeInstanceOf(InternalError);
    await expect(store().setLogLevel(name, 'debug', LATER)).rejects.toBeInstanceOf(InternalError);
    expect(await itemOf(name)).toStrictEqual(damaged);
    expect(await entriesOf(name)).toEqual([]);
  });

  it('read the record again after a lost race, and give up as changed after three', async () => {
    const name = unique('transition-race');
    await store().put(fields(name, reference(name)), NOW);
    const once = racing(name, 1, { timeoutMs: 1234 });
    expect(await createAdapterStore(once.client, table).setState(name, 'STOPPED', LATER)).toMatchObject({ state: 'STOPPED', timeoutMs: 1234 });
    expect(once.seen.transactions).toBe(2);
    expect(await itemOf(name)).toMatchObject({ revision: 3, state: 'STOPPED', timeoutMs: 1234 });

    const always = racing(name, Number.POSITIVE_INFINITY);
    await expect(createAdapterStore(always.client, table).setLogLevel(name, 'debug', LATER)).rejects.toMatchObject({
      name: 'AdapterWriteRefused',
      reason: 'changed',
    });
    expect(always.seen.transactions).toBe(3);
    expect(await itemOf(name)).toMatchObject({ revision: 6 });
    expect((await itemOf(name))?.['logLevel']).toBeUndefined();
    expect((await entriesOf(name)).map((e) => e['action'])).toEqual(['created', 'stopped']);
  });
});

describe('delete', () => {
  it('deletes the record, recorded now by the system unless told, and returns the reference it held; undefined when none', async () => {
    const name = unique('delete');
    const s = store();
    await s.put(fields(name, reference(name)), NOW);
    const from = new Date().toISOString();
    expect(await s.delete(name)).toStrictEqual({ password: reference(name) });
    const to = new Date().toISOString();
    expect(await itemOf(name)).toBeUndefined();
    const deleted = (await entriesOf(name)).find((e) => e['action'] === 'deleted')!;
    expect(deleted['by']).toBe('system');
    expect(deleted['at'] >= from && deleted['at'] <= to).toBe(true);
    expect(await s.delete(name, 'carol')).toBeUndefined();
    expect(await entriesOf(name)).toHaveLength(2);

    const other = unique('delete-by');
    await s.put(fields(other, reference(other)), NOW);
    await s.delete(other, 'carol');
    expect((await entriesOf(other)).map((e) => [e['action'], e['by']])).toEqual([
      ['created', 'system'],
      ['deleted', 'carol'],
    ]);
  });

  it('deletes a damaged record that holds no reference, returning none', async () => {
    const name = unique('delete-damaged');
    await putRaw({ ...adapterKey(name), kind: 'adapter', name, revision: 1, auth: { type: 'basic', password: 5 } });
    expect(await store().delete(name)).toStrictEqual({});
    expect(await itemOf(name)).toBeUndefined();
  });

  it('reads the record again after a lost race, and gives up as changed after three', async () => {
    const name = unique('delete-race');
    await store().put(fields(name, reference(name)), NOW);
    const always = racing(name, Number.POSITIVE_INFINITY);
    await expect(createAdapterStore(always.client, table).delete(name)).rejects.toMatchObject({ name: 'AdapterWriteRefused', reason: 'changed' });
    expect(always.seen.transactions).toBe(3);
    expect(await itemOf(name)).toMatchObject({ revision: 4 });

    const once = racing(name, 1, { auth: { type: 'basic', username: 'admin', password: reference(name, 'v9') } });
    expect(await createAdapterStore(once.client, table).delete(name)).toStrictEqual({ password: reference(name, 'v9') });
    expect(once.seen.transactions).toBe(2);
    expect(await itemOf(name)).toBeUndefined();
  });
});

describe('list', () => {
  let own: string;
  const listed = (page: { items: readonly (Adapter | DamagedAdapter)[]; more: boolean }) => ({ names: page.items.map((a) => a.name), more: page.more });

  beforeAll(async () => {
    // A private table: the list reads every adapter of it.
    own = await privateAdaptersTable();
    for (const name of ['c', 'a', 'b']) await createAdapterStore(documentClient, own).put(fields(name, reference(name)), NOW);
  });

  it('pages by name: at most the limit, more only when another follows, after the name given', async () => {
    const s = createAdapterStore(documentClient, own);
    expect(listed(await s.list({ limit: 3 }))).toEqual({ names: ['a', 'b', 'c'], more: false });
    expect(listed(await s.list({ limit: 2 }))).toEqual({ names: ['a', 'b'], more: true });
    expect(listed(await s.list({ limit: 1, after: 'a' }))).toEqual({ names: ['b'], more: true });
    expect(listed(await s.list({ limit: 2, after: 'a' }))).toEqual({ names: ['b', 'c'], more: false });
    expect(listed(await s.list({ limit: 5, after: 'c' }))).toEqual({ names: [], more: false });
    expect((await s.list({ limit: 1 })).items).toStrictEqual([await s.get('a')]);
  });

  it('lists a damaged record as damaged, named and logged, none of its values, without hiding the others', async () => {
    const damagedTable = await privateAdaptersTable();
    const raw = (item: Record<string, unknown>) => documentClient.send(new PutCommand({ TableName: damagedTable, Item: item }));
    await raw({ ...rawRecord('b-literal'), auth: { type: 'basic', username: 'admin', password: 'plain-Pa55' } });
    await raw({ ...rawRecord('c-enc'), auth: { type: 'basic', username: 'admin', password: '$ENCsecretvalue' } });
    const broken = rawRecord('d-broken', { timeoutMs: 'soon' });
    await raw(broken);
    await raw(rawRecord('e-fine'));
    await raw({ ...rawRecord('a-fine') });
    const log = captureStdout();
    let page;
    try {
      page = await createAdapterStore(documentClient, damagedTable).list({ limit: 10 });
    } finally {
      log.restore();
    }
    expect(page.items.map((a) => [a.name, isDamaged(a)])).toEqual([
      ['a-fine', false],
      ['b-literal', true],
      ['c-enc', true],
      ['d-broken', true],
      ['e-fine', false],
    ]);
    expect(page.items[1]).toStrictEqual({
      name: 'b-literal',
      status: 'damaged',
      problem: 'secret-reference-invalid',
      detail: "The adapter 'b-literal' holds a password that is not a $VAULT_ reference; store it again (PUT /adapters/{name}).",
    });
    expect(page.items[2]).toMatchObject({
      status: 'damaged',
      problem: 'secret-reference-invalid',
      detail: expect.stringMatching(/^The adapter 'c-enc' holds a \$ENC password/),
    });
    expect(page.items[3]).toStrictEqual({
      name: 'd-broken',
      status: 'damaged',
      problem: 'damaged-record',
      detail: 'The stored record is damaged (a field is missing or of the wrong type); store the adapter again.',
    });
    expect(JSON.stringify(page)).not.toMatch(/plain-Pa55|secretvalue|soon/);
    const logged = log.entries().filter((e) => e['message'] === 'damaged adapter item');
    expect(logged.map((e) => [e['level'], e['adapter']])).toEqual([
      ['error', 'b-literal'],
      ['error', 'c-enc'],
      ['error', 'd-broken'],
    ]);
    expect(log.raw()).not.toMatch(/plain-Pa55|secretvalue/);
  });

  it('reads on past a page DynamoDB cut at 1 MB, and no further than the limit needs', async () => {
    const bigTable = await privateAdaptersTable();
    const names = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'];
    // About 300 kB each: DynamoDB ends a page after the fourth.
    for (const name of names) await documentClient.send(new PutCommand({ TableName: bigTable, Item: rawRecord(name, { note: 'x'.repeat(300_000) }) }));
    const queries: number[] = [];
    const s = createAdapterStore(
      documentClientWith((command) => command instanceof QueryCommand && queries.push(command.input.Limit ?? 0)),
      bigTable,
    );
    expect(listed(await s.list({ limit: 6 }))).toEqual({ names, more: false });
    expect(queries).toEqual([7, 3]);
    queries.length = 0;
    expect(listed(await s.list({ limit: 4 }))).toEqual({ names: names.slice(0, 4), more: true });
    expect(queries).toEqual([5, 1]);
    queries.length = 0;
    expect(listed(await s.list({ limit: 3 }))).toEqual({ names: names.slice(0, 3), more: true });
    expect(queries).toEqual([4]);
  });
});
