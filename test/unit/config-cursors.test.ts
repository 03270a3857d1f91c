/**
 * Cursors of the configuration history's lists (functions/configs/read.ts) with the longest names
 * the service accepts: each stays within the cursor bound and opens the next page; a cursor of
 * another list is refused.
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { MAX_ANSWER_BYTES, listConfigs, listDevices, loadConfig, readConfig } from '../../functions/configs/read.js';
import type { ConfigIndex, DeviceSummary, StoredEntry } from '../../functions/configs/store.js';
import { CONFIG_LIMITS } from '../../functions/trees/config-checks.js';
import { CURSOR_MAX_LENGTH } from '../../functions/platform/cursor.js';

/** An adapter id of the most characters the routes accept. */
const ADAPTER = 'A'.repeat(128);
/** A device name of the most code points a tree (and a backup) accepts, each 4 bytes of UTF-8. */
const LONGEST_DEVICE = '\u{20000}'.repeat(CONFIG_LIMITS.deviceName);
/** The longest device name the configs routes take in their path. */
const LONGEST_PATH_DEVICE = '路'.repeat(1024);
const CONFIG_ID = '20260101T000000000Z-aaaaaaaaaaaaaaaaaaaaaaaa';

const entry = (device: string): StoredEntry =>
  ({
    configId: CONFIG_ID,
    adapterId: ADAPTER,
    device,
    takenAt: '2026-01-01T00:00:00.000Z',
    sha256: 'x',
    size: 1,
    batchId: 'b',
    source: 'backup',
    objectKey: 'k',
    expiresAt: 9e9,
  }) as StoredEntry;
const summary = (device: string): DeviceSummary => ({ device, configId: CONFIG_ID, takenAt: '', sha256: '', objectKey: 'k', storedAt: '', expiresAt: 9e9 });

/** An index of one page per list, whose last key is the longest of its kind. */
const index = {
  listEntries: async (_a: string, device: string) => ({ items: [entry(device)], next: CONFIG_ID }),
  listDevices: async () => ({ items: [summary(LONGEST_DEVICE)], next: LONGEST_DEVICE }),
} as unknown as ConfigIndex;
const deps = { index, now: () => new Date('2026-01-02T00:00:00Z') };

describe('cursors of the configuration history, with the longest names', () => {
  it.each([
    ['a tree device name of 4-byte characters', LONGEST_DEVICE],
    ['the longest device name of a path', LONGEST_PATH_DEVICE],
  ])("of a device's takes stay short whatever the device's name (%s)", async (_, device) => {
    const first = await listConfigs(deps, ADAPTER, device, { limit: 1 });
    expect(first.next!.length).toBeLessThan(200);
    await expect(listConfigs(deps, ADAPTER, device, { limit: 1, cursor: first.next })).resolves.toMatchObject({ items: [{ configId: CONFIG_ID }] });
    await expect(listConfigs(deps, ADAPTER, `${device.slice(0, -1)}x`, { limit: 1, cursor: first.next })).rejects.toMatchObject({ status: 400 });
  });

  it("of an adapter's devices stay within the bound when the last device has the longest name", async () => {
    const first = await listDevices(deps, ADAPTER, { limit: 1 });
    expect(first.next!.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
    await expect(listDevices(deps, ADAPTER, { limit: 1, cursor: first.next })).resolves.toMatchObject({ items: [{ device: LONGEST_DEVICE }] });
    await expect(listDevices(deps, 'B'.repeat(128), { limit: 1, cursor: first.next })).rejects.toMatchObject({ status: 400 });
  });
});

describe('reading a configuration whose content is not the take', () => {
  it("refuses to serve a content whose SHA-256 is not the take's, and serves the one that is", async () => {
    const canonical = '{"hostname":"r1"}';
    const sha256 = createHash('sha256').update(canonical, 'utf8').digest('hex');
    const readDeps = (stored: string) => ({
      index: { getEntry: async () => ({ ...entry('r1'), sha256 }) } as unknown as ConfigIndex,
      blobs: { get: async () => stored, put: async () => undefined },
      now: () => new Date('2026-01-02T00:00:00Z'),
    });
    await expect(loadConfig(readDeps(canonical), ADAPTER, 'r1', CONFIG_ID)).resolves.toMatchObject({ config: { hostname: 'r1' } });
    await expect(loadConfig(readDeps('{"hostname":"r2"}'), ADAPTER, 'r1', CONFIG_ID)).rejects.toThrow(/Integrity/);
  });
});

describe('reading a configuration larger than an answer may be', () => {
  const readDeps = (canonical: string) => ({
    index: { getEntry: async () => ({ ...entry('r1'), sha256: createHash('sha256').update(canonical, 'utf8').digest('hex') }) } as unknown as ConfigIndex,
    blobs: { get: async () => canonical, put: async () => undefined },
    now: () => new Date('2026-01-02T00:00:00Z'),
  });
  const TOO_LARGE = { status: 422, type: 'urn:netconfig:problem:config-too-large' };
  /** The problem body a read was refused with. */
  const problemOf = (read: Promise<unknown>): Promise<unknown> =>
    read.then(
      () => undefined,
      (error: { toBody: () => unknown }) => error.toBody(),
    );
  // A configuration's JSON is what the answer carries, with the take's fields around it.
  const sized = (bytes: number): string => JSON.stringify({ banner: 'x'.repeat(bytes - 13) });

  it('answers 422 config-too-large past the bound, and serves one just within it', async () => {
    expect(sized(1000)).toHaveLength(1000);
    expect(await problemOf(readConfig(readDeps(sized(MAX_ANSWER_BYTES)), ADAPTER, 'r1', CONFIG_ID))).toMatchObject(TOO_LARGE);
    const within = await readConfig(readDeps(sized(MAX_ANSWER_BYTES - 2000)), ADAPTER, 'r1', CONFIG_ID);
    expect(Buffer.byteLength(JSON.stringify(within))).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });

  it('counts the masked answer: short secrets that mask longer can pass the bound', async () => {
    // Each entry is 16 bytes stored and 25 masked (`[redacted]`).
    const canonical = JSON.stringify({ users: Array.from({ length: 250_000 }, () => ({ password: 'a' })) });
    expect(Buffer.byteLength(canonical)).toBeLessThan(MAX_ANSWER_BYTES);
    expect(await problemOf(readConfig(readDeps(canonical), ADAPTER, 'r2', CONFIG_ID))).toMatchObject(TOO_LARGE);
  });
});
