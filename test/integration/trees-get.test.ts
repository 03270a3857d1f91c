import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import type { TreeSummary } from '../../functions/trees/model.js';
import { seedTrees } from '../../functions/trees/seed.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { captureStdout } from '../support/stdout.js';

const RESOURCE = '/configuration_manager/configs/{treeId}';
let table: string;
let handler: Parameters<typeof invoke>[0];

const get = (treeId: string, body?: unknown) => invoke(handler, apiEvent({ method: 'GET', resource: RESOURCE, pathParameters: { treeId }, body }));

const drafty: TreeSummary = {
  id: '5cb0a3b7e1c4f20012a9d3e1',
  name: 'access-switch-standard',
  deviceType: 'cisco-ios',
  versions: ['initial', 'draft', '1', '2', 'draft'],
  created: '2019-04-12T14:42:47.958Z',
  lastUpdated: '2019-06-03T09:15:02.004Z',
  description: 'Campus access baseline',
};
const plain: TreeSummary = {
  id: '00000000000000000000000a',
  name: 'edge',
  deviceType: 'juniper-junos',
  versions: ['initial'],
  created: '2020-02-28T23:59:59.999Z',
  lastUpdated: '2020-02-28T23:59:59.999Z',
};

/** A well-formed stored tree item, to damage one attribute at a time. */
const item = (id: string, changes: Record<string, unknown> = {}): Record<string, unknown> => ({
  pk: `TREE#${id}`,
  kind: 'tree',
  id,
  name: `damaged-${id}`,
  deviceType: 'cisco-ios',
  versions: ['initial'],
  created: '2021-01-01T00:00:00.000Z',
  lastUpdated: '2021-01-01T00:00:00.000Z',
  ...changes,
});

beforeAll(async () => {
  table = (await createTables()).trees;
  ({ handler } = await import('../../functions/trees/handlers/get.js'));
  const report = await seedTrees(documentClient, table, { trees: [drafty, plain] });
  expect(report.rejected).toEqual([]);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('GET /configuration_manager/configs/{treeId}', () => {
  it('returns the summary exactly as stored: repeated labels in order, millisecond timestamps', async () => {
    const res = await get(drafty.id);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(res.body).toStrictEqual(drafty);
    expect(res.body.versions).toStrictEqual(['initial', 'draft', '1', '2', 'draft']);
  });

  it('leaves description out when the tree has none, and never returns key attributes', async () => {
    const res = await get(plain.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['created', 'deviceType', 'id', 'lastUpdated', 'name', 'versions']);
    expect(res.body).toStrictEqual(plain);
  });

  it('accepts an absent body and an empty object body', async () => {
    expect((await get(drafty.id, {})).status).toBe(200);
    expect((await get(drafty.id, '')).status).toBe(200);
  });

  it('answers 404 problem+json for an id no tree has', async () => {
    const res = await get('ffffffffffffffffffffffff');
    expect(res.status).toBe(404);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status: 404, type: 'urn:netconfig:problem:not-found', title: 'Not Found' });
    expect(res.body.detail).toContain('ffffffffffffffffffffffff');
  });

  it.each([
    ['uppercase hex', '5CB0A3B7E1C4F20012A9D3E1'],
    ['23 characters', '5cb0a3b7e1c4f20012a9d3e'],
    ['25 characters', '5cb0a3b7e1c4f20012a9d3e10'],
    ['non-hex letters', 'zzzzzzzzzzzzzzzzzzzzzzzz'],
    ['a name', 'access-switch-standard'],
    ['a space inside', '5cb0a3b7e1c4 20012a9d3e1'],
  ])('answers 400 naming treeId when it is %s', async (_, treeId) => {
    const res = await get(treeId);
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.errors).toContainEqual(expect.objectContaining({ in: 'path', field: 'treeId' }));
    expect(res.body.detail).toContain('treeId');
  });

  it('answers 400 naming the property when the body has any', async () => {
    const res = await get(drafty.id, { fields: ['name'] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ in: 'body', field: 'fields', message: 'is not allowed' });
  });

  describe('a damaged stored item', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['versions missing', { versions: undefined }],
      ['versions not a list', { versions: 'initial,draft' }],
      ['a version label not a string', { versions: ['initial', 2] }],
      ['name missing', { name: undefined }],
      ['deviceType a number', { deviceType: 7 }],
      ['created without milliseconds', { created: '2021-01-01T00:00:00Z' }],
      ['lastUpdated not UTC', { lastUpdated: '2021-01-01T00:00:00.000+02:00' }],
      ['description not a string', { description: 42 }],
      ['id not matching its key', { id: 'abcdefabcdefabcdefabcdef' }],
      ['kind missing', { kind: undefined }],
    ];

    it.each(cases.map(([what, changes], i) => [what, changes, `d${String(i).padStart(23, '0')}`] as const))(
      'answers 500 problem+json without internals and logs the tree id when %s',
      async (_, changes, id) => {
        const damaged = Object.fromEntries(Object.entries(item(id, changes)).filter(([, v]) => v !== undefined));
        await documentClient.send(new PutCommand({ TableName: table, Item: damaged }));
        const out = captureStdout();
        const res = await get(id);
        out.restore();
        expect(res.status).toBe(500);
        expect(res.contentType).toBe('application/problem+json');
        expect(res.body).toMatchObject({ status: 500, type: 'urn:netconfig:problem:internal' });
        const text = JSON.stringify(res.body);
        expect(text).not.toContain(id);
        expect(text).not.toMatch(/versions|deviceType|TREE#|kind|Dynamo|Exception|stack/i);
        const logged = out.entries().find((l) => l['message'] === 'damaged tree item');
        expect(logged).toBeDefined();
        expect(logged?.['level']).toBe('error');
        expect(logged?.['treeIds']).toEqual([id]);
        expect(logged?.['correlationId']).toBe(res.body.requestId);
      },
    );
  });
});
