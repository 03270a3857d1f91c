import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { inheritedRules, type Node, type Rule } from '../../functions/trees/config-model.js';
import { CONFIG_LIMITS } from '../../functions/trees/config-checks.js';
import { seedTrees } from '../../functions/trees/seed.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { misplacedFields } from '../support/fuzz.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = Parameters<typeof invoke>[0];
const CONFIGS = '/configuration_manager/configs';
let table: string;
const h: Record<string, Handler> = {};

const call = (name: string, method: string, resource: string, pathParameters: Record<string, string>, body?: unknown, principal = 'alice') =>
  invoke(
    h[name] as Handler,
    apiEvent({ method, resource, pathParameters, ...(body !== undefined ? { body } : {}), authorizer: { principalId: principal, principal, roles: 'admin' } }),
  );

const VERSION = `${CONFIGS}/{treeId}/{version}`;
const NODE = `${VERSION}/nodes/{nodePath+}`;
const newTree = async (name: string) => {
  const res = await invoke(h['createTree'] as Handler, apiEvent({ method: 'POST', resource: CONFIGS, body: { name, deviceType: 'cisco-ios' } }));
  expect(res.status).toBe(201);
  return res.body.id as string;
};
const summary = (treeId: string) => call('getTree', 'GET', `${CONFIGS}/{treeId}`, { treeId });
const copy = (treeId: string, name: string, base: string) => call('createVersion', 'POST', `${CONFIGS}/{treeId}`, { treeId }, { name, base });
const getVersion = (treeId: string, version: string) => call('getVersion', 'GET', VERSION, { treeId, version });
const putVersion = (treeId: string, version: string, body: unknown) => call('updateVersion', 'PUT', VERSION, { treeId, version }, body);
const deleteVersion = (treeId: string, version: string) => call('deleteVersion', 'DELETE', VERSION, { treeId, version });
const putNode = (treeId: string, version: string, nodePath: string, body: unknown, principal?: string) =>
  call('putNode', 'PUT', NODE, { treeId, version, nodePath }, body, principal);
const getNode = (treeId: string, version: string, nodePath: string) => call('getNode', 'GET', NODE, { treeId, version, nodePath });
const deleteNode = (treeId: string, version: string, nodePath: string) => call('deleteNode', 'DELETE', NODE, { treeId, version, nodePath });
const exportTree = (treeId: string) => call('exportTree', 'GET', '/configuration_manager/exports/{treeId}', { treeId });
const importTree = (body: unknown) => call('importTree', 'POST', '/configuration_manager/imports', {}, body);
const deleteTree = (treeId: string) => call('deleteTree', 'DELETE', `${CONFIGS}/{treeId}`, { treeId });

const rule = (id: string, extra: Partial<Rule> = {}): Rule => ({ id, path: `/${id}`, mode: 'required', severity: 'error', ...extra });

beforeAll(async () => {
  table = (await createTables()).trees;
  // After createTables: the functions read TREES_TABLE when loaded.
  const loaded: Record<string, Promise<{ handler: Handler }>> = {
    createTree: import('../../functions/trees/handlers/create.js'),
    getTree: import('../../functions/trees/handlers/get.js'),
    createVersion: import('../../functions/trees/handlers/version-create.js'),
    getVersion: import('../../functions/trees/handlers/version-get.js'),
    updateVersion: import('../../functions/trees/handlers/version-update.js'),
    deleteVersion: import('../../functions/trees/handlers/version-delete.js'),
    putNode: import('../../functions/trees/handlers/node-put.js'),
    getNode: import('../../functions/trees/handlers/node-get.js'),
    deleteNode: import('../../functions/trees/handlers/node-delete.js'),
    exportTree: import('../../functions/trees/handlers/export.js'),
    importTree: import('../../functions/trees/handlers/import.js'),
    deleteTree: import('../../functions/trees/handlers/delete.js'),
  };
  for (const [name, module] of Object.entries(loaded)) h[name] = (await module).handler;
});

describe('versions', () => {
  it('serves a new tree’s initial version as an empty base', async () => {
    const treeId = await newTree('v-empty');
    const res = await getVersion(treeId, 'initial');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      treeId,
      name: 'initial',
      address: 'initial',
      variables: {},
      root: { name: 'base', devices: [], rules: [], children: [] },
    });
  });

  it('copies a version deeply: nodes, rules, devices and variables; later changes to either stay apart', async () => {
    const treeId = await newTree('v-copy');
    expect((await putVersion(treeId, 'initial', { variables: { ntp1: '10.0.0.1' } })).status).toBe(200);
    expect((await putNode(treeId, 'initial', 'base', { rules: [rule('ntp', { value: [{ name: '{{ntp1}}' }] })] })).status).toBe(200);
    expect((await putNode(treeId, 'initial', 'base/wan', { devices: ['pe1'], rules: [rule('bgp')] })).status).toBe(201);
    const before = (await summary(treeId)).body.lastUpdated as string;

    const res = await copy(treeId, 'v2', 'initial');
    expect(res.status).toBe(201);
    expect(res.headers['Location']).toBe(`/v1${CONFIGS}/${treeId}/v2`);
    expect(res.body).toMatchObject({ name: 'v2', variables: { ntp1: '10.0.0.1' }, createdBy: 'alice', lastUpdatedBy: 'alice' });
    const original = (await getVersion(treeId, 'initial')).body;
    expect(res.body.root).toEqual(original.root);

    await putNode(treeId, 'v2', 'base/wan', { devices: ['pe2'] });
    await putVersion(treeId, 'v2', { variables: { ntp1: '10.0.0.9' } });
    expect((await getNode(treeId, 'initial', 'base/wan')).body.devices).toEqual(['pe1']);
    expect((await getVersion(treeId, 'initial')).body.variables).toEqual({ ntp1: '10.0.0.1' });

    const tree = (await summary(treeId)).body;
    expect(tree.versions).toEqual(['initial', 'v2']);
    expect(tree.lastUpdated > before).toBe(true);
    expect(Object.keys(tree).sort()).toEqual(['created', 'deviceType', 'id', 'lastUpdated', 'name', 'versions']);
  });

  it('answers 409 for an existing label, 404 for an unknown tree or base, 400 for a bad label', async () => {
    const treeId = await newTree('v-statuses');
    expect((await copy(treeId, 'initial', 'initial')).status).toBe(409);
    expect((await copy(treeId, 'v2', 'nope')).status).toBe(404);
    expect((await copy('0'.repeat(24), 'v2', 'initial')).status).toBe(404);
    const bad = await copy(treeId, 'a/b', 'initial');
    expect(bad.status).toBe(400);
    expect(bad.contentType).toBe('application/problem+json');
    expect((await copy(treeId, 'x~2', 'initial')).status).toBe(400);
    expect((await getVersion(treeId, 'nope')).status).toBe(404);
  });

  it('renames (409 on a clash) and refuses variables a rule still needs', async () => {
    const treeId = await newTree('v-rename');
    await copy(treeId, 'v2', 'initial');
    expect((await putVersion(treeId, 'v2', { name: 'initial' })).status).toBe(409);
    const renamed = await putVersion(treeId, 'v2', { name: 'v3' });
    expect(renamed.status).toBe(200);
    expect((await summary(treeId)).body.versions).toEqual(['initial', 'v3']);
    expect((await getVersion(treeId, 'v2')).status).toBe(404);

    await putVersion(treeId, 'v3', { variables: { snmp: 'c0mmunity' } });
    await putNode(treeId, 'v3', 'base', { rules: [rule('snmp', { value: '{{snmp}}' })] });
    const refused = await putVersion(treeId, 'v3', { variables: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('snmp');
    expect((await getVersion(treeId, 'v3')).body.variables).toEqual({ snmp: 'c0mmunity' });
    expect((await putVersion(treeId, 'v3', {})).status).toBe(400);
  });

  it('deletes a version, but never the last (409), and deletes whole trees (204, then 404)', async () => {
    const treeId = await newTree('v-delete');
    await copy(treeId, 'v2', 'initial');
    await putNode(treeId, 'v2', 'base', { devices: ['ce0'] });
    expect((await deleteVersion(treeId, 'v2')).status).toBe(204);
    expect((await deleteVersion(treeId, 'v2')).status).toBe(404);
    const last = await deleteVersion(treeId, 'initial');
    expect(last.status).toBe(409);
    expect((await summary(treeId)).body.versions).toEqual(['initial']);

    expect((await deleteTree(treeId)).status).toBe(204);
    expect((await summary(treeId)).status).toBe(404);
    expect((await deleteTree(treeId)).status).toBe(404);
    // The name is free again, and no item of the tree is left.
    await newTree('v-delete');
    const items = await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    expect((items.Items ?? []).filter((i) => String(i['pk']).includes(treeId))).toEqual([]);
  });

  it('seeds versions with nodes, rules and variables, and rejects a seeded version that breaks a rule', async () => {
    const id = 'abcdefabcdefabcdef000001';
    const root = { name: 'base', rules: [rule('ntp', { value: [{ name: '{{ntp1}}' }] })], children: [{ name: 'wan', devices: ['pe0'] }] };
    const at = '2020-01-01T00:00:00.000Z';
    const report = await seedTrees(documentClient, table, {
      trees: [
        {
          id,
          name: 'seeded-content',
          deviceType: 'cisco-ios',
          versions: ['initial', { name: '1', variables: { ntp1: '10.0.0.1' }, root }],
          created: at,
          lastUpdated: at,
        },
        { id: 'abcdefabcdefabcdef000002', name: 'seeded-bad', deviceType: 'x', versions: [{ name: '1', root }], created: at, lastUpdated: at },
      ],
    });
    expect(report.written.map((w) => w.id)).toEqual([id]);
    expect(report.rejected[0]?.reasons.join()).toContain('ntp1');
    expect((await summary(id)).body.versions).toEqual(['initial', '1']);
    const version = (await getVersion(id, '1')).body;
    expect(version).toMatchObject({
      variables: { ntp1: '10.0.0.1' },
      createdBy: 'seed',
      root: { rules: [{ id: 'ntp' }], children: [{ name: 'wan', devices: ['pe0'], rules: [], children: [] }] },
    });
    // Written to like any other version afterwards.
    expect((await putNode(id, '1', 'base/wan', { devices: ['pe0', 'pe1'] })).status).toBe(200);
  });

  it('reads a version for evaluation: tree false, version absent, or the version', async () => {
    const { readVersion } = await import('../../functions/trees/version-service.js');
    const { DynamoVersionStore } = await import('../../functions/trees/version-store.js');
    const store = new DynamoVersionStore(documentClient, table);
    const treeId = await newTree('v-read');
    await putNode(treeId, 'initial', 'base', { devices: ['ce0'], rules: [rule('r1')] });
    expect(await readVersion(store, '0'.repeat(24), 'initial')).toEqual({ tree: false });
    expect(await readVersion(store, treeId, 'nope')).toEqual({ tree: true });
    const found = await readVersion(store, treeId, 'initial');
    expect(found.version).toMatchObject({ name: 'initial', root: { devices: ['ce0'], rules: [rule('r1')] } });
  });

  it('addresses a repeated seeded label as label, label~2, …', async () => {
    const id = 'abcdefabcdefabcdefabcdef';
    const report = await seedTrees(documentClient, table, {
      trees: [
        {
          id,
          name: 'seeded-repeats',
          deviceType: 'cisco-ios',
          versions: ['initial', 'draft', '1', 'draft'],
          created: '2019-04-12T14:42:47.958Z',
          lastUpdated: '2019-04-12T14:42:47.958Z',
        },
      ],
    });
    expect(report.rejected).toEqual([]);
    await putNode(id, 'draft~2', 'base', { devices: ['second'] });
    expect((await getVersion(id, 'draft')).body).toMatchObject({ name: 'draft', address: 'draft', root: { devices: [] } });
    expect((await getVersion(id, 'draft~2')).body).toMatchObject({ name: 'draft', address: 'draft~2', root: { devices: ['second'] } });
    expect((await getVersion(id, 'draft~3')).status).toBe(404);
    expect((await putVersion(id, 'draft~2', { name: 'draft-b' })).status).toBe(200);
    expect((await summary(id)).body.versions).toEqual(['initial', 'draft', '1', 'draft-b']);
  });
});

describe('nodes', () => {
  it('creates (201), replaces (200) and reads nodes with their children’s names; a left-out field is kept', async () => {
    const treeId = await newTree('n-basic');
    const created = await putNode(treeId, 'initial', 'base/wan', { devices: ['pe1'], rules: [rule('w1')] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ path: 'base/wan', name: 'wan', devices: ['pe1'], rules: [rule('w1')], children: [] });
    expect((await putNode(treeId, 'initial', 'base/wan/pe%20routers', {})).status).toBe(201);
    const replaced = await putNode(treeId, 'initial', 'base/wan', { devices: ['pe1', 'pe2'] });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ path: 'base/wan', name: 'wan', devices: ['pe1', 'pe2'], rules: [rule('w1')], children: ['pe routers'] });
    expect((await getNode(treeId, 'initial', 'base/wan/pe%20routers')).body).toMatchObject({ name: 'pe routers', devices: [], rules: [] });
    expect((await getNode(treeId, 'initial', 'base')).body.children).toEqual(['wan']);
  });

  it('inherits rules from base down to the node, in order', async () => {
    const treeId = await newTree('n-inherit');
    await putNode(treeId, 'initial', 'base', { rules: [rule('b1'), rule('b2')] });
    await putNode(treeId, 'initial', 'base/wan', { rules: [rule('w1')] });
    await putNode(treeId, 'initial', 'base/wan/pe', { devices: ['pe1'], rules: [rule('p1')] });
    await putNode(treeId, 'initial', 'base/lan', { rules: [rule('l1')] });
    const version = (await getVersion(treeId, 'initial')).body as { root: Node };
    expect(inheritedRules(version.root, 'base/wan/pe')?.map((r) => r.id)).toEqual(['b1', 'b2', 'w1', 'p1']);
    expect(inheritedRules(version.root, 'base/lan')?.map((r) => r.id)).toEqual(['b1', 'b2', 'l1']);
  });

  it('refuses a rule id its path repeats, an unknown variable, a bad pointer (400) and a device on another node (409)', async () => {
    const treeId = await newTree('n-refusals');
    await putNode(treeId, 'initial', 'base', { devices: ['ce0'], rules: [rule('ntp')] });
    await putNode(treeId, 'initial', 'base/wan', {});
    const repeated = await putNode(treeId, 'initial', 'base/wan/pe', { rules: [rule('ntp')] });
    expect(repeated.status).toBe(400);
    expect(repeated.body.errors[0]).toMatchObject({ field: 'rules.0.id' });
    // A sibling subtree may reuse an id: no root-to-node path holds both.
    await putNode(treeId, 'initial', 'base/lan', { rules: [rule('x')] });
    expect((await putNode(treeId, 'initial', 'base/wan', { rules: [rule('x')] })).status).toBe(200);
    // …but an ancestor may not take an id a descendant holds.
    expect((await putNode(treeId, 'initial', 'base', { rules: [rule('ntp'), rule('x')] })).status).toBe(400);

    const unknown = await putNode(treeId, 'initial', 'base/wan', { rules: [rule('v', { value: '{{missing}}' })] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('missing');
    expect((await putNode(treeId, 'initial', 'base/wan', { rules: [rule('p', { path: 'no-slash' })] })).status).toBe(400);
    expect((await putNode(treeId, 'initial', 'base/wan', { rules: [rule('e', { mode: 'exact' })] })).status).toBe(400);
    expect((await putNode(treeId, 'initial', 'base/wan', { rules: [{ id: 'm', path: '/a', mode: 'sometimes', severity: 'error' }] })).status).toBe(400);

    const taken = await putNode(treeId, 'initial', 'base/wan', { devices: ['ce0'] });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toContain('base');
    expect((await getNode(treeId, 'initial', 'base/wan')).body.devices).toEqual([]);
  });

  it('stores the rule language, and refuses a bad pattern, prefix or bound naming the member (400)', async () => {
    const treeId = await newTree('n-language');
    const language = rule('intf', { path: '/interface/*/name', match: 'any', allowEmpty: true, pattern: '^Gi', cidr: ['10.0.0.0/8'], range: { min: 1 } });
    expect((await putNode(treeId, 'initial', 'base', { rules: [language] })).status).toBe(200);
    expect((await getNode(treeId, 'initial', 'base')).body.rules).toEqual([language]);
    const pattern = await putNode(treeId, 'initial', 'base', { rules: [rule('p', { pattern: '(a' })] });
    expect(pattern.body).toMatchObject({ status: 400, errors: [{ field: 'rules.0.pattern', message: expect.stringContaining('missing closing )') }] });
    const cidr = await putNode(treeId, 'initial', 'base', { rules: [rule('c', { cidr: ['10.0.0.0/8', '10.0.0.0/33'] })] });
    expect(cidr.body).toMatchObject({ status: 400, errors: [{ field: 'rules.0.cidr.1' }] });
    const range = await putNode(treeId, 'initial', 'base', { rules: [rule('r', { range: { min: 'x' } })] });
    expect(range.body).toMatchObject({ status: 400, errors: [{ field: 'rules.0.range.min' }] });
    // The schema bounds the lists.
    const oneOf = Array.from({ length: 101 }, (_, i) => i);
    expect((await putNode(treeId, 'initial', 'base', { rules: [rule('o', { oneOf })] })).status).toBe(400);
  });

  it('answers 404 for a missing parent or node, 400 for a path outside base, 409 for deleting base', async () => {
    const treeId = await newTree('n-statuses');
    expect((await putNode(treeId, 'initial', 'base/a/b', {})).status).toBe(404);
    expect((await putNode(treeId, 'initial', 'other/a', {})).status).toBe(400);
    expect((await putNode(treeId, 'nope', 'base/a', {})).status).toBe(404);
    expect((await getNode(treeId, 'initial', 'base/none')).status).toBe(404);
    expect((await deleteNode(treeId, 'initial', 'base/none')).status).toBe(404);
    expect((await deleteNode(treeId, 'initial', 'base')).status).toBe(409);
    expect((await putNode(treeId, 'initial', 'base/a%2Fb', {})).status).toBe(400);
  });

  it('deletes a node with its subtree', async () => {
    const treeId = await newTree('n-delete');
    await putNode(treeId, 'initial', 'base/wan', { devices: ['pe1'] });
    await putNode(treeId, 'initial', 'base/wan/pe', { devices: ['pe2'] });
    expect((await deleteNode(treeId, 'initial', 'base/wan')).status).toBe(204);
    expect((await getNode(treeId, 'initial', 'base/wan/pe')).status).toBe(404);
    expect((await getNode(treeId, 'initial', 'base')).body.children).toEqual([]);
    // The devices are free to go elsewhere now.
    expect((await putNode(treeId, 'initial', 'base', { devices: ['pe1', 'pe2'] })).status).toBe(200);
  });

  it('refuses past the limits with 413 (rule value size, nodes per version) and 400 (rules per node, depth)', async () => {
    const treeId = await newTree('n-limits');
    const big = 'x'.repeat(CONFIG_LIMITS.ruleValueBytes);
    const tooBig = await putNode(treeId, 'initial', 'base', { rules: [rule('big', { value: big })] });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ status: 413, errors: [{ field: 'rules.0.value' }] });
    const many = Array.from({ length: CONFIG_LIMITS.rulesPerNode + 1 }, (_, i) => rule(`r${i}`));
    expect((await putNode(treeId, 'initial', 'base', { rules: many })).status).toBe(400);
    const deep = ['base', ...Array.from({ length: CONFIG_LIMITS.nodeDepth }, (_, i) => `l${i}`)].join('/');
    expect((await putNode(treeId, 'initial', deep, {})).status).toBe(400);

    // Nodes per version: fill up with an import (one write), then one more node is refused.
    const children = Array.from({ length: CONFIG_LIMITS.nodesPerVersion - 1 }, (_, i) => ({ name: `n${i}` }));
    const imported = await importTree({ name: 'n-limits-full', deviceType: 'x', versions: [{ name: 'v', root: { name: 'base', children } }] });
    expect(imported.status).toBe(201);
    const full = await putNode(imported.body.id, 'v', 'base/one-more', {});
    expect(full.status).toBe(413);
    expect(full.body.detail).toContain(String(CONFIG_LIMITS.nodesPerVersion));
  });

  it('keeps every write under concurrent writers: no lost update, a device lands on one node only', async () => {
    const treeId = await newTree('n-concurrent');
    const names = Array.from({ length: 6 }, (_, i) => `c${i}`);
    const results = await Promise.all(names.map((n) => putNode(treeId, 'initial', `base/${n}`, { devices: [`dev-${n}`] })));
    expect(results.map((r) => r.status)).toEqual(names.map(() => 201));
    expect((await getNode(treeId, 'initial', 'base')).body.children.sort()).toEqual(names);

    const race = await Promise.all(names.map((n) => putNode(treeId, 'initial', `base/${n}`, { devices: ['contested'] })));
    expect(race.filter((r) => r.status === 200)).toHaveLength(1);
    expect(race.filter((r) => r.status === 409)).toHaveLength(names.length - 1);

    const copies = await Promise.all(['a', 'b', 'c', 'a'].map((n) => copy(treeId, n, 'initial')));
    expect(copies.map((r) => r.status).sort()).toEqual([201, 201, 201, 409]);
    expect([...(await summary(treeId)).body.versions].sort()).toEqual(['a', 'b', 'c', 'initial']);
  });
});

describe('export and import', () => {
  it('round-trips everything but ids, timestamps and authors', async () => {
    const treeId = await newTree('x-source');
    await putVersion(treeId, 'initial', { variables: { ntp1: '10.0.0.1' } });
    await putNode(treeId, 'initial', 'base', { rules: [rule('ntp', { value: [{ name: '{{ntp1}}' }], severity: 'warning', description: 'NTP' })] });
    await putNode(treeId, 'initial', 'base/wan', { devices: ['pe1'], rules: [rule('ex', { mode: 'exact', value: [1, 2], ordered: true })] });
    await copy(treeId, 'v2', 'initial');
    const exported = await exportTree(treeId);
    expect(exported.status).toBe(200);
    expect(exported.body).toMatchObject({ format: 'netconfig-tree/1', id: treeId, name: 'x-source', versions: [{ name: 'initial' }, { name: 'v2' }] });

    const doc = { ...exported.body, name: 'x-copy' };
    const imported = await importTree(doc);
    expect(imported.status).toBe(201);
    expect(imported.body.id).not.toBe(treeId);
    expect(imported.headers['Location']).toBe(`/v1${CONFIGS}/${imported.body.id}`);
    expect(imported.body.versions).toEqual(['initial', 'v2']);

    const again = (await exportTree(imported.body.id)).body;
    const strip = (d: Record<string, unknown>) => ({
      ...d,
      id: 0,
      name: 0,
      created: 0,
      lastUpdated: 0,
      versions: (d['versions'] as Record<string, unknown>[]).map((v) => ({ ...v, created: 0, lastUpdated: 0, createdBy: 0, lastUpdatedBy: 0 })),
    });
    expect(strip(again)).toEqual(strip(exported.body));
  });

  it('imports again a tree whose deepest node holds a rule value nested to the limit; refuses one level more', async () => {
    const treeId = await newTree('x-deep');
    const names = Array.from({ length: CONFIG_LIMITS.nodeDepth - 1 }, (_, i) => `l${i}`);
    for (let i = 1; i <= names.length; i++) expect((await putNode(treeId, 'initial', ['base', ...names.slice(0, i)].join('/'), {})).status).toBe(201);
    const deepest = ['base', ...names].join('/');
    const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    const over = await putNode(treeId, 'initial', deepest, {
      rules: [rule('deep', { mode: 'exact', value: nested(CONFIG_LIMITS.ruleValueDepth + 1) as never })],
    });
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([
      expect.objectContaining({ field: 'rules.0.value', message: `nests deeper than ${CONFIG_LIMITS.ruleValueDepth} levels` }),
    ]);
    expect(
      (await putNode(treeId, 'initial', deepest, { rules: [rule('deep', { mode: 'exact', value: nested(CONFIG_LIMITS.ruleValueDepth) as never })] })).status,
    ).toBe(200);
    const exported = await exportTree(treeId);
    expect(exported.status).toBe(200);
    const imported = await importTree({ ...exported.body, name: 'x-deep-copy' });
    expect(imported.status).toBe(201);
  });

  it('answers 409 on a name clash and leaves no trace of the refused import', async () => {
    const treeId = await newTree('x-clash');
    const exported = (await exportTree(treeId)).body;
    const before = (await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items?.length;
    expect((await importTree(exported)).status).toBe(409);
    const after = (await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items?.length;
    expect(after).toBe(before);
  });

  it('validates the document as the routes do: 400 for a bad rule, 409 for a device on two nodes, 400 for no versions', async () => {
    const base = { name: 'x-bad', deviceType: 'x' };
    const badRule = await importTree({ ...base, versions: [{ name: 'v', root: { name: 'base', rules: [rule('r', { value: '{{nope}}' })] } }] });
    expect(badRule.status).toBe(400);
    expect(badRule.body.errors[0].field).toBe('versions.0.root.rules.0.value');
    const twice = await importTree({ ...base, versions: [{ name: 'v', root: { name: 'base', devices: ['d'], children: [{ name: 'a', devices: ['d'] }] } }] });
    expect(twice.status).toBe(409);
    expect((await importTree({ ...base, versions: [] })).status).toBe(400);
    expect((await importTree({ ...base, versions: [{ name: 'v', root: { name: 'root' } }] })).status).toBe(400);
    expect((await exportTree('f'.repeat(24))).status).toBe(404);
  });
});

describe('field errors of the tree checks', () => {
  const fields = (res: { body: { errors?: { field: string; message: string }[] } }) => (res.body.errors ?? []).map((e) => e.field);
  const placed = (res: { body: { errors?: { in: string; field: string; message: string }[] } }, body: unknown) =>
    misplacedFields({ body, path: {}, query: {}, header: {} }, res.body.errors ?? []);

  it('name every place of an import in the dotted notation, each one a place of the document', async () => {
    const document = {
      name: 'f-import',
      deviceType: 'x',
      versions: [
        { name: 'v', root: { name: 'base' } },
        {
          name: 'w',
          variables: { 'a.b': 'x' },
          root: {
            name: 'base',
            devices: ['d1'],
            rules: [rule('r', { path: 'no-slash' })],
            children: [{ name: 'a', rules: [rule('x', { mode: 'exact' })] }, { name: 'a' }],
          },
        },
      ],
    };
    const res = await importTree(document);
    expect(res.status).toBe(400);
    expect(fields(res).sort()).toEqual(['versions.1.root.children.0.rules.0.value', 'versions.1.root.children.1.name', 'versions.1.root.rules.0.path']);
    expect(placed(res, document)).toEqual([]);
  });

  it('place what a node write causes in a descendant on the body member that caused it', async () => {
    const treeId = await newTree('f-node');
    await putNode(treeId, 'initial', 'base/wan', {});
    await putNode(treeId, 'initial', 'base/wan/pe', { rules: [rule('ntp')] });
    const body = { rules: [rule('ntp')] };
    const res = await putNode(treeId, 'initial', 'base/wan', body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ in: 'body', field: 'rules', message: expect.stringContaining('root.children.0.children.0.rules.0.id of the version') }]);
    expect(placed(res, body)).toEqual([]);
  });

  it('place a variable change that breaks a rule on `variables`', async () => {
    const treeId = await newTree('f-vars');
    expect((await putVersion(treeId, 'initial', { variables: { ntp: '10.0.0.1' } })).status).toBe(200);
    await putNode(treeId, 'initial', 'base', { rules: [rule('n', { value: '{{ntp}}' })] });
    const body = { variables: {} };
    const res = await putVersion(treeId, 'initial', body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ in: 'body', field: 'variables', message: expect.stringContaining('rule at root.rules.0.value') }]);
    expect(placed(res, body)).toEqual([]);
  });
});
