import { describe, expect, it } from 'vitest';
import { BadRequest, Conflict, InternalError, NotFound, ServiceUnavailable } from '../../functions/platform/problem.js';
import { createTree, getTreeSummary, listTreeSummaries, newTreeId } from '../../functions/trees/service.js';
import { decodeCursor, encodeCursor } from '../../functions/trees/cursor.js';
import type { TreeSummary } from '../../functions/trees/model.js';
import { seedWith } from '../../functions/trees/seed.js';
import {
  BadPageKey,
  StoreUnavailable,
  type CreateOutcome,
  type StoredTree,
  type TreePage,
  type TreePageKey,
  type TreeStore,
  type UpsertOutcome,
} from '../../functions/trees/store.js';

const tree: TreeSummary = {
  id: '5cb0a3b7e1c4f20012a9d3e1',
  name: 'core',
  deviceType: 'ios',
  versions: ['initial'],
  created: '2021-01-01T00:00:00.000Z',
  lastUpdated: '2021-01-01T00:00:00.000Z',
};

/** A store that answers from scripts and records what it was asked. */
class ScriptedStore implements TreeStore {
  readonly created: TreeSummary[] = [];
  readonly pages: { limit: number; after?: TreePageKey }[] = [];
  constructor(
    private readonly script: {
      get?: () => Promise<StoredTree | undefined>;
      create?: CreateOutcome[];
      page?: () => Promise<TreePage>;
    },
  ) {}
  get(): Promise<StoredTree | undefined> {
    return this.script.get ? this.script.get() : Promise.resolve(undefined);
  }
  async create(t: TreeSummary): Promise<CreateOutcome> {
    this.created.push(t);
    return this.script.create?.shift() ?? 'created';
  }
  page(limit: number, after?: TreePageKey): Promise<TreePage> {
    this.pages.push({ limit, ...(after ? { after } : {}) });
    return this.script.page ? this.script.page() : Promise.resolve({ items: [] });
  }
}

const ids = (...list: string[]) => {
  const queue = [...list];
  return () => queue.shift() ?? 'ffffffffffffffffffffffff';
};
const noPause = async () => undefined;
const fixedNow = () => new Date('2024-05-06T07:08:09.123Z');

describe('newTreeId', () => {
  it('draws 24 lowercase hex characters, different each time', () => {
    const drawn = new Set(Array.from({ length: 100 }, newTreeId));
    expect(drawn.size).toBe(100);
    for (const id of drawn) expect(id).toMatch(/^[0-9a-f]{24}$/);
  });
});

describe('createTree', () => {
  it('builds the tree with versions ["initial"] and created equal to lastUpdated', async () => {
    const store = new ScriptedStore({});
    const created = await createTree({ store, now: fixedNow, newId: ids('aaaaaaaaaaaaaaaaaaaaaaaa'), pause: noPause }, { name: 'n', deviceType: 'd' });
    expect(created).toStrictEqual({
      id: 'aaaaaaaaaaaaaaaaaaaaaaaa',
      name: 'n',
      deviceType: 'd',
      versions: ['initial'],
      created: '2024-05-06T07:08:09.123Z',
      lastUpdated: '2024-05-06T07:08:09.123Z',
    });
    expect(store.created).toEqual([created]);
  });

  it('answers 409 when the name is taken, without trying again', async () => {
    const store = new ScriptedStore({ create: ['name-taken'] });
    await expect(createTree({ store, now: fixedNow, newId: newTreeId, pause: noPause }, { name: 'n', deviceType: 'd' })).rejects.toBeInstanceOf(Conflict);
    expect(store.created).toHaveLength(1);
  });

  it('draws a fresh id when the id is taken', async () => {
    const store = new ScriptedStore({ create: ['id-taken', 'created'] });
    const created = await createTree(
      { store, now: fixedNow, newId: ids('aaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbb'), pause: noPause },
      { name: 'n', deviceType: 'd' },
    );
    expect(created.id).toBe('bbbbbbbbbbbbbbbbbbbbbbbb');
  });

  it('backs off and tries again when transactions contend, then reports the real outcome', async () => {
    const waits: number[] = [];
    const store = new ScriptedStore({ create: ['contended', 'contended', 'name-taken'] });
    const attempt = createTree({ store, now: fixedNow, newId: newTreeId, pause: async (ms) => void waits.push(ms) }, { name: 'n', deviceType: 'd' });
    await expect(attempt).rejects.toBeInstanceOf(Conflict);
    expect(store.created).toHaveLength(3);
    // Exponential with jitter: 40–89 ms, then 80–129 ms.
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(40);
    expect(waits[0]).toBeLessThan(90);
    expect(waits[1]).toBeGreaterThanOrEqual(80);
    expect(waits[1]).toBeLessThan(130);
  });

  it('gives up with 503 after five contended attempts', async () => {
    const store = new ScriptedStore({ create: Array(10).fill('contended') });
    const attempt = createTree({ store, now: fixedNow, newId: newTreeId, pause: noPause }, { name: 'n', deviceType: 'd' });
    await expect(attempt).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(store.created).toHaveLength(5);
  });
});

describe('getTreeSummary', () => {
  it('returns the stored summary', async () => {
    await expect(getTreeSummary(new ScriptedStore({ get: async () => ({ ok: true, tree }) }), tree.id)).resolves.toBe(tree);
  });
  it('answers 404 for an unknown id', async () => {
    await expect(getTreeSummary(new ScriptedStore({}), tree.id)).rejects.toBeInstanceOf(NotFound);
  });
  it('answers 500 carrying the id and problems for the log only', async () => {
    const store = new ScriptedStore({ get: async () => ({ ok: false, id: tree.id, problems: ['versions is missing'] }) });
    const error = await getTreeSummary(store, tree.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).logFields).toEqual({ treeIds: [tree.id], problems: { [tree.id]: ['versions is missing'] } });
    expect(JSON.stringify((error as InternalError).toBody())).not.toContain(tree.id);
  });
  it('answers 503 when the store is unreachable', async () => {
    const store = new ScriptedStore({ get: () => Promise.reject(new StoreUnavailable('get', 'unreachable')) });
    await expect(getTreeSummary(store, tree.id)).rejects.toBeInstanceOf(ServiceUnavailable);
  });
  it('lets any other failure through as is (rendered 500 by the HTTP stack)', async () => {
    const boom = new Error('boom');
    await expect(getTreeSummary(new ScriptedStore({ get: () => Promise.reject(boom) }), tree.id)).rejects.toBe(boom);
  });
});

describe('listTreeSummaries', () => {
  it('passes the decoded cursor to the store and encodes the next key', async () => {
    const store = new ScriptedStore({ page: async () => ({ items: [{ ok: true, tree }], next: { name: 'core', id: tree.id } }) });
    const after = { name: 'ba', id: 'cccccccccccccccccccccccc' };
    const page = await listTreeSummaries(store, { limit: 1, cursor: encodeCursor(after) });
    expect(store.pages).toEqual([{ limit: 1, after }]);
    expect(page.items).toEqual([tree]);
    expect(decodeCursor(page.next!)).toEqual({ name: 'core', id: tree.id });
  });

  it('leaves next out on the last page', async () => {
    const page = await listTreeSummaries(new ScriptedStore({ page: async () => ({ items: [{ ok: true, tree }] }) }), { limit: 5 });
    expect(page).toStrictEqual({ items: [tree] });
  });

  it.each([0, 101, 1.5, Number.NaN])('answers 400 naming limit for %s', async (limit) => {
    const error = await listTreeSummaries(new ScriptedStore({}), { limit }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ in: 'query', field: 'limit' })]);
  });

  it('answers 400 naming cursor when the store refuses the page key', async () => {
    const store = new ScriptedStore({ page: () => Promise.reject(new BadPageKey()) });
    const error = await listTreeSummaries(store, { limit: 5, cursor: encodeCursor({ name: 'x', id: tree.id }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as BadRequest).toBody()['errors']).toEqual([expect.objectContaining({ in: 'query', field: 'cursor' })]);
  });

  it('answers 500 when any tree of the page is damaged', async () => {
    const store = new ScriptedStore({
      page: async () => ({
        items: [
          { ok: true, tree },
          { ok: false, id: 'x', problems: ['name is missing'] },
        ],
      }),
    });
    await expect(listTreeSummaries(store, { limit: 5 })).rejects.toBeInstanceOf(InternalError);
  });
});

describe('seedWith', () => {
  it('tries a contended entry again, and rejects it when contention persists', async () => {
    const outcomes: UpsertOutcome[] = [{ kind: 'contended' }, { kind: 'created' }, { kind: 'contended' }, { kind: 'contended' }, { kind: 'contended' }];
    const upserts: string[] = [];
    const store = {
      upsert: async (t: TreeSummary) => {
        upserts.push(t.id);
        return outcomes.shift() ?? { kind: 'created' as const };
      },
    };
    const second = { ...tree, id: 'bbbbbbbbbbbbbbbbbbbbbbbb', name: 'other' };
    const report = await seedWith(store, { trees: [tree, second] });
    expect(upserts).toEqual([tree.id, tree.id, second.id, second.id, second.id]);
    expect(report.written).toEqual([{ index: 0, id: tree.id, name: 'core', action: 'created' }]);
    expect(report.rejected).toEqual([{ index: 1, id: second.id, name: 'other', reasons: [expect.stringContaining('try again')] }]);
  });

  it('keeps the first entry of an id or a name used twice in one file', async () => {
    const store = { upsert: async () => ({ kind: 'created' as const }) };
    const report = await seedWith(store, {
      trees: [tree, { ...tree, name: 'renamed' }, { ...tree, id: 'dddddddddddddddddddddddd' }],
    });
    expect(report.written.map((w) => w.index)).toEqual([0]);
    expect(report.rejected).toEqual([
      { index: 1, id: tree.id, name: 'renamed', reasons: ['id is also used by entry 0 of this file'] },
      { index: 2, id: 'dddddddddddddddddddddddd', name: 'core', reasons: ['name is also used by entry 0 of this file'] },
    ]);
  });
});
