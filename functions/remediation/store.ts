/**
 * Remediation runs in DynamoDB, in the compliance table (a run expires with its batch). One
 * partition per run:
 *
 * | sk          | what                                                                                     |
 * |-------------|------------------------------------------------------------------------------------------|
 * | `META`      | the run: status, mode, who and when, its list keys (JSON), the totals (`t_*` numbers), its rollback |
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
 * **Item size.** A device item stays inside DynamoDB's 400 KB: the dry-run output is cut by
 * the engine (`shownDiff`) and again here to {@link MAX_DRY_RUN_BYTES}; when the masked patch and the rules
 * together still exceed {@link MAX_DEVICE_BYTES}, the patch is left out (`patchOmitted`), then
 * rules from the end (`rulesOmitted` counts them). The commit always sends the whole patch.
 */
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { MAX_DIFF_BYTES } from '../compliance/model.js';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';
import { ServiceUnavailable } from '../platform/problem.js';
import { redact } from '../platform/redaction.js';
import { WRITE_ID_ATTRIBUTE, conditionFailed, holdsWrite, newWriteId, refusedOnCondition, settleWrite, unconfirmed } from '../platform/settled-write.js';
import { transientReason } from '../platform/transient.js';
import type { RuleRemediation } from './generate.js';
import {
  emptyRemediationTotals,
  type Actor,
  type DevicePage,
  type DeviceState,
  type NewRemediation,
  type Remediation,
  type RemediationDevice,
  type RemediationStatus,
  type RemediationStore,
  type RemediationTotals,
} from './model.js';
import type { YangPatch } from './patch.js';

/** UTF-8 bytes of dry-run output a device keeps at most (the engine cuts it, masked, to this). */
export const MAX_DRY_RUN_BYTES = MAX_DIFF_BYTES;
/** UTF-8 bytes of JSON a device item's patch, rules and dry-run output take at most, with room for its other attributes. */
export const MAX_DEVICE_BYTES = 360_000;
/** Devices one transaction of {@link DynamoRemediationStore.putDevices} writes at most (DynamoDB takes 100 items, one is the run's). */
export const DEVICES_PER_WRITE = 99;
/** Bytes of device attributes one such transaction carries at most (DynamoDB takes 4 MB a transaction). */
const WRITE_BYTES = 3_500_000;
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

const runPk = (remediationId: string): string => `M#${remediationId}`;
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
  totals: Object.fromEntries(TOTAL_FIELDS.map((c) => [c, num(item[totalField(c)])])) as unknown as RemediationTotals,
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
    ...(typeof dryRun === 'string' ? { dryRun } : {}),
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
 * of reports), the dry-run output cut on a character boundary if the engine did not; then the
 * patch left out, then rules from the end, while the item is too large.
 */
export const boundedFields = (record: RemediationDevice): Record<string, unknown> => {
  const { device: _device, patch, rules, dryRun, dryRunTruncated, ...rest } = record;
  let dry = dryRun;
  let cut = dryRunTruncated === true;
  if (dry !== undefined && bytes(dry) > MAX_DRY_RUN_BYTES) {
    dry = Buffer.from(dry, 'utf8')
      .subarray(0, MAX_DRY_RUN_BYTES)
      .toString('utf8')
      .replace(/\uFFFD+$/, '');
    cut = true;
  }
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
  ) {}

  async #send<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const reason = transientReason(error);
      if (reason) throw new ServiceUnavailable(`The remediation store is unavailable (${reason}); retry later.`);
      throw error;
    }
  }

  async #get(pk: string, sk: string): Promise<Record<string, unknown> | undefined> {
    return (await this.#send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true })))).Item;
  }

  /** Puts items 25 to a request, sending again what DynamoDB leaves unprocessed. */
  async #putAll(items: readonly Record<string, unknown>[]): Promise<void> {
    for (let n = 0; n < items.length; n += 25) {
      let pending = items.slice(n, n + 25).map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 8) throw new ServiceUnavailable('The remediation store kept refusing writes; retry later.');
        if (attempt > 0) await this.sleep(Math.min(1000, 50 * 2 ** attempt));
        const out = await this.#send(() => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } })));
        pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
      }
    }
  }

  /** Writes the devices (`pending`), then the run record, conditionally: an id is used once. */
  async create(run: NewRemediation): Promise<void> {
    const pk = runPk(run.remediationId);
    const { devices, listKeys, ...fields } = run;
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
    const writeId = newWriteId();
    const meta = {
      pk,
      sk: 'META',
      ...fields,
      listKeys: JSON.stringify(listKeys),
      status: 'running',
      devices: devices.length,
      ...Object.fromEntries(TOTAL_FIELDS.map((c) => [totalField(c), 0])),
      [WRITE_ID_ATTRIBUTE]: writeId,
    };
    const outcome = await this.#send(() =>
      settleWrite(
        () =>
          refusedOnCondition(() =>
            this.client.send(new PutCommand({ TableName: this.tableName, Item: meta, ConditionExpression: 'attribute_not_exists(pk)' })),
          ),
        () => this.#get(pk, 'META'),
        (item) => holdsWrite(item, writeId),
      ),
    );
    if (outcome === 'refused') throw new Error(`remediation ${run.remediationId} exists already`);
  }

  async get(remediationId: string): Promise<Remediation | undefined> {
    const item = await this.#get(runPk(remediationId), 'META');
    return item ? toRemediation(item) : undefined;
  }

  async getWork(remediationId: string): ReturnType<RemediationStore['getWork']> {
    const item = await this.#get(runPk(remediationId), 'META');
    if (!item) return undefined;
    const devices: { device: string; node: string }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :d)',
            ExpressionAttributeValues: { ':pk': runPk(remediationId), ':d': 'D#' },
            ProjectionExpression: '#device, #node',
            ExpressionAttributeNames: { '#device': 'device', '#node': 'node' },
            ConsistentRead: true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const d of out.Items ?? []) devices.push({ device: d['device'] as string, node: d['node'] as string });
      start = out.LastEvaluatedKey;
    } while (start);
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
    const pk = runPk(remediationId);
    const found = new Map<string, RemediationDevice>();
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
            ExpressionAttributeValues: { ':pk': pk, ':first': deviceSk(first), ':last': deviceSk(last) },
            ConsistentRead: true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const item of out.Items ?? []) {
        const record = toDevice(item);
        this.#remember(`${remediationId}/${record.device}`, { rev: num(item['rev']), counted: (item['counted'] as string[] | undefined) ?? [] });
        found.set(record.device, record);
      }
      start = out.LastEvaluatedKey;
    } while (start);
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
        sent.forEach(({ record }, i) => this.#remember(`${remediationId}/${record.device}`, next[i]!.after));
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

  async finish(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string, reason?: string): Promise<void> {
    await this.#update(remediationId, {
      set: `#status = :status, finished = :at${reason ? ', reason = :reason' : ''}`,
      condition: 'attribute_exists(pk)',
      values: { ':status': status, ':at': at, ...(reason ? { ':reason': reason } : {}) },
    });
  }

  /** Starts the rollback of a completed `apply` run that has none yet: one conditional write, settled. */
  async startRollback(remediationId: string, by: Actor, at: string): Promise<boolean> {
    const pk = runPk(remediationId);
    const writeId = newWriteId();
    const outcome = await this.#send(() =>
      settleWrite(
        () =>
          refusedOnCondition(() =>
            this.#update(remediationId, {
              set: `#rollback = :rollback, ${WRITE_ID_ATTRIBUTE} = :writeId`,
              condition: '#status = :completed AND #mode = :apply AND attribute_not_exists(#rollback)',
              names: { '#mode': 'mode', '#rollback': 'rollback' },
              values: { ':rollback': { status: 'running', startedBy: by, started: at }, ':writeId': writeId, ':completed': 'completed', ':apply': 'apply' },
            }),
          ),
        () => this.#get(pk, 'META'),
        (item) => holdsWrite(item, writeId),
      ),
    );
    return outcome === 'done';
  }

  async finishRollback(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string): Promise<void> {
    await this.#update(remediationId, {
      set: '#rollback.#status = :status, #rollback.finished = :at',
      condition: 'attribute_exists(#rollback)',
      names: { '#rollback': 'rollback' },
      values: { ':status': status, ':at': at },
    });
  }
}

/** The remediation store over `tableName` (default: `COMPLIANCE_TABLE`), through the container's Document client. */
export const createRemediationStore = (
  client: DynamoDBDocumentClient = documentClient,
  tableName: string = requiredEnv('COMPLIANCE_TABLE'),
): DynamoRemediationStore => new DynamoRemediationStore(client, tableName);
