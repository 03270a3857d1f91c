/**
 * Imports, exports and version addresses over DynamoDB Local, through the real handlers: the
 * labels an import takes, addresses that never move to another version, `Idempotency-Key` on
 * the creating POSTs, sizes counted as stored and as transported, and imports that fail midway.
 */
import { BatchWriteCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../../tools/local/lambda-pool.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { ServiceUnavailable } from '../../functions/platform/problem.js';
import { CONFIG_LIMITS, transportBytes } from '../../functions/trees/config-checks.js';
import type { Node, Rule } from '../../functions/trees/config-model.js';
import { DynamoVersionStore } from '../../functions/trees/version-store.js';
import { createVersion, deleteVersion, getVersion, importTree, updateVersion, type ImportInput } from '../../functions/trees/version-service.js';
import { documentClientWith } from '../support/dynamo-hook.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { HANG_MS } from '../support/timeouts.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
const CONFIGS = '/configuration_manager/configs';
const IMPORTS = '/configuration_manager/imports';
const EXPORTS = '/configuration_manager/exports/{treeId}';
const h: Record<string, Handler> = {};
let table: string;

const event = (method: string, resource: string, pathParameters: Record<string, string>, body?: unknown, key?: string) =>
  apiEvent({
    method,
    resource,
    pathParameters,
    ...(body !== undefined ? { body } : {}),
    ...(key !== undefined ? { headers: { 'Idempotency-Key': key } } : {}),
    authorizer: { principalId: 'alice', principal: 'alice', roles: 'admin' },
  });
// A whole tree takes a while to check and write on a shared machine: these calls are not about the deadline.
const call = (name: string, e: APIGatewayProxyEvent) => invoke(h[name] as Handler, e, lambdaContext(600_000));
const importDoc = (body: unknown, key?: string) => call('importTree', event('POST', IMPORTS, {}, body, key));
const copyVersion = (treeId: string, body: unknown, key?: string) => call('createVersion', event('POST', `${CONFIGS}/{treeId}`, { treeId }, body, key));
const summaryOf = (treeId: string) => call('getTree', event('GET', `${CONFIGS}/{treeId}`, { treeId }));
const items = async () => (await documentClient.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
const itemCount = async () => (await items()).length;

const base = (extra: Partial<Node> = {}): Node => ({ name: 'base', devices: [], rules: [], children: [], ...extra });
const rule = (id: string, value: Rule['value']): Rule => ({ id, path: `/${id}`, mode: 'required', severity: 'error', value });
const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  table = (await createTables()).trees;
  const modules: Record<string, Promise<{ handler: Handler }>> = {
    createTree: import('../../functions/trees/handlers/create.js'),
    getTree: import('../../functions/trees/handlers/get.js'),
    createVersion: import('../../functions/trees/handlers/version-create.js'),
    getVersion: import('../../functions/trees/handlers/version-get.js'),
    putNode: import('../../functions/trees/handlers/node-put.js'),
    exportTree: import('../../functions/trees/handlers/export.js'),
    importTree: import('../../functions/trees/handlers/import.js'),
  };
  for (const [name, module] of Object.entries(modules)) h[name] = (await module).handler;
});

describe('version labels on import', () => {
  // Letters the label rule takes, and each kind it refuses: `~` (the repeat form), `/`, `%`,
  // 4-byte and 2-byte characters, a zero-width space, a control character.
  const label = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'Z', '0', '2', ' ', '.', '-', '_', '~', '/', '%', '😀', 'é', '\u200b', '\u0001'), minLength: 0, maxLength: 6 }),
    fc.constantFrom('x'.repeat(128), 'x'.repeat(129), '.', '..', 'draft~2'),
  );

  it('accepts exactly the labels a new version accepts', async () => {
    const created = await call('createTree', event('POST', CONFIGS, {}, { name: uniqueName('labels'), deviceType: 'x' }));
    const treeId = created.body.id as string;
    const seen = new Set(['initial']);
    await fc.assert(
      fc.asyncProperty(label, async (name) => {
        fc.pre(!seen.has(name));
        seen.add(name);
        const viaCreate = await copyVersion(treeId, { name, base: 'initial' });
        const viaImport = await importDoc({ name: uniqueName('labels'), deviceType: 'x', versions: [{ name, root: base() }] });
        expect([201, 400]).toContain(viaCreate.status);
        expect(viaImport.status).toBe(viaCreate.status);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a label ending in ~N with 400 and writes nothing', async () => {
    const before = await itemCount();
    const res = await importDoc({
      name: uniqueName('tilde'),
      deviceType: 'x',
      versions: [
        { name: 'draft', root: base() },
        { name: 'draft~1', root: base() },
      ],
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.errors)).toContain('versions');
    expect(await itemCount()).toBe(before);
  });
});

describe('version addresses', () => {
  const deps = () => ({ store: new DynamoVersionStore(documentClient, table), now: () => new Date(), pause: async () => {} });
  const tagOf = async (treeId: string, address: string): Promise<string | undefined> =>
    getVersion(deps(), treeId, address).then(
      (v) => v.variables['tag'],
      () => undefined,
    );

  it('keeps the others’ addresses when the first of a repeated label is deleted', async () => {
    const doc: ImportInput = {
      name: uniqueName('repeats'),
      deviceType: 'x',
      versions: ['one', 'two', 'three'].map((tag) => ({ name: 'draft', variables: { tag }, root: base() })),
    };
    const tree = await importTree(deps(), doc, 'alice');
    expect(await tagOf(tree.id, 'draft~2')).toBe('two');
    await deleteVersion(deps(), tree.id, 'draft');
    expect(await tagOf(tree.id, 'draft')).toBeUndefined();
    expect(await tagOf(tree.id, 'draft~2')).toBe('two');
    expect(await tagOf(tree.id, 'draft~3')).toBe('three');
    expect((await getVersion(deps(), tree.id, 'draft~3')).address).toBe('draft~3');
  });

  type Op = { kind: 'create'; label: string; from: number } | { kind: 'delete'; pick: number } | { kind: 'rename'; pick: number; label: string };
  const labels = fc.constantFrom('a', 'b', 'c');
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('create' as const), label: labels, from: fc.nat() }),
    fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('rename' as const), pick: fc.nat(), label: labels }),
  );

  it(
    'never lets an address handed out name another version: it names its version or is 404',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(labels, { minLength: 1, maxLength: 5 }), fc.array(op, { maxLength: 8 }), async (initial, ops) => {
          let next = 0;
          const tag = () => `t${next++}`;
          // Every address handed out: the version (its tag) it named, and whether it was retired
          // by a rename. `live`: the tags of the versions that exist.
          const handed = new Map<string, { tag: string; retired: boolean }>();
          const live = new Set<string>();
          const handOut = (address: string, t: string) => {
            const before = handed.get(address);
            // A new address may only reuse one whose version is gone or that a rename retired.
            expect(before === undefined || before.retired || !live.has(before.tag), `${address} re-pointed while its version exists`).toBe(true);
            handed.set(address, { tag: t, retired: false });
            live.add(t);
          };
          const doc = { name: uniqueName('addr'), deviceType: 'x', versions: initial.map((name) => ({ name, variables: { tag: tag() }, root: base() })) };
          const tree = await importTree(deps(), doc, 'alice');
          const seen = new Map<string, number>();
          doc.versions.forEach((v) => {
            const n = (seen.get(v.name) ?? 0) + 1;
            seen.set(v.name, n);
            handOut(n === 1 ? v.name : `${v.name}~${n}`, v.variables.tag);
          });
          const current = () => [...handed].filter(([, e]) => !e.retired && live.has(e.tag)).map(([a]) => a);
          for (const o of ops) {
            const addresses = current();
            const target = addresses[(o.kind === 'create' ? o.from : o.pick) % addresses.length] as string;
            if (o.kind === 'create') {
              const made = await createVersion(deps(), tree.id, { name: o.label, base: target }, 'alice').catch(() => undefined);
              if (!made) continue;
              const t = tag();
              await updateVersion(deps(), tree.id, made.address, { variables: { tag: t } }, 'alice');
              handOut(made.address, t);
            } else if (o.kind === 'delete') {
              const gone = await deleteVersion(deps(), tree.id, target).then(
                () => true,
                () => false,
              );
              if (gone) live.delete(handed.get(target)!.tag);
            } else {
              const renamed = await updateVersion(deps(), tree.id, target, { name: o.label }, 'alice').catch(() => undefined);
              if (!renamed || renamed.address === target) continue;
              const entry = handed.get(target)!;
              handed.set(target, { ...entry, retired: true });
              handOut(renamed.address, entry.tag);
            }
            for (const [address, entry] of handed) {
              const found = await tagOf(tree.id, address);
              if (found !== undefined) expect(found, `${address} names another version`).toBe(entry.tag);
              const named = !entry.retired && live.has(entry.tag);
              expect(found !== undefined, `${address} ${named ? 'lost its version' : 'still answers'}`).toBe(named);
            }
          }
        }),
        { numRuns: 15 },
      );
    },
    HANG_MS,
  );
});

describe('Idempotency-Key on the creating POSTs', () => {
  it('replays a new version’s answer without a second version, and refuses the key for another body (422)', async () => {
    const treeId = (await call('createTree', event('POST', CONFIGS, {}, { name: uniqueName('idem-v'), deviceType: 'x' }))).body.id as string;
    const key = randomUUID();
    const first = await copyVersion(treeId, { name: 'v2', base: 'initial' }, key);
    const again = await copyVersion(treeId, { name: 'v2', base: 'initial' }, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['Location']).toBe(first.headers['Location']);
    expect(again.headers['Idempotent-Replayed']).toBe('true');
    expect((await summaryOf(treeId)).body.versions).toEqual(['initial', 'v2']);
    const other = await copyVersion(treeId, { name: 'v3', base: 'initial' }, key);
    expect(other.status).toBe(422);
    expect(other.body.type).toContain('idempotency-key-reused');
    expect((await summaryOf(treeId)).body.versions).toEqual(['initial', 'v2']);
  });

  it('replays an import’s answer without a second tree, and refuses the key for another body (422)', async () => {
    const key = randomUUID();
    const doc = { name: uniqueName('idem-i'), deviceType: 'x', versions: [{ name: 'v1', root: base() }] };
    const before = await itemCount();
    const first = await importDoc(doc, key);
    const again = await importDoc(doc, key);
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['Idempotent-Replayed']).toBe('true');
    // One tree: its item, its name lock, its version's content.
    expect(
      (await items()).filter((i) => String(i['pk']).startsWith('TREE#') || String(i['pk']).startsWith('NAME#') || String(i['pk']).startsWith('CONTENT#'))
        .length - before,
    ).toBe(3);
    const other = await importDoc({ ...doc, name: uniqueName('idem-i') }, key);
    expect(other.status).toBe(422);
  });
});

describe('sizes', () => {
  // Each escapes badly: `"` and `\` double twice, control characters grow to \u00XX and once
  // more, and the rest take 2 or 4 bytes of UTF-8.
  const WORST = '"\\"\\\u0001\u001f\n\t😀é';
  const worstValue = (budget: number): string => WORST.repeat(Math.floor((budget - 2) / Buffer.byteLength(JSON.stringify(WORST).slice(1, -1))));
  const fullRoot = (): Node => {
    const rules: Rule[] = [];
    const value = worstValue(CONFIG_LIMITS.ruleValueBytes);
    while (
      Buffer.byteLength(JSON.stringify({ variables: {}, root: base({ rules: [...rules, rule(`r${rules.length}`, value)] }) })) <= CONFIG_LIMITS.versionBytes
    ) {
      rules.push(rule(`r${rules.length}`, value));
    }
    return base({ rules });
  };
  const AT = '2026-01-01T00:00:00.000Z';
  /** The export the import of `doc` will give, in transported bytes (the test's own count). */
  const exportedBytes = (doc: ImportInput): number =>
    transportBytes(
      JSON.stringify({
        format: 'netconfig-tree/1',
        id: '0'.repeat(24),
        name: doc.name,
        deviceType: doc.deviceType,
        created: AT,
        lastUpdated: AT,
        versions: doc.versions.map((v) => ({
          name: v.name,
          variables: v.variables ?? {},
          root: v.root,
          created: AT,
          createdBy: 'alice',
          lastUpdated: AT,
          lastUpdatedBy: 'alice',
        })),
      }),
    );

  /** A document whose export is exactly `CONFIG_LIMITS.treeTransportBytes` as transported, its versions full of the worst-escaping characters. */
  const docAtLimit = (name: string): ImportInput => {
    const limit = CONFIG_LIMITS.treeTransportBytes;
    const full = fullRoot();
    const versions: { name: string; variables: Record<string, string>; root: Node }[] = [];
    const doc = { name, deviceType: 'x', versions };
    for (;;) {
      versions.push({ name: `v${versions.length}`, variables: {}, root: full });
      if (exportedBytes(doc) > limit) break;
    }
    // The last version: whole rules of the worst characters while they fit, then one rule of as
    // many of them as fit, then ASCII (one byte each, as stored and as transported) to the byte.
    const rules: Rule[] = [];
    versions.at(-1)!.root = base({ rules });
    for (const r of full.rules) {
      rules.push(r);
      if (exportedBytes(doc) > limit - 512) {
        rules.pop();
        break;
      }
    }
    rules.push(rule('part', ''));
    const room = limit - 512 - exportedBytes(doc);
    const perWorst = transportBytes(JSON.stringify(WORST).slice(1, -1));
    rules[rules.length - 1] = rule(
      'part',
      WORST.repeat(Math.min(Math.max(0, Math.floor(room / perWorst)), worstValue(CONFIG_LIMITS.ruleValueBytes).length / WORST.length)),
    );
    rules.push(rule('pad', ''));
    rules[rules.length - 1] = rule('pad', 'a'.repeat(limit - exportedBytes(doc)));
    expect(exportedBytes(doc)).toBe(limit);
    return doc;
  };

  it(
    'exports and imports again a tree exactly at the transport limit, written with the worst-escaping characters; one byte more is 413',
    async () => {
      const name = uniqueName('at-limit');
      const doc = docAtLimit(name);
      const importEvent = event('POST', IMPORTS, {}, doc);
      expect(Buffer.byteLength(JSON.stringify(importEvent))).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
      const imported = await call('importTree', importEvent);
      expect(imported.status).toBe(201);

      const exported = await (h['exportTree'] as Handler)(event('GET', EXPORTS, { treeId: imported.body.id }), lambdaContext(600_000));
      expect(exported.statusCode).toBe(200);
      expect(transportBytes(exported.body)).toBe(CONFIG_LIMITS.treeTransportBytes);
      // Lambda's answer: the proxy result as JSON, the body escaped once more.
      expect(Buffer.byteLength(JSON.stringify(exported))).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);

      const again = event('POST', IMPORTS, {}, JSON.stringify({ ...JSON.parse(exported.body), name: uniqueName('at-limit') }));
      expect(Buffer.byteLength(JSON.stringify(again))).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
      const reimported = await call('importTree', again);
      expect(reimported.status).toBe(201);

      // Growing a tree at the limit is refused; the one-byte-larger document is refused whole.
      const grow = await call(
        'putNode',
        event('PUT', `${CONFIGS}/{treeId}/{version}/nodes/{nodePath+}`, { treeId: reimported.body.id, version: 'v0', nodePath: 'base/more' }, {}),
      );
      expect(grow.status).toBe(413);
      const before = await itemCount();
      const over = { ...structuredClone(doc), name: uniqueName('at-limit') };
      const lastRules = over.versions.at(-1)!.root.rules as Rule[];
      lastRules[lastRules.length - 1] = rule('pad', `${lastRules.at(-1)!.value as string}a`);
      const refused = await importDoc(over);
      expect(refused.status).toBe(413);
      expect(await itemCount()).toBe(before);
    },
    HANG_MS,
  );

  it(
    'counts a version in stored UTF-8 bytes: 4-byte characters up to the limit are kept, one byte more is 413',
    async () => {
      const emoji = '😀'.repeat(Math.floor((CONFIG_LIMITS.ruleValueBytes - 2) / 4));
      // Device names are counted in characters (code points), as the schema counts them.
      const devices = Array.from({ length: 20 }, (_, i) => `${i}${'😀'.repeat(CONFIG_LIMITS.deviceName - String(i).length)}`);
      const rules: Rule[] = [];
      const stored = () => Buffer.byteLength(JSON.stringify({ variables: {}, root: base({ devices, rules }) }));
      while (stored() + Buffer.byteLength(JSON.stringify(rule('rX', emoji))) + 1 < CONFIG_LIMITS.versionBytes) rules.push(rule(`r${rules.length}`, emoji));
      rules.push(rule('pad', ''));
      rules[rules.length - 1] = rule('pad', 'a'.repeat(CONFIG_LIMITS.versionBytes - stored()));
      expect(stored()).toBe(CONFIG_LIMITS.versionBytes);
      const doc = { name: uniqueName('emoji'), deviceType: 'x', versions: [{ name: 'v', root: base({ devices, rules }) }] };
      const kept = await importDoc(doc);
      expect(kept.status).toBe(201);
      const read = await call('getVersion', event('GET', `${CONFIGS}/{treeId}/{version}`, { treeId: kept.body.id, version: 'v' }));
      expect(read.body.root).toEqual(doc.versions[0]!.root);

      const before = await itemCount();
      rules[rules.length - 1] = rule('pad', `${rules.at(-1)!.value as string}a`);
      const refused = await importDoc({ ...doc, name: uniqueName('emoji') });
      expect(refused.status).toBe(413);
      expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'versions.0.root' })]);
      expect(await itemCount()).toBe(before);
    },
    HANG_MS,
  );

  it(
    'stores the largest tree item the limits allow (1000 longest labels, name and description of 4-byte characters); labels of them are 400',
    async () => {
      const versions = Array.from({ length: 1000 }, (_, i) => ({ name: `${i}`.padStart(128, 'v'), root: base() }));
      const doc = { name: '😀'.repeat(120) + randomUUID().slice(0, 8), deviceType: '😀'.repeat(128), description: '😀'.repeat(1024), versions };
      const imported = await importDoc(doc);
      expect(imported.status).toBe(201);
      expect((await summaryOf(imported.body.id)).body.versions).toHaveLength(1000);

      const before = await itemCount();
      const emojiLabels = await importDoc({
        ...doc,
        name: uniqueName('emoji-labels'),
        versions: versions.map((v, i) => ({ ...v, name: `${i}${'😀'.repeat(120)}` })),
      });
      expect(emojiLabels.status).toBe(400);
      expect(await itemCount()).toBe(before);
    },
    HANG_MS,
  );
});

describe('an import that fails midway', () => {
  const doc = (versions: number): ImportInput => ({
    name: uniqueName('midway'),
    deviceType: 'x',
    versions: Array.from({ length: versions }, (_, i) => ({ name: `v${i}`, root: base() })),
  });
  const failing = (name: string) => Object.assign(new Error(`injected ${name}`), { name });
  /** The import with DynamoDB failing as `fail` decides: each command goes to `fail` before it is sent. */
  const importWith = (fail: (command: unknown) => unknown, input: ImportInput) =>
    importTree({ store: new DynamoVersionStore(documentClientWith(fail), table), now: () => new Date(), pause: async () => {} }, input, 'alice');

  it('leaves no item when a later batch of versions is refused', async () => {
    const before = await itemCount();
    let batches = 0;
    const outcome = importWith((c) => {
      if (c instanceof BatchWriteCommand && ++batches === 2) throw failing('ValidationException');
    }, doc(60));
    await expect(outcome).rejects.toThrow('injected');
    expect(batches).toBeGreaterThanOrEqual(2);
    expect(await itemCount()).toBe(before);
  });

  it('leaves no item when the tree item is refused', async () => {
    const before = await itemCount();
    await expect(
      importWith((c) => {
        if (c instanceof TransactWriteCommand) throw failing('ValidationException');
      }, doc(30)),
    ).rejects.toThrow('injected');
    expect(await itemCount()).toBe(before);
  });

  it('reads back a tree write that timed out: nothing left when it did not land (503)', async () => {
    const before = await itemCount();
    const error = await importWith((c) => {
      if (c instanceof TransactWriteCommand) throw failing('TimeoutError');
    }, doc(30)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailable);
    expect(await itemCount()).toBe(before);
  });

  it('reads back a tree write that timed out: the tree whole when it landed', async () => {
    const input = doc(30);
    const tree = await importWith(async (c) => {
      if (c instanceof TransactWriteCommand) {
        await documentClient.send(c);
        throw failing('TimeoutError');
      }
    }, input);
    const store = new DynamoVersionStore(documentClient, table);
    const loaded = await store.loadTree(tree.id);
    expect(loaded?.ok && loaded.state.summary.versions).toEqual(input.versions.map((v) => v.name));
    for (const ref of loaded?.ok ? loaded.state.contents : []) expect(await store.loadContent(tree.id, ref.id)).toBeDefined();
  });
});
