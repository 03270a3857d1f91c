/**
 * A plan's history in the compliance table, next to its batches:
 *
 * | pk                        | sk                       | what                                                          |
 * |---------------------------|--------------------------|---------------------------------------------------------------|
 * | `P#<planId>`              | `T#<started>#<batchId>`  | a trend point: the batch's status, counts by grade, delta counts |
 * | `P#<planId>#D#<device>`   | `STATE`                  | the device's last grade and its rules' states, the batch that wrote them and the state before |
 * | `P#<planId>#D#<device>`   | `H#<at>#<batchId>`       | one point per completed batch that checked the device          |
 * | `B#<batchId>`             | `X#<change>#<device>`    | a row of the batch's delta (counts on `META`: `d_*`)           |
 *
 * History items expire after the active profile's `historyRetentionDays` (fixed when the batch
 * starts); delta rows with their batch. The batch list reads the sparse `byList` index.
 */
import { BatchGetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';
import type { Grade } from './grading.js';
import { deltaSk, devicePk, devicePointItem, deviceStateItem, STATE_SK, trendPk, trendPointItem, trendSk } from './history-items.js';
import { DELTA_CHANGES, type DeltaChange, type DeltaCounts, type DeltaRow, type DevicePoint, type TrendPoint } from './history-model.js';
import { emptyDelta, type CheckedDevice, type DeviceState, type StoredState } from './history.js';
import type { Batch, BatchKind, BatchStatus } from './model.js';
import { batchPk, LIST_PARTITION, num, storeCall, toBatch, type ComplianceStore } from './store.js';

/** Keys one `BatchGetItem` reads at most. */
const GET_BATCH = 100;

/** One page of rows read from the table, and the key of the last item read when there may be more. */
export interface RowPage<T> {
  readonly rows: readonly T[];
  /** The last item's key: where the next page starts; absent after the last page. */
  readonly last?: string;
}

/** The batch list's filters (all optional; `from`/`to` are ISO 8601 times compared with `started`). */
export interface BatchFilter {
  readonly planId?: string;
  readonly treeId?: string;
  readonly adapterId?: string;
  readonly status?: BatchStatus;
  readonly kind?: BatchKind;
  readonly from?: string;
  readonly to?: string;
}

/** A device's step of history as the store writes it. */
export interface DeviceWrite {
  readonly checked: CheckedDevice;
  readonly state: StoredState;
  readonly change?: DeltaChange;
  readonly from?: Grade;
}

/** The field of a delta class's count on the batch item (`newly-failing` → `d_newly_failing`). */
const deltaField = (change: DeltaChange): string => `d_${change.replace(/-/g, '_')}`;

const stateOf = (item: Record<string, unknown> | undefined): StoredState | undefined => {
  if (!item || typeof item['state'] !== 'string') return undefined;
  return JSON.parse(item['state']) as StoredState;
};

/** The time range of sort keys `<prefix><time>#<id>` from `from` to `to` (both inclusive; absent: open). */
export const timeRange = (prefix: string, from?: string, to?: string) => ({ from: `${prefix}${from ?? '0'}`, to: `${prefix}${to ?? '9999'}#~` });

export class HistoryStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly batches: ComplianceStore,
  ) {}

  /**
   * Reads a query a page at a time (at most `limit` items a page), from the key after `after`
   * (a sort key, or the index's sort key for `byList`): one request per page. Each request asks
   * for one item more than the page holds, so a page that ends with the last item says so (no
   * cursor to an empty page); the extra item starts the next page's request again.
   */
  async *#pages(input: Omit<QueryCommandInput, 'TableName'>, limit: number, start?: Record<string, unknown>): AsyncGenerator<RowPage<Record<string, unknown>>> {
    const partition = input.ExpressionAttributeValues?.[':pk'];
    const keyOf = (item: Record<string, unknown>): Record<string, unknown> =>
      input.IndexName ? { list: item['list'], listSk: item['listSk'], pk: item['pk'], sk: item['sk'] } : { pk: partition ?? item['pk'], sk: item['sk'] };
    let key = start;
    do {
      const out = await storeCall(() =>
        this.client.send(new QueryCommand({ TableName: this.tableName, ...input, Limit: limit + 1, ...(key ? { ExclusiveStartKey: key } : {}) })),
      );
      let rows = out.Items ?? [];
      key = out.LastEvaluatedKey;
      if (rows.length > limit) {
        rows = rows.slice(0, limit);
        key = keyOf(rows[limit - 1]!);
      }
      const lastKey = key && String(input.IndexName ? key['listSk'] : key['sk']);
      yield { rows, ...(lastKey ? { last: lastKey } : {}) };
    } while (key);
  }

  /** Items by key, {@link GET_BATCH} to a request, asking again for what DynamoDB leaves unprocessed. */
  async #getAll(all: readonly Record<string, unknown>[], options: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
    const found: Record<string, unknown>[] = [];
    for (let i = 0; i < all.length; i += GET_BATCH) {
      let keys = all.slice(i, i + GET_BATCH);
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
        const out = await storeCall(() => this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: [...keys], ...options } } })));
        found.push(...(out.Responses?.[this.tableName] ?? []));
        keys = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    return found;
  }

  /** The plan's newest completed batch that started before `started` (this batch's start), if any. */
  async previousCompleted(planId: string, started: string, batchId: string): Promise<string | undefined> {
    for await (const page of this.#pages(
      {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        FilterExpression: '#status = :completed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pk': trendPk(planId), ':from': 'T#', ':to': trendSk(started, batchId), ':completed': 'completed' },
        ScanIndexForward: false,
        ConsistentRead: true,
        ProjectionExpression: 'batchId, sk',
      },
      50,
    )) {
      const found = page.rows.find((r) => r['batchId'] !== batchId);
      if (found) return found['batchId'] as string;
    }
    return undefined;
  }

  /** The stored states of a plan's devices, by device (a device without history is absent). */
  async states(planId: string, devices: readonly string[]): Promise<Map<string, StoredState>> {
    const found = new Map<string, StoredState>();
    const items = await this.#getAll(
      devices.map((d) => ({ pk: devicePk(planId, d), sk: STATE_SK })),
      { ConsistentRead: true, ProjectionExpression: 'pk, #state', ExpressionAttributeNames: { '#state': 'state' } },
    );
    for (const item of items) {
      const state = stateOf(item);
      if (state) found.set(String(item['pk']).slice(devicePk(planId, '').length), state);
    }
    return found;
  }

  /**
   * Writes a chunk's devices' history: each device's point and state, and its delta row in the
   * batch's partition. Every item is a put of what the step computed, so a step that runs again
   * writes the same items again.
   */
  async writeDevices(
    planId: string,
    batchId: string,
    writes: readonly DeviceWrite[],
    expiry: { readonly history: number; readonly batch: number },
  ): Promise<void> {
    const items: Record<string, unknown>[] = [];
    for (const { checked, state, change, from } of writes) {
      const { device, ...point } = checked;
      items.push(devicePointItem(planId, device, point, expiry.history));
      items.push(deviceStateItem(planId, device, state, expiry.history));
      if (change) {
        const row: DeltaRow = { device: checked.device, change, ...(from ? { from } : {}), to: checked.grade, reportId: checked.reportId };
        items.push({ pk: batchPk(batchId), sk: deltaSk(change, checked.device), ...row, expiresAt: expiry.batch });
      }
    }
    await this.batches.putItems(items);
  }

  /** Stores the `gone` rows of a batch's delta. */
  async putGone(batchId: string, rows: readonly { readonly device: string; readonly from?: Grade }[], expiresAt: number): Promise<void> {
    await this.batches.putItems(
      rows.map((r) => ({
        pk: batchPk(batchId),
        sk: deltaSk('gone', r.device),
        device: r.device,
        change: 'gone',
        ...(r.from ? { from: r.from } : {}),
        expiresAt,
      })),
    );
  }

  /** The grades the previous batch gave its gone devices: from their states (written by it, or kept as `before` by this one). */
  async previousGrades(planId: string, batchId: string, previousBatchId: string, devices: readonly string[]): Promise<Map<string, Grade>> {
    const states = await this.states(planId, devices);
    const grades = new Map<string, Grade>();
    for (const [device, s] of states) {
      const prior: Pick<DeviceState, 'batchId' | 'grade'> | undefined = s.batchId === batchId ? s.before : s;
      if (prior?.batchId === previousBatchId) grades.set(device, prior.grade);
    }
    return grades;
  }

  /** Records a completed batch's delta on its item: the counts, the batch compared with, whether gone devices are unknown. */
  async setDelta(batchId: string, delta: { readonly counts: DeltaCounts; readonly previousBatchId?: string; readonly goneUnknown?: true }): Promise<void> {
    const values: Record<string, unknown> = Object.fromEntries(DELTA_CHANGES.map((c) => [`:${deltaField(c)}`, delta.counts[c]]));
    const sets = DELTA_CHANGES.map((c) => `${deltaField(c)} = :${deltaField(c)}`);
    if (delta.previousBatchId) {
      sets.push('previousBatchId = :previous');
      values[':previous'] = delta.previousBatchId;
    }
    if (delta.goneUnknown) {
      sets.push('goneUnknown = :unknown');
      values[':unknown'] = true;
    }
    await storeCall(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: batchPk(batchId), sk: 'META' },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  /** Replaces a plan batch's trend point with the batch as it ended. */
  async putTrendPoint(planId: string, batch: Batch, delta: DeltaCounts | undefined, expiresAt: number): Promise<void> {
    const { batchId, kind, status, started, finished, total, grades, totals } = batch;
    await this.batches.putItems([
      trendPointItem(
        planId,
        { batchId, kind, status, started, ...(finished ? { finished } : {}), total, grades, totals, ...(delta ? { delta } : {}) },
        expiresAt,
      ),
    ]);
  }

  /** A completed plan batch's delta (without rows); `undefined` when the batch has none recorded. */
  deltaOf(item: Record<string, unknown>): { counts: DeltaCounts; previousBatchId?: string; goneUnknown?: true } | undefined {
    if (typeof item[deltaField('new')] !== 'number') return undefined;
    const counts = emptyDelta();
    for (const c of DELTA_CHANGES) counts[c] = num(item[deltaField(c)]);
    return {
      counts,
      ...(typeof item['previousBatchId'] === 'string' ? { previousBatchId: item['previousBatchId'] } : {}),
      ...(item['goneUnknown'] === true ? { goneUnknown: true as const } : {}),
    };
  }

  /** Pages of a batch's delta rows, by class then device; `change`: one class only. */
  async *deltaPages(
    batchId: string,
    options: { readonly change?: DeltaChange; readonly limit: number; readonly after?: string },
  ): AsyncGenerator<RowPage<DeltaRow>> {
    const prefix = options.change ? `X#${options.change}#` : 'X#';
    const input = {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': batchPk(batchId), ':prefix': prefix },
    };
    for await (const page of this.#pages(input, options.limit, options.after ? { pk: batchPk(batchId), sk: options.after } : undefined)) {
      yield { ...page, rows: page.rows.map(deltaRowOf) };
    }
  }

  /** Pages of a plan's trend, oldest first, between two times of `started`. */
  async *trendPages(
    planId: string,
    options: { readonly from?: string; readonly to?: string; readonly limit: number; readonly after?: string },
  ): AsyncGenerator<RowPage<TrendPoint>> {
    const range = timeRange('T#', options.from, options.to);
    const input = {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': trendPk(planId), ':from': range.from, ':to': range.to },
    };
    for await (const page of this.#pages(input, options.limit, options.after ? { pk: trendPk(planId), sk: options.after } : undefined)) {
      yield { ...page, rows: page.rows.map(trendPointOf) };
    }
  }

  /** Pages of a device's points in a plan, newest first, between two check times. */
  async *devicePages(
    planId: string,
    device: string,
    options: { readonly from?: string; readonly to?: string; readonly limit: number; readonly after?: string },
  ): AsyncGenerator<RowPage<DevicePoint>> {
    const pk = devicePk(planId, device);
    const range = timeRange('H#', options.from, options.to);
    const input = {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': pk, ':from': range.from, ':to': range.to },
      ScanIndexForward: false,
    };
    for await (const page of this.#pages(input, options.limit, options.after ? { pk, sk: options.after } : undefined)) {
      yield { ...page, rows: page.rows.map(devicePointOf) };
    }
  }

  /** A device's stored state in a plan (its rules), if it has history. */
  async deviceState(planId: string, device: string): Promise<StoredState | undefined> {
    return (await this.states(planId, [device])).get(device);
  }

  /**
   * Pages of batches, newest first. With `planId`, from the plan's trend partition (a plan's
   * batches only: no read of any other), the batch items fetched by key; otherwise from the
   * `byList` index, the other filters applied by DynamoDB to each page read. Either way a page
   * is one bounded read: it may hold fewer batches than `limit` and still have a next one.
   */
  async *batchPages(filter: BatchFilter, options: { readonly limit: number; readonly after?: string }): AsyncGenerator<RowPage<Batch>> {
    const range = timeRange('', filter.from, filter.to);
    if (filter.planId) {
      const pk = trendPk(filter.planId);
      const input = {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': `T#${range.from}`, ':to': `T#${range.to}` },
        ScanIndexForward: false,
        ProjectionExpression: 'batchId, sk',
      };
      for await (const page of this.#pages(input, options.limit, options.after ? { pk, sk: `T#${options.after}` } : undefined)) {
        const batches = await this.#metas(page.rows.map((r) => r['batchId'] as string));
        yield { rows: batches.filter((b) => matches(b, filter)), ...(page.last ? { last: page.last.slice(2) } : {}) };
      }
      return;
    }
    const conditions: string[] = [];
    // LIST is a reserved word of DynamoDB's expressions.
    const names: Record<string, string> = { '#list': 'list' };
    const values: Record<string, unknown> = { ':list': LIST_PARTITION, ':from': range.from, ':to': range.to };
    for (const key of ['treeId', 'adapterId', 'status'] as const) {
      if (filter[key] === undefined) continue;
      names[`#${key}`] = key;
      values[`:${key}`] = filter[key];
      conditions.push(`#${key} = :${key}`);
    }
    // The index does not copy `kind`: a compliance batch has a tree, a backup none.
    if (filter.kind) conditions.push(filter.kind === 'compliance' ? 'attribute_exists(treeId)' : 'attribute_not_exists(treeId)');
    const input = {
      IndexName: 'byList',
      KeyConditionExpression: '#list = :list AND listSk BETWEEN :from AND :to',
      ExpressionAttributeValues: values,
      ExpressionAttributeNames: names,
      ScanIndexForward: false,
      ...(conditions.length ? { FilterExpression: conditions.join(' AND ') } : {}),
    };
    const start = options.after ? { list: LIST_PARTITION, listSk: options.after, pk: batchPk(options.after.slice(-24)), sk: 'META' } : undefined;
    for await (const page of this.#pages(input, options.limit, start)) yield { ...page, rows: page.rows.map(listedBatch) };
  }

  /** Batch items by id, in the order asked; an expired batch is left out. */
  async #metas(batchIds: readonly string[]): Promise<Batch[]> {
    const byId = new Map<string, Batch>();
    for (const item of await this.#getAll(batchIds.map((id) => ({ pk: batchPk(id), sk: 'META' })))) byId.set(item['batchId'] as string, toBatch(item));
    return batchIds.flatMap((id) => byId.get(id) ?? []);
  }
}

/** A batch as `byList` copies it: its id and start from the keys, its kind from its tree. */
const listedBatch = (item: Record<string, unknown>): Batch => {
  const listSk = String(item['listSk']);
  return toBatch({
    ...item,
    batchId: String(item['pk']).slice(2),
    started: listSk.slice(0, listSk.lastIndexOf('#')),
    kind: typeof item['treeId'] === 'string' ? 'compliance' : 'backup',
  });
};

/** Whether a batch passes the list's filters (those the plan's partition does not apply itself). */
const matches = (b: Batch, f: BatchFilter): boolean =>
  (f.treeId === undefined || b.treeId === f.treeId) &&
  (f.adapterId === undefined || b.adapterId === f.adapterId) &&
  (f.status === undefined || b.status === f.status) &&
  (f.kind === undefined || b.kind === f.kind);

const deltaRowOf = (item: Record<string, unknown>): DeltaRow => ({
  device: item['device'] as string,
  change: item['change'] as DeltaChange,
  ...(typeof item['from'] === 'string' ? { from: item['from'] as Grade } : {}),
  ...(typeof item['to'] === 'string' ? { to: item['to'] as Grade } : {}),
  ...(typeof item['reportId'] === 'string' ? { reportId: item['reportId'] } : {}),
});

const trendPointOf = (item: Record<string, unknown>): TrendPoint => ({
  batchId: item['batchId'] as string,
  kind: item['kind'] as BatchKind,
  status: item['status'] as BatchStatus,
  started: item['started'] as string,
  ...(typeof item['finished'] === 'string' ? { finished: item['finished'] } : {}),
  total: num(item['total']),
  grades: item['grades'] as TrendPoint['grades'],
  totals: item['totals'] as TrendPoint['totals'],
  ...(item['delta'] ? { delta: item['delta'] as DeltaCounts } : {}),
});

const devicePointOf = (item: Record<string, unknown>): DevicePoint => ({
  batchId: item['batchId'] as string,
  at: item['at'] as string,
  grade: item['grade'] as Grade,
  ...(typeof item['score'] === 'number' ? { score: item['score'] } : {}),
  ...(Array.isArray(item['failing']) ? { failing: item['failing'] as string[] } : {}),
  ...(typeof item['reportId'] === 'string' ? { reportId: item['reportId'] } : {}),
});

/** The history store over `tableName` (default: `COMPLIANCE_TABLE`), next to its batch store. */
export const createHistoryStore = (
  batches: ComplianceStore,
  client: DynamoDBDocumentClient = documentClient,
  tableName: string = requiredEnv('COMPLIANCE_TABLE'),
): HistoryStore => new HistoryStore(client, tableName, batches);
