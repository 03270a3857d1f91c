/**
 * Remediation runs in DynamoDB, in the compliance table (a run expires with its batch). One
 * partition per run:
 *
 * | sk          | what                                                                                     |
 * |-------------|------------------------------------------------------------------------------------------|
 * | `META`      | the run: status, mode, who and when, its list keys (JSON), the totals (`t_*` numbers, and `chunkTotals`: a dry-run's counts by chunk), its rollback |
 * | `D#<device>`| one device: its node, state, patch (masked JSON), rules (JSON), dry-run output, rollback id, grade after, error |
 *
 * Every item carries `expiresAt` (epoch seconds, the batch's own).
 *
 * **Totals are counted once per state reached.** A state adds to counters (`dry-run`: planned
 * and dryRun; `committing`: planned; `applied`: planned and applied; `fixed`: those and fixed…,
 * see {@link COUNTERS}); a device item keeps the counters it has added (`counted`) and a
 * revision (`rev`). `putDevice` reads the item, adds only the counters not yet in `counted`,
 * and writes the device (on the condition that its revision is the one read) together with
 * the run's `ADD` in one transaction: both land or neither. Writing the same record again
 * (the engine after a crash) adds nothing; a write that met another one reads again.
 *
 * **A dry-run's devices are counted by chunk.** Their records (nothing waits for them: no commit
 * is sent) are written in plain batch writes (`putUncounted`), and each chunk then sets its own
 * counts, computed from its devices' stored records, on `META` (`countChunk`: `SET
 * chunkTotals.<chunk>`). A chunk that runs again sets the same counts: never added twice. The
 * run's totals are the `t_*` numbers plus the sum of `chunkTotals`. Transactions cost DynamoDB
 * several times the work of batch writes; `apply` runs keep them (a commit waits for its record).
 *
 * **Item size.** A device item stays inside DynamoDB's 400 KB: the dry-run output is cut by
 * the NSO client when it masks it (nso.ts `shownOutput`) to {@link MAX_DRY_RUN_BYTES}; when the masked patch and the rules
 * together still exceed {@link MAX_DEVICE_BYTES}, the patch is left out (`patchOmitted`), then
 * rules from the end (`rulesOmitted` counts them). The commit always sends the whole patch.
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { batchDeadline } from '../compliance/deadline.js';
import { MAX_DIFF_BYTES } from '../compliance/model.js';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';
import { Conflict, ServiceUnavailable } from '../platform/problem.js';
import { redact } from '../platform/redaction.js';
import { WRITE_ID_ATTRIBUTE, conditionFailed, holdsWrite, newWriteId, refusedOnCondition, settleWrite, unconfirmed } from '../platform/settled-write.js';
import { storeCaller, transientReason } from '../platform/transient.js';
import type { RuleRemediation } from './generate.js';
import {
  emptyRemediationTotals,
  type UncountedRecord,
  type Actor,
  type DevicePage,
  type DeviceState,
  type NewRemediation,
  type Remediation,
  type RemediationDevice,
  type RemediationEvent,
  type RemediationStatus,
  type RemediationStore,
  type RemediationTotals,
  type ShownOutput,
} from './model.js';
import type { YangPatch } from './patch.js';

/** UTF-8 bytes of dry-run output a device keeps at most (the NSO client cuts it, masked, to this). */
export const MAX_DRY_RUN_BYTES = MAX_DIFF_BYTES;
/** UTF-8 bytes of JSON a device item's patch, rules and dry-run output take at most, with room for its other attributes. */
export const MAX_DEVICE_BYTES = 360_000;
/** Devices one transaction of {@link DynamoRemediationStore.putDevices} writes at most (DynamoDB takes 100 items, one is the run's). */
export const DEVICES_PER_WRITE = 99;
/** Dry-run records the engine hands {@link DynamoRemediationStore.putUncounted} at once: four full batch writes of 25. */
export const UNCOUNTED_PER_WRITE = 100;
/** Bytes of device attributes one such transaction carries at most (DynamoDB takes 4 MB a transaction). */
const WRITE_BYTES = 3_500_000;
/** Device batch writes `create` keeps in flight at once. */
const PUT_CONCURRENCY = 8;
/** Attempts of a device write that keeps meeting other writes of the run before the store gives up. */
const MAX_CONTENDED_ATTEMPTS = 12;

type Counter = keyof RemediationTotals;

/** The counters a state adds to: reaching it counts each of them once per device. */
export const COUNTERS: Readonly<Record<DeviceState, readonly Counter[]>> = {
  pending: [],
  'nothing-to-do': [],
  'dry-run': ['planned', 'dryRun'],
  committing: ['planned'],
  applied: ['planned', 'applied'],
  fixed: ['planned', 'applied', 'fixed'],
  'still-failing': ['planned', 'applied', 'stillFailing'],
  failed: ['failed'],
  'rolled-back': ['rolledBack'],
};
const TOTAL_FIELDS = Object.keys(emptyRemediationTotals()) as Counter[];
const totalField = (counter: Counter): string => `t_${counter}`;
/** The attribute of `META` holding a dry-run's counts by chunk: chunk number → `{ devices, <counter>: n }`. */
const CHUNK_TOTALS = 'chunkTotals';

/** The run's totals: the transactional counters plus every chunk's counts. */
const totalsOf = (item: Record<string, unknown>): RemediationTotals => {
  const chunks = Object.values((item[CHUNK_TOTALS] ?? {}) as Record<string, Record<string, unknown>>);
  return Object.fromEntries(
    TOTAL_FIELDS.map((c) => [c, chunks.reduce((sum, counts) => sum + num(counts[c]), num(item[totalField(c)]))]),
  ) as unknown as RemediationTotals;
};

/** What a chunk's stored states count: its devices past `pending` and each counter their states add. */
export const chunkCounts = (states: readonly DeviceState[]): Record<string, number> => {
  const counts: Record<string, number> = { devices: 0 };
  for (const state of states) {
    if (state === 'pending') continue;
    counts['devices']!++;
    for (const c of COUNTERS[state]) counts[c] = (counts[c] ?? 0) + 1;
  }
  return counts;
};

const runPk = (remediationId: string): string => `M#${remediationId}`;
const LEASE_PREFIX = 'ML#';
/** The partition of an adapter's lease: who commits through it now. */
const leasePk = (adapterId: string): string => `${LEASE_PREFIX}${adapterId}`;
const leaseHolder = (remediationId: string, action: RemediationEvent['action']): string => `${remediationId}/${action}`;
/**
 * When a lease taken at `started` lapses (epoch seconds): when its run can no longer be running,
 * the batch deadline (the remediation function has the batch function's execution timeout,
 * and starts the same way). A durable execution cannot outlive it, so a lease is never renewed.
 */
export const leaseExpiry = (started: string): number => Math.ceil(batchDeadline(started) / 1000);

/** An adapter's lease: the run (or rollback) committing through it, until it ends or `expiresAt`. */
interface Lease {
  readonly pk: string;
  readonly sk: 'LEASE';
  readonly holder: string;
  readonly remediationId: string;
  readonly action: RemediationEvent['action'];
  readonly started: string;
  readonly expiresAt: number;
}
type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];
const deviceSk = (device: string): string => `D#${device}`;
const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

const toRemediation = (item: Record<string, unknown>): Remediation => ({
  remediationId: item['remediationId'] as string,
  batchId: item['batchId'] as string,
  adapterId: item['adapterId'] as string,
  treeId: item['treeId'] as string,
  version: item['version'] as string,
  mode: item['mode'] as Remediation['mode'],
  commitQueue: item['commitQueue'] === true,
  ...(Array.isArray(item['ruleIds']) ? { ruleIds: item['ruleIds'] as string[] } : {}),
  status: item['status'] as RemediationStatus,
  devices: num(item['devices']),
  totals: totalsOf(item),
  startedBy: item['startedBy'] as Actor,
  started: item['started'] as string,
  ...(typeof item['finished'] === 'string' ? { finished: item['finished'] } : {}),
  ...(typeof item['reason'] === 'string' ? { reason: item['reason'] } : {}),
  ...(item['rollback'] ? { rollback: item['rollback'] as Remediation['rollback'] & object } : {}),
});

/** A device record as its item keeps it (see {@link boundedFields}), and back. */
const toDevice = (item: Record<string, unknown>): RemediationDevice => {
  const {
    device,
    state,
    patch,
    rules,
    dryRun,
    dryRunTruncated,
    patchOmitted,
    rulesOmitted,
    rollbackId,
    commitQueueId,
    gradeAfter,
    error,
    rollback,
    updatedAt,
  } = item as Record<string, unknown>;
  return {
    device: device as string,
    state: state as DeviceState,
    ...(typeof patch === 'string' ? { patch: JSON.parse(patch) as YangPatch } : {}),
    ...(patchOmitted === true ? { patchOmitted: true } : {}),
    rules: typeof rules === 'string' ? (JSON.parse(rules) as RuleRemediation[]) : [],
    ...(typeof rulesOmitted === 'number' ? { rulesOmitted } : {}),
    // Stored only as the NSO client masked it (a `ShownOutput`).
    ...(typeof dryRun === 'string' ? { dryRun: dryRun as ShownOutput } : {}),
    ...(dryRunTruncated === true ? { dryRunTruncated: true } : {}),
    ...(typeof rollbackId === 'number' ? { rollbackId } : {}),
    ...(typeof commitQueueId === 'string' ? { commitQueueId } : {}),
    ...(typeof gradeAfter === 'string' ? { gradeAfter: gradeAfter as RemediationDevice['gradeAfter'] & string } : {}),
    ...(error ? { error: error as NonNullable<RemediationDevice['error']> } : {}),
    ...(rollback ? { rollback: rollback as NonNullable<RemediationDevice['rollback']> } : {}),
    updatedAt: (updatedAt as string | undefined) ?? '',
  } as RemediationDevice;
};

/**
 * The record's attributes, inside {@link MAX_DEVICE_BYTES}: the patch masked (`redact`, the rule
 * of reports), the dry-run output as the NSO client masked and bounded it; then the patch left
 * out, then rules from the end, while the item is too large.
 */
export const boundedFields = (record: RemediationDevice): Record<string, unknown> => {
  const { device: _device, patch, rules, dryRun, dryRunTruncated, ...rest } = record;
  // Masked and cut to MAX_DRY_RUN_BYTES by the NSO client (a `ShownOutput`): kept as it is.
  const dry = dryRun;
  const cut = dryRunTruncated === true;
  let patchJson = patch === undefined ? undefined : JSON.stringify(redact(patch));
  let kept = [...rules];
  let rulesJson = JSON.stringify(kept);
  const others = bytes(JSON.stringify(rest)) + (dry === undefined ? 0 : bytes(dry));
  const size = () => others + bytes(rulesJson) + (patchJson === undefined ? 0 : bytes(patchJson));
  let patchOmitted = rest.patchOmitted === true;
  if (patchJson !== undefined && size() > MAX_DEVICE_BYTES) {
    patchJson = undefined;
    patchOmitted = true;
  }
  let omitted = rest.rulesOmitted ?? 0;
  // An eighth at a time: a few serializations even for thousands of rules.
  while (kept.length && size() > MAX_DEVICE_BYTES) {
    const drop = Math.max(1, Math.ceil(kept.length / 8));
    kept = kept.slice(0, kept.length - drop);
    omitted += drop;
    rulesJson = JSON.stringify(kept);
  }
  const { patchOmitted: _p, rulesOmitted: _r, ...plain } = rest;
  return {
    ...plain,
    ...(patchJson === undefined ? {} : { patch: patchJson }),
    ...(patchOmitted ? { patchOmitted: true } : {}),
    rules: rulesJson,
    ...(omitted ? { rulesOmitted: omitted } : {}),
    ...(dry === undefined ? {} : { dryRun: dry }),
    ...(cut ? { dryRunTruncated: true } : {}),
  };
};

/** The run's totals a write moves to `state` adds, given the counters the device added before. */
const newCounters = (state: DeviceState, counted: readonly string[]): Counter[] => COUNTERS[state].filter((c) => !counted.includes(c));

/** Why a transaction was cancelled, when it was cancelled by a condition or another write (the write is read and tried again). */
const contended = (error: unknown): boolean => {
  if (conditionFailed(error)) return true;
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TransactionConflictException') return true;
  if (name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.every((r) => r.Code === undefined || r.Code === 'None' || r.Code === 'ConditionalCheckFailed' || r.Code === 'TransactionConflict');
};

/** A device's revision and the counters it has added, as this store last saw them. */
interface Seen {
  readonly rev: number;
  readonly counted: readonly string[];
}
/** Where `create` leaves every device. */
const CREATED: Seen = { rev: 0, counted: [] };
/** Devices whose revisions a store keeps in mind: a run's worth, a few MB at most. */
const MAX_SEEN = 50_000;
/** A device record's attributes that a record may lack: removed when a write's record has none. */
const OPTIONAL_FIELDS = [
  'patch',
  'patchOmitted',
  'rulesOmitted',
  'dryRun',
  'dryRunTruncated',
  'rollbackId',
  'commitQueueId',
  'gradeAfter',
  'error',
  'rollback',
];

/** The update that makes a device item hold `fields` (and no other optional attribute), if its revision is `rev`. */
const deviceUpdate = (tableName: string, key: { readonly pk: string; readonly sk: string }, fields: Record<string, unknown>, rev: number) => {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':rev': rev };
  const sets = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([name, value], i) => {
      names[`#s${i}`] = name;
      values[`:s${i}`] = value;
      return `#s${i} = :s${i}`;
    });
  const removes = OPTIONAL_FIELDS.filter((name) => fields[name] === undefined).map((name, i) => {
    names[`#r${i}`] = name;
    return `#r${i}`;
  });
  names['#rev'] = 'rev';
  return {
    TableName: tableName,
    Key: key,
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: '#rev = :rev',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
};

export class DynamoRemediationStore implements RemediationStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
    /** The clock a lease's expiry is compared with (epoch ms). */
    private readonly now: () => number = Date.now,
  ) {}

  readonly #send = storeCaller('remediation store');

  async #get(pk: string, sk: string): Promise<Record<string, unknown> | undefined> {
    return (await this.#send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true })))).Item;
  }

  /**
   * Puts items 25 to a request, {@link PUT_CONCURRENCY} requests at a time (50,000 devices in one
   * after another would not fit the start route's timeout), sending again what DynamoDB leaves
   * unprocessed. The first failure stops every sender and is thrown.
   */
  async #putAll(items: readonly Record<string, unknown>[]): Promise<void> {
    let next = 0;
    let failed = false;
    const sender = async (): Promise<void> => {
      while (!failed && next < items.length) {
        const n = next;
        next += 25;
        try {
          await this.#putBatch(items.slice(n, n + 25));
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    const outcomes = await Promise.allSettled(Array.from({ length: PUT_CONCURRENCY }, sender));
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (refused) throw refused.reason;
  }

  /** Puts up to 25 items, sending again what DynamoDB leaves unprocessed. */
  async #putBatch(items: readonly Record<string, unknown>[]): Promise<void> {
    let pending = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw new ServiceUnavailable('The remediation store kept refusing writes; retry later.');
      if (attempt > 0) await this.sleep(Math.min(1000, 50 * 2 ** attempt));
      const out = await this.#send(() => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } })));
      pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
    }
  }

  /**
   * Writes the run record (`running`, conditionally: an id is used once; an `apply` run takes
   * its adapter's lease in the same transaction), then the devices (`pending`). A failure
   * writing the devices ends the run `failed` with its reason (its lease released) and is
   * rethrown: no device item is ever left without its run, and no run waits for devices.
   */
  async create(run: NewRemediation): Promise<void> {
    const pk = runPk(run.remediationId);
    const { devices, listKeys, ...fields } = run;
    const writeId = newWriteId();
    const meta = {
      pk,
      sk: 'META',
      ...fields,
      listKeys: JSON.stringify(listKeys),
      status: 'running',
      devices: devices.length,
      ...Object.fromEntries(TOTAL_FIELDS.map((c) => [totalField(c), 0])),
      [CHUNK_TOTALS]: {},
      [WRITE_ID_ATTRIBUTE]: writeId,
    };
    const lease = run.mode === 'apply' ? this.#lease(run.adapterId, run.remediationId, 'run', run.started) : undefined;
    const outcome = await this.#leasedWrite(
      { Put: { TableName: this.tableName, Item: meta, ConditionExpression: 'attribute_not_exists(pk)' } },
      lease,
      run.remediationId,
      writeId,
    );
    if (outcome === 'refused') throw new Error(`remediation ${run.remediationId} exists already`);
    try {
      await this.#putAll(
        devices.map(({ device, node }) => ({
          pk,
          sk: deviceSk(device),
          device,
          node,
          state: 'pending',
          rules: '[]',
          rev: 0,
          counted: [],
          updatedAt: run.started,
          expiresAt: run.expiresAt,
        })),
      );
    } catch (error) {
      const reason = `The run's devices could not be recorded (${transientReason(error) ?? (error as Error).message}).`;
      await this.finish(run.remediationId, 'failed', run.started, reason).catch(() => undefined);
      throw error;
    }
  }

  /** The lease item an `action` of a run holds on its adapter from `started` until it can no longer be running. */
  #lease(adapterId: string, remediationId: string, action: RemediationEvent['action'], started: string): Lease {
    return { pk: leasePk(adapterId), sk: 'LEASE', holder: leaseHolder(remediationId, action), remediationId, action, started, expiresAt: leaseExpiry(started) };
  }

  /**
   * One conditional write of a run's record (`write`, which sets the write id `writeId`),
   * together with `lease` when given: the lease is taken when free, expired or already this
   * holder's (a resent write). A lease held by another run is a 409 naming it; a refused
   * record is `refused`; an unconfirmed answer is settled by reading the record back.
   */
  async #leasedWrite(write: TransactItem, lease: Lease | undefined, remediationId: string, writeId: string): Promise<'done' | 'refused'> {
    /** The transaction; `stale`: the holder of a lease whose run or rollback has ended, taken over. */
    const items = (stale?: string): TransactItem[] =>
      lease
        ? [
            {
              Put: {
                TableName: this.tableName,
                Item: lease,
                ConditionExpression: `attribute_not_exists(pk) OR expiresAt < :now OR holder = :holder${stale ? ' OR holder = :stale' : ''}`,
                ExpressionAttributeValues: { ':now': Math.floor(this.now() / 1000), ':holder': lease.holder, ...(stale ? { ':stale': stale } : {}) },
              },
            },
            write,
          ]
        : [write];
    const send = async (): Promise<'done' | 'refused'> => {
      let stale: string | undefined;
      for (let attempt = 0; ; attempt++) {
        try {
          await this.client.send(new TransactWriteCommand({ TransactItems: items(stale) }));
          return 'done';
        } catch (error) {
          const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
          if ((error as { name?: string }).name !== 'TransactionCanceledException' || !reasons) throw error;
          if (lease && reasons[0]?.Code === 'ConditionalCheckFailed') {
            // A lease whose holder has ended (its release was lost to a failure) is free: taken over once.
            stale = attempt === 0 ? await this.#staleHolder(lease) : undefined;
            if (stale !== undefined) continue;
            throw await this.#leaseHeld(lease);
          }
          if (reasons.at(-1)?.Code === 'ConditionalCheckFailed') return 'refused';
          throw error;
        }
      }
    };
    return this.#send(() =>
      settleWrite(
        send,
        () => this.#get(runPk(remediationId), 'META'),
        (item) => holdsWrite(item, writeId),
      ),
    );
  }

  /**
   * The holder of the adapter's lease when what holds it has ended (the run, or its rollback, is
   * no longer `running`): its release was lost (a failure after the end was written), and the
   * lease is free. `undefined` when the holder still runs.
   */
  async #staleHolder(lease: Lease): Promise<string | undefined> {
    const held = await this.#get(lease.pk, 'LEASE');
    if (!held || typeof held['remediationId'] !== 'string') return undefined;
    const run = await this.#get(runPk(held['remediationId']), 'META');
    const running =
      held['action'] === 'rollback' ? (run?.['rollback'] as { status?: string } | undefined)?.status === 'running' : run?.['status'] === 'running';
    return running ? undefined : (held['holder'] as string);
  }

  /** The 409 of a lease another run holds (read again: it may have ended meanwhile, then the caller retries). */
  async #leaseHeld(lease: Lease): Promise<Conflict> {
    const held = await this.#get(lease.pk, 'LEASE');
    const what = held
      ? `${held['action'] === 'rollback' ? 'the rollback of run' : 'run'} '${String(held['remediationId'])}' (started ${String(held['started'])})`
      : 'another run';
    return new Conflict(
      `Adapter '${lease.pk.slice(LEASE_PREFIX.length)}' is being remediated by ${what}: one apply run or rollback at a time commits through an adapter. Retry when it has finished.`,
      'remediation-running',
    );
  }

  /** Releases the lease `remediationId`'s `action` holds on the run's adapter (none, or another's: nothing happens). */
  async #release(remediationId: string, action: RemediationEvent['action']): Promise<void> {
    const item = (
      await this.#send(() =>
        this.client.send(
          new GetCommand({ TableName: this.tableName, Key: { pk: runPk(remediationId), sk: 'META' }, ProjectionExpression: 'adapterId', ConsistentRead: true }),
        ),
      )
    ).Item;
    if (!item) return;
    await this.#send(() =>
      refusedOnCondition(() =>
        this.client.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { pk: leasePk(item['adapterId'] as string), sk: 'LEASE' },
            ConditionExpression: 'holder = :holder',
            ExpressionAttributeValues: { ':holder': leaseHolder(remediationId, action) },
          }),
        ),
      ),
    );
  }

  async get(remediationId: string): Promise<Remediation | undefined> {
    const item = await this.#get(runPk(remediationId), 'META');
    return item ? toRemediation(item) : undefined;
  }

  async getWork(remediationId: string): ReturnType<RemediationStore['getWork']> {
    const item = await this.#get(runPk(remediationId), 'META');
    if (!item) return undefined;
    const devices: { device: string; node: string }[] = [];
    await this.#walkDevices(
      remediationId,
      { ProjectionExpression: '#device, #node', ExpressionAttributeNames: { '#device': 'device', '#node': 'node' } },
      (items) => {
        for (const d of items) devices.push({ device: d['device'] as string, node: d['node'] as string });
        return true;
      },
    );
    return { run: toRemediation(item), listKeys: JSON.parse(item['listKeys'] as string) as NewRemediation['listKeys'], devices };
  }

  /** A page of up to `limit` devices by name, after the device `after`. */
  async listDevices(remediationId: string, page: { readonly limit: number; readonly after?: string }): Promise<DevicePage> {
    if (!Number.isInteger(page.limit) || page.limit < 1) throw new RangeError(`a page holds at least one device (limit ${page.limit})`);
    const items: RemediationDevice[] = [];
    let start: Record<string, unknown> | undefined = page.after === undefined ? undefined : { pk: runPk(remediationId), sk: deviceSk(page.after) };
    do {
      const out = await this.#send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :d)',
            ExpressionAttributeValues: { ':pk': runPk(remediationId), ':d': 'D#' },
            Limit: page.limit - items.length,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      items.push(...(out.Items ?? []).map(toDevice));
      start = out.LastEvaluatedKey;
    } while (start && items.length < page.limit);
    // A full page whose read stopped at its last item: the next page may be empty, never wrong.
    return { items, ...(start && items.length ? { next: items[items.length - 1]!.device } : {}) };
  }

  async getDevice(remediationId: string, device: string): Promise<RemediationDevice | undefined> {
    const item = await this.#get(runPk(remediationId), deviceSk(device));
    return item ? toDevice(item) : undefined;
  }

  /**
   * Replaces a device's record and adds to the run's totals the counters its state adds that
   * the device has not added before, in one transaction conditional on the device's revision.
   * The revision is the one this store last wrote or read (a device it has not seen yet: the
   * one `create` left), so a write usually takes one request; when the condition fails, the
   * device is read and the write made again. Throws when the run has no such device.
   */
  async putDevice(remediationId: string, record: RemediationDevice): Promise<void> {
    const pk = runPk(remediationId);
    const sk = deviceSk(record.device);
    const key = `${remediationId}/${record.device}`;
    const fields = boundedFields(record);
    for (let attempt = 1; ; attempt++) {
      const seen = this.#seen.get(key) ?? CREATED;
      const add = newCounters(record.state, seen.counted);
      const next: Seen = { rev: seen.rev + 1, counted: [...seen.counted, ...add] };
      const writeId = newWriteId();
      const update = deviceUpdate(this.tableName, { pk, sk }, { ...fields, rev: next.rev, counted: next.counted, [WRITE_ID_ATTRIBUTE]: writeId }, seen.rev);
      try {
        if (add.length === 0) await this.client.send(new UpdateCommand(update));
        else
          await this.client.send(
            new TransactWriteCommand({
              TransactItems: [
                { Update: update },
                {
                  Update: {
                    TableName: this.tableName,
                    Key: { pk, sk: 'META' },
                    UpdateExpression: `ADD ${add.map((c) => `${totalField(c)} :one`).join(', ')}`,
                    ConditionExpression: 'attribute_exists(pk)',
                    ExpressionAttributeValues: { ':one': 1 },
                  },
                },
              ],
            }),
          );
        this.#remember(key, next);
        return;
      } catch (error) {
        // An answer that never came: the write (the device and its counts, atomically) may have landed.
        if (unconfirmed(error)) {
          const item = await this.#get(pk, sk);
          if (holdsWrite(item, writeId)) return this.#remember(key, next);
        }
        if (!contended(error) && !unconfirmed(error)) throw error;
        if (attempt >= MAX_CONTENDED_ATTEMPTS) {
          throw new ServiceUnavailable(
            `The remediation store could not record device ${record.device} (${transientReason(error) ?? 'contended'}); retry later.`,
          );
        }
        // Another write came first (or the revision known here was stale): read where the device stands.
        const current = await this.#get(pk, sk);
        if (!current) throw new Error(`remediation ${remediationId} has no device ${record.device}`);
        const known = { rev: num(current['rev']), counted: (current['counted'] as string[] | undefined) ?? [] };
        // Refused although the revision was right: a transaction on the run's item was in the way.
        if (known.rev === seen.rev) await this.sleep(Math.round(Math.random() * Math.min(1000, 10 * 2 ** attempt)));
        this.#remember(key, known);
      }
    }
  }

  /**
   * The records of a run's devices from `first` to `last` (by their keys' order, as `getWork`
   * lists them), in one query a page at a time: what a chunk reads once, instead of a read per
   * device. Their revisions are remembered, so the writes that follow take one request.
   */
  async readDevices(remediationId: string, first: string, last: string): Promise<Map<string, RemediationDevice>> {
    const found = new Map<string, RemediationDevice>();
    await this.#walkDevices(
      remediationId,
      {},
      (items) => {
        for (const item of items) {
          const record = toDevice(item);
          this.#remember(`${remediationId}/${record.device}`, { rev: num(item['rev']), counted: (item['counted'] as string[] | undefined) ?? [] });
          found.set(record.device, record);
        }
        return true;
      },
      { first, last },
    );
    return found;
  }

  /**
   * Writes the records of distinct devices together: up to {@link DEVICES_PER_WRITE} devices (and
   * {@link WRITE_BYTES} of attributes) a transaction, each device conditional on its revision,
   * with the counters they add summed into one update of the run's item. A refused or
   * unanswered transaction is written again device by device ({@link putDevice} settles each:
   * counted once, whatever landed).
   */
  async putDevices(remediationId: string, records: readonly RemediationDevice[]): Promise<void> {
    const pk = runPk(remediationId);
    let group: { readonly record: RemediationDevice; readonly fields: Record<string, unknown> }[] = [];
    let size = 0;
    const flush = async (): Promise<void> => {
      const sent = group;
      group = [];
      size = 0;
      if (sent.length === 0) return;
      const next = sent.map(({ record }) => {
        const seen = this.#seen.get(`${remediationId}/${record.device}`) ?? CREATED;
        const add = newCounters(record.state, seen.counted);
        return { seen, add, after: { rev: seen.rev + 1, counted: [...seen.counted, ...add] } };
      });
      const sums = new Map<Counter, number>();
      for (const { add } of next) for (const c of add) sums.set(c, (sums.get(c) ?? 0) + 1);
      const updates = sent.map(({ record, fields }, i) => ({
        Update: deviceUpdate(
          this.tableName,
          { pk, sk: deviceSk(record.device) },
          { ...fields, rev: next[i]!.after.rev, counted: next[i]!.after.counted, [WRITE_ID_ATTRIBUTE]: newWriteId() },
          next[i]!.seen.rev,
        ),
      }));
      const counts = [...sums];
      const meta = counts.length
        ? [
            {
              Update: {
                TableName: this.tableName,
                Key: { pk, sk: 'META' },
                UpdateExpression: `ADD ${counts.map(([c], i) => `${totalField(c)} :n${i}`).join(', ')}`,
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: Object.fromEntries(counts.map(([, n], i) => [`:n${i}`, n])),
              },
            },
          ]
        : [];
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: [...updates, ...meta] }));
        for (const [i, { record }] of sent.entries()) this.#remember(`${remediationId}/${record.device}`, next[i]!.after);
      } catch (error) {
        if (!contended(error) && !unconfirmed(error)) throw error;
        for (const { record } of sent) await this.putDevice(remediationId, record);
      }
    };
    for (const record of records) {
      const fields = boundedFields(record);
      const weight = bytes(JSON.stringify(fields));
      if (group.length >= DEVICES_PER_WRITE || size + weight > WRITE_BYTES) await flush();
      group.push({ record, fields });
      size += weight;
    }
    await flush();
  }

  /**
   * Puts a dry-run's final device records whole (with the node and the run's `expiresAt`, read
   * once per run and store) in batch writes of 25, uncounted: {@link countChunk} counts them. Nothing
   * else writes a dry-run's devices (no rollback, no commit), and a chunk run again skips the
   * devices it finds past `pending`, so a plain put loses no other write.
   */
  async putUncounted(remediationId: string, records: readonly UncountedRecord[]): Promise<void> {
    if (records.length === 0) return;
    const pk = runPk(remediationId);
    const expiresAt = await this.#expiresAt(remediationId);
    await this.#putAll(
      records.map(({ record, node }) => {
        const key = `${remediationId}/${record.device}`;
        const rev = (this.#seen.get(key) ?? CREATED).rev + 1;
        this.#seen.delete(key);
        return { pk, sk: deviceSk(record.device), device: record.device, node, ...boundedFields(record), rev, counted: [], expiresAt };
      }),
    );
  }

  /**
   * Sets chunk `chunk`'s counts (`chunkTotals.<chunk>` on `META`) from the states of its devices'
   * stored records, `first` to `last`, read in one consistent query: a chunk run again after a
   * crash, before or after this write, sets the same counts. A count is never replaced by one of
   * fewer devices (a late write of an earlier attempt's read), so it only moves forward. `stored`:
   * the states the chunk knows its devices' records hold (every write of them acknowledged), read
   * no more.
   */
  async countChunk(remediationId: string, chunk: number, first: string, last: string, stored?: readonly DeviceState[]): Promise<void> {
    const pk = runPk(remediationId);
    const counts = chunkCounts(stored ?? (await this.#storedStates(remediationId, first, last)));
    await this.#send(() =>
      refusedOnCondition(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk, sk: 'META' },
            UpdateExpression: 'SET #totals.#chunk = :counts',
            ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#totals.#chunk) OR #totals.#chunk.#devices <= :devices)',
            ExpressionAttributeNames: { '#totals': CHUNK_TOTALS, '#chunk': String(chunk), '#devices': 'devices' },
            ExpressionAttributeValues: { ':counts': counts, ':devices': counts['devices'] },
          }),
        ),
      ),
    );
  }

  /** The states of the stored records of a run's devices `first` to `last`, in one consistent query. */
  async #storedStates(remediationId: string, first: string, last: string): Promise<DeviceState[]> {
    const states: DeviceState[] = [];
    await this.#walkDevices(
      remediationId,
      { ProjectionExpression: '#state', ExpressionAttributeNames: { '#state': 'state' } },
      (items) => {
        for (const item of items) states.push(item['state'] as DeviceState);
        return true;
      },
      { first, last },
    );
    return states;
  }

  /** Runs' `expiresAt` (a run's never changes once it is stored), by run: a few runs' worth. */
  readonly #expiries = new Map<string, Promise<number>>();
  #expiresAt(remediationId: string): Promise<number> {
    let known = this.#expiries.get(remediationId);
    if (!known) {
      known = (async () => {
        const run = (
          await this.#send(() =>
            this.client.send(
              new GetCommand({
                TableName: this.tableName,
                Key: { pk: runPk(remediationId), sk: 'META' },
                ProjectionExpression: 'expiresAt',
                ConsistentRead: true,
              }),
            ),
          )
        ).Item;
        if (!run) throw new Error(`remediation ${remediationId} does not exist`);
        return run['expiresAt'] as number;
      })();
      // A failed read is not kept: the next write reads again.
      known.catch(() => this.#expiries.delete(remediationId));
      if (this.#expiries.size >= 16) this.#expiries.delete(this.#expiries.keys().next().value!);
      this.#expiries.set(remediationId, known);
    }
    return known;
  }

  /** What this store knows of devices' revisions, by run and device (bounded: the oldest are forgotten). */
  readonly #seen = new Map<string, Seen>();
  #remember(key: string, seen: Seen): void {
    this.#seen.delete(key);
    this.#seen.set(key, seen);
    if (this.#seen.size > MAX_SEEN) this.#seen.delete(this.#seen.keys().next().value!);
  }

  async #update(
    remediationId: string,
    update: { readonly set: string; readonly condition: string; readonly values: Record<string, unknown>; readonly names?: Record<string, string> },
  ): Promise<void> {
    await this.#send(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: runPk(remediationId), sk: 'META' },
          UpdateExpression: `SET ${update.set}`,
          ConditionExpression: update.condition,
          ExpressionAttributeNames: { '#status': 'status', ...update.names },
          ExpressionAttributeValues: update.values,
        }),
      ),
    );
  }

  /** Ends the run and releases the adapter lease it holds (an `apply` run's). */
  async finish(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string, reason?: string): Promise<void> {
    await this.#update(remediationId, {
      set: `#status = :status, finished = :at${reason ? ', reason = :reason' : ''}`,
      condition: 'attribute_exists(pk)',
      values: { ':status': status, ':at': at, ...(reason ? { ':reason': reason } : {}) },
    });
    await this.#release(remediationId, 'run');
  }

  /**
   * Starts the rollback of a finished (`completed` or `failed`) `apply` run that has none yet,
   * or whose rollback ended `failed` before any device was rolled back or being rolled back
   * (one that could not be started, or stopped early: it may be started again). Takes the
   * adapter's lease in the same write (a 409 when another run holds it). Refused (false) otherwise.
   */
  async startRollback(remediationId: string, by: Actor, at: string): Promise<boolean> {
    const run = await this.#get(runPk(remediationId), 'META');
    // Refused on the run itself before the lease is asked for: its own 409 says why.
    if (run?.['mode'] !== 'apply' || run['status'] === 'running') return false;
    const previous = run['rollback'] as { status?: string; started?: string; attempt?: number } | undefined;
    // Started again only once the last attempt has ended and left a device to roll back.
    if (previous && (previous.status === 'running' || !(await this.#rollbackDue(remediationId)))) return false;
    const writeId = newWriteId();
    const outcome = await this.#leasedWrite(
      {
        Update: {
          TableName: this.tableName,
          Key: { pk: runPk(remediationId), sk: 'META' },
          UpdateExpression: `SET #rollback = :rollback, ${WRITE_ID_ATTRIBUTE} = :writeId`,
          ConditionExpression: `#status IN (:completed, :failed) AND #mode = :apply AND ${
            previous ? '#rollback.#status = :previousStatus AND #rollback.started = :previous' : 'attribute_not_exists(#rollback)'
          }`,
          ExpressionAttributeNames: { '#status': 'status', '#mode': 'mode', '#rollback': 'rollback' },
          ExpressionAttributeValues: {
            ':rollback': { status: 'running', startedBy: by, started: at, ...(previous ? { attempt: (previous.attempt ?? 1) + 1 } : {}) },
            ':writeId': writeId,
            ':completed': 'completed',
            ':failed': 'failed',
            ':apply': 'apply',
            ...(previous ? { ':previous': previous.started, ':previousStatus': previous.status } : {}),
          },
        },
      },
      this.#lease(run['adapterId'] as string, remediationId, 'rollback', at),
      remediationId,
      writeId,
    );
    return outcome === 'done';
  }

  /**
   * Whether a device is left for another rollback attempt: it has a rollback id and no rollback
   * yet, or NSO refused its rollback (an unknown one, and one rolled back, are never taken again;
   * engine.ts `rollbackDue`).
   */
  async #rollbackDue(remediationId: string): Promise<boolean> {
    let found = false;
    await this.#walkDevices(
      remediationId,
      {
        ProjectionExpression: '#device',
        FilterExpression:
          'attribute_exists(rollbackId) AND (attribute_not_exists(#rollback) OR (#rollback.#state = :failed AND #rollback.#error.#kind <> :unknown))',
        ExpressionAttributeNames: { '#device': 'device', '#rollback': 'rollback', '#state': 'state', '#error': 'error', '#kind': 'kind' },
        ExpressionAttributeValues: { ':failed': 'failed', ':unknown': 'rollback-unknown' },
      },
      (items) => {
        found ||= items.length > 0;
        return !found;
      },
    );
    return found;
  }

  /** The rollback ids a run's devices recorded (those not rolled back yet), newest commit first: only those two attributes are read. */
  async rollbackIds(remediationId: string): Promise<number[]> {
    const ids: number[] = [];
    await this.#walkDevices(
      remediationId,
      {
        ProjectionExpression: 'rollbackId',
        FilterExpression: 'attribute_exists(rollbackId) AND #state <> :rolledBack',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':rolledBack': 'rolled-back' },
      },
      (items) => {
        for (const item of items) ids.push(item['rollbackId'] as number);
        return true;
      },
    );
    return ids.sort((a, b) => b - a);
  }

  /**
   * Queries a run's device items (all, or those from the device `range.first` to `range.last`)
   * with `read` (projection, filter), a page at a time, while `more` answers true.
   */
  async #walkDevices(
    remediationId: string,
    read: {
      ProjectionExpression?: string;
      FilterExpression?: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues?: Record<string, unknown>;
    },
    more: (items: Record<string, unknown>[]) => boolean,
    range?: { readonly first: string; readonly last: string },
  ): Promise<void> {
    const keys = range
      ? { condition: 'pk = :pk AND sk BETWEEN :first AND :last', values: { ':first': deviceSk(range.first), ':last': deviceSk(range.last) } }
      : { condition: 'pk = :pk AND begins_with(sk, :d)', values: { ':d': 'D#' } };
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: keys.condition,
            ...read,
            ExpressionAttributeValues: { ...read.ExpressionAttributeValues, ':pk': runPk(remediationId), ...keys.values },
            ConsistentRead: true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      if (!more(out.Items ?? [])) return;
      start = out.LastEvaluatedKey;
    } while (start);
  }

  /** Ends the rollback and releases the adapter lease it holds. */
  async finishRollback(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string): Promise<void> {
    await this.#update(remediationId, {
      set: '#rollback.#status = :status, #rollback.finished = :at',
      condition: 'attribute_exists(#rollback)',
      names: { '#rollback': 'rollback' },
      values: { ':status': status, ':at': at },
    });
    await this.#release(remediationId, 'rollback');
  }
}

/** The remediation store over `tableName` (default: `COMPLIANCE_TABLE`), through the container's Document client. */
export const createRemediationStore = (
  client: DynamoDBDocumentClient = documentClient,
  tableName: string = requiredEnv('COMPLIANCE_TABLE'),
): DynamoRemediationStore => new DynamoRemediationStore(client, tableName);
