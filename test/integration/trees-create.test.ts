import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

const COLLECTION = '/configuration_manager/configs';
let table: string;
let create: Parameters<typeof invoke>[0];
let get: Parameters<typeof invoke>[0];

const post = (body: unknown, headers?: Record<string, string>) =>
  invoke(create, apiEvent({ method: 'POST', resource: COLLECTION, body, ...(headers ? { headers } : {}) }));
const read = (treeId: string) => invoke(get, apiEvent({ method: 'GET', resource: `${COLLECTION}/{treeId}`, pathParameters: { treeId } }));

/** Every item of the table whose key starts with `prefix`, read consistently. */
const itemsWith = async (prefix: string) => {
  const out = await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return (out.Items ?? []).filter((i) => String(i['pk']).startsWith(prefix));
};

beforeAll(async () => {
  table = (await createTables()).trees;
  ({ handler: create } = await import('../../functions/trees/handlers/create.js'));
  ({ handler: get } = await import('../../functions/trees/handlers/get.js'));
});

describe('POST /configuration_manager/configs', () => {
  it('answers 201 with the new summary and a Location that GET serves', async () => {
    const before = Date.now();
    const res = await post({ name: 'core-router-baseline', deviceType: 'cisco-ios-xr', description: 'IS-IS and BGP' });
    expect(res.status).toBe(201);
    expect(res.contentType).toBe('application/json');
    const tree = res.body;
    expect(Object.keys(tree).sort()).toEqual(['created', 'description', 'deviceType', 'id', 'lastUpdated', 'name', 'versions']);
    expect(tree.id).toMatch(/^[0-9a-f]{24}$/);
    expect(tree).toMatchObject({ name: 'core-router-baseline', deviceType: 'cisco-ios-xr', description: 'IS-IS and BGP', versions: ['initial'] });
    expect(tree.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(tree.lastUpdated).toBe(tree.created);
    expect(Date.parse(tree.created)).toBeGreaterThanOrEqual(before - 1);
    expect(res.headers['Location']).toBe(`/v1/configuration_manager/configs/${tree.id}`);

    const fetched = await read(tree.id);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toStrictEqual(tree);
  });

  it('builds Location from the path the client addressed, so it resolves behind a stage or a custom domain', async () => {
    const { treeLocation } = await import('../../functions/trees/handlers/create.js');
    const id = 'a'.repeat(24);
    expect(treeLocation(id, '/v1/configuration_manager/configs')).toBe(`/v1/configuration_manager/configs/${id}`);
    expect(treeLocation(id, '/netconfig/configuration_manager/configs/')).toBe(`/netconfig/configuration_manager/configs/${id}`);
    expect(treeLocation(id, undefined)).toBe(`/configuration_manager/configs/${id}`);
    expect(treeLocation(id, '/elsewhere')).toBe(`/configuration_manager/configs/${id}`);
  });

  it('leaves description out when none is given, and draws a different id for every tree', async () => {
    const a = await post({ name: 'leaf-a', deviceType: 'arista-eos' });
    const b = await post({ name: 'leaf-b', deviceType: 'arista-eos' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body).not.toHaveProperty('description');
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('answers 409 problem+json when a tree already has the name, and keeps the first tree', async () => {
    const first = await post({ name: 'edge-firewall', deviceType: 'juniper-junos' });
    expect(first.status).toBe(201);
    const second = await post({ name: 'edge-firewall', deviceType: 'cisco-asa' });
    expect(second.status).toBe(409);
    expect(second.contentType).toBe('application/problem+json');
    expect(second.body).toMatchObject({ status: 409, type: 'urn:netconfig:problem:tree-name-taken' });
    expect(second.body.detail).toContain('edge-firewall');
    const trees = (await itemsWith('TREE#')).filter((i) => i['name'] === 'edge-firewall');
    expect(trees).toHaveLength(1);
    expect(trees[0]?.['deviceType']).toBe('juniper-junos');
  });

  it('treats names as case-sensitive', async () => {
    expect((await post({ name: 'Branch', deviceType: 'cisco-ios' })).status).toBe(201);
    expect((await post({ name: 'branch', deviceType: 'cisco-ios' })).status).toBe(201);
  });

  it('leaves exactly one tree when ten creates of one name race', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => post({ name: 'raced-name', deviceType: `type-${i}` })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 201)?.body;
    const trees = (await itemsWith('TREE#')).filter((i) => i['name'] === 'raced-name');
    expect(trees).toHaveLength(1);
    expect(trees[0]?.['id']).toBe(winner.id);
    const locks = await itemsWith('NAME#raced-name');
    expect(locks).toEqual([{ pk: 'NAME#raced-name', treeId: winner.id }]);
  });

  it.each([
    ['name missing', { deviceType: 'x' }, 'name', 'is required'],
    ['deviceType missing', { name: 'x' }, 'deviceType', 'is required'],
    ['name empty', { name: '', deviceType: 'x' }, 'name', undefined],
    ['deviceType empty', { name: 'x', deviceType: '' }, 'deviceType', undefined],
    ['name a number', { name: 5, deviceType: 'x' }, 'name', 'must be string'],
    ['name with a leading space', { name: ' core', deviceType: 'x' }, 'name', undefined],
    ['name with a newline', { name: 'core\nrouter', deviceType: 'x' }, 'name', undefined],
    ['name of 129 characters', { name: 'n'.repeat(129), deviceType: 'x' }, 'name', undefined],
    ['deviceType of 129 characters', { name: 'x', deviceType: 'd'.repeat(129) }, 'deviceType', undefined],
    ['description of 1025 characters', { name: 'x', deviceType: 'y', description: 'd'.repeat(1025) }, 'description', undefined],
    ['description null', { name: 'x', deviceType: 'y', description: null }, 'description', 'must be string'],
    ['an unknown property', { name: 'x', deviceType: 'y', versions: ['9'] }, 'versions', 'is not allowed'],
    ['an id given by the client', { name: 'x', deviceType: 'y', id: 'a'.repeat(24) }, 'id', 'is not allowed'],
  ])('answers 400 naming the field for %s', async (_, body, field, message) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.errors).toContainEqual(expect.objectContaining({ in: 'body', field, ...(message ? { message } : {}) }));
  });

  it('accepts a name of exactly 128 characters, counted as characters, not bytes', async () => {
    const name = `${'é'.repeat(127)}🛰`;
    const res = await post({ name, deviceType: 'cisco-ios' });
    expect(res.status).toBe(201);
    expect((await read(res.body.id)).body.name).toBe(name);
  });

  it('answers 400 when there is no body at all, and writes nothing for any 400', async () => {
    const before = (await itemsWith('')).length;
    const res = await post(undefined);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ in: 'body', field: '', message: 'is required' });
    expect((await post({ name: 'x' })).status).toBe(400);
    expect((await itemsWith('')).length).toBe(before);
  });
});
