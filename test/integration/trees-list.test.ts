import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { encodeCursor } from '../../functions/trees/cursor.js';
import type { TreeSummary } from '../../functions/trees/model.js';
import { seedTrees } from '../../functions/trees/seed.js';
import { nameLockItem, treeItem } from '../../functions/trees/store.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { captureStdout } from '../support/stdout.js';

const COLLECTION = '/configuration_manager/configs';
let table: string;
let list: Parameters<typeof invoke>[0];

const page = (query?: Record<string, string>, body?: unknown) =>
  invoke(list, apiEvent({ method: 'GET', resource: COLLECTION, ...(query ? { query } : {}), body }));

// Deliberately not in name order, and more than one page at the default size would hold.
const NAMES = ['wan-edge', 'access-a', 'Core', 'core', 'dc-leaf', 'access-b', 'branch', 'zz-lab', 'mpls-pe', 'access-c', 'ñandú'];
const trees: TreeSummary[] = NAMES.map((name, i) => ({
  id: `${String(i + 1).padStart(2, '0')}${'ab'.repeat(11)}`,
  name,
  deviceType: i % 2 ? 'cisco-ios' : 'juniper-junos',
  versions: i % 3 ? ['initial', 'draft', '1', 'draft'] : ['initial'],
  created: `2020-03-${String(i + 1).padStart(2, '0')}T10:00:00.${String(i * 7).padStart(3, '0')}Z`,
  lastUpdated: `2021-03-${String(i + 1).padStart(2, '0')}T10:00:00.${String(i * 9).padStart(3, '0')}Z`,
  ...(i % 4 === 0 ? { description: `tree number ${i}` } : {}),
}));
// DynamoDB orders string sort keys by their UTF-8 bytes: uppercase before lowercase, ASCII before ñ.
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const sorted = [...trees].sort((a, b) => byteOrder(a.name, b.name));

/** Follows `next` from the first page to the last, with a bound on the number of pages. */
const walk = async (limit: number) => {
  const pages: { items: TreeSummary[]; next?: string }[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const res = await page({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    pages.push(res.body);
    cursor = res.body.next;
    if (cursor === undefined) break;
  }
  return pages;
};

beforeAll(async () => {
  table = (await createTables()).trees;
  ({ handler: list } = await import('../../functions/trees/handlers/list.js'));
  const report = await seedTrees(documentClient, table, { trees });
  expect(report.rejected).toEqual([]);
});

describe('GET /configuration_manager/configs', () => {
  it('returns every summary sorted by name on one page at the default limit, with no next', async () => {
    const res = await page();
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(Object.keys(res.body)).toEqual(['items']);
    expect(res.body.items).toStrictEqual(sorted);
  });

  it('never returns name locks or key attributes', async () => {
    const res = await page();
    for (const item of res.body.items) {
      expect(item).not.toHaveProperty('pk');
      expect(item).not.toHaveProperty('kind');
      expect(item).not.toHaveProperty('treeId');
    }
  });

  it.each([1, 3, 4, 10, 11])('pages through every tree exactly once in name order with limit %i', async (limit) => {
    const pages = await walk(limit);
    expect(pages).toHaveLength(Math.ceil(trees.length / limit));
    for (const p of pages.slice(0, -1)) {
      expect(p.items).toHaveLength(limit);
      expect(p.next).toEqual(expect.any(String));
    }
    expect(pages.at(-1)).not.toHaveProperty('next');
    expect(pages.flatMap((p) => p.items)).toStrictEqual(sorted);
  });

  it('accepts limit 100 and answers with all trees', async () => {
    const res = await page({ limit: '100' });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(trees.length);
  });

  it('continues after a cursor whose tree was renamed or removed since', async () => {
    const cursor = encodeCursor({ name: 'core~', id: 'ffffffffffffffffffffffff' });
    const res = await page({ cursor, limit: '2' });
    expect(res.status).toBe(200);
    expect(res.body.items.map((t: TreeSummary) => t.name)).toEqual(
      sorted
        .filter((t) => byteOrder(t.name, 'core~') > 0)
        .slice(0, 2)
        .map((t) => t.name),
    );
  });

  it.each(['0', '101', '-1', '1.5', 'abc', '', '050', ' 5', '1e2', '99999999999999999999'])('answers 400 naming limit for limit=%j', async (limit) => {
    const res = await page({ limit });
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.errors).toContainEqual(expect.objectContaining({ in: 'query', field: 'limit' }));
  });

  const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  it.each([
    ['garbage', 'not a cursor!'],
    ['an empty string', ''],
    ['base64 of plain text', Buffer.from('hello world').toString('base64url')],
    ['base64 of a JSON array', cursorOf([1, 'a', 'b'])],
    ['a wrong version', cursorOf({ v: 2, n: 'core', i: '0'.repeat(24) })],
    ['an id that is not 24 hex', cursorOf({ v: 1, n: 'core', i: 'TREE#x' })],
    ['an injected key attribute', cursorOf({ v: 1, n: 'core', i: '0'.repeat(24), pk: 'NAME#core' })],
    ['a name of the wrong type', cursorOf({ v: 1, n: 5, i: '0'.repeat(24) })],
    ['non-canonical base64', `${encodeCursor({ name: 'core', id: '0'.repeat(24) })}A`],
    ['an over-long token', 'A'.repeat(5000)],
    ['standard base64 with padding', Buffer.from(JSON.stringify({ v: 1, n: 'core?', i: '0'.repeat(24) })).toString('base64')],
  ])('answers 400 naming cursor for %s, never 500', async (_, cursor) => {
    const res = await page({ cursor });
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.errors).toContainEqual(expect.objectContaining({ in: 'query', field: 'cursor' }));
  });

  it('answers 400 naming an unknown query parameter', async () => {
    const res = await page({ page: '2' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ in: 'query', field: 'page', message: 'is not allowed' });
  });

  it('answers 400 when the request has a body with any property', async () => {
    const res = await page(undefined, { limit: 5 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ in: 'body', field: 'limit', message: 'is not allowed' });
  });
});

describe('GET /configuration_manager/configs with a damaged tree', () => {
  it('answers 500 without internals rather than return a partial list', async () => {
    const broken = { ...treeItem({ ...trees[0]!, id: 'eeeeeeeeeeeeeeeeeeeeeeee', name: 'AAA-broken' }), versions: 'initial' };
    await documentClient.send(new PutCommand({ TableName: table, Item: broken }));
    await documentClient.send(new PutCommand({ TableName: table, Item: nameLockItem('AAA-broken', 'eeeeeeeeeeeeeeeeeeeeeeee') }));
    const out = captureStdout();
    const res = await page({ limit: '2' });
    out.restore();
    expect(res.status).toBe(500);
    expect(out.entries()).toContainEqual(expect.objectContaining({ level: 'error', message: 'damaged tree item', treeIds: ['eeeeeeeeeeeeeeeeeeeeeeee'] }));
    expect(res.contentType).toBe('application/problem+json');
    expect(JSON.stringify(res.body)).not.toMatch(/eeeeeeee|versions|AAA-broken/);
    // Pages that do not hold it are still served.
    const later = await page({ cursor: encodeCursor({ name: 'AAA-broken', id: 'eeeeeeeeeeeeeeeeeeeeeeee' }) });
    expect(later.status).toBe(200);
    expect(later.body.items).toStrictEqual(sorted);
  });
});
