/**
 * The engine's history steps for a plan's batch that completed: one per chunk (its devices'
 * points, states and delta rows), then one for the devices gone since the previous completed
 * batch and the delta's counts. Each is safe to run again: a device's stored state keeps the
 * batch that wrote it and the state before, so a step that runs again computes from the same
 * state and writes the same items. And the events: one per ended batch, one per device whose
 * grade changed (at least once: a step that runs again publishes again).
 */
import type { Grade } from './grading.js';
import type { BatchEndedEvent, ComplianceEvents, DeltaCounts, DeviceChangedEvent } from './history-model.js';
import { addDelta, deviceStep, emptyDelta, failingRules, type CheckedDevice } from './history.js';
import type { HistoryStore } from './history-store.js';
import { rulesFor } from './check.js';
import type { Batch, BatchPlan, Report } from './model.js';
import type { BatchWork, ComplianceStore } from './store.js';

/** What the history steps need. */
export interface HistoryDeps {
  readonly store: ComplianceStore;
  readonly history: HistoryStore;
  readonly events?: ComplianceEvents;
  /** The batch's frozen plan (the engine reads it once per batch and container). */
  readonly plan: (batchId: string) => Promise<BatchPlan>;
}

/** A plan batch's delta as the last history step recorded it. */
export interface DeltaOutcome {
  readonly counts: DeltaCounts;
  readonly previousBatchId?: string;
  readonly goneUnknown?: true;
}

const expiryOf = (work: BatchWork) => ({ history: work.historyExpiresAt ?? work.expiresAt, batch: work.expiresAt });

/**
 * One report per device: a chunk's runs never report a device twice (engine.ts), but a write of
 * a dead run that landed late would, and two items of one key in a batch write are refused. The
 * later check wins.
 */
const latestPerDevice = (reports: readonly Report[]): Report[] => {
  const latest = new Map<string, Report>();
  for (const r of reports) {
    const seen = latest.get(r.device);
    if (!seen || r.checkedAt > seen.checkedAt) latest.set(r.device, r);
  }
  return [...latest.values()];
};

/**
 * The ids of the rules each device of a chunk could be checked against: those its node inherits
 * in the batch's plan. A rule the tree version no longer has (or no longer gives the device's
 * node) drops out of the device's state.
 */
const evaluableRules = async (batchId: string, index: number, deps: HistoryDeps): Promise<(device: string) => ReadonlySet<string>> => {
  const plan = await deps.plan(batchId);
  const nodes = new Map((await deps.store.getChunk(batchId, index, plan)).map((d) => [d.device, d.node]));
  const byNode = new Map<string, ReadonlySet<string>>();
  return (device) => {
    const node = nodes.get(device);
    if (node === undefined) throw new RangeError(`batch ${batchId} reports device ${device} in chunk ${index}, which does not list it`);
    let ids = byNode.get(node);
    if (!ids) byNode.set(node, (ids = new Set(rulesFor(plan, node).map((r) => r.id))));
    return ids;
  };
};

/**
 * One chunk's history: reads its reports, the rules its devices could be checked against, and
 * its devices' states, writes each device's point, state and delta row, publishes the grade
 * changes (none on the plan's first completed batch: there is nothing to compare with), and
 * returns the chunk's delta counts.
 */
export const historyChunk = async (
  batchId: string,
  index: number,
  work: BatchWork & { readonly planId: string },
  previousBatchId: string | undefined,
  deps: HistoryDeps,
): Promise<DeltaCounts> => {
  const checked: CheckedDevice[] = latestPerDevice(await deps.store.chunkReports(batchId, index)).map((r) => {
    const failing = failingRules(r);
    return {
      device: r.device,
      batchId,
      at: r.checkedAt,
      grade: r.grade,
      reportId: r.reportId,
      ...(r.score === undefined ? {} : { score: r.score }),
      ...(failing ? { failing } : {}),
    };
  });
  const states = await deps.history.states(
    work.planId,
    checked.map((c) => c.device),
  );
  const evaluable = await evaluableRules(batchId, index, deps);
  const writes = checked.map((c) => ({ checked: c, ...deviceStep(states.get(c.device), c, previousBatchId, evaluable(c.device)) }));
  await deps.history.writeDevices(work.planId, batchId, writes, expiryOf(work));
  const counts = emptyDelta();
  for (const w of writes) if (w.change) counts[w.change]++;
  if (previousBatchId && deps.events) {
    const events: DeviceChangedEvent[] = writes.flatMap((w) =>
      w.change && w.change !== 'gone'
        ? [
            {
              detailType: 'Device Compliance Changed' as const,
              detail: {
                eventId: `${batchId}:${w.checked.device}`,
                planId: work.planId,
                batchId,
                device: w.checked.device,
                change: w.change,
                ...(w.from ? { from: w.from } : {}),
                to: w.checked.grade,
                reportId: w.checked.reportId,
                at: w.checked.at,
              },
            },
          ]
        : [],
    );
    if (events.length) await deps.events.publish(events);
  }
  return counts;
};

/** The device names of every chunk of a batch; `undefined` when a chunk is gone (the batch expired). */
const batchDevices = async (store: ComplianceStore, batchId: string, chunks: number): Promise<Set<string> | undefined> => {
  const all = new Set<string>();
  for (let i = 0; i < chunks; i++) {
    const names = await store.chunkDeviceNames(batchId, i);
    if (!names) return undefined;
    for (const n of names) all.add(n);
  }
  return all;
};

/**
 * The delta's last step: the devices of the previous completed batch this one did not check
 * (`gone`; unknown when the previous batch expired), stored as rows, and the counts on the batch item.
 */
export const historyEnd = async (
  batchId: string,
  work: BatchWork & { readonly planId: string },
  previousBatchId: string | undefined,
  chunkCounts: readonly DeltaCounts[],
  deps: HistoryDeps,
): Promise<DeltaOutcome> => {
  let counts = chunkCounts.reduce(addDelta, emptyDelta());
  let goneUnknown = false;
  if (previousBatchId) {
    const previous = await deps.store.getBatch(previousBatchId).then((b) => b && deps.store.getWork(previousBatchId));
    const before = previous && (await batchDevices(deps.store, previousBatchId, previous.chunks));
    if (!before) goneUnknown = true;
    else {
      const now = await batchDevices(deps.store, batchId, work.chunks);
      const gone = [...before].filter((d) => !now?.has(d)).sort();
      const grades: Map<string, Grade> = await deps.history.previousGrades(work.planId, batchId, previousBatchId, gone);
      await deps.history.putGone(
        batchId,
        gone.map((device) => ({ device, ...(grades.has(device) ? { from: grades.get(device)! } : {}) })),
        work.expiresAt,
      );
      counts = { ...counts, gone: gone.length };
    }
  }
  const outcome: DeltaOutcome = { counts, ...(previousBatchId ? { previousBatchId } : {}), ...(goneUnknown ? { goneUnknown: true as const } : {}) };
  await deps.history.setDelta(batchId, outcome);
  return outcome;
};

/** The event of a batch that ended, from the batch as it is stored at its end. */
export const batchEndedEvent = (batch: Batch, delta: DeltaOutcome | undefined): BatchEndedEvent => ({
  detailType: batch.status === 'completed' ? 'Compliance Batch Completed' : 'Compliance Batch Failed',
  detail: {
    batchId: batch.batchId,
    kind: batch.kind,
    ...(batch.planId ? { planId: batch.planId } : {}),
    ...(batch.treeId ? { treeId: batch.treeId, version: batch.version! } : {}),
    adapterId: batch.adapterId,
    status: batch.status === 'completed' ? 'completed' : 'failed',
    started: batch.started,
    finished: batch.finished ?? batch.started,
    total: batch.total,
    grades: batch.grades,
    totals: batch.totals,
    ...(delta ? { delta: delta.counts, ...(delta.previousBatchId ? { previousBatchId: delta.previousBatchId } : {}) } : {}),
    ...(batch.reason ? { reason: batch.reason } : {}),
  },
});

/**
 * A batch's end, before its status is stored: its plan's trend point follows it (with the
 * delta's counts when it completed), and its event is published. Both come first so that a
 * batch shown `completed` or `failed` has its trend point and its event already out (a step run
 * again publishes again: at least once).
 */
export const beforeBatchEnd = async (
  batchId: string,
  work: BatchWork,
  end: Pick<Batch, 'status' | 'finished' | 'reason'>,
  delta: DeltaOutcome | undefined,
  deps: Omit<HistoryDeps, 'history' | 'plan'> & { readonly history?: HistoryStore },
): Promise<void> => {
  const stored = await deps.store.getBatch(batchId);
  if (!stored) throw new Error(`batch ${batchId} does not exist`);
  const batch: Batch = { ...stored, ...end };
  if (work.planId && deps.history) await deps.history.putTrendPoint(work.planId, batch, delta?.counts, work.historyExpiresAt ?? work.expiresAt);
  await deps.events?.publish([batchEndedEvent(batch, delta)]);
};
