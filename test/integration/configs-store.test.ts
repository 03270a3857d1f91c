/**
 * The configuration archive against DynamoDB Local and the local S3 server: what one take
 * stores, what an unchanged one does not upload, what a batch that runs a device again writes,
 * and that an entry is never written when its content could not be stored.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigHistory, REFRESH_DAYS } from '../../functions/configs/archive.js';
import { s3Blobs, type ConfigBlobs } from '../../functions/configs/blobs.js';
import type { ConfigSource } from '../../functions/configs/model.js';
import { createS3Client } from '../../functions/configs/s3.js';
import { ConfigIndex } from '../../functions/configs/store.js';
import { canonicalJson } from '../../functions/platform/canonical-json.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { freePort } from '../../tools/local/dynamodb-local.js';
import { createTables } from '../../tools/local/table-copies.js';

const BUCKET = process.env['CONFIGS_BUCKET']!;
const s3 = createS3Client();
let index: ConfigIndex;
let blobs: ConfigBlobs;
let table: string;

const CONFIG = { interface: [{ name: 'Gi0/0', mtu: 1500 }], hostname: 'edge-1', aaa: { password: 'pl41n' } };
const source = (batchId: string, batchStarted = '2026-11-20T10:00:00.000Z'): ConfigSource => ({ kind: 'compliance', batchId, batchStarted });
const at = (iso: string) => new Date(iso);

/** An archive over the real stores whose uploads are counted by the archive itself. */
const archive = (over: Partial<{ blobs: ConfigBlobs; retention: number }> = {}) =>
  new ConfigHistory({ blobs: over.blobs ?? blobs, index, retentionDays: async () => over.retention ?? 30 });

beforeAll(async () => {
  table = (await createTables())['configs'];
  index = new ConfigIndex(documentClient, table);
  blobs = s3Blobs(s3, { bucket: BUCKET });
});

describe('recording a take', () => {
  it('stores the content by device and SHA-256 of the canonical JSON, then its entry and the device’s last take', async () => {
    const history = archive({ retention: 30 });
    const taken = at('2026-11-20T10:01:00.000Z');
    const recorded = await history.record({ adapterId: `a-${table}`, device: 'edge 1/x', config: CONFIG, source: source('b1'), takenAt: taken, grade: 'pass' });
    const canonical = canonicalJson(CONFIG);
    expect(recorded).toEqual({
      configId: '20261120T100000000Z-b1',
      sha256: createHash('sha256').update(canonical).digest('hex'),
      size: Buffer.byteLength(canonical),
      uploaded: true,
    });
    expect(history.uploads).toBe(1);
    expect(await blobs.get(`configs/a-${table}/edge%201%2Fx/${recorded.sha256}.json.gz`)).toBe(canonical);
    const entry = await index.getEntry(`a-${table}`, 'edge 1/x', recorded.configId, taken);
    expect(entry).toMatchObject({ takenAt: taken.toISOString(), batchId: 'b1', source: 'compliance', grade: 'pass', sha256: recorded.sha256 });
    expect(entry!.expiresAt).toBe(Math.floor(taken.getTime() / 1000) + 30 * 86_400);
    expect(await index.lastTake(`a-${table}`, 'edge 1/x', taken)).toMatchObject({ configId: recorded.configId, storedAt: taken.toISOString() });
  });

  it('uploads nothing for an unchanged configuration: one index entry more, the upload counted as skipped', async () => {
    const history = archive();
    const adapterId = `dedup-${table}`;
    const first = await history.record({ adapterId, device: 'r1', config: CONFIG, source: source('b1'), takenAt: at('2026-11-20T10:01:00.000Z') });
    // The same content with its members in another order: the same canonical JSON.
    const reordered = { hostname: 'edge-1', aaa: { password: 'pl41n' }, interface: [{ mtu: 1500, name: 'Gi0/0' }] };
    const second = await history.record({
      adapterId,
      device: 'r1',
      config: reordered,
      source: source('b2', '2026-11-21T10:00:00.000Z'),
      takenAt: at('2026-11-21T10:01:00.000Z'),
    });
    expect(first.uploaded).toBe(true);
    expect(second).toMatchObject({ uploaded: false, sha256: first.sha256 });
    expect([history.uploads, history.unchanged]).toEqual([1, 1]);
    const page = await index.listEntries(adapterId, 'r1', { limit: 10, now: at('2026-11-22T00:00:00.000Z') });
    expect(page.items.map((e) => e.configId)).toEqual([second.configId, first.configId]);
    expect(await blobs.get(`configs/${adapterId}/r1/${first.sha256}.json.gz`)).toBe(canonicalJson(CONFIG));
  });

  it('uploads a changed configuration, and content seen again after the refresh window (its lifecycle clock restarts)', async () => {
    const history = archive();
    const adapterId = `refresh-${table}`;
    const day = (n: number) => new Date(Date.parse('2026-11-01T00:00:00.000Z') + n * 86_400_000);
    await history.record({ adapterId, device: 'r1', config: CONFIG, source: source('b1', day(0).toISOString()), takenAt: day(0) });
    await history.record({ adapterId, device: 'r1', config: { ...CONFIG, hostname: 'edge-2' }, source: source('b2', day(1).toISOString()), takenAt: day(1) });
    expect(history.uploads).toBe(2);
    // Unchanged within the window: nothing uploaded; at the window's end: written again.
    await history.record({ adapterId, device: 'r1', config: { ...CONFIG, hostname: 'edge-2' }, source: source('b3', day(2).toISOString()), takenAt: day(2) });
    expect(history.uploads).toBe(2);
    const late = day(1 + REFRESH_DAYS);
    const refreshed = await history.record({
      adapterId,
      device: 'r1',
      config: { ...CONFIG, hostname: 'edge-2' },
      source: source('b4', late.toISOString()),
      takenAt: late,
    });
    expect(refreshed.uploaded).toBe(true);
    expect(history.uploads).toBe(3);
    expect((await index.lastTake(adapterId, 'r1', late))!.storedAt).toBe(late.toISOString());
  });

  it('writes the same entry when a batch records a device again (a chunk run again after a crash): one entry, one upload', async () => {
    const history = archive();
    const adapterId = `rerun-${table}`;
    const take = { adapterId, device: 'r1', config: CONFIG, source: source('b1') };
    const first = await history.record({ ...take, takenAt: at('2026-11-20T10:01:00.000Z'), grade: 'fail' });
    const again = await history.record({ ...take, takenAt: at('2026-11-20T10:07:00.000Z'), grade: 'fail' });
    expect(again.configId).toBe(first.configId);
    expect(history.uploads).toBe(1);
    const page = await index.listEntries(adapterId, 'r1', { limit: 10, now: at('2026-11-21T00:00:00.000Z') });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.takenAt).toBe('2026-11-20T10:07:00.000Z');
  });

  it('keeps the later batch’s take as the device’s last when an earlier batch records after it', async () => {
    const history = archive();
    const adapterId = `order-${table}`;
    await history.record({
      adapterId,
      device: 'r1',
      config: CONFIG,
      source: source('late', '2026-11-21T10:00:00.000Z'),
      takenAt: at('2026-11-21T10:01:00.000Z'),
      grade: 'pass',
    });
    await history.record({
      adapterId,
      device: 'r1',
      config: CONFIG,
      source: source('early', '2026-11-20T10:00:00.000Z'),
      takenAt: at('2026-11-21T10:02:00.000Z'),
      grade: 'fail',
    });
    expect(await index.lastTake(adapterId, 'r1', at('2026-11-22T00:00:00.000Z'))).toMatchObject({ configId: '20261121T100000000Z-late', grade: 'pass' });
  });

  it('keeps the last compliance grade when a backup (a take without a grade) comes after it', async () => {
    const history = archive();
    const adapterId = `grade-${table}`;
    await history.record({ adapterId, device: 'r1', config: CONFIG, source: source('checked'), takenAt: at('2026-11-20T10:01:00.000Z'), grade: 'fail' });
    const backup = await history.record({
      adapterId,
      device: 'r1',
      config: CONFIG,
      source: { kind: 'backup', batchId: 'kept', batchStarted: '2026-11-21T10:00:00.000Z' },
      takenAt: at('2026-11-21T10:01:00.000Z'),
    });
    const last = await index.lastTake(adapterId, 'r1', at('2026-11-22T00:00:00.000Z'));
    expect(last).toMatchObject({ configId: backup.configId, grade: 'fail' });
    const [entry] = (await index.listEntries(adapterId, 'r1', { limit: 1, now: at('2026-11-22T00:00:00.000Z') })).items;
    expect(entry).not.toHaveProperty('grade');
  });
});

describe('recording in groups', () => {
  it('records the takes of one adapter made together in groups of 25: one read and one write of each kind per group', async () => {
    const adapterId = `group-${table}`;
    const calls = { reads: 0, writes: 0 };
    const counted = {
      lastTakes: (...a: Parameters<ConfigIndex['lastTakes']>) => (calls.reads++, index.lastTakes(...a)),
      putTakes: (...a: Parameters<ConfigIndex['putTakes']>) => (calls.writes++, index.putTakes(...a)),
    };
    const history = new ConfigHistory({ blobs, index: counted, retentionDays: async () => 30 });
    const taken = at('2026-11-20T10:01:00.000Z');
    const devices = Array.from({ length: 30 }, (_, i) => `r${i}`);
    const recorded = await Promise.all(
      devices.map((device) => history.record({ adapterId, device, config: { ...CONFIG, hostname: device }, source: source('b1'), takenAt: taken })),
    );
    expect(calls).toEqual({ reads: 2, writes: 2 });
    expect(history.uploads).toBe(30);
    for (const [i, device] of devices.entries()) {
      expect(await index.lastTake(adapterId, device, taken)).toMatchObject({ configId: recorded[i]!.configId, sha256: recorded[i]!.sha256 });
    }
  });

  it('puts a second take of a device made at the same time in the next group: both entries, the later batch’s take last', async () => {
    const history = archive();
    const adapterId = `same-${table}`;
    const takes = [source('late', '2026-11-21T10:00:00.000Z'), source('early', '2026-11-20T10:00:00.000Z')].map((s) =>
      history.record({ adapterId, device: 'r1', config: CONFIG, source: s, takenAt: at('2026-11-21T10:01:00.000Z') }),
    );
    await Promise.all(takes);
    const page = await index.listEntries(adapterId, 'r1', { limit: 10, now: at('2026-11-22T00:00:00.000Z') });
    expect(page.items.map((e) => e.batchId)).toEqual(['late', 'early']);
    expect(await index.lastTake(adapterId, 'r1', at('2026-11-22T00:00:00.000Z'))).toMatchObject({ configId: '20261121T100000000Z-late' });
  });
});

describe('when S3 is down', () => {
  it('throws and writes no index entry (nothing half-written)', async () => {
    const closed = await freePort();
    const down = new ConfigHistory({
      blobs: s3Blobs(createS3Client(`http://127.0.0.1:${closed}`), { bucket: BUCKET }),
      index,
      retentionDays: async () => 30,
    });
    const adapterId = `down-${table}`;
    await expect(down.record({ adapterId, device: 'r1', config: CONFIG, source: source('b1'), takenAt: at('2026-11-20T10:01:00.000Z') })).rejects.toMatchObject(
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(down.uploads).toBe(0);
    expect((await index.listEntries(adapterId, 'r1', { limit: 10, now: at('2026-11-20T11:00:00.000Z') })).items).toEqual([]);
    expect(await index.lastTake(adapterId, 'r1', at('2026-11-20T11:00:00.000Z'))).toBeUndefined();
  });
});
