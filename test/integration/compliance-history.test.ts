/**
 * A plan's history written by the durable engine (the official local runner, DynamoDB Local,
 * the NSO simulator's fleet): two batches of a plan with a device fixed, one gone and one new;
 * the same after a crash in a history step; a failed batch; the events of each; a device's
 * `STATE` across tree versions that remove or replace rules, up to the most rules a device takes.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BatchEvent, EngineDeps } from '../../functions/compliance/engine.js';
import type { ComplianceEvent } from '../../functions/compliance/history-model.js';
import { readDelta, readDeviceHistory, readTrend } from '../../functions/compliance/history-read.js';
import { HistoryStore } from '../../functions/compliance/history-store.js';
import { startBatch, type StartDeps } from '../../functions/compliance/service.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { devicePk, STATE_SK } from '../../functions/compliance/history-items.js';
import { MAX_DEVICE_RULES, type StoredState } from '../../functions/compliance/history.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { DYNAMO_ITEM_LIMIT_BYTES, itemBytes } from '../../functions/platform/item-size.js';
import { CONFIG_LIMITS } from '../../functions/trees/config-checks.js';
import type { Node, Rule, Version } from '../../functions/trees/config-model.js';
import { FLEET_RULES, FLEET_VARIABLES, fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { createTables } from '../../tools/local/table-copies.js';

const PASSWORD = 'fleet-Pa55-word';
const ADAPTER = 'fleet-nso';
const TREE = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => fleetName(from + i));

const version: Version = {
  name: 'v1',
  variables: FLEET_VARIABLES,
  created: '2026-01-01T00:00:00.000Z',
  createdBy: 'test',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  lastUpdatedBy: 'test',
  root: { name: 'base', devices: names(0, 10), rules: FLEET_RULES.map((r) => ({ ...r })) as Version['root']['rules'], children: [] },
};

/** Version 2 of the tree: version 1 without `no-http-server`. */
const withoutHttpRule: Version = {
  ...version,
  name: 'v2',
  root: { ...version.root, rules: version.root.rules.filter((r) => r.id !== 'no-http-server') },
};

/**
 * A version whose device `fleetName(11)` is on a node `nodeDepth` levels down, each level with
 * `rulesPerNode` rules of the longest ids: the most rules a device takes. Each rule asks for a
 * place the configuration does not have (`required`: every rule fails) or forbids it
 * (`disallowed`: every rule passes); `set` makes the ids of two versions differ.
 */
const mostRules = (name: string, set: string, mode: 'required' | 'disallowed'): Version => {
  const node = (depth: number): Node => ({
    name: depth === 0 ? 'base' : `level${depth}`,
    devices: depth === CONFIG_LIMITS.nodeDepth - 1 ? [fleetName(11)] : [],
    rules: Array.from(
      { length: CONFIG_LIMITS.rulesPerNode },
      (_, i): Rule => ({ id: `${set}-${depth}-${i}-`.padEnd(CONFIG_LIMITS.ruleId, 'x'), path: `/absent-${depth}-${i}`, mode, severity: 'info' }),
    ),
    children: depth === CONFIG_LIMITS.nodeDepth - 1 ? [] : [node(depth + 1)],
  });
  return { ...version, name, root: node(0) };
};

const versions = new Map<string, Version>(
  [
    version,
    withoutHttpRule,
    mostRules('a-fail', 'a', 'required'),
    mostRules('a-pass', 'a', 'disallowed'),
    mostRules('b-fail', 'b', 'required'),
    mostRules('b-pass', 'b', 'disallowed'),
  ].map((v) => [v.name, v]),
);

let sim: NsoSimulator;
let dir: string;
let tables: Awaited<ReturnType<typeof createTables>>;
let store: ComplianceStore;
let history: HistoryStore;
let baseDeps: EngineDeps;
let engine: typeof import('../../functions/compliance/engine.js');
let LocalDurableTestRunner: DurableTesting['LocalDurableTestRunner'];

const startDeps: StartDeps = {
  versions: async (treeId, label) => ({ tree: treeId === TREE, ...(treeId === TREE && versions.has(label) ? { version: versions.get(label)! } : {}) }),
  adapters: { get: async (name) => (name === ADAPTER ? { name } : undefined) },
  get store() {
    return store;
  },
  startExecution: async () => undefined,
  now: () => new Date(),
  retentionDays: 90,
  historyRetentionDays: 30,
  concurrency: 4,
  chunkSize: 4,
};

const run = async (batchId: string, deps: EngineDeps) => {
  const runner = new LocalDurableTestRunner({
    handlerFunction: withDurableExecution(async (event: BatchEvent, context) => engine.runBatch(event, context, deps)),
  });
  return runner.run({ payload: { batchId } });
};

/** The relay's GET, but device 7 (graded `fail`) answers with device 0's configuration (graded `pass`). */
const fixingSeven =
  (deps: EngineDeps): EngineDeps['relayGet'] =>
  (remaining) => {
    const get = deps.relayGet(remaining);
    return (adapterId, p) => get(adapterId, p.replace(fleetName(7), fleetName(0)));
  };

beforeAll(async () => {
  tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'history-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: 12 } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/fleet', { password: PASSWORD });
  await createAdapterStore(documentClient, tables['adapters']).put(
    { name: ADAPTER, type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/fleet#password' } },
    new Date().toISOString(),
  );
  store = new ComplianceStore(documentClient, tables['compliance']);
  history = new HistoryStore(documentClient, tables['compliance'], store);
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.resetModules();
  const batch = await import('../../functions/compliance/handlers/batch.js');
  engine = await import('../../functions/compliance/engine.js');
  baseDeps = { ...batch.engineDeps, store, history, retryDelaySeconds: 1 };
  ({ LocalDurableTestRunner } = await loadDurableTesting());
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
});

afterAll(async () => {
  await LocalDurableTestRunner?.teardownTestEnvironment();
  vi.unstubAllEnvs();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a plan's history", () => {
  it.each([
    { crash: false, planId: 'aaaaaaaaaaaaaaaaaaaaaaa1' },
    { crash: true, planId: 'aaaaaaaaaaaaaaaaaaaaaaa2' },
  ])('compares a batch with the previous completed one (crash in a history step: $crash)', async ({ crash, planId }) => {
    const events: ComplianceEvent[] = [];
    const sink = { publish: async (e: readonly ComplianceEvent[]) => void events.push(...e) };
    // Batch 1: devices 0 to 8 (7 fails).
    const first = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, sync: 'none', planId, devices: names(0, 9) }, startDeps);
    expect((await run(first.batchId, { ...baseDeps, events: sink })).getStatus()).toBe('SUCCEEDED');
    expect(events.map((e) => e.detailType)).toEqual(['Compliance Batch Completed']);
    // The first batch has nothing to compare with: every device is new, no device event.
    expect(events[0]!.detail).toMatchObject({ planId, delta: { new: 9, gone: 0, fixed: 0 } });

    // Batch 2: devices 1 to 9 (0 gone, 9 new), device 7 now passes (fixed).
    events.length = 0;
    const second = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, sync: 'none', planId, devices: names(1, 10) }, startDeps);
    let writes = 0;
    const crashing = new Proxy(history, {
      get: (target, name) =>
        name === 'writeDevices'
          ? async (...args: Parameters<HistoryStore['writeDevices']>) => {
              await target.writeDevices(...args);
              // Once, after the chunk's items are written: the step runs again over its own writes.
              if (crash && writes++ === 0) throw new Error('simulated crash after the history was written');
            }
          : (Reflect.get(target, name) as (...a: unknown[]) => unknown).bind(target),
    });
    const execution = await run(second.batchId, { ...baseDeps, history: crashing, events: sink, relayGet: fixingSeven(baseDeps) });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    // Three chunks' steps, and the one that crashed ran again.
    expect(writes).toBe(crash ? 4 : 0);

    const counts = { 'newly-failing': 0, fixed: 1, changed: 0, new: 1, gone: 1 };
    const delta = await readDelta(store, history, second.batchId, { limit: 50 });
    expect(delta).toMatchObject({ batchId: second.batchId, planId, previousBatchId: first.batchId, counts });
    expect(delta.items).toEqual([
      { device: fleetName(7), change: 'fixed', from: 'fail', to: 'pass', reportId: expect.any(String) },
      { device: fleetName(0), change: 'gone', from: 'pass' },
      { device: fleetName(9), change: 'new', to: 'pass', reportId: expect.any(String) },
    ]);
    const paged = await readDelta(store, history, second.batchId, { limit: 1, change: 'new' });
    expect(paged.items.map((r) => r.device)).toEqual([fleetName(9)]);

    const ended = events.filter((e) => e.detailType !== 'Device Compliance Changed');
    expect(ended).toHaveLength(1);
    expect(ended[0]!.detail).toMatchObject({ batchId: second.batchId, status: 'completed', delta: counts, previousBatchId: first.batchId, total: 9 });
    const changed = events.filter((e) => e.detailType === 'Device Compliance Changed').map((e) => e.detail);
    // At least once: a history step that ran again published its changes again.
    expect(new Set(changed.map((d) => JSON.stringify(d)))).toEqual(
      new Set(
        [
          { device: fleetName(7), change: 'fixed', from: 'fail' },
          { device: fleetName(9), change: 'new' },
        ].map((d) => JSON.stringify(changed.find((c) => c.device === d.device))),
      ),
    );
    expect(changed.find((c) => c.device === fleetName(7))).toMatchObject({
      eventId: `${second.batchId}:${fleetName(7)}`,
      change: 'fixed',
      from: 'fail',
      to: 'pass',
    });

    const trend = await readTrend(history, planId, { limit: 366 });
    expect(trend.items.map((p) => [p.batchId, p.status, p.total, p.grades.fail, p.delta])).toEqual([
      [first.batchId, 'completed', 9, 1, { 'newly-failing': 0, fixed: 0, changed: 0, new: 9, gone: 0 }],
      [second.batchId, 'completed', 9, 0, counts],
    ]);

    const seven = await readDeviceHistory(history, planId, fleetName(7), { limit: 10 });
    expect(seven.points.map((p) => [p.batchId, p.grade])).toEqual([
      [second.batchId, 'pass'],
      [first.batchId, 'fail'],
    ]);
    expect(seven.points[1]!.failing).toEqual(['no-http-server', 'ntp-servers']);
    const firstAt = seven.points[1]!.at;
    const secondAt = seven.points[0]!.at;
    expect(seven.rules).toEqual([
      { ruleId: 'no-http-server', failing: false, lastChangedAt: secondAt },
      { ruleId: 'ntp-servers', failing: false, lastChangedAt: secondAt },
    ]);
    expect(firstAt < secondAt).toBe(true);
    const page = await readDeviceHistory(history, planId, fleetName(7), { limit: 1 });
    expect(page.points).toHaveLength(1);
    const rest = await readDeviceHistory(history, planId, fleetName(7), { limit: 1, cursor: page.next! });
    expect(rest.points.map((p) => p.batchId)).toEqual([first.batchId]);
    // A page that ends with the last point says so: no cursor to an empty page.
    expect(rest.next).toBeUndefined();
    expect((await readDeviceHistory(history, planId, fleetName(7), { limit: 2 })).next).toBeUndefined();
    const trendPage = await readTrend(history, planId, { limit: 1 });
    expect(trendPage.items.map((p) => p.batchId)).toEqual([first.batchId]);
    const trendRest = await readTrend(history, planId, { limit: 1, cursor: trendPage.next! });
    expect([trendRest.items.map((p) => p.batchId), trendRest.next]).toEqual([[second.batchId], undefined]);
  });

  it('updates the trend point of a failed batch and publishes its end, with no delta', async () => {
    const planId = 'aaaaaaaaaaaaaaaaaaaaaaa3';
    const events: ComplianceEvent[] = [];
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, sync: 'none', planId, devices: names(0, 4) }, startDeps);
    const refusing = new Proxy(store, {
      get: (target, name) =>
        name === 'putReports'
          ? async () => Promise.reject(new Error('simulated store failure'))
          : (Reflect.get(target, name) as (...a: unknown[]) => unknown).bind(target),
    });
    const execution = await run(batchId, { ...baseDeps, store: refusing, chunkAttempts: 1, events: { publish: async (e) => void events.push(...e) } });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ detailType: 'Compliance Batch Failed', detail: { batchId, planId, status: 'failed' } });
    expect(events[0]!.detail).not.toHaveProperty('delta');
    const trend = await readTrend(history, planId, { limit: 10 });
    expect(trend.items).toEqual([expect.objectContaining({ batchId, status: 'failed', finished: expect.any(String) })]);
    expect(trend.items[0]).not.toHaveProperty('delta');
    await expect(readDelta(store, history, batchId, { limit: 10 })).rejects.toMatchObject({ status: 409 });
  });

  it('publishes the end of a batch of no plan, and has no delta for it', async () => {
    const events: ComplianceEvent[] = [];
    const { batchId } = await startBatch({ treeId: TREE, version: 'v1', adapterId: ADAPTER, sync: 'none', devices: names(0, 2) }, startDeps);
    await run(batchId, { ...baseDeps, events: { publish: async (e) => void events.push(...e) } });
    expect(events).toEqual([expect.objectContaining({ detailType: 'Compliance Batch Completed', detail: expect.objectContaining({ batchId, total: 2 }) })]);
    expect(events[0]!.detail).not.toHaveProperty('planId');
    await expect(readDelta(store, history, batchId, { limit: 10 })).rejects.toMatchObject({ status: 409, slug: 'no-plan' });
  });
});

/** A device's `STATE` item as stored: its size as DynamoDB counts it, and its state. */
const stateItem = async (planId: string, device: string): Promise<{ bytes: number; state: StoredState }> => {
  const { Item } = await documentClient.send(new GetCommand({ TableName: tables['compliance'], Key: { pk: devicePk(planId, device), sk: STATE_SK } }));
  return { bytes: itemBytes(Item!), state: JSON.parse(Item!['state'] as string) as StoredState };
};

describe("a device's STATE across tree versions", () => {
  const runVersion = async (planId: string, label: string, device: string) => {
    const { batchId } = await startBatch({ treeId: TREE, version: label, adapterId: ADAPTER, sync: 'none', planId, devices: [device] }, startDeps);
    expect((await run(batchId, baseDeps)).getStatus()).toBe('SUCCEEDED');
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'completed' });
    return batchId;
  };

  it('drops a rule the new version removed; the past points keep it', async () => {
    const planId = 'aaaaaaaaaaaaaaaaaaaaaaa4';
    const device = fleetName(7);
    const first = await runVersion(planId, 'v1', device);
    await runVersion(planId, 'v1', device);
    const kept = await stateItem(planId, device);
    expect(Object.keys(kept.state.rules).sort()).toEqual(['no-http-server', 'ntp-servers']);
    await runVersion(planId, 'v2', device);
    const shrunk = await stateItem(planId, device);
    expect(Object.keys(shrunk.state.rules)).toEqual(['ntp-servers']);
    expect(shrunk.bytes).toBeLessThan(kept.bytes);
    // `before` holds what the step changed among the rules of v2: nothing (`ntp-servers` still fails).
    expect(shrunk.state.before).toEqual({ batchId: kept.state.batchId, grade: 'fail', at: kept.state.at, changed: {} });

    const shown = await readDeviceHistory(history, planId, device, { limit: 10 });
    expect(shown.rules.map((r) => [r.ruleId, r.failing])).toEqual([['ntp-servers', true]]);
    expect(shown.points.map((p) => p.failing)).toEqual([['ntp-servers'], ['no-http-server', 'ntp-servers'], ['no-http-server', 'ntp-servers']]);
    expect(shown.points.at(-1)!.batchId).toBe(first);
  });

  it('keeps a device with the most rules a version gives one within the item limit, batch after batch', async () => {
    const planId = 'aaaaaaaaaaaaaaaaaaaaaaa5';
    const device = fleetName(11);
    // Every rule fails, then passes, then fails (each step changes all of them); then a version
    // replaces every rule id, and the same again.
    for (const label of ['a-fail', 'a-pass', 'a-fail', 'b-fail', 'b-pass', 'b-fail']) {
      const batchId = await runVersion(planId, label, device);
      const { bytes, state } = await stateItem(planId, device);
      expect(state.batchId).toBe(batchId);
      expect(bytes).toBeLessThan(DYNAMO_ITEM_LIMIT_BYTES);
      const ids = Object.keys(state.rules);
      expect(ids.length).toBe(MAX_DEVICE_RULES);
      expect(ids.every((id) => id.startsWith(label[0]!))).toBe(true);
      expect(Object.values(state.rules).every((r) => r.failing === label.endsWith('fail'))).toBe(true);
    }
    const shown = await readDeviceHistory(history, planId, device, { limit: 10 });
    expect(shown.points.map((p) => p.grade)).toEqual(['fail', 'pass', 'fail', 'fail', 'pass', 'fail']);
    expect(shown.rules).toHaveLength(MAX_DEVICE_RULES);
  }, 120_000);
});
