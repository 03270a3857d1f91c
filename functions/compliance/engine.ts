/**
 * The batch engine, on AWS Lambda durable functions: the execution maps over the batch's
 * chunks (at most `chunkConcurrency` at once); each chunk is one checkpointed step that
 * checks its devices (fetches gated per adapter), writes their reports and counts itself in
 * the batch, and returns its counts: all the checkpoint log ever holds of a chunk. A crash or
 * timeout replays the log: finished chunks are not run again, and the chunk that was cut
 * short skips the devices it had already reported, so no reported device is checked again and
 * the totals stay exact (see `runChunk` for what runs again).
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

/** Reports a chunk sends to DynamoDB in one request (`BatchWriteItem` takes 25). */
const WRITE_BATCH = 25;
/** Write requests a chunk has in flight at once. */
const WRITES_IN_FLIGHT = 2;

/**
 * Writes a chunk's reports as they come, in few requests: a report waits only while the
 * chunk already has {@link WRITES_IN_FLIGHT} writes on the way, so requests carry one report
 * when devices are checked slowly and up to 25 when they are checked fast. A report's
 * promise settles when DynamoDB has it (or the request failed).
 */
class ReportWriter {
  readonly #put: (reports: readonly Report[]) => Promise<void>;
  #queue: { readonly report: Report; readonly settle: (error?: unknown) => void }[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(put: (reports: readonly Report[]) => Promise<void>) {
    this.#put = put;
  }

  write(report: Report): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ report, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      // Reports finished in the same turn of the event loop go in one request.
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#send();
        });
      }
    });
  }

  #send(): void {
    while (this.#inFlight < WRITES_IN_FLIGHT && this.#queue.length) {
      const batch = this.#queue.splice(0, WRITE_BATCH);
      this.#inFlight++;
      this.#put(batch.map((b) => b.report))
        .then(
          () => batch.forEach((b) => b.settle()),
          (error: unknown) => batch.forEach((b) => b.settle(error ?? new Error('report write failed'))),
        )
        .finally(() => {
          this.#inFlight--;
          this.#send();
        });
    }
  }
}

/** What a device left unchecked after its chunk failed throws (never counted, never reported). */
class ChunkAbandoned extends Error {}

/**
 * Checks one chunk of a batch and returns its counts; safe to run again.
 *
 * It reads which of its devices already have a report (one consistent `BatchGetItem`), counts
 * those as stored and checks only the others. The chunk's writes are its own: the step ends
 * only after every device it started has settled, even when one fails (then no further device
 * is fetched, the reports of the checked ones are still written, and the step throws), and the
 * SDK ends an invocation only when no step is executing. So when a chunk runs again, no earlier
 * run of it is still writing, and the devices it finds without a report are the ones no run has
 * written: it writes them without a condition, and its counts are exactly what it stored.
 */
export const runChunk = async (batchId: string, index: number, work: BatchWork, remainingTimeMs: () => number, deps: EngineDeps): Promise<ChunkCounts> => {
  const [plan, devices] = await Promise.all([planOf(deps.store, batchId), deps.store.getChunk(batchId, index)]);
  const reported = await deps.store.existingReports(batchId, devices.map((d) => d.device));
  let counts = emptyCounts();
  for (const r of reported.values()) counts = addCounts(counts, countOf(r.grade, r.totals));
  const gate = gateFor(work.adapterId, work.concurrency);
  const target = { batchId, treeId: work.treeId, version: work.version, adapterId: work.adapterId, plan };
  const checkDeps: CheckDeps = { ...deps, gate, relayGet: deps.relayGet(remainingTimeMs) };
  const writer = new ReportWriter((reports) => deps.store.putReports(reports, work.expiresAt));
  let failure: { readonly error: unknown } | undefined;
  await Promise.all(
    devices
      .filter((d) => !reported.has(d.device))
      .map(async (assignment) => {
        // A device's time runs from when its first fetch got a slot (not from when the chunk
        // queued it behind the adapter's cap) to when its report is stored.
        let started: number | undefined;
        const run = <T>(fetch: () => Promise<T>) =>
          gate.run(() => {
            if (failure) throw new ChunkAbandoned();
            started ??= performance.now();
            return fetch();
          });
        try {
          const report = await checkDevice(assignment, target, { ...checkDeps, gate: { run, pause: (ms) => gate.pause(ms) } });
          await writer.write(report);
          counts = addCounts(counts, countOf(report.grade, report.totals));
          deps.onDeviceChecked?.(report, performance.now() - (started ?? performance.now()));
        } catch (error) {
          failure ??= { error };
        }
      }),
  );
  if (failure) throw failure.error;
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
