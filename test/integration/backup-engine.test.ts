/**
 * Backup batches below the HTTP layer: the device list read from the NSO simulator's synthetic
 * fleet a page at a time through the relay's client, the batch run by the official local durable
 * runner with reports in DynamoDB Local, and a recording `ConfigArchive` behind the engine's
 * `archive`. Includes chunks that run again after a crash, and an archive that fails.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BackupStartDeps } from '../../functions/compliance/backups.js';
import type { RelayGet } from '../../functions/compliance/check.js';
import type { BatchEvent, EngineDeps } from '../../functions/compliance/engine.js';
import type { Report } from '../../functions/compliance/model.js';
import { ComplianceStore, type ReportCursor } from '../../functions/compliance/store.js';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { fleetConfig, fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { createTables } from '../../tools/local/table-copies.js';
import { RecordingArchive } from '../support/config-archive.js';

const PASSWORD = 'backup-Pa55-word';
const ADAPTER = 'backup-nso';
const FLEET = 600;
/** The fleet and the simulator's own two devices (ce0, pe0). */
const KNOWN = FLEET + 2;

let sim: NsoSimulator;
let dir: string;
let store: ComplianceStore;
let engineDeps: EngineDeps;
let relayGet: RelayGet;
let engine: typeof import('../../functions/compliance/engine.js');
let backups: typeof import('../../functions/compliance/backups.js');
let gates: typeof import('../../functions/compliance/gate.js');
let LocalDurableTestRunner: DurableTesting['LocalDurableTestRunner'];

const startDeps = (chunkSize: number): BackupStartDeps => ({
  adapters: { get: async (name) => (name === ADAPTER ? { name } : undefined) },
  store,
  startExecution: async () => undefined,
  now: () => new Date(),
  retentionDays: 30,
  concurrency: 4,
  chunkSize,
  relayGet,
  pageSize: 100,
});

const run = (batchId: string, deps: EngineDeps) =>
  new LocalDurableTestRunner({ handlerFunction: withDurableExecution(async (event: BatchEvent, context) => engine.runBatch(event, context, deps)) }).run({
    payload: { batchId },
  });

const allReports = async (batchId: string, grade?: Report['grade']): Promise<Report[]> => {
  const out: Report[] = [];
  let from: ReportCursor | undefined;
  do {
    const page = await store.listReports(batchId, { limit: 200, ...(grade ? { grade } : {}), ...(from ? { from } : {}) });
    out.push(...page.items);
    from = page.next;
  } while (from);
  return out;
};

/** The store, with `putReports` replaced. */
const storeWith = (putReports: ComplianceStore['putReports']): ComplianceStore =>
  new Proxy(store, {
    get: (target, name) => (name === 'putReports' ? putReports : (Reflect.get(target, name) as (...args: unknown[]) => unknown).bind(target)),
  });

const fleet = (from: number, count: number): string[] => Array.from({ length: count }, (_, i) => fleetName(from + i));

beforeAll(async () => {
  const tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'backup-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: FLEET } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/backup', { password: PASSWORD });
  await createAdapterStore(documentClient, tables['adapters']).put(
    { name: ADAPTER, type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/backup#password' } },
    new Date().toISOString(),
  );
  store = new ComplianceStore(documentClient, tables['compliance']);
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('LOG_LEVEL', 'error');
  vi.resetModules();
  const batch = await import('../../functions/compliance/handlers/batch.js');
  engineDeps = { ...batch.engineDeps, retryDelaySeconds: 1 };
  relayGet = engineDeps.relayGet(() => 60_000);
  engine = await import('../../functions/compliance/engine.js');
  backups = await import('../../functions/compliance/backups.js');
  gates = await import('../../functions/compliance/gate.js');
  ({ LocalDurableTestRunner } = await loadDurableTesting());
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
}, 60_000);

afterAll(async () => {
  await LocalDurableTestRunner?.teardownTestEnvironment();
  vi.unstubAllEnvs();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sim.requests.length = 0;
  sim.setKnobs({});
});

afterEach(() => {
  expect(gates.gateFor(ADAPTER, 1).held).toBe(0);
});

/** The device-list requests sent, as their query parameters. */
const pageRequests = () =>
  sim.requests
    .filter((r) => r.path.startsWith('/restconf/data/tailf-ncs:devices/device?'))
    .map((r) => Object.fromEntries(new URL(r.path, 'http://x').searchParams));

describe("reading NSO's device list a page at a time", () => {
  it('reads every device over several pages, in order, each asking for names only', async () => {
    const { names, skipped } = await backups.listDevices(ADAPTER, relayGet, 100);
    expect(skipped).toBeUndefined();
    expect(names).toEqual(['ce0', 'pe0', ...fleet(0, FLEET)]);
    expect(pageRequests()).toEqual(Array.from({ length: 7 }, (_, i) => ({ fields: 'name', offset: String(i * 100), limit: '100' })));
  });

  it('leaves out the names a device name may not be (too long, a `/`), keeping the others', async () => {
    const names = ['ok-1', 'x'.repeat(1100), 'a/b', '路'.repeat(254), '路'.repeat(253)];
    const body = JSON.stringify({ 'tailf-ncs:device': names.map((name) => ({ name })) });
    sim.setKnobs({ answer: { match: (p) => p.includes('device?fields=name&offset=0&'), status: 200, body } });
    expect(await backups.listDevices(ADAPTER, relayGet, 100)).toEqual({
      names: ['ok-1', '路'.repeat(253)],
      skipped: { count: 3, reason: expect.any(String), examples: [`${'x'.repeat(64)}…`, 'a/b', `${'路'.repeat(64)}…`] },
    });
  });

  it('stops at the empty page after a last full one', async () => {
    expect((await backups.listDevices(ADAPTER, relayGet, KNOWN / 2)).names).toHaveLength(KNOWN);
    expect(pageRequests().map((p) => p['offset'])).toEqual(['0', '301', '602']);
  });

  it('fails with 502 naming the page when NSO answers one page with an error', async () => {
    sim.setKnobs({ answer: { match: (p) => p.includes('&offset=200&'), status: 500, body: '{"ietf-restconf:errors":{"error":[]}}' } });
    const failed = backups.listDevices(ADAPTER, relayGet, 100);
    await expect(failed).rejects.toMatchObject({
      status: 502,
      detail: expect.stringMatching(/answered 500 to page 3 of its device list \(offset 200, limit 100\)/),
    });
    expect(pageRequests()).toHaveLength(3);
  });

  it('fails with 502 when a page is not a device list, or has an entry without a name', async () => {
    sim.setKnobs({ answer: { match: (p) => p.includes('&offset=100&'), status: 200, body: '{"tailf-ncs:devices":{}}' } });
    await expect(backups.listDevices(ADAPTER, relayGet, 100)).rejects.toMatchObject({
      status: 502,
      detail: expect.stringMatching(/without a tailf-ncs:device list to page 2/),
    });
    sim.setKnobs({ answer: { match: (p) => p.includes('&offset=0&'), status: 200, body: '{"tailf-ncs:device":[{"name":"a"},{"address":"10.0.0.1"}]}' } });
    await expect(backups.listDevices(ADAPTER, relayGet, 100)).rejects.toMatchObject({
      status: 502,
      detail: expect.stringMatching(/entry without a name to page 1/),
    });
  });

  it('fails with 502 when NSO does not page (it answers the whole list to every page)', async () => {
    sim.setKnobs({ ignorePaging: true });
    await expect(backups.listDevices(ADAPTER, relayGet, 100)).rejects.toMatchObject({
      status: 502,
      detail: expect.stringMatching(/602 devices: it does not page/),
    });
    expect(pageRequests()).toHaveLength(1);
  });

  it('refuses with 400 on devices when NSO knows more devices than a batch takes', async () => {
    await expect(backups.listDevices(ADAPTER, relayGet, 100, 250)).rejects.toMatchObject({
      status: 400,
      detail: expect.stringMatching(/more than 250 devices/),
      extensions: { errors: [expect.objectContaining({ field: 'devices' })] },
    });
    expect(pageRequests()).toHaveLength(3);
  });
});

describe('a backup batch on the durable engine', () => {
  it("keeps every device of NSO's fleet once, reports it kept, and counts the batch like a compliance batch", async () => {
    const archive = new RecordingArchive();
    const { batchId, total } = await backups.startBackup({ adapterId: ADAPTER }, startDeps(250));
    expect(total).toBe(KNOWN);
    const execution = await run(batchId, { ...engineDeps, archive });
    expect(execution.getStatus()).toBe('SUCCEEDED');

    const batch = (await store.getBatch(batchId))!;
    expect(batch).toEqual({
      batchId,
      kind: 'backup',
      sync: 'none',
      adapterId: ADAPTER,
      status: 'completed',
      total: KNOWN,
      done: KNOWN,
      grades: { pass: 0, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: KNOWN },
      totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
      started: expect.any(String),
      finished: expect.any(String),
    });
    // Each device recorded once, as NSO gave it, with the batch as its source.
    expect(archive.calls).toHaveLength(KNOWN);
    expect([...archive.callsPerDevice().values()].every((n) => n === 1)).toBe(true);
    const take = archive.calls.find((t) => t.device === fleetName(42))!;
    expect(take).toMatchObject({
      adapterId: ADAPTER,
      config: fleetConfig(42, fleetName(42)),
      source: { kind: 'backup', batchId, batchStarted: batch.started },
    });
    // A backup grades nothing: the device list keeps the last compliance grade.
    expect(take).not.toHaveProperty('grade');
    // The adapter's fetch cap holds across the chunks running at once.
    expect(sim.peakInFlight).toBeLessThanOrEqual(4);

    const reports = await allReports(batchId, 'kept');
    expect(reports).toHaveLength(KNOWN);
    const report = reports.find((r) => r.device === fleetName(42))!;
    expect(report).toEqual({
      reportId: expect.stringMatching(/^[0-9a-f]{24}-k[0-9]{16}$/),
      batchId,
      device: fleetName(42),
      grade: 'kept',
      totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
      issues: [],
      configId: [...archive.entries].find(([, t]) => t.device === fleetName(42))![0],
      checkedAt: expect.any(String),
    });
    expect(await store.getReport(report.reportId)).toEqual(report);
  });

  it('reports a device whose configuration could not be fetched error with the reason, and keeps nothing for it', async () => {
    const archive = new RecordingArchive();
    const devices = [...fleet(0, 5), 'edge-missing-0', 'bad/name'];
    const { batchId } = await backups.startBackup({ adapterId: ADAPTER, devices: [...devices, fleetName(0)] }, startDeps(3));
    expect((await run(batchId, { ...engineDeps, archive })).getStatus()).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: 7, done: 7, grades: { kept: 5, error: 2 } });
    const errors = await allReports(batchId, 'error');
    expect(errors.map((r) => [r.device, r.reason])).toEqual([
      ['edge-missing-0', "The orchestrator does not know the device 'edge-missing-0' (404)."],
      ['bad/name', 'The device name cannot be addressed in a RESTCONF path.'],
    ]);
    expect(errors[0]).not.toHaveProperty('configId');
    expect([...archive.callsPerDevice().keys()].sort()).toEqual(fleet(0, 5));
  });

  /** Chunk 1 of a batch of `fleet(0, 21)` in chunks of 7: devices 7 to 13. */
  const chunkOne = new Set(fleet(7, 7));

  it('records each device once when a chunk runs again after a crash that followed its first write', async () => {
    const archive = new RecordingArchive();
    const { batchId } = await backups.startBackup({ adapterId: ADAPTER, devices: fleet(0, 21) }, startDeps(7));
    let crashed = false;
    const crashing = storeWith(async (batch, of, reports, expiresAt) => {
      const stored = await store.putReports(batch, of, reports, expiresAt);
      if (!crashed && reports.some((r) => chunkOne.has(r.report.device))) {
        crashed = true;
        throw new Error('simulated crash after reports were written');
      }
      return stored;
    });
    sim.setKnobs({ delayMs: 300 });
    const execution = await run(batchId, { ...engineDeps, archive, store: crashing, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(crashed).toBe(true);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getInvocations().length).toBeGreaterThanOrEqual(2);
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', done: 21, grades: { kept: 21, error: 0 } });
    expect(archive.callsPerDevice()).toEqual(new Map(fleet(0, 21).map((d) => [d, 1])));
    expect(await allReports(batchId)).toHaveLength(21);
  });

  it('keeps one entry per device when a crash lost reports: only their devices are recorded again, under the same id', async () => {
    const archive = new RecordingArchive();
    const { batchId } = await backups.startBackup({ adapterId: ADAPTER, devices: fleet(0, 21) }, startDeps(7));
    let lost: string[] | undefined;
    const crashing = storeWith(async (batch, of, reports, expiresAt) => {
      if (!lost && reports.some((r) => chunkOne.has(r.report.device))) {
        lost = reports.map((r) => r.report.device);
        throw new Error('simulated crash before the reports were written');
      }
      return store.putReports(batch, of, reports, expiresAt);
    });
    const execution = await run(batchId, { ...engineDeps, archive, store: crashing, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(lost!.length).toBeGreaterThan(0);
    const twice = [...archive.callsPerDevice()].filter(([, n]) => n === 2).map(([device]) => device);
    expect(twice.sort()).toEqual([...lost!].sort());
    expect(archive.entries.size).toBe(21);
    const reports = await allReports(batchId);
    expect(new Set(reports.map((r) => r.device)).size).toBe(21);
    expect(new Set(reports.map((r) => r.configId))).toEqual(new Set(archive.entries.keys()));
  });

  it('fails the chunk, never the device, when the archive cannot store a configuration: the chunk runs again and keeps it', async () => {
    const archive = new RecordingArchive();
    let failures = 0;
    archive.failWhen = (take) => take.device === fleetName(9) && failures++ === 0;
    const { batchId } = await backups.startBackup({ adapterId: ADAPTER, devices: fleet(0, 14) }, startDeps(7));
    const execution = await run(batchId, { ...engineDeps, archive });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(failures).toBe(2);
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', done: 14, grades: { kept: 14, error: 0 } });
    expect(archive.entries.size).toBe(14);
    expect(archive.callsPerDevice().get(fleetName(9))).toBe(2);
  });

  it('fails the batch, reporting no device, when the engine has no archive to keep configurations in', async () => {
    const { batchId } = await backups.startBackup({ adapterId: ADAPTER, devices: fleet(0, 3) }, startDeps(7));
    const { archive: _none, ...withoutArchive } = engineDeps;
    const execution = await run(batchId, { ...withoutArchive, chunkAttempts: 2 });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'failed', done: 0, reason: expect.stringMatching(/could not be checked/) });
    expect(await allReports(batchId)).toEqual([]);
    expect(sim.requests).toEqual([]);
  });
});
