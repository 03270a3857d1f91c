/**
 * The trees store's conditional transaction against DynamoDB Local: the cancellation reasons
 * DynamoDB itself returns tell an id collision from a name conflict, and tree creation draws
 * a fresh id after a collision instead of answering 409 (and gives up with 503, never 409, when
 * every id it draws is taken); tree import does the same and leaves no content behind.
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { Conflict, ServiceUnavailable, problemResponse } from '../../functions/platform/problem.js';
import { createTree } from '../../functions/trees/service.js';
import type { TreeSummary } from '../../functions/trees/model.js';
import { DynamoTreeStore, nameKey, treeKey } from '../../functions/trees/store.js';
import { DynamoVersionStore } from '../../functions/trees/version-store.js';
import { importTree, type ImportInput } from '../../functions/trees/version-service.js';
import { createTables } from '../../tools/local/table-copies.js';

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
const itemAt = async (key: Record<string, string>) => (await documentClient.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
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

  it('answers 503 (retry), never 409 for the name, when every id it draws is taken, and writes nothing', async () => {
    const holder = tree();
    await store.create(holder);
    const before = await count();
    let drawn = 0;
    const error = await createTree(
      { store, now: () => new Date(), newId: () => (drawn++, holder.id), pause: async () => {} },
      { name: 'never-created', deviceType: 'x' },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(drawn).toBe(5);
    expect(error).toBeInstanceOf(ServiceUnavailable);
    const rendered = problemResponse(error as ServiceUnavailable, 'req-1');
    expect(rendered.statusCode).toBe(503);
    expect(JSON.parse(rendered.body)).toMatchObject({ status: 503, type: 'urn:netconfig:problem:unavailable' });
    expect(await count()).toBe(before);
    expect(await itemAt(nameKey('never-created'))).toBeUndefined();
  });

  it('answers 409 for a taken name, whatever id it drew', async () => {
    const holder = tree();
    await store.create(holder);
    await expect(
      createTree({ store, now: () => new Date(), newId: () => id(), pause: async () => {} }, { name: holder.name, deviceType: 'x' }),
    ).rejects.toSatisfy((e) => e instanceof Conflict && e.status === 409 && e.slug === 'tree-name-taken');
  });
});

describe('importTree over DynamoDB Local', () => {
  const input = (name: string): ImportInput => ({
    name,
    deviceType: 'x',
    versions: [{ name: 'v1', root: { name: 'base', devices: ['ce0'], rules: [], children: [] } }],
  });
  const importDeps = (newId: () => string) => ({ store: new DynamoVersionStore(documentClient, table), now: () => new Date(), newId, pause: async () => {} });

  it('draws a fresh id after an id collision, and leaves no content of the failed attempt behind', async () => {
    const holder = tree();
    await store.create(holder);
    const before = await count();
    const fresh = id();
    const ids = [holder.id, fresh];
    const imported = await importTree(
      importDeps(() => ids.shift()!),
      input('imported-after-collision'),
      'alice',
    );
    expect(imported.id).toBe(fresh);
    expect(ids).toEqual([]);
    expect(await store.get(holder.id)).toEqual({ ok: true, tree: holder });
    // The tree, its name lock and one version's content: nothing of the first attempt.
    expect(await count()).toBe(before! + 3);
  });

  it('answers 503, never 409 for the name, when every id it draws is taken, and writes nothing', async () => {
    const holder = tree();
    await store.create(holder);
    const before = await count();
    const error = await importTree(
      importDeps(() => holder.id),
      input('never-imported'),
      'alice',
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceUnavailable);
    expect(await count()).toBe(before);
    expect(await itemAt(nameKey('never-imported'))).toBeUndefined();
  });
});
