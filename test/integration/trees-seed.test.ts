import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import type { TreeSummary } from '../../functions/trees/model.js';
import { SeedFileError, seedTrees } from '../../functions/trees/seed.js';
import { SAMPLE_TREES_FILE, runSeedCli, seedSampleTrees } from '../../tools/local/seed.js';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

let table: string;
let get: Parameters<typeof invoke>[0];
let dir: string;

const read = (treeId: string) => invoke(get, apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId } }));

const items = async () => (await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
const lockOf = async (name: string) => (await items()).find((i) => i['pk'] === `NAME#${name}`);

const tree = (id: string, name: string, more: Partial<TreeSummary> = {}): TreeSummary => ({
  id,
  name,
  deviceType: 'cisco-ios',
  versions: ['initial', 'draft', '1', '2', 'draft'],
  created: '2019-04-12T14:42:47.958Z',
  lastUpdated: '2019-04-12T14:42:47.958Z',
  ...more,
});

beforeAll(async () => {
  table = (await createTables()).trees;
  ({ handler: get } = await import('../../functions/trees/handlers/get.js'));
  dir = mkdtempSync(path.join(tmpdir(), 'trees-seed-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('seedTrees', () => {
  it('round-trips repeated labels and millisecond timestamps through seed and the GET handler', async () => {
    const seeded = tree('0000000000000000000000a1', 'round-trip', {
      versions: ['initial', 'draft', '1', '2', 'draft', 'draft', '1'],
      created: '2019-04-12T14:42:47.958Z',
      lastUpdated: '2019-04-12T14:42:48.001Z',
      description: 'exactly as stored',
    });
    const report = await seedTrees(documentClient, table, { trees: [seeded] });
    expect(report).toEqual({ written: [{ index: 0, id: seeded.id, name: 'round-trip', action: 'created' }], rejected: [] });
    const res = await read(seeded.id);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual(seeded);
    expect(await lockOf('round-trip')).toEqual({ pk: 'NAME#round-trip', treeId: seeded.id });
  });

  it('updates a tree in place when seeded again, and moves its name lock on a rename', async () => {
    const id = '0000000000000000000000b1';
    expect((await seedTrees(documentClient, table, { trees: [tree(id, 'before-rename')] })).written[0]?.action).toBe('created');
    const renamed = tree(id, 'after-rename', { versions: ['initial', '1'], lastUpdated: '2020-01-01T00:00:00.000Z' });
    const report = await seedTrees(documentClient, table, { trees: [renamed] });
    expect(report.written).toEqual([{ index: 0, id, name: 'after-rename', action: 'updated' }]);
    expect((await read(id)).body).toStrictEqual(renamed);
    expect(await lockOf('after-rename')).toEqual({ pk: 'NAME#after-rename', treeId: id });
    expect(await lockOf('before-rename')).toBeUndefined();
    // The old name is free again.
    expect((await seedTrees(documentClient, table, { trees: [tree('0000000000000000000000b2', 'before-rename')] })).rejected).toEqual([]);
  });

  it('rejects an entry whose name another tree holds, and writes the others', async () => {
    await seedTrees(documentClient, table, { trees: [tree('0000000000000000000000c1', 'taken')] });
    const report = await seedTrees(documentClient, table, {
      trees: [tree('0000000000000000000000c2', 'taken'), tree('0000000000000000000000c3', 'free')],
    });
    expect(report.written).toEqual([{ index: 1, id: '0000000000000000000000c3', name: 'free', action: 'created' }]);
    expect(report.rejected).toEqual([
      { index: 0, id: '0000000000000000000000c2', name: 'taken', reasons: ['name is held by another tree (0000000000000000000000c1)'] },
    ]);
    expect((await read('0000000000000000000000c2')).status).toBe(404);
    expect(await lockOf('taken')).toEqual({ pk: 'NAME#taken', treeId: '0000000000000000000000c1' });
  });

  it('rejects invalid entries with a reason per problem and writes none of them', async () => {
    const before = (await items()).length;
    const report = await seedTrees(documentClient, table, {
      trees: [
        { ...tree('ABC', 'bad-id') },
        { ...tree('0000000000000000000000d1', 'no-millis'), created: '2019-04-12T14:42:47Z' },
        { ...tree('0000000000000000000000d2', 'bad-versions'), versions: ['initial', 3] },
        { ...tree('0000000000000000000000d3', 'extra'), kind: 'tree' },
        'not an object',
        { ...tree('0000000000000000000000d4', 'feb-30'), lastUpdated: '2019-02-30T00:00:00.000Z' },
      ],
    });
    expect(report.written).toEqual([]);
    expect(report.rejected.map((r) => [r.index, r.reasons])).toEqual([
      [0, ['id is not 24 lowercase hexadecimal characters']],
      [1, ['created is not an ISO 8601 UTC timestamp with milliseconds']],
      [2, ['versions.1 is not a string']],
      [3, ['kind is not a tree summary field']],
      [4, ['is not an object']],
      [5, ['lastUpdated is not an ISO 8601 UTC timestamp with milliseconds']],
    ]);
    expect((await items()).length).toBe(before);
  });

  it('throws SeedFileError and writes nothing when the file is not { trees: [...] }', async () => {
    // Each wrong shape carries a valid tree: refusing the file must mean none of it is written.
    const valid = tree('0000000000000000000000b1', 'shape-refused');
    const before = await items();
    for (const input of [[valid], { trees: { 0: valid } }, { tree: [valid] }, { trees: [valid], extra: 1 }, null]) {
      await expect(seedTrees(documentClient, table, input)).rejects.toBeInstanceOf(SeedFileError);
    }
    expect(await items()).toEqual(before);
    expect(await lockOf('shape-refused')).toBeUndefined();
  });

  it('loads the sample trees, which keep repeated labels, and is idempotent', async () => {
    const file = JSON.parse(readFileSync(SAMPLE_TREES_FILE, 'utf8')) as {
      trees: (Omit<TreeSummary, 'versions'> & { versions: (string | { name: string })[] })[];
    };
    // Versions with content are listed as objects; the summary lists their labels.
    const sample = { trees: file.trees.map((t) => ({ ...t, versions: t.versions.map((v) => (typeof v === 'string' ? v : v.name)) })) };
    expect(sample.trees.some((t) => new Set(t.versions).size < t.versions.length)).toBe(true);
    const first = await seedSampleTrees(documentClient, table);
    expect(first.rejected).toEqual([]);
    expect(first.written.map((w) => w.action)).toEqual(sample.trees.map(() => 'created'));
    const again = await seedSampleTrees(documentClient, table);
    expect(again.rejected).toEqual([]);
    expect(again.written.map((w) => w.action)).toEqual(sample.trees.map(() => 'updated'));
    for (const t of sample.trees) expect((await read(t.id)).body).toStrictEqual(t);
  });
});

describe('npm run seed (runSeedCli)', () => {
  const run = async (argv: string[], stateFile: string) => {
    let out = '';
    let err = '';
    const code = await runSeedCli(argv, { stateFile, out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err };
  };
  const file = (name: string, content: unknown) => {
    const target = path.join(dir, name);
    writeFileSync(target, typeof content === 'string' ? content : JSON.stringify(content));
    return target;
  };
  let state: string;
  beforeAll(() => {
    state = file('state.json', {
      baseUrl: 'http://127.0.0.1:1',
      dynamodbEndpoint: process.env['AWS_ENDPOINT_URL_DYNAMODB'],
      tables: { trees: table, adapters: 'unused' },
      pid: process.pid,
    });
  });

  it('writes the trees of the file, prints what it wrote, and exits 0', async () => {
    const input = file('ok.json', { trees: [tree('0000000000000000000000e1', 'cli-one'), tree('0000000000000000000000e2', 'cli-two')] });
    const res = await run([input], state);
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    expect(res.out).toContain('created  0000000000000000000000e1  "cli-one"');
    expect(res.out).toContain('2 written, 0 rejected');
    expect((await read('0000000000000000000000e2')).body).toStrictEqual(tree('0000000000000000000000e2', 'cli-two'));
  });

  it('reports each rejected entry with its reasons and exits non-zero, still writing the valid ones', async () => {
    const input = file('mixed.json', {
      trees: [tree('0000000000000000000000e3', 'cli-three'), { ...tree('0000000000000000000000e4', 'cli-four'), versions: 'draft' }],
    });
    const res = await run([input], state);
    expect(res.code).toBe(1);
    expect(res.out).toContain('rejected entry 1 (0000000000000000000000e4  "cli-four"):');
    expect(res.out).toContain('- versions is not an array');
    expect(res.out).toContain('1 written, 1 rejected');
    expect((await read('0000000000000000000000e3')).status).toBe(200);
  });

  it('tells the user to start the local stack when its state file is missing', async () => {
    const res = await run([file('any.json', { trees: [] })], path.join(dir, 'missing-state.json'));
    expect(res.code).toBe(1);
    expect(res.err).toContain('start the local stack with npm start first');
  });

  it('says the same when the recorded DynamoDB Local no longer answers', async () => {
    const port = await freePort();
    const stale = file('stale-state.json', { baseUrl: 'x', dynamodbEndpoint: `http://127.0.0.1:${port}`, tables: { trees: table }, pid: 1 });
    const res = await run([file('one.json', { trees: [tree('0000000000000000000000e5', 'cli-five')] })], stale);
    expect(res.code).toBe(1);
    expect(res.err).toContain(`cannot reach DynamoDB Local at http://127.0.0.1:${port}`);
    expect(res.err).toContain('npm start');
  });

  it('refuses a file that is not JSON or not { trees: [...] } and writes nothing', async () => {
    const valid = tree('0000000000000000000000e9', 'cli-refused');
    const before = await items();
    const notJson = await run([file('broken.json', `{"trees": [${JSON.stringify(valid)}`)], state);
    expect(notJson.code).toBe(1);
    expect(notJson.err).toContain('not valid JSON');
    for (const shape of [{ items: [valid] }, { trees: [valid], extra: 1 }]) {
      const wrongShape = await run([file('shape.json', shape)], state);
      expect(wrongShape.code).toBe(1);
      expect(wrongShape.err).toContain('nothing was written');
    }
    expect(await items()).toEqual(before);
    expect(await lockOf('cli-refused')).toBeUndefined();
    const missing = await run([path.join(dir, 'nope.json')], state);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('cannot read');
  });

  it('prints usage and exits 2 without exactly one file argument', async () => {
    for (const argv of [[], ['a.json', 'b.json'], ['--help']]) {
      const res = await run(argv, state);
      expect(res.code).toBe(2);
      expect(res.err).toContain('usage: npm run seed -- <file.json>');
    }
  });
});
