/**
 * The batch engine, on AWS Lambda durable functions: the execution maps over the batch's
 * chunks (at most `chunkConcurrency` at once); each chunk is a checkpointed step (one per part:
 * a chunk stopped by an invocation's end goes on as a new part in the next one) that checks its
 * devices (fetches gated per adapter), writes their reports and counts itself in the batch,
 * and returns its counts: all the checkpoint log ever holds of a chunk. A crash or timeout
 * replays the log: finished chunks are not run again, and the chunk that was cut short runs
 * again, skipping the devices it had already reported: no reported device is checked again and
 * the totals stay exact (see `runChunk` for what runs again).
 */
import { StepSemantics, type DurableContext } from '@aws/durable-execution-sdk-js';
import { MAX_TIMEOUT_MS } from '../adapters/validate.js';
import { gateFor } from './gate.js';
import { backupDevice } from './backup.js';
import { checkDevice, type CheckDeps, type CheckTarget, type RelayGet } from './check.js';
import { addCounts, emptyCounts, type BatchPlan, type ChunkCounts, type ChunkDevice, type DeviceAssignment } from './model.js';
import { syncStep, type RelayPost } from './sync.js';
import { MAX_ATTEMPTS, type BatchWork, type ChunkReport, type ComplianceStore, type DeviceReport } from './store.js';
import type { Grade, RuleTotals } from './grading.js';
import type { ComplianceEvents } from './history-model.js';
import { beforeBatchEnd, historyChunk, historyEnd, type DeltaOutcome } from './history-steps.js';
import type { HistoryStore } from './history-store.js';

/** The event that starts an execution: small by design (the payload limit is 256 KB). */
export interface BatchEvent {
  readonly batchId: string;
}

export interface EngineDeps extends Omit<CheckDeps, 'gate' | 'relayGet' | 'sync'> {
  readonly store: ComplianceStore;
  /** The relay's GET, given how much time the invocation has left. */
  readonly relayGet: (remainingTimeMs: () => number) => RelayGet;
  /** The relay's POST for NSO's sync actions (same client and rules as the GET); needed by batches whose sync is not `none`. */
  readonly relayPost?: (remainingTimeMs: () => number) => RelayPost;
  /** Chunks checked at once (default 3: enough to keep the adapter's fetch slots busy across chunk ends). */
  readonly chunkConcurrency?: number;
  /** Seconds before a failed chunk runs again (doubling, at most 60); default 2. */
  readonly retryDelaySeconds?: number;
  /** Attempts of a chunk before the batch fails; default 6, at most 99. */
  readonly chunkAttempts?: number;
  /** Reports stored together, 1 to 1,000 (the default): see {@link WRITE_BATCH}. */
  readonly reportsPerWrite?: number;
  /** A device was checked and its report written (metrics, benchmark). */
  readonly onDeviceChecked?: (report: DeviceReport, ms: number) => void;
  /** The batch ended (metrics). */
  readonly onBatchEnd?: (outcome: { readonly adapterId: string; readonly status: 'completed' | 'failed' }) => void;
  /** Called at the end of each step (flushes metrics). */
  readonly afterStep?: () => void;
  /** A plan's history (trend, device history, delta): needed by the batches of a plan. */
  readonly history?: HistoryStore;
  /** Where the batch's events go (every ended batch, and the grade changes of a plan's batch); none: no events. */
  readonly events?: ComplianceEvents;
  /** Time the invocation has left; default: the Lambda context's (tests end an invocation early). */
  readonly remainingTimeMs?: () => number;
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

/** A chunk's running counts, added to device by device. */
const tally = (counts: ChunkCounts) => {
  const c = { devices: counts.devices, grades: { ...counts.grades }, totals: { ...counts.totals } };
  return {
    add(grade: Grade, totals: RuleTotals): void {
      c.devices++;
      c.grades[grade]++;
      c.totals.errors += totals.errors;
      c.totals.warnings += totals.warnings;
      c.totals.infos += totals.infos;
      c.totals.passes += totals.passes;
    },
    counts: (): ChunkCounts => c,
  };
};

/**
 * Reports a chunk stores together at most: as many as a chunk holds (`CHUNK_SIZE`). They become
 * a few packs per grade (see `ComplianceStore.putReports`), so one `BatchWriteItem` usually
 * carries them all. The CPU the SDK (and DynamoDB Local) spends is mostly per request: 1,000
 * reports a request make about 10 requests per 10,000 devices when checks are fast (the linger
 * below splits them when they are slow), 250 made 40, 100 made 120 and 25 made 400. (AWS bills
 * per item and kilobyte.)
 */
const WRITE_BATCH = 1000;
/**
 * Longest a checked device's report waits for others to be stored with it. Against an NSO that
 * answers in 150 ms at 10 fetches in flight, a chunk checks about 65 devices a second: they
 * share one request instead of 65.
 */
const WRITE_LINGER_MS = 1_000;

/** A checked device's report waiting to be stored, and when its first fetch was sent. */
interface Pending {
  readonly entry: ChunkReport;
  readonly started: number;
}

/**
 * Writes a chunk's reports in few requests: reports are stored together (see
 * `ComplianceStore.putReports`) when {@link WRITE_BATCH} are waiting, when the chunk has no
 * device left to check, or {@link WRITE_LINGER_MS} after the first was checked, whichever comes
 * first. When a hand-in is stored, `stored` is told its reports; when it fails (or `stored`
 * throws), `failed` is told why. A device holds nothing once handed in: no promise of its own.
 */
class ReportWriter {
  readonly #put: (reports: readonly ChunkReport[]) => Promise<unknown>;
  readonly #stored: (reports: readonly Pending[]) => void;
  readonly #failed: (error: unknown) => void;
  readonly #perWrite: number;
  #queue: Pending[] = [];
  /** Devices of the chunk that may still hand in a report. */
  #remaining: number;
  #timer: NodeJS.Timeout | undefined;
  /** Hand-ins on their way to DynamoDB (they never reject). */
  readonly #writes = new Set<Promise<void>>();

  constructor(o: {
    readonly put: (reports: readonly ChunkReport[]) => Promise<unknown>;
    readonly stored: (reports: readonly Pending[]) => void;
    readonly failed: (error: unknown) => void;
    readonly devices: number;
    readonly perWrite?: number | undefined;
  }) {
    this.#put = o.put;
    this.#stored = o.stored;
    this.#failed = o.failed;
    this.#remaining = o.devices;
    this.#perWrite = Math.min(WRITE_BATCH, Math.max(1, o.perWrite ?? WRITE_BATCH));
  }

  write(entry: ChunkReport, started: number): void {
    this.#queue.push({ entry, started });
    this.#remaining--;
    if (this.#queue.length >= this.#perWrite || this.#remaining === 0) this.#send();
    else this.#timer ??= setTimeout(() => this.#send(), WRITE_LINGER_MS);
  }

  /** Devices of the chunk (one by default) ended without a report, or will never be checked. */
  skip(devices = 1): void {
    if (devices <= 0) return;
    this.#remaining -= devices;
    if (this.#remaining === 0) this.#send();
  }

  /** Resolves when every hand-in has ended, stored or failed. */
  async settled(): Promise<void> {
    while (this.#writes.size) await Promise.all(this.#writes);
  }

  #send(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#queue.length) {
      const batch = this.#queue.splice(0, this.#perWrite);
      // Put from a promise, so that even a put that throws at once is a failed hand-in.
      const write: Promise<void> = Promise.resolve()
        .then(() => this.#put(batch.map((p) => p.entry)))
        .then(() => this.#stored(batch))
        .catch((error: unknown) => this.#failed(error ?? new Error('report write failed')))
        .then(() => void this.#writes.delete(write));
      this.#writes.add(write);
    }
  }
}

/** What a chunk does with each of its devices, given the fetch gate's slot of the worker. */
type DeviceTask = (device: ChunkDevice, checkDeps: CheckDeps) => Promise<DeviceReport>;

/**
 * Checks a compliance batch's device against its plan, or keeps a backup batch's configuration.
 * A compliance batch's chunks always name each device's node, and its work its tree version.
 */
const deviceTask = (batchId: string, work: BatchWork, plan: BatchPlan | undefined, deps: EngineDeps): DeviceTask => {
  if (work.kind === 'backup') {
    const { archive } = deps;
    if (!archive) throw new Error('no configuration archive is configured: a backup batch has nowhere to keep configurations');
    const target = { batchId, adapterId: work.adapterId, source: { kind: 'backup', batchId, batchStarted: work.started } } as const;
    return ({ device }, checkDeps) => backupDevice(device, target, { ...checkDeps, archive });
  }
  const target: CheckTarget = {
    batchId,
    treeId: work.treeId!,
    version: work.version!,
    adapterId: work.adapterId,
    plan: plan!,
    source: { kind: 'compliance', batchId, batchStarted: work.started },
  };
  return (assignment, checkDeps) => checkDevice(assignment as DeviceAssignment, target, checkDeps);
};

/** What a device left unchecked after its chunk failed throws (never counted, never reported). */
class ChunkAbandoned extends Error {}

/**
 * Invocation time a chunk keeps in hand: it starts no fetch with less left. A fetch waits at
 * most the longest adapter timeout (25 s), and the reports of the devices in flight and the
 * chunk's end are written after it. Without this, the devices a chunk reached in the last
 * seconds of an invocation would be reported as timeouts (the relay shortens a fetch's timeout
 * to the time left) instead of being checked in the next invocation.
 */
export const INVOCATION_RESERVE_MS = MAX_TIMEOUT_MS + 10_000;

/** The invocation is about to end: the chunk stops and goes on in the next one (not a failure). */
class OutOfTime extends Error {}

/**
 * A chunk's end: its counts, or that it stopped with the invocation, when to go on, and how
 * many runs of the chunk there have been so far.
 */
export type ChunkOutcome = { readonly counts: ChunkCounts } | { readonly resumeInSeconds: number; readonly runs: number };

/**
 * Which run of a chunk this is: the step's attempt (1-based) in the current part, after `runsBefore`
 * runs of the earlier parts. `runsBefore + attempt` numbers the run across parts: it is what the
 * chunk's report keys carry, so no two runs share a key, and it is at most {@link MAX_ATTEMPTS}.
 */
export interface ChunkRun {
  readonly runsBefore: number;
  readonly attempt: number;
}

/**
 * Checks one chunk of a batch and returns its counts; safe to run again. When the invocation is
 * about to end ({@link INVOCATION_RESERVE_MS}) it takes no further device, lets those in flight
 * store their reports, and returns when to go on instead: the next part of the chunk, a new
 * step, runs in the next invocation.
 *
 * A part's step runs at most once per attempt (`AtMostOncePerRetry`: its start is checkpointed
 * before it runs, and a run cut short by a crash comes back as the next attempt), so on the
 * first attempt of the first part no run of the chunk has written anything and every device is
 * checked. Any other run first reads which of its devices already have a report (one
 * consistent range read per grade), counts those as stored and checks only the others. A run's
 * writes are its own: the step ends only after every device it started has settled and every
 * request of its writes has ended, even when one fails (then no further device is fetched, the
 * reports of the checked ones are still written, and the step throws or, stopped, returns),
 * and the SDK ends an invocation only when no step is executing. So no earlier run is still writing when a chunk runs again, and
 * the devices it finds without a report are the ones no run has written: it writes them
 * without a condition, and its counts are exactly what it stored.
 *
 * One function of about 80 lines on purpose: the guarantees above hold over one sequence (read
 * what is stored, take devices until the reserve, settle, write, count), easier to check whole.
 */
export const runChunk = async (
  batchId: string,
  index: number,
  { runsBefore, attempt }: ChunkRun,
  work: BatchWork,
  remainingTimeMs: () => number,
  deps: EngineDeps,
): Promise<ChunkOutcome> => {
  const run = runsBefore + attempt;
  if (run > MAX_ATTEMPTS) throw new RangeError(`chunk ${index} has run ${MAX_ATTEMPTS} times, as many as its report keys can tell apart`);
  // A backup batch has no tree, so no plan.
  const plan = work.kind === 'backup' ? undefined : await planOf(deps.store, batchId);
  const devices = await deps.store.getChunk(batchId, index, plan);
  const reported = run > 1 ? await deps.store.existingReports(batchId, index) : new Map<string, never>();
  const counts = tally(emptyCounts());
  for (const r of reported.values()) counts.add(r.grade, r.totals);
  const gate = gateFor(work.adapterId, work.concurrency);
  const task = deviceTask(batchId, work, plan, deps);
  const relayGet = deps.relayGet(remainingTimeMs);
  const unreported = devices.map((assignment, position) => ({ assignment, position })).filter(({ assignment }) => !reported.has(assignment.device));
  const sync = syncStep(
    work.sync,
    { batchId, adapterId: work.adapterId },
    unreported.map(({ assignment }) => assignment.device),
    deps.relayPost?.(remainingTimeMs),
    deps.maxBusyRetries,
  );
  let failure: { readonly error: unknown } | undefined;
  const writer = new ReportWriter({
    put: (reports) => deps.store.putReports(batchId, { chunk: index, attempt: run }, reports, work.expiresAt),
    stored: (reports) => {
      const now = performance.now();
      for (const { entry, started } of reports) {
        counts.add(entry.report.grade, entry.report.totals);
        deps.onDeviceChecked?.(entry.report, now - started);
      }
    },
    failed: (error) => (failure ??= { error }),
    devices: unreported.length,
    perWrite: deps.reportsPerWrite,
  });
  // As many workers as the adapter has fetch slots take the chunk's devices in turn, each
  // holding a slot of the adapter's gate while it has devices to check (it sends one fetch at a
  // time), so a chunk holds only the devices in flight, not all of them at once. The chunks
  // running at once share the slots: those of a chunk out of devices pass to the next at once,
  // while it writes its last reports. After a failure the workers take no further device.
  let next = 0;
  const worker = async (): Promise<void> => {
    const slot = await gate.hold();
    try {
      // A device's time runs from when its first fetch is sent (not from when its worker waited
      // for a slot) to when its report is stored.
      let started: number | undefined;
      const checkDeps: CheckDeps = {
        ...deps,
        relayGet,
        sync,
        gate: {
          run: (fetch) =>
            slot.run(() => {
              if (!failure) {
                const left = remainingTimeMs();
                if (left < INVOCATION_RESERVE_MS) failure = { error: new OutOfTime() };
              }
              if (failure) throw new ChunkAbandoned();
              started ??= performance.now();
              return fetch();
            }),
          pause: (ms) => slot.pause(ms),
        },
      };
      while (next < unreported.length && !failure) {
        const { assignment, position } = unreported[next++]!;
        started = undefined;
        let checked: DeviceReport;
        try {
          checked = await task(assignment, checkDeps);
        } catch (error) {
          writer.skip();
          failure ??= { error };
          return;
        }
        writer.write({ position, report: checked }, started ?? performance.now());
      }
    } finally {
      slot.release();
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, work.concurrency), unreported.length) }, worker));
  writer.skip(unreported.length - next);
  // A failed hand-in is noted, not thrown: the chunk ends after its last write has ended.
  await writer.settled();
  // Stopped: what this part stored is read back by the next, which counts the chunk.
  // A write that failed after the stop is not an attempt spent: the next part checks its devices.
  if (failure?.error instanceof OutOfTime) return { resumeInSeconds: Math.ceil(Math.max(0, remainingTimeMs()) / 1000) + 1, runs: run };
  if (failure) throw failure.error;
  await deps.store.countChunk(batchId, index, counts.counts());
  return { counts: counts.counts() };
};

/** The local runner's Lambda context has no deadline; Lambda's always does. */
const remainingOf =
  (context: DurableContext): (() => number) =>
  () => {
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
  const remainingTimeMs = deps.remainingTimeMs ?? remainingOf(context);
  const attempts = Math.min(MAX_ATTEMPTS, deps.chunkAttempts ?? 6);
  const firstDelay = deps.retryDelaySeconds ?? 2;
  const result = await context.map(
    'chunks',
    Array.from({ length: work.chunks }, (_, i) => i),
    async (child, index) => {
      // A chunk stopped by an invocation's end goes on in a new part after a durable wait that
      // outlasts the invocation, so the part runs in the next one with its own `attempts` for
      // failures. Each part in a fresh invocation checks devices, and a chunk runs at most
      // MAX_ATTEMPTS times in all, so the parts end.
      let runsBefore = 0;
      for (let part = 1; ; part++) {
        const before = runsBefore;
        const outcome = await child.step(
          part === 1 ? 'check' : `check-${part}`,
          async ({ attempt }) => {
            try {
              return await runChunk(batchId, index, { runsBefore: before, attempt }, work, remainingTimeMs, deps);
            } finally {
              deps.afterStep?.();
            }
          },
          {
            semantics: StepSemantics.AtMostOncePerRetry,
            retryStrategy: (_error, attempt) => ({
              shouldRetry: attempt < attempts && before + attempt < MAX_ATTEMPTS,
              delay: { seconds: Math.min(60, firstDelay * 2 ** (attempt - 1)) },
            }),
          },
        );
        if ('counts' in outcome) return outcome.counts;
        runsBefore = outcome.runs;
        await child.wait(`resume-${part}`, { seconds: outcome.resumeInSeconds });
      }
    },
    { maxConcurrency: deps.chunkConcurrency ?? 3, itemNamer: (_, i) => `chunk-${i}` },
  );
  if (result.failureCount > 0)
    return failBatch(
      batchId,
      work,
      `${result.failureCount} chunk(s) of devices could not be checked (after ${attempts} attempts, or ${MAX_ATTEMPTS} runs in all); the reports written so far are kept.`,
      step,
      deps,
    );
  const counts = result.getResults().reduce(addCounts, emptyCounts());
  let delta: DeltaOutcome | undefined;
  if (work.planId && work.kind === 'compliance') {
    const planWork = { ...work, planId: work.planId };
    const { history } = deps;
    if (!history) throw new Error('the engine has no history store: a plan batch cannot record its history');
    const historyDeps = { store: deps.store, history, plan: (id: string) => planOf(deps.store, id), ...(deps.events ? { events: deps.events } : {}) };
    const { previousBatchId } = await step('history-previous', async () => ({
      previousBatchId: await history.previousCompleted(planWork.planId, work.started, batchId),
    }));
    const chunkDeltas = await context.map(
      'history',
      Array.from({ length: work.chunks }, (_, i) => i),
      (child, index) =>
        child.step('history', () => historyChunk(batchId, index, planWork, previousBatchId, historyDeps).finally(() => deps.afterStep?.()), {
          retryStrategy: (_error, attempt) => ({ shouldRetry: attempt < attempts, delay: { seconds: Math.min(60, firstDelay * 2 ** (attempt - 1)) } }),
        }),
      { maxConcurrency: deps.chunkConcurrency ?? 3, itemNamer: (_, i) => `history-${i}` },
    );
    if (chunkDeltas.failureCount > 0)
      return failBatch(batchId, work, "The batch's devices were checked, but the plan's history could not be written; the reports are kept.", step, deps);
    delta = await step('history-end', () => historyEnd(batchId, planWork, previousBatchId, chunkDeltas.getResults(), historyDeps));
  }
  await step('finish', async () => {
    const finished = deps.now().toISOString();
    await beforeBatchEnd(batchId, work, { status: 'completed', finished }, delta, deps);
    await deps.store.finish(batchId, 'completed', finished, counts);
    deps.onBatchEnd?.({ adapterId: work.adapterId, status: 'completed' });
  });
  return { batchId, status: 'completed', counts };
};

/** Ends a batch `failed` (its plan's trend point follows, its event is published). */
const failBatch = async (
  batchId: string,
  work: BatchWork,
  reason: string,
  step: <T>(name: string, run: () => Promise<T>) => Promise<T>,
  deps: EngineDeps,
): Promise<BatchOutcome> => {
  await step('fail', async () => {
    const finished = deps.now().toISOString();
    await beforeBatchEnd(batchId, work, { status: 'failed', finished, reason }, undefined, deps);
    await deps.store.finish(batchId, 'failed', finished, undefined, reason);
    deps.onBatchEnd?.({ adapterId: work.adapterId, status: 'failed' });
  });
  return { batchId, status: 'failed', counts: emptyCounts() };
};
