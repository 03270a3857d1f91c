/**
 * The batch list on DynamoDB Local: the sparse `byList` index (newest first, filtered, bounded
 * pages) and, for one plan, the plan's trend partition.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { listBatches, queryTime } from '../../functions/compliance/history-read.js';
import { encodeCursor } from '../../functions/platform/cursor.js';
import { HistoryStore, type BatchFilter } from '../../functions/compliance/history-store.js';
import { ComplianceStore, type NewBatch } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { createTables } from '../../tools/local/table-copies.js';

let store: ComplianceStore;
let history: HistoryStore;
const PLAN = 'bbbbbbbbbbbbbbbbbbbbbbb1';
const TREE_A = 'a0000000000000000000000a';
const TREE_B = 'b0000000000000000000000b';
const id = (n: number) => n.toString(16).padStart(24, '0');
const at = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString();

/** Twelve batches, one a day: every third of a plan, tree A for even days, two adapters, every fourth a backup. */
const batches: NewBatch[] = Array.from({ length: 12 }, (_, n) => ({
  batchId: id(n + 1),
  ...(n % 4 === 3 ? { kind: 'backup' as const } : { treeId: n % 2 === 0 ? TREE_A : TREE_B, version: 'v1' }),
  ...(n % 3 === 0 && n % 4 !== 3 ? { planId: PLAN } : {}),
  adapterId: n < 6 ? 'east' : 'west',
  total: 1,
  started: at(n),
  chunks: 1,
  concurrency: 1,
  expiresAt: 2_000_000_000,
}));

/** Every batch a filter lists, walking its pages. */
const all = async (filter: BatchFilter, limit: number): Promise<{ ids: string[]; pages: number }> => {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await listBatches(history, filter, { limit, ...(cursor ? { cursor } : {}) });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((b) => b.batchId));
    cursor = page.next;
    pages++;
  } while (cursor);
  return { ids, pages };
};

const expected = (keep: (b: NewBatch, n: number) => boolean) =>
  batches
    .filter(keep)
    .map((b) => b.batchId)
    .reverse();

beforeAll(async () => {
  const table = (await createTables())['compliance'];
  store = new ComplianceStore(documentClient, table);
  history = new HistoryStore(documentClient, table, store);
  for (const b of batches) await store.create(b, undefined, [[{ device: 'r1' }]]);
  // Batches 7 (of the plan) and 6 ended.
  await store.finish(id(7), 'completed', at(7));
  await store.finish(id(6), 'failed', at(6), undefined, 'test');
  // A batch item as an earlier release stored it: no `list` attribute, never listed.
  await documentClient.send(
    new PutCommand({ TableName: table, Item: { pk: `B#${id(99)}`, sk: 'META', batchId: id(99), adapterId: 'east', status: 'completed', started: at(5) } }),
  );
});

describe('the batch list', () => {
  it('lists every batch newest first, a page at a time, without batches stored before the list', async () => {
    const { ids, pages } = await all({}, 5);
    expect(ids).toEqual(expected(() => true));
    expect(pages).toBe(3);
  });

  it.each<[string, BatchFilter, (b: NewBatch, n: number) => boolean]>([
    ['tree', { treeId: TREE_A }, (b) => b.treeId === TREE_A],
    ['adapter', { adapterId: 'west' }, (b) => b.adapterId === 'west'],
    ['status', { status: 'running' }, (b) => b.batchId !== id(7) && b.batchId !== id(6)],
    ['kind backup', { kind: 'backup' }, (b) => b.kind === 'backup'],
    ['kind compliance', { kind: 'compliance' }, (b) => b.kind !== 'backup'],
    ['time range', { from: at(2), to: at(5) }, (_b, n) => n >= 2 && n <= 5],
    ['plan', { planId: PLAN }, (b) => b.planId === PLAN],
    ['plan and status', { planId: PLAN, status: 'completed' }, (b) => b.planId === PLAN && b.batchId === id(7)],
    ['plan and time', { planId: PLAN, from: at(1), to: at(9) }, (b, n) => b.planId === PLAN && n >= 1 && n <= 9],
    ['tree, adapter and status', { treeId: TREE_B, adapterId: 'east', status: 'failed' }, (b) => b.batchId === id(6)],
  ])('filters by %s, newest first, over bounded pages', async (_name, filter, keep) => {
    const want = expected(keep);
    expect(want.length).toBeGreaterThan(0);
    for (const limit of [1, 2, 50]) expect((await all(filter, limit)).ids).toEqual(want);
  });

  it('shows each batch as its own route does', async () => {
    const page = await listBatches(history, { status: 'failed' }, { limit: 10 });
    expect(page.items).toEqual([await store.getBatch(id(6))]);
  });

  it('refuses a cursor used with other filters', async () => {
    const page = await listBatches(history, { adapterId: 'east' }, { limit: 1 });
    await expect(listBatches(history, { adapterId: 'west' }, { limit: 1, cursor: page.next! })).rejects.toMatchObject({ status: 400 });
  });

  it('takes a cursor back whatever order the query string gave the same filters', async () => {
    const orders: BatchFilter[] = [
      { adapterId: 'east', kind: 'compliance' },
      { kind: 'compliance', adapterId: 'east' },
    ];
    const ids: string[] = [];
    let cursor: string | undefined;
    let turn = 0;
    do {
      const page = await listBatches(history, orders[turn++ % 2]!, { limit: 1, ...(cursor ? { cursor } : {}) });
      ids.push(...page.items.map((b) => b.batchId));
      cursor = page.next;
    } while (cursor);
    expect(ids).toEqual(expected((b) => b.adapterId === 'east' && b.kind !== 'backup'));
  });

  it('refuses, as a 400, a cursor whose key lies outside the time range it claims', async () => {
    const filter = { from: at(2), to: at(5) };
    const page = await listBatches(history, filter, { limit: 1 });
    const { s } = JSON.parse(Buffer.from(page.next!, 'base64url').toString('utf8')) as { s: string };
    // Same scope (the digest of the filters is no secret), a key of another day.
    const forged = encodeCursor({ s, k: `${at(9)}#${id(10)}` });
    await expect(listBatches(history, filter, { limit: 1, cursor: forged })).rejects.toMatchObject({ status: 400 });
  });

  it('reads a date-only `to` as the whole of that day', async () => {
    const day = at(4).slice(0, 10);
    const later = { ...batches[0]!, batchId: id(50), started: `${day}T03:00:00.000Z` };
    await store.create(later, undefined, [[{ device: 'r1' }]]);
    const { ids } = await all({ from: queryTime(day, 'from')!, to: queryTime(day, 'to')! }, 10);
    expect(ids).toEqual([id(50), id(5)]);
  });
});
