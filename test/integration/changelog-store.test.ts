/**
 * The changelog written by the adapter store, against DynamoDB Local: one entry per change in
 * the same transaction as the change, newest first, paged, kept after the adapter is gone.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAdapterStore, type AdapterFields, type AdapterStore } from '../../functions/adapters/store.js';
import { listChangelog } from '../../functions/runtime/changelog.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { BadRequest } from '../../functions/platform/problem.js';
import { createTables } from '../../tools/local/table-copies.js';

let tables: Awaited<ReturnType<typeof createTables>>;
let store: AdapterStore;

const fields = (name: string, version = 'v1', extra: Partial<AdapterFields> = {}): AdapterFields => ({
  name,
  type: 'nso',
  baseUrl: 'https://nso.example.net',
  auth: { type: 'basic', username: 'admin', password: `$VAULT_netconfig/adapters/${name}/${version}#password` },
  ...extra,
});
const entries = (name: string, query: { limit?: string; cursor?: string } = {}) => listChangelog(documentClient, { kind: 'adapter', name }, query);
const scan = async (table: string) => (await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];

beforeAll(async () => {
  tables = await createTables();
  store = createAdapterStore(documentClient, tables.adapters);
});

describe('the adapter store writes the changelog', () => {
  it('records every action, newest first, by whom and with the fields it changed', async () => {
    const t = (s: number) => `2026-03-01T10:00:${String(s).padStart(2, '0')}.000Z`;
    await store.put(fields('trail'), t(1), null, 'alice');
    const read = await store.current('trail');
    await store.put(fields('trail', 'v2', { timeoutMs: 5000 }), t(2), read, 'bob');
    await store.setState('trail', 'STOPPED', t(3), 'carol');
    await store.setState('trail', 'RUNNING', t(4), 'carol');
    await store.setState('trail', 'RUNNING', t(5), 'dave', 'restarted');
    await store.setLogLevel('trail', 'trace', t(6), 'erin');
    await store.delete('trail', 'frank');
    const page = await entries('trail');
    expect(page.items.map((e) => [e.action, e.by])).toEqual([
      ['deleted', 'frank'],
      ['loglevel', 'erin'],
      ['restarted', 'dave'],
      ['started', 'carol'],
      ['stopped', 'carol'],
      ['replaced', 'bob'],
      ['created', 'alice'],
    ]);
    expect(page.next).toBeUndefined();
    const byAction = Object.fromEntries(page.items.map((e) => [e.action, e]));
    expect(byAction['created']).toMatchObject({ kind: 'adapter', name: 'trail', at: t(1) });
    expect(byAction['created']!.changes).toEqual(
      expect.arrayContaining([
        { field: 'auth.password', to: '$VAULT_netconfig/adapters/trail/v1#password' },
        { field: 'baseUrl', to: 'https://nso.example.net' },
        { field: 'state', to: 'RUNNING' },
        { field: 'logLevel', to: 'info' },
      ]),
    );
    expect(byAction['replaced']!.changes).toEqual([
      { field: 'auth.password', from: '$VAULT_netconfig/adapters/trail/v1#password', to: '$VAULT_netconfig/adapters/trail/v2#password' },
      { field: 'timeoutMs', to: 5000 },
    ]);
    expect(byAction['stopped']!.changes).toEqual([{ field: 'state', from: 'RUNNING', to: 'STOPPED' }]);
    expect(byAction['started']!.changes).toEqual([{ field: 'state', from: 'STOPPED', to: 'RUNNING' }]);
    expect(byAction['restarted']!.changes).toEqual([]);
    expect(byAction['loglevel']!.changes).toEqual([{ field: 'logLevel', from: 'info', to: 'trace' }]);
    expect(byAction['deleted']!.changes).toEqual(expect.arrayContaining([{ field: 'auth.password', from: '$VAULT_netconfig/adapters/trail/v2#password' }]));
    // The adapter is gone; its trail is not.
    expect(await store.get('trail')).toBeUndefined();
  });

  it('pages newest first with a cursor that only serves its own subject', async () => {
    await store.put(fields('paged'), '2026-03-02T00:00:00.000Z', null, 'ops');
    for (let i = 0; i < 4; i++) await store.setState('paged', i % 2 ? 'RUNNING' : 'STOPPED', `2026-03-02T00:00:0${i + 1}.000Z`, 'ops');
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await entries('paged', { limit: '2', ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((e) => e.at));
      cursor = page.next;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...seen].sort().reverse());
    expect(seen).toHaveLength(5);
    const first = await entries('paged', { limit: '1' });
    await expect(entries('trail', { cursor: first.next! })).rejects.toBeInstanceOf(BadRequest);
    await expect(entries('paged', { cursor: 'bm90LWEtY3Vyc29y' })).rejects.toBeInstanceOf(BadRequest);
  });

  it('answers an empty page for a name that never had an entry', async () => {
    expect(await entries('never')).toEqual({ items: [] });
  });
});

describe('atomicity', () => {
  it('writes no entry when the adapter write is refused (the record changed since it was read)', async () => {
    await store.put(fields('raced'), '2026-03-03T00:00:00.000Z', null, 'ops');
    const stale = await store.current('raced');
    await store.setState('raced', 'STOPPED', '2026-03-03T00:00:01.000Z', 'ops');
    const before = (await entries('raced')).items.length;
    await expect(store.put(fields('raced', 'v2'), '2026-03-03T00:00:02.000Z', stale, 'ops')).rejects.toMatchObject({
      name: 'AdapterWriteRefused',
      reason: 'changed',
    });
    await expect(store.put(fields('raced', 'v3'), '2026-03-03T00:00:03.000Z', null, 'ops')).rejects.toMatchObject({ reason: 'changed' });
    expect((await entries('raced')).items).toHaveLength(before);
    expect((await store.get('raced'))?.auth.password).toBe('$VAULT_netconfig/adapters/raced/v1#password');
  });

  it('writes no adapter change when the entry cannot be written', async () => {
    await store.put(fields('unlogged'), '2026-03-04T00:00:00.000Z', null, 'ops');
    const broken = createAdapterStore(documentClient, tables.adapters, `${tables.changelog}-missing`);
    const adaptersBefore = await scan(tables.adapters);
    const entriesBefore = await scan(tables.changelog);
    await expect(broken.put(fields('unlogged', 'v2'), '2026-03-04T00:00:01.000Z', undefined, 'ops')).rejects.toThrow();
    await expect(broken.setState('unlogged', 'STOPPED', '2026-03-04T00:00:02.000Z', 'ops')).rejects.toThrow();
    await expect(broken.setLogLevel('unlogged', 'debug', '2026-03-04T00:00:03.000Z', 'ops')).rejects.toThrow();
    await expect(broken.delete('unlogged', 'ops')).rejects.toThrow();
    await expect(broken.put(fields('unlogged-new'), '2026-03-04T00:00:04.000Z', null, 'ops')).rejects.toThrow();
    expect(await scan(tables.adapters)).toEqual(adaptersBefore);
    expect(await scan(tables.changelog)).toEqual(entriesBefore);
  });
});
