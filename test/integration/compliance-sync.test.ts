/**
 * Sync before grading, end to end below the HTTP layer: batches run by the durable local runner
 * against the NSO simulator's fleet (every fifth device changed behind NSO's back) through the
 * relay's client, reports in DynamoDB Local. Every mode, and every answer NSO may give.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BatchEvent, EngineDeps } from '../../functions/compliance/engine.js';
import { startBatch, type StartDeps } from '../../functions/compliance/service.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import type { Report, SyncMode } from '../../functions/compliance/model.js';
import { listBatchReports } from '../../functions/compliance/read.js';
import { complianceRoutes } from '../../functions/compliance/routes.js';
import { listComplianceReports, startComplianceBatch } from '../../functions/generated/validators.js';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import type { Version } from '../../functions/trees/config-model.js';
import { expectedGrade, FLEET_RULES, FLEET_VARIABLES, fleetName, isOutOfSync, type FleetSpec } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { createTables } from '../../tools/local/table-copies.js';

const PASSWORD = 'sync-Pa55-word';
const ADAPTER = 'sync-nso';
const TREE = 'c1b2c3d4e5f6a1b2c3d4e5f6';
const FLEET: FleetSpec = { devices: 20, outOfSyncEvery: 5 };
const DRIFTED = [2, 7, 12, 17].map((i) => fleetName(i));

let sim: NsoSimulator;
let dir: string;
let store: ComplianceStore;
let engineDeps: EngineDeps;
let handler: ReturnType<typeof withDurableExecution>;
let LocalDurableTestRunner: DurableTesting['LocalDurableTestRunner'];

const version: Version = {
  name: 'v1',
  variables: FLEET_VARIABLES,
  created: '2026-01-01T00:00:00.000Z',
  createdBy: 'test',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  lastUpdatedBy: 'test',
  root: {
    name: 'base',
    devices: Array.from({ length: FLEET.devices }, (_, i) => fleetName(i)),
    rules: FLEET_RULES.map((r) => ({ ...r })) as Version['root']['rules'],
    children: [],
  },
};

const startDeps: StartDeps = {
  versions: async (treeId, label) => ({ tree: treeId === TREE, ...(treeId === TREE && label === 'v1' ? { version } : {}) }),
  adapters: { get: async (name) => (name === ADAPTER ? { name } : undefined) },
  get store() {
    return store;
  },
  startExecution: async () => undefined,
  now: () => new Date(),
  retentionDays: 1,
  concurrency: 3,
  chunkSize: 7,
};

/** Runs a batch of the whole fleet in `sync` mode (absent: the default) to its end; its batch and reports. */
const runBatch = async (sync?: SyncMode) => {
  const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, ...(sync ? { sync } : {}) }, startDeps);
  const execution = await new LocalDurableTestRunner({ handlerFunction: handler }).run({ payload: { batchId } });
  expect(execution.getStatus()).toBe('SUCCEEDED');
  const reports: Report[] = [];
  let cursor: string | undefined;
  do {
    const page = await listBatchReports(store, batchId, { limit: 50, ...(cursor ? { cursor } : {}) });
    reports.push(...page.items);
    cursor = page.next;
  } while (cursor);
  return { batch: (await store.getBatch(batchId))!, reports, byDevice: new Map(reports.map((r) => [r.device, r])) };
};

/** The grades of the fleet when NSO's copy is graded (as `none` grades it). */
const copyGrades = () => {
  const grades = { pass: 0, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: 0 };
  for (let i = 0; i < FLEET.devices; i++) grades[expectedGrade(i)]++;
  return grades;
};
const actions = (name: string) => sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/${name}`));

beforeAll(async () => {
  const tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'compliance-sync-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: FLEET });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/sync', { password: PASSWORD });
  await createAdapterStore(documentClient, tables['adapters']).put(
    { name: ADAPTER, type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/sync#password' } },
    new Date().toISOString(),
  );
  store = new ComplianceStore(documentClient, tables['compliance']);
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.resetModules();
  const batch = await import('../../functions/compliance/handlers/batch.js');
  engineDeps = { ...batch.engineDeps, retryDelaySeconds: 1 };
  const engine = await import('../../functions/compliance/engine.js');
  handler = withDurableExecution(async (event: BatchEvent, context) => engine.runBatch(event, context, engineDeps));
  ({ LocalDurableTestRunner } = await loadDurableTesting());
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
});

afterAll(async () => {
  await LocalDurableTestRunner?.teardownTestEnvironment();
  vi.unstubAllEnvs();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sim.resetData();
  sim.setKnobs({});
  sim.requests.length = 0;
});

describe('sync check (the default)', () => {
  it("grades the devices changed behind NSO's back out-of-sync, with NSO's masked diff and no score, in few requests", async () => {
    expect(DRIFTED.every((d) => isOutOfSync(FLEET, d))).toBe(true);
    const { batch, reports, byDevice } = await runBatch();
    expect(batch.sync).toBe('check');
    const grades = copyGrades();
    for (const d of DRIFTED) grades[expectedGrade(Number(d.slice(-5)))]--;
    expect(batch.grades).toEqual({ ...grades, 'out-of-sync': 4 });
    expect(batch.done).toBe(FLEET.devices);
    for (const d of DRIFTED) {
      const report = byDevice.get(d)!;
      expect(report).toMatchObject({ grade: 'out-of-sync', sync: { mode: 'check', result: 'out-of-sync' }, issues: [] });
      expect(report.score).toBeUndefined();
      expect(report.reportId).toMatch(/^[0-9a-f]{24}-o[0-9]{16}$/);
      expect(report.diff).toContain('198.51.100.7');
      expect(report.diff).toContain('[redacted]');
      expect(report.diff).not.toContain('drift-Secret-42');
      expect(await store.getReport(report.reportId)).toEqual(report);
    }
    for (const r of reports.filter((x) => !DRIFTED.includes(x.device))) expect(r.sync).toEqual({ mode: 'check', result: 'in-sync' });
    // One check-sync per chunk (3 chunks of at most 7), a compare-config per out-of-sync device, a GET per graded one.
    expect(actions('check-sync').map((r) => r.path)).toEqual(Array(3).fill('/restconf/data/tailf-ncs:devices/check-sync'));
    expect(actions('compare-config')).toHaveLength(4);
    expect(sim.requests.filter((r) => r.method === 'GET')).toHaveLength(16);
    // The report list filters by the new grade, the route's schema takes it.
    const page = await listBatchReports(store, batch.batchId, { grade: 'out-of-sync', limit: 2 });
    expect(page.items.map((r) => r.grade)).toEqual(['out-of-sync', 'out-of-sync']);
    const rest = await listBatchReports(store, batch.batchId, { grade: 'out-of-sync', limit: 2, cursor: page.next! });
    expect([...page.items, ...rest.items].map((r) => r.device).sort()).toEqual(DRIFTED);
    expect(listComplianceReports({ pathParameters: { batchId: batch.batchId }, queryStringParameters: { grade: 'out-of-sync' }, body: {} } as never)).toBe(
      true,
    );
  });

  it('finds a device changed through the simulator drift route, and NSO answering unsupported leaves compare-config to decide', async () => {
    const drift = await fetch(`${sim.url}/simulator/devices/${fleetName(0)}/drift`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ 'tailf-ned-cisco-ios:banner': { motd: 'changed on the console' } }),
    });
    expect(drift.status).toBe(200);
    sim.setKnobs({ checkSyncUnsupported: true });
    const { batch, byDevice } = await runBatch('check');
    expect(batch.grades['out-of-sync']).toBe(5);
    expect(byDevice.get(fleetName(0))).toMatchObject({ grade: 'out-of-sync', diff: expect.stringContaining('changed on the console') });
    expect(byDevice.get(fleetName(1))).toMatchObject({ grade: 'pass', sync: { result: 'in-sync', note: expect.stringContaining('compare-config') } });
    expect(actions('compare-config')).toHaveLength(FLEET.devices);
  });

  it("makes NSO's error result and a 5xx to check-sync the device's error, and the batch goes on", async () => {
    sim.setKnobs({ syncFailure: { devices: [fleetName(1)], actions: ['check-sync'] } });
    let { batch, byDevice } = await runBatch('check');
    expect(batch.status).toBe('completed');
    expect(batch.grades.error).toBe(1);
    expect(byDevice.get(fleetName(1))).toMatchObject({ grade: 'error', sync: { result: 'not-checked' }, reason: expect.stringContaining('check-sync: error') });
    sim.setKnobs({ syncFailure: { status: 500, actions: ['check-sync'] } });
    sim.requests.length = 0;
    ({ batch, byDevice } = await runBatch('check'));
    expect(batch.status).toBe('completed');
    expect(batch.grades.error).toBe(FLEET.devices);
    expect(byDevice.get(fleetName(3))?.reason).toContain('answered 500 to check-sync');
    expect(sim.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
  });

  it('never grades a device in sync when compare-config fails the NSO way (200 with only info)', async () => {
    const [drifted, kept] = [DRIFTED[0]!, fleetName(3)];
    sim.setKnobs({ checkSyncUnsupported: [kept], syncFailure: { devices: [drifted, kept], actions: ['compare-config'] } });
    const { batch, byDevice } = await runBatch('check');
    expect(batch.status).toBe('completed');
    // check-sync said out-of-sync: that stands, without NSO's diff.
    expect(byDevice.get(drifted)).toMatchObject({
      grade: 'out-of-sync',
      diff: '',
      sync: { mode: 'check', result: 'out-of-sync', note: expect.stringContaining(`Failed to connect to device ${drifted}`) },
    });
    // check-sync answered unsupported: nothing says whether NSO's copy matches, so the device is not graded.
    expect(byDevice.get(kept)).toMatchObject({
      grade: 'error',
      sync: { result: 'not-checked' },
      reason: expect.stringContaining(`compare-config): Failed to connect to device ${kept}`),
    });
  });

  it('asks device by device when a proxy answers 404 to the grouped check-sync, and grades as usual', async () => {
    sim.setKnobs({ answer: { match: (p) => p === '/restconf/data/tailf-ncs:devices/check-sync', status: 404, body: '{}' } });
    const { batch, byDevice } = await runBatch('check');
    expect(batch.grades['out-of-sync']).toBe(DRIFTED.length);
    expect(byDevice.get(fleetName(0))?.sync).toEqual({ mode: 'check', result: 'in-sync' });
    expect(actions('check-sync').filter((r) => r.path.includes('/device=')).length).toBe(FLEET.devices);
  });

  for (const code of [404, 501] as const) {
    it(`grades as none would, with a note on each report, when the orchestrator has no sync actions (${code})`, async () => {
      sim.setKnobs({ noSyncActions: code });
      const { batch, reports } = await runBatch('check');
      expect(batch).toMatchObject({ status: 'completed', grades: copyGrades() });
      for (const r of reports) expect(r.sync).toEqual({ mode: 'check', result: 'not-checked', note: expect.stringContaining(`answered ${code}`) });
      // Asked once per chunk and confirmed by one device's own check-sync, then no more.
      expect(actions('check-sync').filter((r) => r.path.endsWith(':devices/check-sync'))).toHaveLength(3);
      expect(actions('check-sync').filter((r) => r.path.includes('/device='))).toHaveLength(3);
    });
  }
});

describe('sync sync-from and none', () => {
  it('sync-from: NSO takes each device configuration first, the batch grades it, the reports say so', async () => {
    const { batch, byDevice } = await runBatch('sync-from');
    expect(batch.sync).toBe('sync-from');
    expect(batch.grades['out-of-sync']).toBe(0);
    // Device 2 passes on NSO's old copy; its own configuration logs to another host (a warning rule).
    expect(byDevice.get(fleetName(2))).toMatchObject({ grade: 'review', score: 86.7, sync: { mode: 'sync-from', result: 'synced' } });
    expect(actions('sync-from').map((r) => r.path)).toEqual(Array(3).fill('/restconf/data/tailf-ncs:devices/sync-from'));
    // NSO's copy now matches every device.
    expect((await runBatch('check')).batch.grades['out-of-sync']).toBe(0);
  });

  it("sync-from: a device NSO cannot take from is graded error with NSO's info", async () => {
    sim.setKnobs({ syncFailure: { devices: [fleetName(4)], actions: ['sync-from'] } });
    const { byDevice } = await runBatch('sync-from');
    expect(byDevice.get(fleetName(4))).toMatchObject({ grade: 'error', reason: expect.stringContaining('Failed to connect to device edge-00004') });
  });

  it('none: grades NSO copy as before, asks no action, and each report says sync was not checked', async () => {
    const { batch, reports } = await runBatch('none');
    expect(batch).toMatchObject({ sync: 'none', grades: copyGrades() });
    for (const r of reports) expect(r.sync).toEqual({ mode: 'none', result: 'not-checked' });
    expect(sim.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('sync is a start setting only an admin may send (the start route is admin only), validated by the schema', () => {
    expect(complianceRoutes.find((r) => r.operationId === 'startComplianceBatch')?.roles).toEqual(['admin']);
    const body = (sync: unknown) => ({ body: { treeId: TREE, version: 'v1', adapterId: ADAPTER, sync }, headers: {}, queryStringParameters: {} }) as never;
    expect(startComplianceBatch(body('sync-from'))).toBe(true);
    expect(startComplianceBatch(body('always'))).toBe(false);
  });
});
