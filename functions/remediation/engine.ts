/**
 * The remediation engine, on AWS Lambda durable functions, as the compliance engine runs
 * batches: a `run` maps over chunks of the run's devices (by name), each chunk a checkpointed
 * step (`AtMostOncePerRetry`, one per part: a chunk stopped by an invocation's end goes on as a
 * new part in the next one); a `rollback` walks the applied devices newest commit first in
 * steps of the same kind. The checkpoint log holds nothing but small outcomes: where each device
 * stands is in the store, and a step that runs again reads it there.
 *
 * A device is never committed twice: its record says `committing` before the commit is sent,
 * and `applied` with the rollback id before anything else happens to it. A step that runs
 * again after a crash finds a device `committing` and asks NSO for the rollback file of the
 * commit's label instead of committing again (found: `applied`; none: `failed`,
 * `commit-unknown`). Devices past `pending` are never sent anything again, except that an
 * `applied` one is graded.
 */
import { createHash } from 'node:crypto';
import { StepSemantics, type DurableContext } from '@aws/durable-execution-sdk-js';
import { MAX_TIMEOUT_MS } from '../adapters/validate.js';
import { fetchConfig, rulesFor, type CheckDeps, type DeviceFailure, type EvaluateRules, type RelayGet } from '../compliance/check.js';
import { gateFor, type FetchGate } from '../compliance/gate.js';
import { gradeOf, score } from '../compliance/grading.js';
import type { BatchPlan } from '../compliance/model.js';
import type { ComplianceStore } from '../compliance/store.js';
import { logger } from '../platform/logger.js';
import type { FrozenExemption } from '../exemptions/model.js';
import { remediateDevice, type RuleExemption } from './generate.js';
import type { DeviceState, NsoOutcome, NsoTransactions, Remediation, RemediationDevice, RemediationEvent, RemediationStore } from './model.js';
import { MAX_COMMIT_TEXT, commitText } from './nso.js';
import { listKeysFrom } from './patch.js';
import { DEVICES_PER_WRITE, UNCOUNTED_PER_WRITE } from './store.js';

export interface RemediationEngineDeps {
  readonly store: RemediationStore;
  /**
   * The compliance batches: the run's plan (rules, variables, exemptions), the adapter's fetch
   * cap, and the chunks (which exemptions apply to which device).
   */
  readonly batches: Pick<ComplianceStore, 'getPlan' | 'getWork' | 'getChunk'>;
  /** The relay's GET, given how much time the invocation has left. */
  readonly relayGet: (remainingTimeMs: () => number) => RelayGet;
  /** NSO's transactions through the relay, given how much time the invocation has left. */
  readonly nso: (remainingTimeMs: () => number) => NsoTransactions;
  readonly evaluate: EvaluateRules;
  readonly now: () => Date;
  /** Devices a chunk takes (default 100). */
  readonly chunkSize?: number;
  /** Chunks run at once (default 3). */
  readonly chunkConcurrency?: number;
  /** Seconds before a failed step runs again (doubling, at most 60); default 2. */
  readonly retryDelaySeconds?: number;
  /** Attempts of a step before the run fails; default 6. */
  readonly attempts?: number;
  /** Busy answers (429, 503) retried per fetch. */
  readonly maxBusyRetries?: number;
  /** Time the invocation has left; default: the Lambda context's (tests end an invocation early). */
  readonly remainingTimeMs?: () => number;
  /** Called at the end of each step (flushes metrics). */
  readonly afterStep?: () => void;
  /** A run or its rollback ended (audit, metrics), inside the checkpointed end step. */
  readonly onEnd?: (end: RemediationEnd) => Promise<void> | void;
}

/** How a run or its rollback ended. */
export interface RemediationEnd {
  readonly remediationId: string;
  readonly action: RemediationEvent['action'];
  readonly status: 'completed' | 'failed';
  readonly reason?: string;
}

export type RemediationOutcome = RemediationEnd | { readonly remediationId: string; readonly action: RemediationEvent['action']; readonly skipped: string };

/**
 * Invocation time a step keeps in hand: it takes no further device with less left. A device
 * sends at most three requests in turn (a fetch, the commit, a fetch), each waiting at most
 * the longest adapter timeout, and its records are written after them.
 */
export const REMEDIATION_RESERVE_MS = 3 * MAX_TIMEOUT_MS + 10_000;

/**
 * The rollback label of a device's commit: how the commit is found again after a crash. The
 * device's name is in it when it can travel whole (at most `MAX_COMMIT_TEXT` characters, none
 * that `commitText` replaces); otherwise the SHA-256 of the name after `#` (no device name holds
 * a `/`, so the two forms never meet, and no two devices of a run share a label).
 */
export const commitLabel = (remediationId: string, device: string): string => {
  const plain = `remediation/${remediationId}/${device}`;
  if (plain.length <= MAX_COMMIT_TEXT && commitText(plain) === plain) return plain;
  return `remediation/${remediationId}#${createHash('sha256').update(device, 'utf8').digest('hex')}`;
};

/** The invocation is about to end: the step stops and goes on in the next one (not a failure). */
class OutOfTime extends Error {}

/** A step's end: done, or that it stopped with the invocation, when to go on, and how many runs of it there have been. */
type PartOutcome = { readonly done: number } | { readonly resumeInSeconds: number; readonly runs: number };

/** What the run needs, read once per container and run (it never changes once the run is stored). */
interface Work {
  readonly run: Remediation;
  readonly listKeys: Readonly<Record<string, readonly string[]>>;
  readonly devices: readonly { readonly device: string; readonly node: string }[];
  readonly plan: BatchPlan;
  readonly concurrency: number;
  /** The exemptions the batch froze for each of the run's devices that has any. */
  readonly exemptions: ReadonlyMap<string, readonly FrozenExemption[]>;
}

/** Chunks of the batch read at once when its exemptions are gathered. */
const CHUNK_READS = 8;

/**
 * The exemptions the batch froze per device (its plan's list, each chunk entry naming its
 * device's by place), for the run's devices: read only when the plan has exemptions.
 */
const frozenExemptions = async (
  batchId: string,
  plan: BatchPlan,
  chunks: number,
  devices: readonly { readonly device: string }[],
  deps: RemediationEngineDeps,
): Promise<Map<string, readonly FrozenExemption[]>> => {
  const found = new Map<string, readonly FrozenExemption[]>();
  const listed = plan.exemptions ?? [];
  if (listed.length === 0) return found;
  const wanted = new Set(devices.map((d) => d.device));
  for (let first = 0; first < chunks; first += CHUNK_READS) {
    const read = await Promise.all(Array.from({ length: Math.min(CHUNK_READS, chunks - first) }, (_, i) => deps.batches.getChunk(batchId, first + i, plan)));
    for (const { device, exemptions } of read.flat()) {
      const held = (exemptions ?? []).flatMap((place) => listed[place] ?? []);
      if (held.length && wanted.has(device)) found.set(device, held);
    }
  }
  return found;
};

/**
 * The exemptions that hold for a device's rules at `at` (before their `until`), by rule id:
 * an exemption that ended since the batch ran no longer spares its rule.
 */
const exemptionsAt = (work: Work, device: string, at: Date): Map<string, RuleExemption> => {
  const held = new Map<string, RuleExemption>();
  for (const e of work.exemptions.get(device) ?? []) {
    const kept = held.get(e.ruleId);
    if (Date.parse(e.until) > at.getTime() && (!kept || Date.parse(e.until) > Date.parse(kept.until)))
      held.set(e.ruleId, { exemptionId: e.exemptionId, until: e.until });
  }
  return held;
};

const works = new Map<string, Promise<Work>>();
const workOf = (remediationId: string, deps: RemediationEngineDeps): Promise<Work> => {
  let work = works.get(remediationId);
  if (!work) {
    work = (async () => {
      const found = await deps.store.getWork(remediationId);
      if (!found) throw new Error(`remediation ${remediationId} does not exist`);
      const [plan, batch] = await Promise.all([deps.batches.getPlan(found.run.batchId), deps.batches.getWork(found.run.batchId)]);
      const exemptions = await frozenExemptions(found.run.batchId, plan, batch.chunks, found.devices, deps);
      return { ...found, plan, concurrency: batch.concurrency, exemptions };
    })();
    work.catch(() => works.delete(remediationId));
    if (works.size >= 4) works.delete(works.keys().next().value!);
    works.set(remediationId, work);
  }
  return work;
};

const isFailure = <T extends object>(outcome: NsoOutcome<T>): outcome is DeviceFailure => 'kind' in outcome && 'reason' in outcome;
/**
 * A device's failure as its record shows it, logged: a fault of ours behind it (`fault`) goes to
 * the log only, as compliance reports do.
 */
const errorOf = (failure: DeviceFailure, remediationId: string, device: string): { readonly kind: string; readonly reason: string } => {
  const line = { remediationId, device, kind: failure.kind, reason: failure.reason };
  if (failure.fault !== undefined) logger.error('remediation device failed', { ...line, error: failure.fault });
  else logger.warn('remediation device failed', line);
  return { kind: failure.kind, reason: failure.reason };
};

/** What a device's step works with: the run, its NSO client, fetches through the worker's slot. */
interface DeviceContext {
  /** Records a device's final record for which no commit was sent: written with others (see {@link Keeper}). */
  readonly keep: (record: RemediationDevice) => void;
  readonly work: Work;
  readonly nso: NsoTransactions;
  readonly check: CheckDeps;
  readonly deps: RemediationEngineDeps;
}

/** Grades the device as it is now against the batch's rules: `fixed` when every remediated rule passes. */
const grade = async (record: RemediationDevice, node: string, c: DeviceContext): Promise<RemediationDevice> => {
  const { run, plan } = c.work;
  const fetched = await fetchConfig(record.device, { batchId: run.batchId, adapterId: run.adapterId }, c.check);
  const at = c.deps.now().toISOString();
  if (!('config' in fetched)) return { ...record, state: 'failed', error: errorOf(fetched, run.remediationId, record.device), updatedAt: at };
  const rules = rulesFor(plan, node);
  const verdicts = c.check.evaluate(fetched.config, plan.variables, rules);
  const passed = new Set(verdicts.filter((v) => v.status === 'pass').map((v) => v.id));
  const value = score(verdicts.map((v) => ({ severity: v.severity, passed: v.status === 'pass' })));
  const remediated = record.rules.filter((r) => 'edits' in r);
  const fixed = remediated.every((r) => passed.has(r.ruleId));
  return { ...record, state: fixed ? 'fixed' : 'still-failing', gradeAfter: gradeOf(value), updatedAt: at };
};

/** Sends a pending device's transaction: a dry-run, or a commit recorded before and after. */
const remediate = async (device: string, node: string, c: DeviceContext): Promise<void> => {
  const { run, plan, listKeys } = c.work;
  const { store } = c.deps;
  const at = () => c.deps.now().toISOString();
  const fetched = await fetchConfig(device, { batchId: run.batchId, adapterId: run.adapterId }, c.check);
  if (!('config' in fetched)) {
    c.keep({ device, state: 'failed', rules: [], error: errorOf(fetched, run.remediationId, device), updatedAt: at() });
    return;
  }
  const { patch, rules } = remediateDevice({
    device,
    config: fetched.config,
    rules: rulesFor(plan, node),
    variables: plan.variables,
    listKeys: listKeysFrom(listKeys),
    ...(run.ruleIds ? { ruleIds: new Set(run.ruleIds) } : {}),
    exemptions: exemptionsAt(c.work, device, c.deps.now()),
    patchId: commitLabel(run.remediationId, device),
  });
  if (!patch) {
    c.keep({ device, state: 'nothing-to-do', rules, updatedAt: at() });
    return;
  }
  if (run.mode === 'dry-run') {
    const out = await c.check.gate.run(() => c.nso.dryRun(run.adapterId, patch));
    const record: RemediationDevice = isFailure(out)
      ? { device, state: 'failed', patch, rules, error: errorOf(out, run.remediationId, device), updatedAt: at() }
      : { device, state: 'dry-run', patch, rules, dryRun: out.output, ...(out.truncated ? { dryRunTruncated: true } : {}), updatedAt: at() };
    c.keep(record);
    return;
  }
  const committing: RemediationDevice = { device, state: 'committing', patch, rules, updatedAt: at() };
  await store.putDevice(run.remediationId, committing);
  const label = commitLabel(run.remediationId, device);
  const comment = `remediation ${run.remediationId} of compliance batch ${run.batchId}, started by ${run.startedBy.subject}`;
  const out = await c.check.gate.run(() => c.nso.commit(run.adapterId, patch, { commitQueue: run.commitQueue, label, comment }));
  if (isFailure(out)) {
    // A failure that landed all the same (a failed commit queue item) keeps its rollback id: a rollback undoes it.
    const landed = out.rollbackId === undefined ? {} : { rollbackId: out.rollbackId };
    await store.putDevice(run.remediationId, { ...committing, state: 'failed', ...landed, error: errorOf(out, run.remediationId, device), updatedAt: at() });
    return;
  }
  const applied: RemediationDevice = {
    ...committing,
    state: 'applied',
    rollbackId: out.rollbackId,
    ...(out.commitQueueId === undefined ? {} : { commitQueueId: out.commitQueueId }),
    updatedAt: at(),
  };
  await store.putDevice(run.remediationId, applied);
  await store.putDevice(run.remediationId, await grade(applied, node, c));
};

/**
 * A device found `committing`: its commit was sent by a run cut short before it recorded the
 * outcome. Never sent again: NSO's rollback file of its label tells whether it landed.
 */
const recover = async (record: RemediationDevice, node: string, c: DeviceContext): Promise<void> => {
  const { run } = c.work;
  const label = commitLabel(run.remediationId, record.device);
  const found = await c.check.gate.run(() => c.nso.findRollback(run.adapterId, label));
  const at = c.deps.now().toISOString();
  if (isFailure(found) || found.rollbackId === undefined) {
    const reason = isFailure(found)
      ? `The run stopped after sending the commit, and NSO could not be asked whether it landed (${found.reason}); look for the rollback file labelled ${label} before remediating the device again.`
      : `The run stopped after sending the commit, and NSO has no rollback file labelled ${label}: the commit did not land, and it was not sent again. Start a new run to remediate the device.`;
    await c.deps.store.putDevice(run.remediationId, { ...record, state: 'failed', error: { kind: 'commit-unknown', reason }, updatedAt: at });
    return;
  }
  const applied: RemediationDevice = { ...record, state: 'applied', rollbackId: found.rollbackId, updatedAt: at };
  await c.deps.store.putDevice(run.remediationId, applied);
  await c.deps.store.putDevice(run.remediationId, await grade(applied, node, c));
};

/** One device of a run, from wherever its record (as its chunk read it) stands. */
const runDevice = async (device: string, node: string, record: RemediationDevice | undefined, c: DeviceContext): Promise<void> => {
  const state = record?.state ?? 'pending';
  if (state === 'pending') return remediate(device, node, c);
  if (state === 'committing') return recover(record!, node, c);
  if (state === 'applied') return c.deps.store.putDevice(c.work.run.remediationId, await grade(record!, node, c));
};

/** Longest a kept record waits for others to be written with it (ms). */
const KEEP_LINGER_MS = 1_000;

/**
 * A chunk's records that nothing waits for (no commit was sent for their device: a dry-run, a
 * device with nothing to fix, a fetch that failed), written together: a write's worth of devices
 * when that many wait ({@link DEVICES_PER_WRITE} a transaction, {@link UNCOUNTED_PER_WRITE} in batch writes), {@link KEEP_LINGER_MS} after the first, and at the chunk's end
 * (an `apply` run's in a transaction with their counts, a `dry-run`'s in plain batch writes
 * that the chunk counts at its end). Losing them to a crash loses nothing: their devices are
 * still `pending`, and the step that runs again sends their dry-run again (it commits nothing).
 */
class Keeper {
  #waiting: RemediationDevice[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #writes = new Set<Promise<void>>();
  #failure: { readonly error: unknown } | undefined;
  /** The state of each record whose write was acknowledged, by device. */
  readonly written = new Map<string, DeviceState>();

  constructor(
    private readonly write: (records: readonly RemediationDevice[]) => Promise<void>,
    /** Records written together: as many as one write takes whole. */
    private readonly perWrite: number,
  ) {}

  keep(record: RemediationDevice): void {
    this.#waiting.push(record);
    if (this.#waiting.length >= this.perWrite) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), KEEP_LINGER_MS);
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const records = this.#waiting;
    this.#waiting = [];
    if (records.length === 0) return;
    const written = this.write(records).then(
      () => {
        for (const record of records) this.written.set(record.device, record.state);
      },
      (error: unknown) => {
        this.#failure ??= { error };
      },
    );
    this.#writes.add(written);
    void written.then(() => this.#writes.delete(written));
  }

  /** Writes what waits and waits for every write; throws the first write's failure. */
  async close(): Promise<void> {
    this.#flush();
    await Promise.all(this.#writes);
    if (this.#failure) throw this.#failure.error;
  }
}

/** The devices of chunk `index`, by name (`getWork`'s order). */
const chunkOf = (work: Work, index: number, deps: RemediationEngineDeps): Work['devices'] => {
  const size = deps.chunkSize ?? 100;
  return work.devices.slice(index * size, (index + 1) * size);
};

/** Sets a dry-run chunk's counts on the run from its devices' stored records (idempotent); `stored`: their states, when known. */
const countChunk = async (remediationId: string, index: number, deps: RemediationEngineDeps, stored?: readonly DeviceState[]): Promise<void> => {
  const devices = chunkOf(await workOf(remediationId, deps), index, deps);
  if (devices.length) await deps.store.countChunk(remediationId, index, devices[0]!.device, devices.at(-1)!.device, stored);
};

/**
 * Runs one chunk's devices, as many at once as the adapter has fetch slots (shared with
 * every batch and run on the adapter in this container). Safe to run again: each device goes
 * on from its record. Stops taking devices when the invocation is about to end, or after a
 * fault of ours (thrown once the devices in flight have settled, for the step to run again).
 */
const runChunk = async (
  remediationId: string,
  index: number,
  run: number,
  remainingTimeMs: () => number,
  deps: RemediationEngineDeps,
): Promise<PartOutcome> => {
  const work = await workOf(remediationId, deps);
  const devices = chunkOf(work, index, deps);
  const gate = gateFor(work.run.adapterId, work.concurrency);
  const relayGet = deps.relayGet(remainingTimeMs);
  const nso = deps.nso(remainingTimeMs);
  const dryRun = work.run.mode === 'dry-run';
  // Every device's record in one read: a chunk that runs again goes on from them. A dry-run
  // chunk's first run (the first attempt of its first part: an interrupted attempt counts as one,
  // AtMostOncePerRetry) finds them as the run's start stored them, `pending`, and reads nothing;
  // a dry-run sent again would commit nothing. An `apply` chunk always reads: a device found
  // `committing` is never committed again.
  const records =
    devices.length && !(dryRun && run === 1)
      ? await deps.store.readDevices(remediationId, devices[0]!.device, devices.at(-1)!.device)
      : new Map<string, RemediationDevice>();
  const nodes = new Map(devices.map(({ device, node }) => [device, node]));
  const keeper = new Keeper(
    (kept) =>
      dryRun
        ? deps.store.putUncounted(
            remediationId,
            kept.map((record) => ({ record, node: nodes.get(record.device)! })),
          )
        : deps.store.putDevices(remediationId, kept),
    dryRun ? UNCOUNTED_PER_WRITE : DEVICES_PER_WRITE,
  );
  let failure: { readonly error: unknown } | undefined;
  let next = 0;
  const worker = async (): Promise<void> => {
    const slot = await gate.hold();
    try {
      const fetches: FetchGate = { run: (send) => slot.run(send), pause: (ms) => slot.pause(ms) };
      const context: DeviceContext = {
        keep: (record) => keeper.keep(record),
        work,
        nso,
        deps,
        check: {
          relayGet,
          evaluate: deps.evaluate,
          gate: fetches,
          now: deps.now,
          ...(deps.maxBusyRetries === undefined ? {} : { maxBusyRetries: deps.maxBusyRetries }),
        },
      };
      while (next < devices.length && !failure) {
        if (remainingTimeMs() < REMEDIATION_RESERVE_MS) {
          failure = { error: new OutOfTime() };
          return;
        }
        const { device, node } = devices[next++]!;
        try {
          await runDevice(device, node, records.get(device), context);
        } catch (error) {
          failure ??= { error };
        }
      }
    } finally {
      slot.release();
    }
  };
  let settled = false;
  try {
    await Promise.all(Array.from({ length: Math.min(Math.max(1, work.concurrency), devices.length) }, worker));
    await keeper.close();
    settled = true;
  } finally {
    // Also when the chunk stops or fails: its totals show what it stored. Every write settled,
    // the chunk knows what its records hold (a dry-run's are written by nothing else); otherwise
    // the store reads them.
    const stored = settled ? devices.map(({ device }) => keeper.written.get(device) ?? records.get(device)?.state ?? 'pending') : undefined;
    if (dryRun) await countChunk(remediationId, index, deps, stored);
  }
  if (failure?.error instanceof OutOfTime) return { resumeInSeconds: Math.ceil(Math.max(0, remainingTimeMs()) / 1000) + 1, runs: run };
  if (failure) throw failure.error;
  return { done: devices.length };
};

/**
 * Applies the rollback file of each device with a rollback id not rolled back yet, whatever its
 * state (a `failed` one may hold a commit NSO's database kept), newest commit first,
 * one at a time. Each device is recorded `applying` before NSO is asked: a run after a crash
 * that finds one so cannot tell whether NSO applied it (the commit `apply-rollback-file` makes
 * carries no label of ours), so it records the device `failed` (`rollback-unknown`) and never
 * applies the file a second time.
 */
/**
 * Whether a rollback takes the device: none yet; `applying` (an earlier attempt stopped while NSO
 * was asked: recorded `rollback-unknown`, never applied again); or refused by NSO in an earlier
 * attempt (nothing was applied, so it is asked again). A device rolled back, or whose rollback is
 * unknown, is never taken.
 */
const rollbackDue = (d: RemediationDevice): boolean =>
  !d.rollback || d.rollback.state === 'applying' || (d.rollback.state === 'failed' && d.rollback.error?.kind !== 'rollback-unknown');

const rollbackPart = async (remediationId: string, run: number, remainingTimeMs: () => number, deps: RemediationEngineDeps): Promise<PartOutcome> => {
  const work = await workOf(remediationId, deps);
  const { adapterId } = work.run;
  const nso = deps.nso(remainingTimeMs);
  const todo: (RemediationDevice & { readonly rollbackId: number })[] = [];
  let after: string | undefined;
  do {
    const page = await deps.store.listDevices(remediationId, { limit: 100, ...(after === undefined ? {} : { after }) });
    for (const d of page.items) if (d.rollbackId !== undefined && rollbackDue(d)) todo.push(d as RemediationDevice & { readonly rollbackId: number });
    after = page.next;
  } while (after !== undefined);
  todo.sort((a, b) => b.rollbackId - a.rollbackId);
  const gate = gateFor(adapterId, work.concurrency);
  const slot = await gate.hold();
  try {
    for (const record of todo) {
      if (remainingTimeMs() < REMEDIATION_RESERVE_MS) return { resumeInSeconds: Math.ceil(Math.max(0, remainingTimeMs()) / 1000) + 1, runs: run };
      if (record.rollback?.state === 'applying') {
        const at = deps.now().toISOString();
        const reason = `The rollback stopped after asking NSO to apply rollback file ${record.rollbackId}, before its answer was recorded: it was not applied again. Check the device (or NSO's rollback files) before rolling it back by hand.`;
        await deps.store.putDevice(remediationId, { ...record, rollback: { state: 'failed', at, error: { kind: 'rollback-unknown', reason } }, updatedAt: at });
        continue;
      }
      const applying: RemediationDevice = { ...record, rollback: { state: 'applying', at: deps.now().toISOString() }, updatedAt: deps.now().toISOString() };
      await deps.store.putDevice(remediationId, applying);
      const out = await slot.run(() => nso.applyRollback(adapterId, record.rollbackId));
      const at = deps.now().toISOString();
      await deps.store.putDevice(
        remediationId,
        isFailure(out)
          ? { ...record, rollback: { state: 'failed', at, error: errorOf(out, remediationId, record.device) }, updatedAt: at }
          : { ...record, state: 'rolled-back', rollback: { state: 'rolled-back', at }, updatedAt: at },
      );
    }
  } finally {
    slot.release();
  }
  return { done: todo.length };
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

type Stepper = Pick<DurableContext, 'step' | 'wait'>;

/**
 * Runs `part` as checkpointed steps until it is done: a part stopped by the invocation's end
 * goes on, after a durable wait that outlasts the invocation, as a new step in the next one
 * with its own attempts for failures. Throws when a step's attempts ran out.
 */
const inParts = async (context: Stepper, name: string, part: (run: number) => Promise<PartOutcome>, deps: RemediationEngineDeps): Promise<void> => {
  const attempts = deps.attempts ?? 6;
  const firstDelay = deps.retryDelaySeconds ?? 2;
  let runsBefore = 0;
  for (let n = 1; ; n++) {
    const before = runsBefore;
    const outcome = await context.step(
      n === 1 ? name : `${name}-${n}`,
      async ({ attempt }) => {
        try {
          return await part(before + attempt);
        } finally {
          deps.afterStep?.();
        }
      },
      {
        semantics: StepSemantics.AtMostOncePerRetry,
        retryStrategy: (_error, attempt) => ({ shouldRetry: attempt < attempts, delay: { seconds: Math.min(60, firstDelay * 2 ** (attempt - 1)) } }),
      },
    );
    if ('done' in outcome) return;
    runsBefore = outcome.runs;
    await context.wait(`${name}-resume-${n}`, { seconds: outcome.resumeInSeconds });
  }
};

/** Runs a remediation's `run` or `rollback` as a durable execution. */
export const runRemediation = async (event: RemediationEvent, context: DurableContext, deps: RemediationEngineDeps): Promise<RemediationOutcome> => {
  const { remediationId, action } = event;
  const step = <T>(name: string, run: () => Promise<T>) =>
    context.step(name, async () => {
      try {
        return await run();
      } finally {
        deps.afterStep?.();
      }
    });
  const loaded = await step('load', async () => {
    // Read first: a run that is not stored (expired, or never created) has nothing to run.
    const stored = await deps.store.get(remediationId);
    if (!stored) return undefined;
    const { rollback } = stored;
    return {
      status: stored.status,
      rollback: rollback?.status,
      rollbackAttempt: rollback?.attempt ?? 1,
      mode: stored.mode,
      devices: (await workOf(remediationId, deps)).devices.length,
    };
  });
  if (!loaded) return { remediationId, action, skipped: 'the run does not exist' };
  const remainingTimeMs = deps.remainingTimeMs ?? remainingOf(context);
  if (action === 'rollback') {
    if (loaded.rollback !== 'running') return { remediationId, action, skipped: 'the run has no rollback running' };
    if (loaded.rollbackAttempt !== (event.attempt ?? 1))
      return { remediationId, action, skipped: `the run's rollback running is attempt ${loaded.rollbackAttempt}` };
    let status: 'completed' | 'failed' = 'completed';
    try {
      await inParts(context, 'rollback', (run) => rollbackPart(remediationId, run, remainingTimeMs, deps), deps);
    } catch {
      status = 'failed';
    }
    return step('finish-rollback', async () => {
      await deps.store.finishRollback(remediationId, status, deps.now().toISOString());
      const end: RemediationEnd = { remediationId, action, status };
      await deps.onEnd?.(end);
      return end;
    });
  }
  if (loaded.status !== 'running') return { remediationId, action, skipped: `the run is ${loaded.status} already` };
  const chunks = Math.ceil(loaded.devices / (deps.chunkSize ?? 100));
  const result = await context.map(
    'chunks',
    Array.from({ length: chunks }, (_, i) => i),
    async (child, index) => inParts(child, 'devices', (run) => runChunk(remediationId, index, run, remainingTimeMs, deps), deps),
    { maxConcurrency: deps.chunkConcurrency ?? 3, itemNamer: (_, i) => `chunk-${i}` },
  );
  const failed = result.failureCount > 0;
  return step('finish', async () => {
    const reason = failed
      ? `${result.failureCount} chunk(s) of devices could not be run (after ${deps.attempts ?? 6} attempts); the devices' records say how far each got.`
      : undefined;
    const status = failed ? 'failed' : 'completed';
    // A dry-run chunk that ran out of attempts may have stored records after its last count.
    if (failed && loaded.mode === 'dry-run') for (let i = 0; i < chunks; i++) await countChunk(remediationId, i, deps);
    await deps.store.finish(remediationId, status, deps.now().toISOString(), reason);
    const end: RemediationEnd = { remediationId, action, status, ...(reason ? { reason } : {}) };
    await deps.onEnd?.(end);
    return end;
  });
};
