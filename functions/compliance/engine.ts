/**
 * The batch engine, on AWS Lambda durable functions: the execution maps over the batch's
 * chunks (at most `chunkConcurrency` at once); each chunk is one checkpointed step that
 * checks its devices (fetches gated per adapter), writes their reports and counts itself in
 * the batch, and returns its counts: all the checkpoint log ever holds of a chunk. A crash or
 * timeout replays the log: finished chunks are not run again, and the chunk that was cut
 * short skips the devices it had already reported, so no device is checked twice and the
 * totals stay exact.
 */
import type { DurableContext } from '@aws/durable-execution-sdk-js';
import { gateFor } from './gate.js';
import { checkDevice, type CheckDeps, type RelayGet } from './check.js';
import { addCounts, emptyCounts, type BatchPlan, type ChunkCounts } from './model.js';
import type { BatchWork, ComplianceStore } from './store.js';
import type { Grade, RuleTotals } from './grading.js';
import type { Report } from './model.js';

/** The event that starts an execution: small by design (the payload limit is 256 KB). */
export interface BatchEvent {
  readonly batchId: string;
}

export interface EngineDeps extends Omit<CheckDeps, 'gate' | 'relayGet'> {
  readonly store: ComplianceStore;
  /** The relay's GET, given how much time the invocation has left. */
  readonly relayGet: (remainingTimeMs: () => number) => RelayGet;
  /** Chunks checked at once (default 3: enough to keep the adapter's fetch slots busy across chunk ends). */
  readonly chunkConcurrency?: number;
  /** Seconds before a failed chunk runs again (doubling, at most 60); default 2. */
  readonly retryDelaySeconds?: number;
  /** Attempts of a chunk before the batch fails; default 6. */
  readonly chunkAttempts?: number;
  /** A device was checked and its report written (metrics, benchmark). */
  readonly onDeviceChecked?: (report: Report, ms: number) => void;
  /** The batch ended (metrics). */
  readonly onBatchEnd?: (outcome: { readonly adapterId: string; readonly status: 'completed' | 'failed' }) => void;
  /** Called at the end of each step (flushes metrics). */
  readonly afterStep?: () => void;
}

export interface BatchOutcome {
  readonly batchId: string;
  readonly status: 'completed' | 'failed';
  readonly counts: ChunkCounts;
}

/** Plans read by this container, by batch (a few: one container runs one batch at a time). */
const plans = new Map<string, Promise<BatchPlan>>();
const planOf = (store: ComplianceStore, batchId: string): Promise<BatchPlan> => {
  let plan = plans.get(batchId);
  if (!plan) {
    plan = store.getPlan(batchId);
    plan.catch(() => plans.delete(batchId));
    if (plans.size >= 4) plans.delete(plans.keys().next().value!);
    plans.set(batchId, plan);
  }
  return plan;
};

const countOf = (grade: Grade, totals: RuleTotals): ChunkCounts => {
  const c = emptyCounts();
  return { devices: 1, grades: { ...c.grades, [grade]: 1 }, totals };
};

/** Checks one chunk of a batch; safe to run again (it skips what is already reported). */
export const runChunk = async (batchId: string, index: number, work: BatchWork, remainingTimeMs: () => number, deps: EngineDeps): Promise<ChunkCounts> => {
  const [plan, devices] = await Promise.all([planOf(deps.store, batchId), deps.store.getChunk(batchId, index)]);
  const reported = await deps.store.existingReports(batchId, devices.map((d) => d.device));
  let counts = emptyCounts();
  for (const r of reported.values()) counts = addCounts(counts, countOf(r.grade, r.totals));
  const gate = gateFor(work.adapterId, work.concurrency);
  const target = { batchId, treeId: work.treeId, version: work.version, adapterId: work.adapterId, plan };
  const checkDeps: CheckDeps = { ...deps, gate, relayGet: deps.relayGet(remainingTimeMs) };
  await Promise.all(
    devices
      .filter((d) => !reported.has(d.device))
      .map(async (assignment) => {
        // A device's time runs from when its first fetch got a slot (not from when the chunk
        // queued it behind the adapter's cap) to when its report is stored.
        let started: number | undefined;
        const timed = { run: <T>(fetch: () => Promise<T>) => gate.run(() => ((started ??= performance.now()), fetch())), pause: (ms: number) => gate.pause(ms) };
        const report = await checkDevice(assignment, target, { ...checkDeps, gate: timed });
        if (await deps.store.putReport(report, work.expiresAt)) {
          counts = addCounts(counts, countOf(report.grade, report.totals));
          deps.onDeviceChecked?.(report, performance.now() - (started ?? performance.now()));
        } else {
          // Reported meanwhile by another run of this chunk: count what is stored, once.
          const stored = (await deps.store.existingReports(batchId, [assignment.device])).get(assignment.device)!;
          counts = addCounts(counts, countOf(stored.grade, stored.totals));
        }
      }),
  );
  await deps.store.countChunk(batchId, index, counts, work.expiresAt);
  return counts;
};

/** The local runner's Lambda context has no deadline; Lambda's always does. */
const remainingOf = (context: DurableContext): (() => number) => () => {
  try {
    return context.lambdaContext.getRemainingTimeInMillis();
  } catch {
    return 15 * 60_000;
  }
};

/** Runs a batch as a durable execution. */
export const runBatch = async (event: BatchEvent, context: DurableContext, deps: EngineDeps): Promise<BatchOutcome> => {
  const { batchId } = event;
  const step = <T>(name: string, run: () => Promise<T>) =>
    context.step(name, async () => {
      try {
        return await run();
      } finally {
        deps.afterStep?.();
      }
    });
  const work = await step('load', () => deps.store.getWork(batchId));
  const attempts = deps.chunkAttempts ?? 6;
  const firstDelay = deps.retryDelaySeconds ?? 2;
  const result = await context.map(
    'chunks',
    Array.from({ length: work.chunks }, (_, i) => i),
    (child, index) =>
      child.step('check', async () => {
        try {
          return await runChunk(batchId, index, work, remainingOf(context), deps);
        } finally {
          deps.afterStep?.();
        }
      }, {
        retryStrategy: (_error, attempt) => ({ shouldRetry: attempt < attempts, delay: { seconds: Math.min(60, firstDelay * 2 ** (attempt - 1)) } }),
      }),
    { maxConcurrency: deps.chunkConcurrency ?? 3, itemNamer: (_, i) => `chunk-${i}` },
  );
  if (result.failureCount > 0) {
    const counts = emptyCounts();
    await step('fail', async () => {
      await deps.store.finish(batchId, 'failed', deps.now().toISOString(), undefined, `${result.failureCount} chunk(s) of devices could not be checked after ${attempts} attempts; the reports written so far are kept.`);
      deps.onBatchEnd?.({ adapterId: work.adapterId, status: 'failed' });
    });
    return { batchId, status: 'failed', counts };
  }
  const counts = result.getResults().reduce(addCounts, emptyCounts());
  await step('finish', async () => {
    await deps.store.finish(batchId, 'completed', deps.now().toISOString(), counts);
    deps.onBatchEnd?.({ adapterId: work.adapterId, status: 'completed' });
  });
  return { batchId, status: 'completed', counts };
};
