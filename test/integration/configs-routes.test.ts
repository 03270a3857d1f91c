/**
 * The configuration history routes through their real handlers, against DynamoDB Local and the
 * local S3 server: takes recorded by the archive the batches use, read back as a device list,
 * a history (newest first, in pages) and one configuration with its secrets masked; every
 * status of each route, S3 and DynamoDB down included.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigHistory } from '../../functions/configs/archive.js';
import { s3Blobs } from '../../functions/configs/blobs.js';
import { createS3Client } from '../../functions/configs/s3.js';
import { ConfigIndex } from '../../functions/configs/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { REDACTED } from '../../functions/platform/redaction.js';
import { applyPatch } from 'fast-json-patch/commonjs/core.js';
import { freePort } from '../../tools/local/dynamodb-local.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { importHandlers, type Handler } from '../support/handlers.js';

/** Names that travel percent-encoded in the path, as API Gateway passes them on. */
const ADAPTER = 'lab nso';
const DEVICE = 'core 1 ü';
const DEVICES_PATH = '/configuration_manager/devices';
const CONFIGS_PATH = `${DEVICES_PATH}/{adapterId}/{device}/configs`;
const CONFIG_PATH = `${CONFIGS_PATH}/{configId}`;
const DIFF_PATH = `${CONFIG_PATH}/diff`;
const MODULES = {
  devices: 'configs/handlers/list-devices',
  configs: 'configs/handlers/list-configs',
  config: 'configs/handlers/get-config',
  diff: 'configs/handlers/diff-configs',
} as const;

let handlers: Record<keyof typeof MODULES, Handler>;
/** The configIds of DEVICE's takes, oldest first. */
const taken: string[] = [];

const config = (n: number) => ({
  hostname: 'core-1',
  snmp: { community: [{ name: 'ro', 'secret-key': `s3cr3t-${n}` }] },
  aaa: { authentication: { users: { user: [{ name: 'admin', password: `$9$x${n}` }] } } },
  banner: `release ${n}`,
});

/** A GET as API Gateway passes it: path parameters still percent-encoded, the query decoded. */
const get = (handler: Handler, resource: string, pathParameters: Record<string, string>, query?: Record<string, string>) =>
  invoke(
    handler,
    apiEvent({
      method: 'GET',
      resource,
      pathParameters: Object.fromEntries(Object.entries(pathParameters).map(([k, v]) => [k, encodeURIComponent(v)])),
      ...(query ? { query } : {}),
    }),
    lambdaContext(10_000),
  );

/** Every page of a device's history, `limit` at a time. */
const allPages = async (limit: number) => {
  const pages: { configId: string }[][] = [];
  let cursor: string | undefined;
  do {
    const res = await get(handlers.configs, CONFIGS_PATH, { adapterId: ADAPTER, device: DEVICE }, { limit: String(limit), ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    pages.push(res.body.items);
    cursor = res.body.next;
  } while (cursor);
  return pages;
};

beforeAll(async () => {
  const tables = await createTables();
  const index = new ConfigIndex(documentClient, tables['configs']);
  const history = new ConfigHistory({ blobs: s3Blobs(createS3Client(), { bucket: process.env['CONFIGS_BUCKET']! }), index, retentionDays: async () => 30 });
  const now = Date.now();
  // Five takes of DEVICE a day apart (the last one today), one of a second device.
  for (let n = 0; n < 5; n++) {
    const started = new Date(now - (4 - n) * 86_400_000 - 60_000).toISOString();
    const recorded = await history.record({
      adapterId: ADAPTER,
      device: DEVICE,
      config: config(n),
      source: { kind: 'compliance', batchId: `batch${n}`, batchStarted: started },
      takenAt: new Date(Date.parse(started) + 1_000),
      grade: n % 2 ? 'fail' : 'pass',
    });
    taken.push(recorded.configId);
  }
  await history.record({
    adapterId: ADAPTER,
    device: 'access-2',
    config: config(9),
    source: { kind: 'backup', batchId: 'backup1', batchStarted: new Date(now - 60_000).toISOString() },
    takenAt: new Date(now - 30_000),
  });
  handlers = await importHandlers(MODULES);
});

describe('GET /configuration_manager/devices', () => {
  it("lists the adapter's devices by name with their last configuration's time, id and grade", async () => {
    const res = await get(handlers.devices, DEVICES_PATH, {}, { adapterId: ADAPTER });
    expect(res.status).toBe(200);
    expect(res.body.items.map((d: { device: string }) => d.device)).toEqual(['access-2', DEVICE]);
    expect(res.body.items[1]).toEqual({ device: DEVICE, configId: taken[4], takenAt: expect.any(String), grade: 'pass' });
    expect(res.body.items[0]).not.toHaveProperty('grade');
    expect(res.body.next).toBeUndefined();
  });

  it('pages with the cursor it gives', async () => {
    const first = await get(handlers.devices, DEVICES_PATH, {}, { adapterId: ADAPTER, limit: '1' });
    const second = await get(handlers.devices, DEVICES_PATH, {}, { adapterId: ADAPTER, limit: '1', cursor: first.body.next });
    expect([first.body.items[0].device, second.body.items[0].device]).toEqual(['access-2', DEVICE]);
  });

  it('answers an empty list for an adapter with no history, and 400 without adapterId', async () => {
    expect((await get(handlers.devices, DEVICES_PATH, {}, { adapterId: 'other' })).body).toEqual({ items: [] });
    expect((await get(handlers.devices, DEVICES_PATH, {}, {})).status).toBe(400);
  });

  it("refuses another adapter's cursor with 400", async () => {
    const first = await get(handlers.devices, DEVICES_PATH, {}, { adapterId: ADAPTER, limit: '1' });
    const res = await get(handlers.devices, DEVICES_PATH, {}, { adapterId: 'other', cursor: first.body.next });
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
  });
});

describe('GET …/devices/{adapterId}/{device}/configs', () => {
  it.each([
    ['device', { adapterId: 'lab%20nso', device: '%E0%A4%A' }, 'is not valid percent-encoding'],
    ['device', { adapterId: 'lab%20nso', device: 'core%2F1' }, 'no "/"'],
    ['adapterId', { adapterId: 'lab%ZZnso', device: 'core' }, 'is not valid percent-encoding'],
  ])('answers 400 naming %s for a path parameter that holds no such name (%j)', async (field, pathParameters, message) => {
    const res = await invoke(handlers.configs, apiEvent({ method: 'GET', resource: CONFIGS_PATH, pathParameters }), lambdaContext(10_000));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ in: 'path', field, message: expect.stringContaining(message) })]);
  });

  it('lists the takes newest first with their hash, size, batch and source', async () => {
    const res = await get(handlers.configs, CONFIGS_PATH, { adapterId: ADAPTER, device: DEVICE });
    expect(res.status).toBe(200);
    expect(res.body.items.map((e: { configId: string }) => e.configId)).toEqual([...taken].reverse());
    expect(res.body.items[0]).toEqual({
      configId: taken[4],
      adapterId: ADAPTER,
      device: DEVICE,
      takenAt: expect.any(String),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      size: expect.any(Number),
      batchId: 'batch4',
      source: 'compliance',
      grade: 'pass',
    });
  });

  it('pages through every take once, newest first, whatever the page size', async () => {
    for (const limit of [1, 2, 3, 5]) {
      const pages = await allPages(limit);
      expect(pages.flat().map((e) => e.configId)).toEqual([...taken].reverse());
      expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
    }
  });

  it('answers 404 for a device the history does not know', async () => {
    const res = await get(handlers.configs, CONFIGS_PATH, { adapterId: ADAPTER, device: 'nowhere' });
    expect(res.status).toBe(404);
    expect(res.contentType).toBe('application/problem+json');
  });

  it("refuses a cursor of another device's history with 400", async () => {
    const first = await get(handlers.configs, CONFIGS_PATH, { adapterId: ADAPTER, device: DEVICE }, { limit: '1' });
    const res = await get(handlers.configs, CONFIGS_PATH, { adapterId: ADAPTER, device: 'access-2' }, { cursor: first.body.next });
    expect(res.status).toBe(400);
  });
});

describe('GET …/configs/{configId}', () => {
  it('answers the configuration as NSO gave it with every secret member masked', async () => {
    const res = await get(handlers.config, CONFIG_PATH, { adapterId: ADAPTER, device: DEVICE, configId: taken[2]! });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ configId: taken[2], batchId: 'batch2', source: 'compliance', grade: 'pass' });
    expect(res.body.config).toEqual({
      hostname: 'core-1',
      // An SNMP community is a secret by its name: the whole member goes.
      snmp: { community: REDACTED },
      aaa: { authentication: { users: { user: [{ name: 'admin', password: REDACTED }] } } },
      banner: 'release 2',
    });
    expect(JSON.stringify(res.body)).not.toContain('s3cr3t');
  });

  it('answers 404 for a configId the device does not have, and 400 for one that is no configId', async () => {
    const unknown = await get(handlers.config, CONFIG_PATH, { adapterId: ADAPTER, device: DEVICE, configId: '20200101T000000000Z-nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.contentType).toBe('application/problem+json');
    expect((await get(handlers.config, CONFIG_PATH, { adapterId: ADAPTER, device: DEVICE, configId: 'latest' })).status).toBe(400);
  });
});

describe('GET …/configs/{configId}/diff', () => {
  const diff = (configId: string, against: string, format?: string) =>
    get(handlers.diff, DIFF_PATH, { adapterId: ADAPTER, device: DEVICE, configId }, { against, ...(format ? { format } : {}) });

  it('answers the JSON Patch from against to configId: applied to against it gives configId, secrets masked', async () => {
    const res = await diff(taken[3]!, taken[1]!);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json-patch+json');
    // The banner changed in the clear; the two secrets changed too, and show only masked.
    expect(res.body).toContainEqual({ op: 'replace', path: '/banner', value: 'release 3' });
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/s3cr3t|\$9\$/);
    expect(text).toContain(REDACTED);
    // Without secrets in the way, the patch is exact: the public parts of the two agree once applied.
    const plain = res.body.filter((op: { path: string }) => op.path === '/banner');
    const patched = applyPatch(structuredClone(config(1)), plain, true, false).newDocument;
    expect(patched.banner).toBe(config(3).banner);
  });

  it('answers an empty patch for a configuration against itself, and a unified diff with only its headers', async () => {
    const same = await diff(taken[2]!, taken[2]!);
    expect(same.body).toEqual([]);
    const unified = await diff(taken[2]!, taken[2]!, 'unified');
    expect(unified.status).toBe(200);
    expect(unified.contentType).toMatch(/^text\/x-diff/);
    const [minus, plus] = (unified.body as string).split('\n');
    expect([minus?.split('\t')[0], plus?.split('\t')[0]]).toEqual([`--- configs/${taken[2]}`, `+++ configs/${taken[2]}`]);
    expect(unified.body).not.toContain('@@');
  });

  it('answers a unified diff of the two pretty-printed configurations with format=unified, secrets masked', async () => {
    const res = await diff(taken[4]!, taken[0]!, 'unified');
    expect(res.status).toBe(200);
    expect(res.body).toContain('-  "banner": "release 0",');
    expect(res.body).toContain('+  "banner": "release 4",');
    expect(res.body).not.toMatch(/s3cr3t|\$9\$/);
  });

  it('answers 404 when either take is unknown, 400 for an unknown format or no against', async () => {
    const unknown = await diff(taken[4]!, '20200101T000000000Z-nope');
    expect(unknown.status).toBe(404);
    expect(unknown.contentType).toBe('application/problem+json');
    expect((await diff(taken[4]!, taken[0]!, 'html')).status).toBe(400);
    const missing = await get(handlers.diff, DIFF_PATH, { adapterId: ADAPTER, device: DEVICE, configId: taken[4]! });
    expect(missing.status).toBe(400);
  });
});

describe('when a store is down', () => {
  it('answers 503 with Retry-After when S3 cannot be reached', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_S3', `http://127.0.0.1:${await freePort()}`);
    vi.resetModules();
    const { config } = await importHandlers({ config: MODULES.config });
    const res = await get(config, CONFIG_PATH, { adapterId: ADAPTER, device: DEVICE, configId: taken[0]! });
    vi.unstubAllEnvs();
    expect(res.status).toBe(503);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.headers['Retry-After']).toBeDefined();
  });

  it('answers 503 when DynamoDB cannot be reached', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', `http://127.0.0.1:${await freePort()}`);
    vi.resetModules();
    const { configs } = await importHandlers({ configs: MODULES.configs });
    const res = await get(configs, CONFIGS_PATH, { adapterId: ADAPTER, device: DEVICE });
    vi.unstubAllEnvs();
    expect(res.status).toBe(503);
    expect(res.contentType).toBe('application/problem+json');
  });
});
