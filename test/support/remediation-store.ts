/**
 * An in-memory {@link RemediationStore} that keeps the contract of functions/remediation/model.ts:
 * devices listed by name (`after` the last name of the previous page), totals counted once per
 * state a device reaches, a rollback allowed only for a finished `apply` run, once (again after
 * one that failed before reaching a device), a dry-run's devices counted by chunk (set from
 * their stored states, added to the totals when read). No adapter lease: tests of the lease use the
 * DynamoDB store. For tests of the code that starts and shows runs.
 */
import type {
  Actor,
  DevicePage,
  NewRemediation,
  Remediation,
  RemediationDevice,
  RemediationStatus,
  RemediationStore,
  RemediationTotals,
  RollbackIdsReader,
  UncountedRecord,
} from '../../functions/remediation/model.js';
import { emptyRemediationTotals } from '../../functions/remediation/model.js';

/** The total a state counts in, once per device. */
const COUNTED: Partial<Record<RemediationDevice['state'], keyof RemediationTotals>> = {
  'dry-run': 'dryRun',
  applied: 'applied',
  fixed: 'fixed',
  'still-failing': 'stillFailing',
  failed: 'failed',
  'rolled-back': 'rolledBack',
};

interface Kept {
  run: Remediation;
  listKeys: NewRemediation['listKeys'];
  nodes: NewRemediation['devices'];
  devices: Map<string, RemediationDevice>;
  counted: Set<string>;
  chunks: Map<number, Partial<Record<keyof RemediationTotals, number>>>;
}

export class MemoryRemediationStore implements RemediationStore, RollbackIdsReader {
  readonly runs = new Map<string, Kept>();

  #kept(remediationId: string): Kept {
    const kept = this.runs.get(remediationId);
    if (!kept) throw new Error(`run ${remediationId} does not exist`);
    return kept;
  }

  async create(run: NewRemediation): Promise<void> {
    if (this.runs.has(run.remediationId)) throw new Error(`run ${run.remediationId} exists`);
    const { listKeys, devices, expiresAt: _expires, ...rest } = run;
    const devicesMap = new Map(devices.map(({ device }) => [device, { device, state: 'pending', rules: [], updatedAt: run.started } as RemediationDevice]));
    this.runs.set(run.remediationId, {
      run: { ...rest, status: 'running', devices: devices.length, totals: emptyRemediationTotals() },
      listKeys,
      nodes: devices,
      devices: devicesMap,
      counted: new Set(),
      chunks: new Map(),
    });
  }

  async get(remediationId: string): Promise<Remediation | undefined> {
    const kept = this.runs.get(remediationId);
    if (!kept) return undefined;
    const totals = { ...kept.run.totals };
    for (const counts of kept.chunks.values()) for (const [total, n] of Object.entries(counts)) totals[total as keyof RemediationTotals] += n;
    return { ...kept.run, totals };
  }

  async getWork(remediationId: string) {
    const kept = this.runs.get(remediationId);
    return kept ? { run: kept.run, listKeys: kept.listKeys, devices: kept.nodes } : undefined;
  }

  async listDevices(remediationId: string, page: { readonly limit: number; readonly after?: string }): Promise<DevicePage> {
    const names = [...this.#kept(remediationId).devices.keys()].sort().filter((name) => page.after === undefined || name > page.after);
    const items = names.slice(0, page.limit).map((name) => this.#kept(remediationId).devices.get(name)!);
    return { items, ...(names.length > page.limit ? { next: items.at(-1)!.device } : {}) };
  }

  async getDevice(remediationId: string, device: string): Promise<RemediationDevice | undefined> {
    return this.#kept(remediationId).devices.get(device);
  }

  async readDevices(remediationId: string, first: string, last: string): Promise<Map<string, RemediationDevice>> {
    const devices = [...this.#kept(remediationId).devices.values()].filter((d) => d.device >= first && d.device <= last);
    return new Map(devices.map((d) => [d.device, d]));
  }

  async putDevices(remediationId: string, records: readonly RemediationDevice[]): Promise<void> {
    for (const record of records) await this.putDevice(remediationId, record);
  }

  async putUncounted(remediationId: string, records: readonly UncountedRecord[]): Promise<void> {
    for (const { record } of records) this.#kept(remediationId).devices.set(record.device, record);
  }

  async countChunk(remediationId: string, chunk: number, first: string, last: string): Promise<void> {
    const counts: Partial<Record<keyof RemediationTotals, number>> = {};
    for (const d of (await this.readDevices(remediationId, first, last)).values()) {
      const total = COUNTED[d.state];
      if (total) counts[total] = (counts[total] ?? 0) + 1;
    }
    this.#kept(remediationId).chunks.set(chunk, counts);
  }

  async putDevice(remediationId: string, record: RemediationDevice): Promise<void> {
    const kept = this.#kept(remediationId);
    kept.devices.set(record.device, record);
    const total = COUNTED[record.state];
    const key = `${record.device}#${record.state}`;
    if (!total || kept.counted.has(key)) return;
    kept.counted.add(key);
    kept.run = { ...kept.run, totals: { ...kept.run.totals, [total]: kept.run.totals[total] + 1 } };
  }

  async finish(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string, reason?: string): Promise<void> {
    const kept = this.#kept(remediationId);
    kept.run = { ...kept.run, status, finished: at, ...(reason ? { reason } : {}) };
  }

  async startRollback(remediationId: string, by: Actor, at: string): Promise<boolean> {
    const kept = this.#kept(remediationId);
    const reached = [...kept.devices.values()].some((d) => d.rollback?.state === 'applying' || d.rollback?.state === 'rolled-back');
    if (kept.run.mode !== 'apply' || kept.run.status === 'running') return false;
    if (kept.run.rollback && (kept.run.rollback.status !== 'failed' || reached)) return false;
    kept.run = { ...kept.run, rollback: { status: 'running', startedBy: by, started: at } };
    return true;
  }

  async finishRollback(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string): Promise<void> {
    const kept = this.#kept(remediationId);
    if (!kept.run.rollback) throw new Error(`run ${remediationId} has no rollback`);
    kept.run = { ...kept.run, rollback: { ...kept.run.rollback, status, finished: at } };
  }

  async rollbackIds(remediationId: string): Promise<number[]> {
    return [...this.#kept(remediationId).devices.values()]
      .filter((d) => d.rollbackId !== undefined && d.state !== 'rolled-back')
      .map((d) => d.rollbackId!)
      .sort((a, b) => b - a);
  }
}
