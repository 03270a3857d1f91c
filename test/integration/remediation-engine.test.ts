/**
 * The remediation engine run by the official local durable runner (`LocalDurableTestRunner`),
 * with a store and an NSO kept in memory behind the contract's interfaces: an NSO that applies
 * patches with their meaning (`applyEdits`), numbers its rollback files, finds them by label
 * and applies them. Crashes are injected between the commit and its record, and invocations
 * end in the middle of a run: no device is ever committed twice, and the totals stay exact.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceFailure, RelayGet } from '../../functions/compliance/check.js';
import { gateFor } from '../../functions/compliance/gate.js';
import type { BatchPlan, PlanRule } from '../../functions/compliance/model.js';
import type { BatchWork } from '../../functions/compliance/store.js';
import { REMEDIATION_RESERVE_MS, commitLabel, runRemediation, type RemediationEngineDeps } from '../../functions/remediation/engine.js';
import {
  emptyRemediationTotals,
  type Actor,
  type CommitOptions,
  type DeviceState,
  type NewRemediation,
  type NsoTransactions,
  type Remediation,
  type RemediationDevice,
  type RemediationEvent,
  type RemediationStatus,
  type RemediationStore,
  type RemediationTotals,
  type UncountedRecord,
} from '../../functions/remediation/model.js';
import { shownOutput } from '../../functions/remediation/nso.js';
import { applyEdits, listKeysFrom, parseTarget, type YangPatch } from '../../functions/remediation/patch.js';
import { COUNTERS, DynamoRemediationStore, chunkCounts } from '../../functions/remediation/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { createTables } from '../../tools/local/table-copies.js';
import { evaluateRules } from '../../functions/trees/rules.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { stdoutDuring } from '../support/stdout.js';

const IOS = 'tailf-ned-cisco-ios';
const BATCH = 'b'.repeat(24);
let LocalDurableTestRunner: DurableTesting['LocalDurableTestRunner'];
let serial = 0;
const newId = () => (++serial).toString(16).padStart(24, '0');

const RULES: Record<string, PlanRule[]> = {
  base: [{ id: 'ntp', node: 'base', mode: 'required', path: `/${IOS}:ntp`, value: { server: '{{ntp}}' }, severity: 'error' }],
  'base/core': [{ id: 'domain', node: 'base/core', mode: 'exact', path: `/${IOS}:ip/domain-name`, value: 'lab.example', severity: 'info' }],
};
const PLAN: BatchPlan = { variables: { ntp: '10.0.0.1' }, rulesByNode: RULES, nodes: ['base', 'base/core'] };
const failing = () => ({ [`${IOS}:hostname`]: 'r', [`${IOS}:ntp`]: { server: '10.9.9.9' }, [`${IOS}:ip`]: { 'domain-name': 'old.example' } });
const passing = () => ({ [`${IOS}:hostname`]: 'r', [`${IOS}:ntp`]: { server: '10.0.0.1' }, [`${IOS}:ip`]: { 'domain-name': 'lab.example' } });

/**
 * The run's store, in memory, counting as the contract says: once per state reached, and a
 * dry-run's devices by chunk (set from the stored states, never added).
 */
class MemoryStore implements RemediationStore {
  readonly runs = new Map<string, { run: Remediation; work: NewRemediation; counted: Map<string, Set<string>> }>();
  readonly devices = new Map<string, Map<string, RemediationDevice>>();
  readonly chunkTotals = new Map<string, Map<number, Record<string, number>>>();
  /** Every record written, in order. */
  readonly writes: RemediationDevice[] = [];
  /** Throws instead of writing the record `crash` picks (once per call that returns true). */
  crash: (record: RemediationDevice) => boolean = () => false;
  /** Throws before (`before`) or after (`after`) setting the counts of the chunk `crashCount` picks. */
  crashCount: (chunk: number) => 'before' | 'after' | undefined = () => undefined;

  async create(work: NewRemediation): Promise<void> {
    const run: Remediation = {
      remediationId: work.remediationId,
      batchId: work.batchId,
      adapterId: work.adapterId,
      treeId: work.treeId,
      version: work.version,
      mode: work.mode,
      commitQueue: work.commitQueue,
      status: 'running',
      devices: work.devices.length,
      totals: emptyRemediationTotals(),
      startedBy: work.startedBy,
      started: work.started,
    };
    this.runs.set(work.remediationId, { run, work, counted: new Map() });
    this.devices.set(work.remediationId, new Map(work.devices.map(({ device }) => [device, { device, state: 'pending', rules: [], updatedAt: work.started }])));
  }
  async get(id: string) {
    const run = this.runs.get(id)?.run;
    if (!run) return undefined;
    const totals = { ...run.totals } as Record<keyof RemediationTotals, number>;
    for (const counts of this.chunkTotals.get(id)?.values() ?? [])
      for (const c of Object.keys(totals) as (keyof RemediationTotals)[]) totals[c] += counts[c] ?? 0;
    return { ...run, totals };
  }
  async getWork(id: string) {
    const r = this.runs.get(id);
    return r && { run: r.run, listKeys: r.work.listKeys, devices: [...r.work.devices].sort((a, b) => (a.device < b.device ? -1 : 1)) };
  }
  async listDevices(id: string, page: { readonly limit: number; readonly after?: string }) {
    const all = [...this.devices.get(id)!.values()]
      .sort((a, b) => (a.device < b.device ? -1 : 1))
      .filter((d) => page.after === undefined || d.device > page.after);
    const items = all.slice(0, page.limit);
    return { items, ...(all.length > page.limit ? { next: items.at(-1)!.device } : {}) };
  }
  async getDevice(id: string, device: string) {
    return this.devices.get(id)?.get(device);
  }
  /** Reads of a chunk's records, and groups written together (each record also counts in `writes`). */
  readonly reads: { first: string; last: string }[] = [];
  readonly groups: RemediationDevice[][] = [];
  async readDevices(id: string, first: string, last: string) {
    this.reads.push({ first, last });
    return new Map([...this.devices.get(id)!.values()].filter((d) => d.device >= first && d.device <= last).map((d) => [d.device, d]));
  }
  async putDevices(id: string, records: readonly RemediationDevice[]) {
    this.groups.push([...records]);
    for (const record of records) await this.putDevice(id, record);
  }
  async putUncounted(id: string, records: readonly UncountedRecord[]) {
    this.groups.push(records.map((r) => r.record));
    for (const { record, node } of records) {
      expect(node).toBe(this.runs.get(id)!.work.devices.find((d) => d.device === record.device)!.node);
      if (this.crash(record)) throw new Error(`simulated crash before ${record.device} was recorded ${record.state}`);
      this.devices.get(id)!.set(record.device, record);
      this.writes.push(record);
    }
  }
  /** Every count set: chunk and its devices past pending. */
  readonly counts: { chunk: number; devices: number }[] = [];
  /** Counts the engine gave (`stored`) instead of a read: each must be what the store holds. */
  knownCounts = 0;
  async countChunk(id: string, chunk: number, first: string, last: string, stored?: readonly DeviceState[]) {
    const crash = this.crashCount(chunk);
    if (crash === 'before') throw new Error(`simulated crash before chunk ${chunk} was counted`);
    const states = [...this.devices.get(id)!.values()].filter((d) => d.device >= first && d.device <= last).map((d) => d.state);
    if (stored) {
      this.knownCounts++;
      if (JSON.stringify([...stored].sort()) !== JSON.stringify([...states].sort()))
        throw new Error(`chunk ${chunk}: the engine's states ${stored} are not the stored ${states}`);
    }
    const counts = chunkCounts(states);
    const chunks = this.chunkTotals.get(id) ?? new Map<number, Record<string, number>>();
    this.chunkTotals.set(id, chunks);
    if ((chunks.get(chunk)?.['devices'] ?? 0) <= counts['devices']!) chunks.set(chunk, counts);
    this.counts.push({ chunk, devices: counts['devices']! });
    if (crash === 'after') throw new Error(`simulated crash after chunk ${chunk} was counted`);
  }
  async putDevice(id: string, record: RemediationDevice) {
    if (this.crash(record)) throw new Error(`simulated crash before ${record.device} was recorded ${record.state}`);
    const r = this.runs.get(id)!;
    const counted = r.counted.get(record.device) ?? new Set<string>();
    r.counted.set(record.device, counted);
    const totals = { ...r.run.totals } as Record<keyof RemediationTotals, number>;
    for (const c of COUNTERS[record.state]) if (!counted.has(c)) counted.add(c), totals[c]++;
    r.run = { ...r.run, totals };
    this.devices.get(id)!.set(record.device, record);
    this.writes.push(record);
  }
  async finish(id: string, status: Exclude<RemediationStatus, 'running'>, at: string, reason?: string) {
    const r = this.runs.get(id)!;
    r.run = { ...r.run, status, finished: at, ...(reason ? { reason } : {}) };
  }
  async startRollback(id: string, by: Actor, at: string) {
    const r = this.runs.get(id)!;
    if (r.run.status !== 'completed' || r.run.mode !== 'apply' || r.run.rollback) return false;
    r.run = { ...r.run, rollback: { status: 'running', startedBy: by, started: at } };
    return true;
  }
  async finishRollback(id: string, status: Exclude<RemediationStatus, 'running'>, at: string) {
    const r = this.runs.get(id)!;
    r.run = { ...r.run, rollback: { ...r.run.rollback!, status, finished: at } };
  }
}

const lists = listKeysFrom({});

/** An NSO in memory: devices' configurations, commits with numbered rollback files found by label. */
class MemoryNso implements NsoTransactions {
  readonly configs = new Map<string, Record<string, unknown>>();
  readonly commits: { device: string; label: string; rollbackId: number }[] = [];
  readonly rollbacks: { rollbackId: number }[] = [];
  readonly dryRuns: string[] = [];
  readonly files = new Map<number, { device: string; before: Record<string, unknown>; label: string }>();
  /** Devices whose commits NSO refuses, and devices whose commits change nothing. */
  readonly refuse = new Set<string>();
  readonly ignore = new Set<string>();
  /** Devices whose commits land in NSO's database and whose commit queue item then fails. */
  readonly queueFails = new Set<string>();
  /** Called when a commit has landed (before the engine hears of it). */
  afterCommit: (device: string) => void = () => undefined;
  #next = 100;

  deviceOf(patch: YangPatch): string {
    const edit = patch['ietf-yang-patch:yang-patch'].edit[0]!;
    return parseTarget(edit.target, edit['edit-id']).device;
  }
  async dryRun(_adapterId: string, patch: YangPatch) {
    const device = this.deviceOf(patch);
    this.dryRuns.push(device);
    // Masked as the NSO client masks NSO's answer.
    return shownOutput(`device ${device}\n  ntp server 10.0.0.1\n  snmp-server community s3cret-Community RO\n`);
  }
  async commit(_adapterId: string, patch: YangPatch, options: CommitOptions) {
    const device = this.deviceOf(patch);
    if (this.refuse.has(device)) return { kind: 'commit-refused', reason: `NSO refused the commit for ${device}.` } satisfies DeviceFailure;
    const rollbackId = this.#next++;
    const before = this.configs.get(device)!;
    this.files.set(rollbackId, { device, before, label: options.label });
    if (!this.ignore.has(device)) this.configs.set(device, applyEdits(before, patch['ietf-yang-patch:yang-patch'].edit, lists));
    this.commits.push({ device, label: options.label, rollbackId });
    this.afterCommit(device);
    if (this.queueFails.has(device))
      return { kind: 'commit-queue-failed', reason: `NSO's commit queue item ended failed; its rollback file is ${rollbackId}.`, rollbackId };
    return { rollbackId };
  }
  async findRollback(_adapterId: string, label: string) {
    const found = [...this.files].find(([, f]) => f.label === label);
    return found ? { rollbackId: found[0] } : {};
  }
  /** As NSO's action: the commit it makes has no label (an action takes no commit parameters). */
  async applyRollback(_adapterId: string, rollbackId: number) {
    const file = this.files.get(rollbackId)!;
    const now = this.configs.get(file.device)!;
    this.configs.set(file.device, file.before);
    this.rollbacks.push({ rollbackId });
    this.files.set(this.#next++, { device: file.device, before: now, label: '' });
    return {};
  }
  commitsOf(device: string): number {
    return this.commits.filter((c) => c.device === device).length;
  }
}

/** The relay's GET over the NSO in memory: 404 for a device it does not know. */
const relayOver =
  (nso: MemoryNso, fetched: string[]): RelayGet =>
  async (_adapterId, path) => {
    const device = decodeURIComponent(/device=([^/]+)\/config$/.exec(path)![1]!);
    fetched.push(device);
    const config = nso.configs.get(device);
    return config ? [{ result: '200', data: { 'tailf-ncs:config': config } }] : [{ result: '404' }];
  };

interface Setup {
  readonly store: MemoryStore;
  readonly nso: MemoryNso;
  readonly fetched: string[];
  readonly deps: RemediationEngineDeps;
  readonly id: string;
  readonly adapterId: string;
}

/** A run of `mode` over `configs` (device → configuration; `undefined`: NSO does not know it). */
const setup = async (
  mode: NewRemediation['mode'],
  configs: Record<string, Record<string, unknown> | undefined>,
  over: Partial<RemediationEngineDeps> = {},
): Promise<Setup> => {
  const store = new MemoryStore();
  const nso = new MemoryNso();
  for (const [device, config] of Object.entries(configs)) if (config) nso.configs.set(device, config);
  const fetched: string[] = [];
  const id = newId();
  const adapterId = `nso-${id}`;
  await store.create({
    remediationId: id,
    batchId: BATCH,
    adapterId,
    treeId: 'a'.repeat(24),
    version: 'v1',
    mode,
    commitQueue: false,
    listKeys: {},
    devices: Object.keys(configs).map((device) => ({ device, node: device.startsWith('core') ? 'base/core' : 'base' })),
    startedBy: { subject: 'alice', roles: ['admin'] },
    started: '2026-11-20T10:00:00.000Z',
    expiresAt: 2_000_000_000,
  });
  const deps: RemediationEngineDeps = {
    store,
    batches: {
      getPlan: async () => PLAN,
      getWork: async () => ({ concurrency: 2 }) as BatchWork,
      getChunk: async () => {
        throw new Error('a plan without exemptions reads no chunk');
      },
    },
    relayGet: () => relayOver(nso, fetched),
    nso: () => nso,
    evaluate: evaluateRules,
    now: () => new Date('2026-11-20T10:05:00.000Z'),
    chunkSize: 3,
    retryDelaySeconds: 1,
    ...over,
  };
  return { store, nso, fetched, deps, id, adapterId };
};

const execute = async (s: Setup, action: RemediationEvent['action'] = 'run', onInvoke: () => void = () => undefined, attempt?: number) => {
  const runner = new LocalDurableTestRunner({
    handlerFunction: withDurableExecution(async (event: RemediationEvent, context) => {
      onInvoke();
      return runRemediation(event, context, s.deps);
    }),
  });
  return runner.run({ payload: { remediationId: s.id, action, ...(attempt === undefined ? {} : { attempt }) } });
};

const states = (s: Setup) => Object.fromEntries([...s.store.devices.get(s.id)!.values()].map((d) => [d.device, d.state]));

beforeAll(async () => {
  ({ LocalDurableTestRunner } = await loadDurableTesting());
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: true });
});
afterAll(async () => {
  await LocalDurableTestRunner?.teardownTestEnvironment();
});

const adapters: string[] = [];
afterEach(() => {
  // However the run ended, every slot of the adapter's gate was given back.
  for (const adapter of adapters.splice(0)) expect(gateFor(adapter, 1).held).toBe(0);
});

describe('a dry-run', () => {
  it('records NSO’s native output, masked, for each device with something to fix, and commits nothing', async () => {
    const s = await setup('dry-run', { 'edge-0': failing(), 'edge-1': passing(), 'core-0': failing(), 'edge-gone': undefined });
    adapters.push(s.adapterId);
    let execution!: Awaited<ReturnType<typeof execute>>;
    const logged = await stdoutDuring(async () => {
      execution = await execute(s);
    });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(logged.entries().filter((e) => e['message'] === 'remediation device failed')).toEqual([
      expect.objectContaining({ level: 'warn', remediationId: s.id, device: 'edge-gone', kind: 'unknown-device' }),
    ]);
    expect(s.nso.commits).toEqual([]);
    expect(s.nso.dryRuns.sort()).toEqual(['core-0', 'edge-0']);
    expect(states(s)).toEqual({ 'edge-0': 'dry-run', 'edge-1': 'nothing-to-do', 'core-0': 'dry-run', 'edge-gone': 'failed' });
    const edge = (await s.store.getDevice(s.id, 'edge-0'))!;
    expect(edge.dryRun).toContain('ntp server 10.0.0.1');
    expect(edge.dryRun).not.toContain('s3cret-Community');
    expect(edge.patch?.['ietf-yang-patch:yang-patch']['patch-id']).toBe(commitLabel(s.id, 'edge-0'));
    expect(edge.rules).toEqual([{ ruleId: 'ntp', node: 'base', edits: [expect.any(String)] }]);
    // core-0 inherits base's rule and has its node's own.
    expect((await s.store.getDevice(s.id, 'core-0'))!.rules.map((r) => r.ruleId)).toEqual(['ntp', 'domain']);
    expect((await s.store.getDevice(s.id, 'edge-gone'))!.error).toMatchObject({ kind: 'unknown-device' });
    expect(await s.store.get(s.id)).toMatchObject({
      status: 'completed',
      finished: '2026-11-20T10:05:00.000Z',
      totals: { ...emptyRemediationTotals(), planned: 2, dryRun: 2, failed: 1 },
    });
    expect(execution.getResult()).toEqual({ remediationId: s.id, action: 'run', status: 'completed' });
  });

  it('generates nothing for a rule the batch froze an exemption for, while the exemption holds', async () => {
    const exemption = (exemptionId: string, ruleId: string, until: string) => ({ exemptionId, ruleId, until, reason: 'migration', by: 'bob' });
    const plan: BatchPlan = {
      ...PLAN,
      exemptions: [
        exemption('e'.repeat(24), 'ntp', '2026-12-01T00:00:00.000Z'),
        // Ended after the batch started, before the run: the rule is remediated again.
        exemption('f'.repeat(24), 'domain', '2026-11-20T10:01:00.000Z'),
      ],
    };
    const chunks = [
      [{ device: 'core-0', node: 'base/core', exemptions: [0, 1] }],
      [
        { device: 'edge-0', node: 'base' },
        { device: 'edge-9', node: 'base', exemptions: [0] },
      ],
    ];
    const read: number[] = [];
    const s = await setup(
      'dry-run',
      { 'core-0': failing(), 'edge-0': failing() },
      {
        batches: {
          getPlan: async () => plan,
          getWork: async () => ({ concurrency: 2, chunks: chunks.length }) as BatchWork,
          getChunk: async (_batchId, index) => {
            read.push(index);
            return chunks[index]!;
          },
        },
      },
    );
    adapters.push(s.adapterId);
    expect((await execute(s)).getStatus()).toBe('SUCCEEDED');
    expect(read.sort()).toEqual([0, 1]);
    expect((await s.store.getDevice(s.id, 'core-0'))!.rules).toEqual([
      { ruleId: 'ntp', node: 'base', exempted: { exemptionId: 'e'.repeat(24), until: '2026-12-01T00:00:00.000Z' } },
      { ruleId: 'domain', node: 'base/core', edits: ['domain#1'] },
    ]);
    expect((await s.store.getDevice(s.id, 'core-0'))!.patch?.['ietf-yang-patch:yang-patch'].edit.map((e) => e['edit-id'])).toEqual(['domain#1']);
    expect((await s.store.getDevice(s.id, 'edge-0'))!.rules).toEqual([{ ruleId: 'ntp', node: 'base', edits: ['ntp#1'] }]);
  });

  it('reads no record in a chunk’s first run, counts from what it wrote, and writes a chunk’s dry-run records together', async () => {
    const configs = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`edge-${i}`, failing()]));
    const s = await setup('dry-run', configs);
    adapters.push(s.adapterId);
    expect((await execute(s)).getStatus()).toBe('SUCCEEDED');
    // Chunks of 3 (the setup's size): 3, 3 and 1 devices, each in its first run: all pending as
    // the start stored them, nothing read; each counted from the states it wrote (checked against the store).
    expect(s.store.reads).toEqual([]);
    expect(s.store.knownCounts).toBe(3);
    expect(s.store.groups.map((g) => g.map((r) => r.device).sort())).toEqual(
      expect.arrayContaining([['edge-0', 'edge-1', 'edge-2'], ['edge-3', 'edge-4', 'edge-5'], ['edge-6']]),
    );
    expect(s.store.groups.flat()).toHaveLength(7);
    expect((await s.store.get(s.id))!.totals).toMatchObject({ planned: 7, dryRun: 7 });
  });

  it('counts each chunk from its stored records: a chunk run again before or after its count, or after a crash writing its records, counts each device once', async () => {
    const configs: Record<string, Record<string, unknown> | undefined> = Object.fromEntries(
      Array.from({ length: 9 }, (_, i) => [`edge-${i}`, i === 4 ? passing() : failing()]),
    );
    configs['edge-9'] = undefined;
    const s = await setup('dry-run', configs);
    adapters.push(s.adapterId);
    // Chunk 0 stops after its records are stored, before its count; chunk 1 after its count;
    // chunk 2 while its records are written (edge-7's group fails: its devices stay pending).
    const crashes = new Map<number, number>();
    s.store.crashCount = (chunk) => {
      const n = (crashes.get(chunk) ?? 0) + 1;
      crashes.set(chunk, n);
      return n > 1 ? undefined : chunk === 0 ? 'before' : chunk === 1 ? 'after' : undefined;
    };
    let groupCrashes = 0;
    s.store.crash = (record) => record.device === 'edge-7' && groupCrashes++ === 0;
    const execution = await execute(s);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(groupCrashes).toBe(2);
    // Each device's dry-run was sent once, but for those of the group lost to the crash (sent again).
    const sent = (device: string) => s.nso.dryRuns.filter((d) => d === device).length;
    for (const device of ['edge-0', 'edge-1', 'edge-2', 'edge-3', 'edge-5']) expect(sent(device)).toBe(1);
    expect(sent('edge-7')).toBe(2);
    // Chunk 2's first attempt stored part of its group: counted, then counted again whole.
    const chunk2 = s.store.counts.filter((c) => c.chunk === 2);
    expect(chunk2).toHaveLength(2);
    expect(chunk2[0]!.devices).toBeLessThan(3);
    expect(chunk2[1]!.devices).toBe(3);
    expect(s.store.counts.filter((c) => c.chunk === 1)).toEqual([
      { chunk: 1, devices: 3 },
      { chunk: 1, devices: 3 },
    ]);
    expect(states(s)).toMatchObject({ 'edge-4': 'nothing-to-do', 'edge-7': 'dry-run', 'edge-9': 'failed' });
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 8, dryRun: 8, failed: 1 });
    // Nothing was counted by transaction: the totals are the chunks' counts.
    expect(s.store.runs.get(s.id)!.run.totals).toEqual(emptyRemediationTotals());
  });

  it('counts a chunk stopped by the invocation’s end and goes on in the next one, the totals exact', async () => {
    const configs = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`edge-${i}`, failing()]));
    let invocations = 0;
    const s = await setup('dry-run', configs, {
      remainingTimeMs: () => (invocations === 1 && s.nso.dryRuns.length >= 2 ? REMEDIATION_RESERVE_MS - 1 : 15 * 60_000),
      chunkConcurrency: 1,
      chunkSize: 6,
    });
    adapters.push(s.adapterId);
    expect((await execute(s, 'run', () => invocations++)).getStatus()).toBe('SUCCEEDED');
    expect(invocations).toBeGreaterThanOrEqual(2);
    // Counted at the end of the stopped part (what it had stored), then of the part that finished.
    expect(s.store.counts.at(0)!.devices).toBeLessThan(6);
    expect(s.store.counts.at(-1)).toEqual({ chunk: 0, devices: 6 });
    expect(s.nso.dryRuns.sort()).toEqual(Object.keys(configs));
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 6, dryRun: 6 });
  });

  it('counts, at the run’s end, a chunk that ran out of attempts after storing its records', async () => {
    const s = await setup('dry-run', { 'edge-0': failing(), 'edge-1': failing(), 'edge-2': failing(), 'edge-3': failing() }, { attempts: 2 });
    adapters.push(s.adapterId);
    // Chunk 0 (edge-0 to edge-2) stores its records, and its count fails in both attempts.
    let chunk0 = 0;
    s.store.crashCount = (chunk) => (chunk === 0 && ++chunk0 <= 2 ? 'before' : undefined);
    const execution = await execute(s);
    expect(execution.getResult()).toMatchObject({ status: 'failed' });
    expect(chunk0).toBe(3);
    expect(s.nso.dryRuns.sort()).toEqual(['edge-0', 'edge-1', 'edge-2', 'edge-3']);
    expect((await s.store.get(s.id))!).toMatchObject({ status: 'failed', totals: { ...emptyRemediationTotals(), planned: 4, dryRun: 4 } });
  });

  it('keeps to the rules asked for', async () => {
    const s = await setup('dry-run', { 'core-0': failing() });
    adapters.push(s.adapterId);
    const work = s.store.runs.get(s.id)!;
    work.run = { ...work.run, ruleIds: ['domain'] };
    await execute(s);
    expect((await s.store.getDevice(s.id, 'core-0'))!.rules.map((r) => r.ruleId)).toEqual(['domain']);
  });
});

describe('an apply', () => {
  it('records committing before the commit and the rollback id before grading; fixed or still failing after a fetch', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': passing(), 'core-0': failing(), 'edge-stubborn': failing(), 'edge-refused': failing() });
    adapters.push(s.adapterId);
    s.nso.ignore.add('edge-stubborn');
    s.nso.refuse.add('edge-refused');
    // When NSO commits, the device's record says committing; when it is fetched again, applied with the commit's id.
    const atCommit: string[] = [];
    s.nso.afterCommit = (device) => atCommit.push(`${device}:${s.store.devices.get(s.id)!.get(device)!.state}`);
    const execution = await execute(s);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(atCommit.sort()).toEqual(['core-0:committing', 'edge-0:committing', 'edge-stubborn:committing']);
    for (const device of ['edge-0', 'core-0', 'edge-stubborn']) {
      const sequence = s.store.writes.filter((w) => w.device === device).map((w) => [w.state, w.rollbackId]);
      const { rollbackId } = s.nso.commits.find((c) => c.device === device)!;
      expect(sequence.slice(0, 2)).toEqual([
        ['committing', undefined],
        ['applied', rollbackId],
      ]);
      // Fetched twice: to remediate, then to grade after the commit was recorded.
      expect(s.fetched.filter((d) => d === device)).toHaveLength(2);
    }
    expect(states(s)).toEqual({ 'edge-0': 'fixed', 'edge-1': 'nothing-to-do', 'core-0': 'fixed', 'edge-stubborn': 'still-failing', 'edge-refused': 'failed' });
    expect(await s.store.getDevice(s.id, 'edge-0')).toMatchObject({ gradeAfter: 'pass', rollbackId: expect.any(Number) });
    expect(await s.store.getDevice(s.id, 'edge-stubborn')).toMatchObject({ gradeAfter: 'fail' });
    expect(await s.store.getDevice(s.id, 'edge-refused')).toMatchObject({ error: { kind: 'commit-refused' } });
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 4, applied: 3, fixed: 2, stillFailing: 1, failed: 1 });
    expect(s.nso.commits.map((c) => c.label).sort()).toEqual(['core-0', 'edge-0', 'edge-stubborn'].map((d) => commitLabel(s.id, d)).sort());
  });

  it('after a crash between the commit and its record, finds the commit by its label and never commits the device again', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing(), 'edge-2': failing(), 'edge-3': failing() });
    adapters.push(s.adapterId);
    let crashes = 0;
    s.store.crash = (record) => record.device === 'edge-1' && record.state === 'applied' && crashes++ === 0;
    const execution = await execute(s);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(crashes).toBe(2);
    for (const device of ['edge-0', 'edge-1', 'edge-2', 'edge-3']) expect(s.nso.commitsOf(device)).toBe(1);
    expect(states(s)).toEqual({ 'edge-0': 'fixed', 'edge-1': 'fixed', 'edge-2': 'fixed', 'edge-3': 'fixed' });
    expect((await s.store.getDevice(s.id, 'edge-1'))!.rollbackId).toBe(s.nso.commits.find((c) => c.device === 'edge-1')!.rollbackId);
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 4, applied: 4, fixed: 4 });
  });

  it('fails a device found committing whose commit NSO has no rollback file for, saying so, and sends nothing again', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing() });
    adapters.push(s.adapterId);
    // The commit's step died after recording committing and before NSO got the commit.
    await s.store.putDevice(s.id, { device: 'edge-0', state: 'committing', rules: [{ ruleId: 'ntp', edits: ['ntp#1'] }], updatedAt: 'x' });
    const execution = await execute(s);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(s.nso.commitsOf('edge-0')).toBe(0);
    const edge = (await s.store.getDevice(s.id, 'edge-0'))!;
    expect(edge).toMatchObject({ state: 'failed', error: { kind: 'commit-unknown' } });
    expect(edge.error!.reason).toContain(`no rollback file labelled ${commitLabel(s.id, 'edge-0')}`);
    expect(states(s)['edge-1']).toBe('fixed');
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 2, applied: 1, fixed: 1, failed: 1 });
  });

  it('takes a commit that failed on our side (the outcome unknown) as possibly sent: never sent again, the device failed commit-unknown when NSO has no file', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing() });
    adapters.push(s.adapterId);
    const commit = s.nso.commit.bind(s.nso);
    let thrown = 0;
    s.nso.commit = async (adapter, patch, options) => {
      if (s.nso.deviceOf(patch) === 'edge-0') {
        thrown++;
        throw new Error('the secrets store could not be reached');
      }
      return commit(adapter, patch, options);
    };
    const execution = await execute(s);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(thrown).toBe(1);
    expect(states(s)).toEqual({ 'edge-0': 'failed', 'edge-1': 'fixed' });
    expect((await s.store.getDevice(s.id, 'edge-0'))!.error).toMatchObject({ kind: 'commit-unknown' });
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 2, applied: 1, fixed: 1, failed: 1 });
  });

  it('goes on in the next invocation when one ends in the middle of the run: every device committed once, totals exact', async () => {
    const devices = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`edge-${i}`, failing()]));
    let invocations = 0;
    const s = await setup('apply', devices, {
      remainingTimeMs: () => (invocations === 1 && s.nso.commits.length >= 3 ? REMEDIATION_RESERVE_MS - 1 : 15 * 60_000),
      chunkConcurrency: 1,
    });
    adapters.push(s.adapterId);
    const execution = await execute(s, 'run', () => invocations++);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(invocations).toBeGreaterThanOrEqual(2);
    for (const device of Object.keys(devices)) expect(s.nso.commitsOf(device)).toBe(1);
    expect(Object.values(states(s)).every((state) => state === 'fixed')).toBe(true);
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 8, applied: 8, fixed: 8 });
  });

  it('fails the run with a reason when a chunk keeps failing, and keeps what each device reached', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing(), 'edge-2': failing(), 'edge-3': failing() }, { attempts: 2 });
    adapters.push(s.adapterId);
    s.store.crash = (record) => record.device === 'edge-3' && record.state === 'committing';
    const execution = await execute(s);
    expect(execution.getStatus()).toBe('SUCCEEDED');
    const run = (await s.store.get(s.id))!;
    expect(run).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^1 chunk\(s\) of devices could not be run/) });
    expect(states(s)).toMatchObject({ 'edge-0': 'fixed', 'edge-3': 'pending' });
    expect(s.nso.commitsOf('edge-3')).toBe(0);
    expect(execution.getResult()).toMatchObject({ status: 'failed' });
  });

  it('does nothing for a run that is not stored', async () => {
    const s = await setup('apply', { 'edge-0': failing() });
    const execution = await execute({ ...s, id: newId() });
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getResult()).toMatchObject({ skipped: 'the run does not exist' });
  });

  it('does nothing for a run that has ended already', async () => {
    const s = await setup('apply', { 'edge-0': failing() });
    await s.store.finish(s.id, 'completed', 'x');
    const execution = await execute(s);
    expect(execution.getResult()).toMatchObject({ skipped: expect.stringContaining('completed') });
    expect(s.nso.commits).toEqual([]);
  });
});

describe('a rollback', () => {
  it('applies each applied device’s rollback file, newest commit first, and records it per device', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing(), 'edge-2': passing(), 'edge-3': failing(), 'edge-4': failing() });
    adapters.push(s.adapterId);
    s.nso.refuse.add('edge-4');
    await execute(s);
    expect(await s.store.startRollback(s.id, { subject: 'bob', roles: ['admin'] }, '2026-11-20T11:00:00.000Z')).toBe(true);
    const committed = [...s.nso.commits].sort((a, b) => b.rollbackId - a.rollbackId);
    let crashes = 0;
    // The second rollback lands in NSO, then the step dies before recording it: the device was
    // recorded `applying` first, so the next run never applies its file again, and says so.
    const cut = committed[1]!.device;
    s.store.crash = (record) => record.state === 'rolled-back' && record.device === cut && crashes++ === 0;
    const execution = await execute(s, 'rollback');
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(crashes).toBe(1);
    expect(s.nso.rollbacks.map((r) => r.rollbackId)).toEqual(committed.map((c) => c.rollbackId));
    const rolledBack = ['edge-0', 'edge-1', 'edge-3'].filter((d) => d !== cut);
    expect(states(s)).toEqual({
      'edge-0': 'rolled-back',
      'edge-1': 'rolled-back',
      'edge-2': 'nothing-to-do',
      'edge-3': 'rolled-back',
      'edge-4': 'failed',
      [cut]: 'fixed',
    });
    expect(await s.store.getDevice(s.id, cut)).toMatchObject({
      rollback: { state: 'failed', error: { kind: 'rollback-unknown', reason: expect.stringContaining('not applied again') } },
    });
    for (const device of ['edge-0', 'edge-1', 'edge-3']) expect(s.nso.configs.get(device)).toEqual(failing());
    expect((await s.store.getDevice(s.id, rolledBack[0]!))!.rollback).toEqual({ state: 'rolled-back', at: '2026-11-20T10:05:00.000Z' });
    const run = (await s.store.get(s.id))!;
    expect(run.totals).toEqual({ ...emptyRemediationTotals(), planned: 4, applied: 3, fixed: 3, failed: 1, rolledBack: 2 });
    expect(run.rollback).toMatchObject({ status: 'completed', finished: '2026-11-20T10:05:00.000Z' });
    expect(execution.getResult()).toEqual({ remediationId: s.id, action: 'rollback', status: 'completed' });
  });

  /** Two devices applied, then a rollback in which NSO refuses the first commit's file while `refusing()` holds. */
  const refusedRollback = async (refusing: () => boolean = () => true) => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing() });
    adapters.push(s.adapterId);
    await execute(s);
    await s.store.startRollback(s.id, { subject: 'bob', roles: ['admin'] }, 'x');
    const refused = s.nso.commits[0]!;
    const apply = s.nso.applyRollback.bind(s.nso);
    s.nso.applyRollback = async (adapter, rollbackId) =>
      refusing() && rollbackId === refused.rollbackId ? { kind: 'status', reason: 'The orchestrator answered 400.' } : apply(adapter, rollbackId);
    await execute(s, 'rollback');
    return { s, refused };
  };

  it('records a device NSO would not roll back as failed and goes on with the others', async () => {
    const { s, refused } = await refusedRollback();
    expect(await s.store.getDevice(s.id, refused.device)).toMatchObject({
      state: 'fixed',
      rollback: { state: 'failed', error: { kind: 'status', reason: 'The orchestrator answered 400.' } },
    });
    expect((await s.store.get(s.id))!.totals.rolledBack).toBe(1);
  });

  it('rolls back in a later attempt the device NSO refused; an execution of an earlier attempt does nothing', async () => {
    let refuse = true;
    const { s, refused } = await refusedRollback(() => refuse);
    refuse = false;
    // The next attempt, as the store starts it (service: a device is left to roll back).
    const kept = s.store.runs.get(s.id)!;
    kept.run = { ...kept.run, rollback: { ...kept.run.rollback!, status: 'running', attempt: 2 } };
    const stale = await execute(s, 'rollback');
    expect(stale.getResult()).toMatchObject({ skipped: expect.stringContaining('attempt 2') });
    // Attempt 1 rolled back the other device only; the stale execution sent nothing.
    expect(s.nso.rollbacks.map((r) => r.rollbackId)).toEqual(s.nso.commits.filter((c) => c !== refused).map((c) => c.rollbackId));
    await execute(s, 'rollback', () => undefined, 2);
    expect(s.nso.rollbacks.at(-1)?.rollbackId).toBe(refused.rollbackId);
    expect(s.nso.rollbacks).toHaveLength(2);
    expect(await s.store.getDevice(s.id, refused.device)).toMatchObject({ state: 'rolled-back', rollback: { state: 'rolled-back' } });
    expect((await s.store.get(s.id))!.totals.rolledBack).toBe(2);
    expect(s.nso.configs.get(refused.device)).toEqual(failing());
  });

  it('undoes a commit that landed in NSO although its commit queue item failed: the failed device keeps its rollback id', async () => {
    const s = await setup('apply', { 'edge-0': failing(), 'edge-1': failing() });
    adapters.push(s.adapterId);
    s.nso.queueFails.add('edge-0');
    await execute(s);
    const landed = s.nso.commits.find((c) => c.device === 'edge-0')!;
    expect(await s.store.getDevice(s.id, 'edge-0')).toMatchObject({ state: 'failed', rollbackId: landed.rollbackId, error: { kind: 'commit-queue-failed' } });
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 2, applied: 1, fixed: 1, failed: 1 });
    expect(await s.store.startRollback(s.id, { subject: 'bob', roles: ['admin'] }, 'x')).toBe(true);
    await execute(s, 'rollback');
    expect(s.nso.rollbacks.map((r) => r.rollbackId)).toEqual(s.nso.commits.map((c) => c.rollbackId).sort((a, b) => b - a));
    for (const device of ['edge-0', 'edge-1']) expect(s.nso.configs.get(device)).toEqual(failing());
    expect(states(s)).toEqual({ 'edge-0': 'rolled-back', 'edge-1': 'rolled-back' });
    expect((await s.store.get(s.id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 2, applied: 1, fixed: 1, failed: 1, rolledBack: 2 });
  });

  it('does nothing without a rollback started', async () => {
    const s = await setup('apply', { 'edge-0': failing() });
    const execution = await execute(s, 'rollback');
    expect(execution.getResult()).toMatchObject({ skipped: expect.any(String) });
    expect(s.nso.rollbacks).toEqual([]);
  });
});

describe('on the DynamoDB store', () => {
  it('dry-runs with batch writes and counts by chunk, exact when chunks run again before and after their counts', async () => {
    const dynamo = new DynamoRemediationStore(documentClient, (await createTables())['compliance']);
    const configs = {
      'edge-0': failing(),
      'edge-1': failing(),
      'edge-2': passing(),
      'core-0': failing(),
      'core-1': failing(),
      'edge-3': failing(),
      'edge-gone': undefined,
    };
    const s = await setup('dry-run', configs);
    adapters.push(s.adapterId);
    const work = (await s.store.getWork(s.id))!;
    await dynamo.create({ ...s.store.runs.get(s.id)!.work, devices: work.devices });
    // Chunk 0 crashes before its first count, chunk 1 after it; no transaction is sent.
    const crashed = new Set<string>();
    const counting = new Proxy(dynamo, {
      get: (target, name) => {
        if (name === 'countChunk')
          return async (id: string, chunk: number, first: string, last: string) => {
            const when = chunk === 0 ? 'before' : chunk === 1 ? 'after' : undefined;
            if (when === 'before' && !crashed.has('0')) throw (crashed.add('0'), new Error('simulated crash before the count'));
            await target.countChunk(id, chunk, first, last);
            if (when === 'after' && !crashed.has('1')) throw (crashed.add('1'), new Error('simulated crash after the count'));
          };
        if (name === 'putDevice' || name === 'putDevices') throw new Error(`a dry-run does not call ${name}`);
        return (Reflect.get(target, name) as (...args: unknown[]) => unknown).bind(target);
      },
    });
    const real: Setup = { ...s, deps: { ...s.deps, store: counting } };
    expect((await execute(real)).getStatus()).toBe('SUCCEEDED');
    expect(crashed).toEqual(new Set(['0', '1']));
    // Each dry-run sent once: the chunks run again found their devices stored.
    expect(s.nso.dryRuns.sort()).toEqual(['core-0', 'core-1', 'edge-0', 'edge-1', 'edge-3']);
    expect(await dynamo.get(s.id)).toMatchObject({ status: 'completed', totals: { ...emptyRemediationTotals(), planned: 5, dryRun: 5, failed: 1 } });
    expect(await dynamo.getDevice(s.id, 'edge-2')).toMatchObject({ state: 'nothing-to-do' });
    expect(await dynamo.getDevice(s.id, 'core-1')).toMatchObject({ state: 'dry-run', dryRun: expect.stringContaining('ntp server 10.0.0.1') });
  });

  it('applies, recovers a commit a crash left unrecorded, and rolls back, with the totals exact', async () => {
    const dynamo = new DynamoRemediationStore(documentClient, (await createTables())['compliance']);
    const configs = { 'edge-0': failing(), 'edge-1': failing(), 'core-0': failing(), 'edge-2': passing() };
    const s = await setup('apply', configs);
    adapters.push(s.adapterId);
    const work = (await s.store.getWork(s.id))!;
    await dynamo.create({ ...s.store.runs.get(s.id)!.work, devices: work.devices });
    let crashes = 0;
    const crashing = new Proxy(dynamo, {
      get: (target, name) =>
        name === 'putDevice'
          ? async (id: string, record: RemediationDevice) => {
              if (record.device === 'core-0' && record.state === 'applied' && crashes++ === 0) throw new Error('simulated crash');
              return target.putDevice(id, record);
            }
          : (Reflect.get(target, name) as (...args: unknown[]) => unknown).bind(target),
    });
    const real: Setup = { ...s, deps: { ...s.deps, store: crashing } };
    expect((await execute(real)).getStatus()).toBe('SUCCEEDED');
    expect(crashes).toBe(2);
    for (const device of ['edge-0', 'edge-1', 'core-0']) expect(s.nso.commitsOf(device)).toBe(1);
    expect(await dynamo.get(s.id)).toMatchObject({ status: 'completed', totals: { ...emptyRemediationTotals(), planned: 3, applied: 3, fixed: 3 } });
    expect(await dynamo.getDevice(s.id, 'core-0')).toMatchObject({
      state: 'fixed',
      gradeAfter: 'pass',
      rollbackId: s.nso.commits.find((c) => c.device === 'core-0')!.rollbackId,
    });
    expect(await dynamo.getDevice(s.id, 'edge-2')).toMatchObject({ state: 'nothing-to-do' });

    expect(await dynamo.startRollback(s.id, { subject: 'bob', roles: ['admin'] }, '2026-11-20T11:00:00.000Z')).toBe(true);
    expect((await execute(real, 'rollback')).getStatus()).toBe('SUCCEEDED');
    expect(s.nso.rollbacks.map((r) => r.rollbackId)).toEqual(s.nso.commits.map((c) => c.rollbackId).sort((a, b) => b - a));
    for (const device of ['edge-0', 'edge-1', 'core-0']) expect(s.nso.configs.get(device)).toEqual(failing());
    const run = (await dynamo.get(s.id))!;
    expect(run.totals).toEqual({ ...emptyRemediationTotals(), planned: 3, applied: 3, fixed: 3, rolledBack: 3 });
    expect(run.rollback).toMatchObject({ status: 'completed', startedBy: { subject: 'bob' } });
  });
});
