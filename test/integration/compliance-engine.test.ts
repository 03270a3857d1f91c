/**
 * Compliance batches end to end below the HTTP layer: the durable handler run by the official
 * local runner (`LocalDurableTestRunner`), reports in DynamoDB Local, configurations from the
 * NSO simulator's synthetic fleet through the relay's client, with the adapter in DynamoDB and
 * its password in the local secrets store. Includes a crash in the middle of a chunk that the
 * runner resumes by replaying the checkpoint log.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BatchEvent, EngineDeps } from '../../functions/compliance/engine.js';
import { INVOCATION_RESERVE_MS } from '../../functions/compliance/engine.js';
import { startBatch, type StartDeps } from '../../functions/compliance/service.js';
import { ComplianceStore, type ReportCursor } from '../../functions/compliance/store.js';
import type { Report } from '../../functions/compliance/model.js';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { ConfigHistory } from '../../functions/configs/archive.js';
import { s3Blobs, type ConfigBlobs } from '../../functions/configs/blobs.js';
import { createS3Client } from '../../functions/configs/s3.js';
import { ConfigIndex } from '../../functions/configs/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import type { Version } from '../../functions/trees/config-model.js';
import { expectedGrade, FLEET_RULES, FLEET_VARIABLES, fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { stdoutDuring } from '../support/stdout.js';
import { createTables } from '../../tools/local/table-copies.js';

const PASSWORD = 'fleet-Pa55-word';
const ADAPTER = 'fleet-nso';
const DEVICES = 30;
const TREE = 'a1b2c3d4e5f6a1b2c3d4e5f6';

let sim: NsoSimulator;
let dir: string;
let store: ComplianceStore;
let engineDeps: EngineDeps;
let handler: ReturnType<typeof withDurableExecution>;
// The engine and its gates from the same module graph as `engineDeps` (loaded after the environment is set): one HttpProblem class, one set of gates.
let engine: typeof import('../../functions/compliance/engine.js');
let gates: typeof import('../../functions/compliance/gate.js');
let problems: typeof import('../../functions/platform/problem.js');
let adaptersTable: string;
let LocalDurableTestRunner: DurableTesting['LocalDurableTestRunner'];

/** Base holds the fleet's rules and the first half; `base/core` adds one rule and holds the rest and two names NSO does not know. */
const version: Version = {
  name: 'v1',
  variables: FLEET_VARIABLES,
  created: '2026-01-01T00:00:00.000Z',
  createdBy: 'test',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  lastUpdatedBy: 'test',
  root: {
    name: 'base',
    devices: Array.from({ length: DEVICES / 2 }, (_, i) => fleetName(i)),
    rules: FLEET_RULES.map((r) => ({ ...r })) as Version['root']['rules'],
    children: [
      {
        name: 'core',
        devices: [...Array.from({ length: DEVICES / 2 }, (_, i) => fleetName(i + DEVICES / 2)), 'edge-missing-0', 'edge-missing-1'],
        rules: [{ id: 'domain', path: '/tailf-ned-cisco-ios:ip/domain-name', mode: 'exact', severity: 'info', value: 'lab.example' }],
        children: [],
      },
    ],
  },
};

const startDeps = (concurrency: number): StartDeps => ({
  versions: async (treeId, label) => ({ tree: treeId === TREE, ...(treeId === TREE && label === 'v1' ? { version } : {}) }),
  adapters: { get: async (name) => (name === ADAPTER ? { name } : undefined) },
  store,
  startExecution: async () => undefined,
  now: () => new Date(),
  retentionDays: 90,
  concurrency,
  chunkSize: 7,
});

const run = async (batchId: string, deps: EngineDeps = engineDeps) => {
  const runner = new LocalDurableTestRunner({
    handlerFunction: deps === engineDeps ? handler : withDurableExecution(async (event: BatchEvent, context) => engine.runBatch(event, context, deps)),
  });
  return runner.run({ payload: { batchId } });
};

const allReports = async (batchId: string, grade?: Report['grade']): Promise<Report[]> => {
  const out: Report[] = [];
  let from: ReportCursor | undefined;
  do {
    const page = await store.listReports(batchId, { limit: 4, ...(grade ? { grade } : {}), ...(from ? { from } : {}) });
    out.push(...page.items);
    from = page.next;
  } while (from);
  return out;
};

const fetchesPerDevice = (): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const r of sim.requests) {
    const device = /device=([^/]+)\/config/.exec(r.path)?.[1];
    if (device) counts.set(decodeURIComponent(device), (counts.get(decodeURIComponent(device)) ?? 0) + 1);
  }
  return counts;
};

const expectedGrades = () => {
  const grades = { pass: 0, review: 0, fail: 0, error: 2 };
  for (let i = 0; i < DEVICES; i++) grades[expectedGrade(i)]++;
  return grades;
};

beforeAll(async () => {
  const tables = await createTables();
  adaptersTable = tables['adapters']!;
  dir = await mkdtemp(path.join(tmpdir(), 'compliance-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: DEVICES, slowEvery: 10, slowMs: 30 } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/fleet', { password: PASSWORD });
  await createAdapterStore(documentClient, tables['adapters']).put(
    { name: ADAPTER, type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/fleet#password' } },
    new Date().toISOString(),
  );
  store = new ComplianceStore(documentClient, tables['compliance']);
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.resetModules();
  const batch = await import('../../functions/compliance/handlers/batch.js');
  engineDeps = { ...batch.engineDeps, retryDelaySeconds: 1 };
  engine = await import('../../functions/compliance/engine.js');
  gates = await import('../../functions/compliance/gate.js');
  problems = await import('../../functions/platform/problem.js');
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
  sim.requests.length = 0;
  sim.setKnobs({});
});

// Whichever way a batch ended (completed, a chunk failed or stopped at an invocation's end, a
// crash), its workers gave back every slot of the adapter's gate they held.
afterEach(() => {
  expect(gates.gateFor(ADAPTER, 1).held).toBe(0);
});

describe('a compliance batch on the durable engine', () => {
  it('checks every device once, grades it, and ends with exact totals', async () => {
    const { batchId, total } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(4));
    expect(total).toBe(DEVICES + 2);
    const execution = await run(batchId);
    expect(execution.getStatus()).toBe('SUCCEEDED');

    const batch = (await store.getBatch(batchId))!;
    expect(batch).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    expect(batch.finished).toBeDefined();
    // 3 `info` failures (index 3, 13, 23), 3 `warning` (5, …), 2 `error` rules on each of 3 devices (7, …).
    expect(batch.totals).toEqual({ errors: 6, warnings: 3, infos: 3, passes: DEVICES * 5 + DEVICES / 2 - 12 });

    const perDevice = fetchesPerDevice();
    expect(perDevice.size).toBe(DEVICES + 2);
    expect([...perDevice.values()].every((n) => n === 1)).toBe(true);
    // The adapter's cap holds across the whole batch (several chunks run at once).
    expect(sim.peakInFlight).toBeLessThanOrEqual(4);

    const reports = await allReports(batchId);
    expect(reports).toHaveLength(DEVICES + 2);
    const fail = reports.find((r) => r.device === fleetName(17))!;
    expect(fail).toMatchObject({ grade: 'fail', score: 50, node: 'base/core', treeId: TREE, version: 'v1' });
    expect(fail.issues.map((i) => [i.ruleId, i.node, i.severity, i.mode])).toEqual([
      ['ntp-servers', 'base', 'error', 'required'],
      ['no-http-server', 'base', 'error', 'disallowed'],
    ]);
    expect(fail.issues[0]!.actual).toBeDefined();
    expect(reports.find((r) => r.device === fleetName(5))).toMatchObject({ grade: 'review', score: 86.7, node: 'base' });
    expect(reports.find((r) => r.device === fleetName(3))).toMatchObject({ grade: 'pass', score: 93.3 });
    expect(reports.find((r) => r.device === fleetName(0))).toMatchObject({ grade: 'pass', score: 100, issues: [] });
    const missing = reports.find((r) => r.device === 'edge-missing-1')!;
    expect(missing).toMatchObject({ grade: 'error', node: 'base/core' });
    expect(missing.reason).toMatch(/does not know the device/);
    expect(missing.score).toBeUndefined();

    expect((await allReports(batchId, 'review')).map((r) => r.device).sort()).toEqual([fleetName(5), fleetName(15), fleetName(25)]);
    expect(await store.getReport(fail.reportId)).toEqual(fail);
  });

  /** The store, with `putReports` replaced. */
  const storeWith = (putReports: ComplianceStore['putReports']): ComplianceStore =>
    new Proxy(store, {
      get: (target, name) => (name === 'putReports' ? putReports : (Reflect.get(target, name) as (...args: unknown[]) => unknown).bind(target)),
    });
  /** Chunk 1 of a batch started with `startDeps` (7 devices a chunk): devices 7 to 13 of the version, in order. */
  const chunkOne = new Set([...version.root.devices, ...version.root.children[0]!.devices].slice(7, 14));

  it('resumes after a crash in the middle of a chunk: nothing checked twice, totals exact', async () => {
    // Sync `none`: the fetches counted below are the configuration GETs alone.
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, sync: 'none' }, startDeps(3));
    let crashedAfter: string[] | undefined;
    let fetchedBeforeCrash = 0;
    // The first write of chunk 1 (two reports) lands, then the step dies: chunk 0 is counted, chunk 1 is cut short.
    const crashing = storeWith(async (batch, of, reports, expiresAt) => {
      const stored = await store.putReports(batch, of, reports, expiresAt);
      if (!crashedAfter && reports.some((r) => chunkOne.has(r.report.device))) {
        crashedAfter = reports.map((r) => r.report.device);
        fetchedBeforeCrash = sim.requests.length;
        throw new Error('simulated crash after reports were written');
      }
      return stored;
    });
    // Slow answers keep chunk 1's last devices unfetched while its first write lands: with 3
    // fetches at a time, the first answers come at 400 ms and the third wave starts at 800 ms,
    // 400 ms for the write even on a loaded machine.
    sim.setKnobs({ delayMs: 400 });
    const execution = await run(batchId, { ...engineDeps, store: crashing, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(crashedAfter).toBeDefined();
    expect(fetchedBeforeCrash).toBeLessThan(14);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getInvocations().length).toBeGreaterThanOrEqual(2);

    const batch = (await store.getBatch(batchId))!;
    expect(batch).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    expect(batch.totals).toEqual({ errors: 6, warnings: 3, infos: 3, passes: DEVICES * 5 + DEVICES / 2 - 12 });
    expect([...fetchesPerDevice().values()].every((n) => n === 1)).toBe(true);
    expect(fetchesPerDevice().size).toBe(DEVICES + 2);
    expect(await allReports(batchId)).toHaveLength(DEVICES + 2);
  });

  it('checks again only the devices whose reports a crash lost, and the totals stay exact', async () => {
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(3));
    let lost: string[] | undefined;
    // The first write of chunk 1 (two reports) never reaches DynamoDB: its devices were checked, not reported.
    const crashing = storeWith(async (batch, of, reports, expiresAt) => {
      if (!lost && reports.some((r) => chunkOne.has(r.report.device))) {
        lost = reports.map((r) => r.report.device);
        throw new Error('simulated crash before the reports were written');
      }
      return store.putReports(batch, of, reports, expiresAt);
    });
    const execution = await run(batchId, { ...engineDeps, store: crashing, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(lost!.length).toBeGreaterThan(0);

    const batch = (await store.getBatch(batchId))!;
    expect(batch).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    expect(batch.totals).toEqual({ errors: 6, warnings: 3, infos: 3, passes: DEVICES * 5 + DEVICES / 2 - 12 });
    const twice = [...fetchesPerDevice()].filter(([, n]) => n === 2).map(([device]) => device);
    expect(twice.sort()).toEqual([...lost!].sort());
    expect([...fetchesPerDevice().values()].every((n) => n <= 2)).toBe(true);
    expect(fetchesPerDevice().size).toBe(DEVICES + 2);
    const reports = await allReports(batchId);
    expect(reports).toHaveLength(DEVICES + 2);
    expect(new Set(reports.map((r) => r.device)).size).toBe(DEVICES + 2);
  });

  it('stores each configuration once when a chunk runs again after a crash: one history entry and one upload per device', async () => {
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(3));
    // A history of its own (a new index): the uploads it counts are this batch's alone.
    const index = new ConfigIndex(documentClient, (await createTables())['configs']);
    const blobs = s3Blobs(createS3Client(), { bucket: process.env['CONFIGS_BUCKET']! });
    const puts = new Map<string, number>();
    const counted: ConfigBlobs = {
      get: (key) => blobs.get(key),
      put: async (key, canonical) => {
        puts.set(key, (puts.get(key) ?? 0) + 1);
        await blobs.put(key, canonical);
      },
    };
    const history = new ConfigHistory({ blobs: counted, index, retentionDays: async () => 30 });
    let lost: string[] | undefined;
    // The first write of chunk 1 never reaches DynamoDB: its devices were checked (and their configurations recorded), not reported.
    const crashing = storeWith(async (batch, of, reports, expiresAt) => {
      if (!lost && reports.some((r) => chunkOne.has(r.report.device))) {
        lost = reports.map((r) => r.report.device);
        throw new Error('simulated crash before the reports were written');
      }
      return store.putReports(batch, of, reports, expiresAt);
    });
    const execution = await run(batchId, { ...engineDeps, archive: history, store: crashing, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(lost!.length).toBeGreaterThan(0);
    // The lost devices were fetched and recorded twice: the second record of each uploaded nothing.
    const fetchedTwice = [...fetchesPerDevice()].filter(([, n]) => n === 2).map(([device]) => device);
    expect(fetchedTwice.sort()).toEqual([...lost!].sort());
    const archived = (await allReports(batchId)).filter((r) => r.configId !== undefined);
    expect(archived.length).toBe(DEVICES);
    expect([history.uploads, history.unchanged]).toEqual([DEVICES, lost!.length]);
    expect([...puts.values()].every((n) => n === 1)).toBe(true);
    expect(puts.size).toBe(DEVICES);
    for (const report of archived) {
      const entries = (await index.listEntries(ADAPTER, report.device, { limit: 10, now: new Date() })).items;
      expect(entries.map((e) => [e.configId, e.batchId, e.grade])).toEqual([[report.configId, batchId, report.grade]]);
    }
  });

  it('fails a chunk whose stored hand-in cannot be counted only after its writes ended; the retry counts what was stored and checks nothing twice', async () => {
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(3));
    let thrown = 0;
    // The metric of the first stored device throws: the chunk must not end while its other writes are on their way.
    const onDeviceChecked = () => {
      if (thrown++ === 0) throw new Error('simulated metrics failure');
    };
    // The first hand-in takes 200 ms, so that the second is sent while it is on its way; the
    // second takes 1.5 s, longer than the pause before the retry (1 s). A chunk that ended
    // without waiting for it would run again before it lands, and check its devices twice.
    let handIns = 0;
    let slowLanded = false;
    const slow = storeWith(async (batch, of, reports, expiresAt) => {
      const n = ++handIns;
      if (n <= 2) await new Promise((r) => setTimeout(r, n === 1 ? 200 : 1_500));
      const stored = await store.putReports(batch, of, reports, expiresAt);
      if (n === 2) slowLanded = true;
      return stored;
    });
    const execution = await run(batchId, { ...engineDeps, store: slow, onDeviceChecked, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(thrown).toBeGreaterThan(1);
    expect(slowLanded).toBe(true);
    const batch = (await store.getBatch(batchId))!;
    expect(batch).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    expect(batch.totals).toEqual({ errors: 6, warnings: 3, infos: 3, passes: DEVICES * 5 + DEVICES / 2 - 12 });
    expect([...fetchesPerDevice().values()].every((n) => n === 1)).toBe(true);
    expect(fetchesPerDevice().size).toBe(DEVICES + 2);
    const reports = await allReports(batchId);
    expect(new Set(reports.map((r) => r.device)).size).toBe(DEVICES + 2);
    expect(reports).toHaveLength(DEVICES + 2);
  });

  it('takes a store that refuses a hand-in at once (throwing, not rejecting) as a failed write: the chunk runs again and every device is reported once', async () => {
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(3));
    let refused: string[] | undefined;
    const refusing = storeWith(((batch, of, reports, expiresAt) => {
      if (!refused) {
        refused = reports.map((r) => r.report.device);
        throw new Error('simulated store refusing at once');
      }
      return store.putReports(batch, of, reports, expiresAt);
    }) as ComplianceStore['putReports']);
    const execution = await run(batchId, { ...engineDeps, store: refusing, chunkConcurrency: 1, reportsPerWrite: 2 });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(refused!.length).toBeGreaterThan(0);
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    const reports = await allReports(batchId);
    expect(reports).toHaveLength(DEVICES + 2);
    expect(new Set(reports.map((r) => r.device)).size).toBe(DEVICES + 2);
  });

  it('refuses chunk sizes its report keys cannot hold before writing anything', async () => {
    for (const chunkSize of [0, 10_001, 2.5]) {
      await expect(
        startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, { ...startDeps(3), chunkSize, newId: () => 'c'.repeat(24) }),
      ).rejects.toThrow(RangeError);
    }
    expect(await store.getBatch('c'.repeat(24))).toBeUndefined();
  });

  it('stops a chunk when the invocation is ending and checks its other devices in the next one: none reported as a timeout', async () => {
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(2));
    // The first invocation reaches its last seconds after 10 fetches; the next has its full time.
    let invocations = 0;
    const deps: EngineDeps = {
      ...engineDeps,
      chunkConcurrency: 1,
      // One attempt for failures: the invocation's end is not one.
      chunkAttempts: 1,
      remainingTimeMs: () => (invocations === 1 && sim.requests.length >= 10 ? INVOCATION_RESERVE_MS - 34_500 : 15 * 60_000),
    };
    const runner = new LocalDurableTestRunner({
      handlerFunction: withDurableExecution(async (event: BatchEvent, context) => {
        invocations++;
        return engine.runBatch(event, context, deps);
      }),
    });
    const execution = await runner.run({ payload: { batchId } });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(invocations).toBeGreaterThanOrEqual(2);
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    expect([...fetchesPerDevice().values()].every((n) => n === 1)).toBe(true);
    expect(fetchesPerDevice().size).toBe(DEVICES + 2);
    const reports = await allReports(batchId);
    expect(reports).toHaveLength(DEVICES + 2);
    expect(
      reports
        .filter((r) => r.grade === 'error')
        .map((r) => r.device)
        .sort(),
    ).toEqual(['edge-missing-0', 'edge-missing-1']);
  });

  it('gives a chunk that went on after an invocation ended its full attempts for failures', async () => {
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, startDeps(2));
    let invocations = 0;
    let lost: string[] | undefined;
    // In the second invocation the first write fails once: with two attempts, its retry must still run.
    const flaky = storeWith(async (batch, of, reports, expiresAt) => {
      if (invocations === 2 && !lost) {
        lost = reports.map((r) => r.report.device);
        throw new Error('simulated DynamoDB failure');
      }
      return store.putReports(batch, of, reports, expiresAt);
    });
    const deps: EngineDeps = {
      ...engineDeps,
      store: flaky,
      chunkConcurrency: 1,
      chunkAttempts: 2,
      remainingTimeMs: () => (invocations === 1 && sim.requests.length >= 10 ? 500 : 15 * 60_000),
    };
    const runner = new LocalDurableTestRunner({
      handlerFunction: withDurableExecution(async (event: BatchEvent, context) => {
        invocations++;
        return engine.runBatch(event, context, deps);
      }),
    });
    const execution = await runner.run({ payload: { batchId } });
    expect(lost).toBeDefined();
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: DEVICES + 2, done: DEVICES + 2, grades: expectedGrades() });
    // Checked again: exactly the devices of the failed write, each once more.
    const twice = [...fetchesPerDevice()].filter(([, n]) => n === 2).map(([device]) => device);
    expect(twice.sort()).toEqual([...lost!].sort());
    expect([...fetchesPerDevice().values()].every((n) => n <= 2)).toBe(true);
    const reports = await allReports(batchId);
    expect(reports).toHaveLength(DEVICES + 2);
    expect(new Set(reports.map((r) => r.device)).size).toBe(DEVICES + 2);
  });

  it('cuts a fleet of long names on a deep node into chunks DynamoDB can store, every device once and in order', async () => {
    // 600 names of 253 three-byte characters on an 8-level path of 128-character node names:
    // about 460 KB of device list, which one chunk of the default size could not hold.
    const names = Array.from({ length: 8 }, (_, i) => `${i}`.padEnd(128, 'n'));
    const devices = Array.from({ length: 600 }, (_, i) => `${i}`.padEnd(253, '設'));
    const nest = (level: number): Version['root'] => ({
      name: names[level]!,
      devices: level === 7 ? devices : [],
      rules: [],
      children: level === 7 ? [] : [nest(level + 1)],
    });
    const deep: Version = { ...version, root: { ...nest(0), name: 'base', rules: version.root.rules } };
    const { batchId, total } = await startBatch(
      { treeId: TREE, version: 'v1', adapterId: ADAPTER },
      { ...startDeps(3), chunkSize: undefined, versions: async () => ({ tree: true, version: deep }) },
    );
    expect(total).toBe(600);
    const { chunks } = await store.getWork(batchId);
    expect(chunks).toBeGreaterThan(1);
    const plan = await store.getPlan(batchId);
    const stored = [];
    for (let i = 0; i < chunks; i++) stored.push(...(await store.getChunk(batchId, i, plan)));
    const node = ['base', ...names.slice(1)].join('/');
    expect(stored).toEqual(devices.map((device) => ({ device, node })));
  });

  it('backs off when NSO answers 429 and still checks every device', async () => {
    const { batchId } = await startBatch(
      { treeId: TREE, version: 'v1', adapterId: ADAPTER, devices: [fleetName(1), fleetName(2), fleetName(3)], sync: 'none' },
      startDeps(2),
    );
    sim.setKnobs({ busy: { status: 429, count: 3 } });
    const execution = await run(batchId);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: 3, done: 3, grades: { pass: 3, review: 0, fail: 0, error: 0 } });
    expect(sim.requests).toHaveLength(6);
  });

  /** A batch of devices 1 to 6 of the fleet, run with `deps`, and what it logged. */
  const runSix = async (deps: EngineDeps = engineDeps) => {
    const devices = [1, 2, 3, 4, 5, 6].map((i) => fleetName(i));
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, devices }, startDeps(2));
    let status: string | undefined;
    const logged = await stdoutDuring(async () => {
      status = (await run(batchId, deps)).getStatus();
    });
    const reports = new Map((await allReports(batchId)).map((r) => [r.device, r]));
    const entries = logged.entries();
    return {
      batchId,
      status,
      reports,
      logged: entries.filter((e) => e['message'] === 'compliance device not graded'),
      chunkFailures: entries.filter((e) => String(e['message']).startsWith('compliance fetch failed before the orchestrator answered')),
    };
  };

  it('grades a device whose configuration nests 100,000 levels error with the reason, once, and checks the others', async () => {
    sim.setKnobs({ nestedBody: { depth: 100_000, device: fleetName(4) } });
    const { batchId, status, reports, logged } = await runSix();
    expect(status).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: 6, done: 6, grades: { pass: 4, review: 1, fail: 0, error: 1 } });
    const deep = reports.get(fleetName(4))!;
    expect(deep).toMatchObject({ grade: 'error', issues: [] });
    expect(deep.reason).toMatch(/nested deeper than 128 levels/);
    expect(reports.get(fleetName(5))).toMatchObject({ grade: 'review', score: 86.7 });
    // A permanent failure: fetched once, never retried.
    expect(fetchesPerDevice().get(fleetName(4))).toBe(1);
    expect(logged).toEqual([expect.objectContaining({ level: 'warn', batchId, device: fleetName(4), kind: 'too-deep', reason: deep.reason })]);
  });

  it.each([
    ['a RangeError', () => new RangeError('Maximum call stack size exceeded')],
    ['a TypeError', () => new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['something that is not an Error', () => 'thrown text'],
  ])('grades a device whose check throws %s (evaluating, or on the answer of NSO) error, once, and checks the others', async (_name, thrown) => {
    const throwing = (name: string) => (config: unknown) => (config as Record<string, unknown>)['tailf-ned-cisco-ios:hostname'] === name;
    const deps: EngineDeps = {
      ...engineDeps,
      evaluate: (config, variables, rules) => {
        if (throwing(fleetName(2))(config)) throw thrown();
        return engineDeps.evaluate(config, variables, rules);
      },
      relayGet: (remaining) => {
        const get = engineDeps.relayGet(remaining);
        return async (adapter, path) => {
          const results = await get(adapter, path);
          // As the relay reports any failure once the orchestrator has answered.
          if (path.includes(fleetName(6))) throw new problems.InternalError('the relay failed on the answer', { error: thrown() }).afterSending();
          return results;
        };
      },
    };
    const { batchId, status, reports, logged } = await runSix(deps);
    expect(status).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: 6, done: 6, grades: { pass: 3, review: 1, fail: 0, error: 2 } });
    expect(reports.get(fleetName(2))).toMatchObject({ grade: 'error', reason: expect.stringMatching(/could not be evaluated/) });
    expect(reports.get(fleetName(6))).toMatchObject({
      grade: 'error',
      reason: expect.stringMatching(/^The orchestrator answered, and its answer could not be used/),
    });
    // The cause is logged, never reported.
    expect(JSON.stringify([...reports.values()])).not.toContain(String(thrown()).slice(0, 20));
    expect(fetchesPerDevice().get(fleetName(2))).toBe(1);
    expect(fetchesPerDevice().get(fleetName(6))).toBe(1);
    expect(logged.map((e) => [e['level'], e['device'], e['kind']]).sort()).toEqual([
      ['error', fleetName(2), 'evaluation'],
      ['error', fleetName(6), 'unusable-answer'],
    ]);
  });

  /**
   * The relay's `relayGet` whose adapter read goes, for the fetches `broken` picks, to a DynamoDB
   * that fails: the relay reads the adapter first, so nothing reaches NSO.
   */
  const adapterReadFailing = (db: DynamoDBDocumentClient, table: string, broken: (path: string) => boolean): EngineDeps['relayGet'] => {
    const failing = createAdapterStore(db, table);
    return (remaining) => {
      const get = engineDeps.relayGet(remaining);
      return async (adapter, path) => {
        if (broken(path)) await failing.get(adapter);
        return get(adapter, path);
      };
    };
  };
  const closedPort = () => DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: 'http://127.0.0.1:1', maxAttempts: 1 }));

  it('retries the chunk when DynamoDB cannot be reached for the adapter before a fetch is sent: every device graded, none error', async () => {
    let failures = 0;
    const relayGet = adapterReadFailing(closedPort(), adaptersTable, (path) => path.includes(fleetName(3)) && failures++ === 0);
    const { batchId, status, reports, logged } = await runSix({ ...engineDeps, relayGet });
    expect(status).toBe('SUCCEEDED');
    expect(failures).toBe(2);
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed', total: 6, done: 6, grades: { pass: 5, review: 1, fail: 0, error: 0 } });
    expect(reports.get(fleetName(3))).toMatchObject({ grade: 'pass' });
    expect(logged).toEqual([]);
  });

  it('fails the batch, grading no device error, when the adapter read fails for good before anything is sent', async () => {
    const relayGet = adapterReadFailing(documentClient, `${adaptersTable}-missing`, (path) => path.includes(fleetName(3)));
    const { batchId, status, reports, logged, chunkFailures } = await runSix({ ...engineDeps, relayGet, chunkAttempts: 2 });
    expect(status).toBe('SUCCEEDED');
    const batch = (await store.getBatch(batchId))!;
    expect(batch.status).toBe('failed');
    expect([...reports.values()].filter((r) => r.grade === 'error')).toEqual([]);
    expect(logged).toEqual([]);
    expect(chunkFailures.length).toBeGreaterThanOrEqual(2);
    expect(chunkFailures.every((e) => e['kind'] === 'before-answer' && e['permanent'] === true && e['device'] === fleetName(3))).toBe(true);
  });

  it('refuses devices the version does not assign, and unknown trees, versions and adapters', async () => {
    await expect(startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, devices: ['nowhere'] }, startDeps(2))).rejects.toMatchObject({ status: 400 });
    await expect(startBatch({ treeId: 'f'.repeat(24), version: 'v1', adapterId: ADAPTER }, startDeps(2))).rejects.toMatchObject({ status: 404 });
    await expect(startBatch({ treeId: TREE, version: 'v9', adapterId: ADAPTER }, startDeps(2))).rejects.toMatchObject({ status: 404 });
    await expect(startBatch({ treeId: TREE, version: 'v1', adapterId: 'nope' }, startDeps(2))).rejects.toMatchObject({ status: 404 });
    const stopped = { ...startDeps(2), adapters: { get: async (name: string) => ({ name, state: 'STOPPED' as const }) } };
    await expect(startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER }, stopped)).rejects.toMatchObject({ status: 409, slug: 'adapter-stopped' });
  });
});
