/**
 * The trees store's conditional transaction against DynamoDB Local: the cancellation reasons
 * DynamoDB itself returns tell an id collision from a name conflict, and tree creation draws
 * a fresh id after a collision instead of answering 409.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/shared/dynamo.js';
import { Conflict } from '../../functions/shared/problem.js';
import { createTree } from '../../functions/trees/core.js';
import type { TreeSummary } from '../../functions/trees/model.js';
import { DynamoTreeStore, nameKey, treeKey } from '../../functions/trees/store.js';
import { createTables } from '../support/tables.js';

let table: string;
let store: DynamoTreeStore;
let sequence = 0;

const id = () => (++sequence).toString(16).padStart(24, 'c');
const tree = (overrides: Partial<TreeSummary> = {}): TreeSummary => ({
  id: id(),
  name: `store-${sequence}-${Math.random().toString(36).slice(2, 8)}`,
  deviceType: 'cisco-ios-xr',
  versions: ['initial'],
  created: '2026-01-01T00:00:00.000Z',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  ...overrides,
});
const itemAt = async (key: Record<string, string>) =>
  (await documentClient.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
const count = async () => (await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true, Select: 'COUNT' }))).Count;

beforeAll(async () => {
  table = (await createTables()).trees;
  store = new DynamoTreeStore(documentClient, table);
});

describe('DynamoTreeStore.create', () => {
  it('creates the tree and its name lock together', async () => {
    const t = tree();
    expect(await store.create(t)).toBe('created');
    expect(await store.get(t.id)).toEqual({ ok: true, tree: t });
    expect(await itemAt(nameKey(t.name))).toEqual({ ...nameKey(t.name), treeId: t.id });
  });

  it('reports an id that another tree holds as id-taken, and writes nothing', async () => {
    const first = tree();
    await store.create(first);
    const before = await count();
    const colliding = tree({ id: first.id });
    expect(await store.create(colliding)).toBe('id-taken');
    expect(await count()).toBe(before);
    expect(await itemAt(nameKey(colliding.name))).toBeUndefined();
    expect(await store.get(first.id)).toEqual({ ok: true, tree: first });
  });

  it('reports a name that another tree holds as name-taken, and writes nothing', async () => {
    const first = tree();
    await store.create(first);
    const before = await count();
    const sameName = tree({ name: first.name });
    expect(await store.create(sameName)).toBe('name-taken');
    expect(await count()).toBe(before);
    expect(await itemAt(treeKey(sameName.id))).toBeUndefined();
  });

  it('reports name-taken when both the id and the name are held: the caller is told about the name', async () => {
    const first = tree();
    await store.create(first);
    expect(await store.create({ ...first, deviceType: 'other' })).toBe('name-taken');
  });
});

describe('createTree over DynamoDB Local', () => {
  it('draws a fresh id after an id collision and creates the tree under it', async () => {
    const holder = tree();
    await store.create(holder);
    const fresh = id();
    const ids = [holder.id, fresh];
    const created = await createTree(
      { store, now: () => new Date('2026-02-03T04:05:06.007Z'), newId: () => ids.shift()!, pause: async () => {} },
      { name: 'collision-survivor', deviceType: 'arista-eos' },
    );
    expect(created.id).toBe(fresh);
    expect(ids).toEqual([]);
    expect(await store.get(fresh)).toEqual({ ok: true, tree: created });
    expect(await itemAt(nameKey('collision-survivor'))).toEqual({ ...nameKey('collision-survivor'), treeId: fresh });
    expect(await store.get(holder.id)).toEqual({ ok: true, tree: holder });
  });

  it('answers 409 for a taken name, whatever id it drew', async () => {
    const holder = tree();
    await store.create(holder);
    await expect(
      createTree({ store, now: () => new Date(), newId: () => id(), pause: async () => {} }, { name: holder.name, deviceType: 'x' }),
    ).rejects.toBeInstanceOf(Conflict);
  });
});
