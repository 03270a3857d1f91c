/**
 * Compliance batches and reports in DynamoDB (table `compliance`). One partition per batch:
 *
 * | sk          | what                                                               |
 * |-------------|--------------------------------------------------------------------|
 * | `META`      | the batch: status, counts (numbers the chunks `ADD` to), timestamps |
 * | `PLAN`      | the frozen rules by node and the variables (JSON)                   |
 * | `C#000042`  | chunk 42: its devices and their nodes (JSON)                        |
 * | `D#000042`  | chunk 42 is counted: written in one transaction with the `ADD`      |
 * | `R#<hash>`  | one device's report (JSON); `gpk` (`<batchId>#<grade>`) feeds `byGrade` |
 *
 * Every item carries `expiresAt` (epoch seconds): DynamoDB's TTL removes a batch and its
 * reports after the retention. Reports are written 25 to a request under a key made of the
 * batch and the device, so a device has at most one report in a batch; chunks are counted
 * once (the `D#` marker's condition cancels a second count). A chunk that runs again after a
 * crash reads which of its devices have a report, checks only the others, and never recounts.
 */
import { createHash } from 'node:crypto';
import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailable } from '../shared/problem.js';
import { transientReason } from '../shared/transient.js';
import { GRADES, type Grade } from './grading.js';
import type { Batch, BatchPlan, BatchStatus, ChunkCounts, DeviceAssignment, Report } from './model.js';

export const BY_GRADE_INDEX = 'byGrade';
/** Batch ids: 24 lowercase hex digits (96 random bits). */
export const BATCH_ID_PATTERN = '^[0-9a-f]{24}$';
/** Report ids: the batch id, `-`, and 32 hex digits of the device name's SHA-256. */
export const REPORT_ID_PATTERN = '^[0-9a-f]{24}-[0-9a-f]{32}$';

const batchPk = (batchId: string): string => `B#${batchId}`;
const chunkSk = (index: number): string => `C#${String(index).padStart(6, '0')}`;
const countedSk = (index: number): string => `D#${String(index).padStart(6, '0')}`;
/** 128 bits of SHA-256: no two of a batch's devices share it in practice, and any name fits a key. */
export const deviceKey = (device: string): string => createHash('sha256').update(device, 'utf8').digest('hex').slice(0, 32);
export const reportIdOf = (batchId: string, device: string): string => `${batchId}-${deviceKey(device)}`;

const COUNT_FIELDS = [...GRADES.map((g) => `g_${g}`), 't_errors', 't_warnings', 't_infos', 't_passes'] as const;

const countValues = (c: ChunkCounts): Record<(typeof COUNT_FIELDS)[number], number> => ({
  g_pass: c.grades.pass,
  g_review: c.grades.review,
  g_fail: c.grades.fail,
  g_error: c.grades.error,
  t_errors: c.totals.errors,
  t_warnings: c.totals.warnings,
  t_infos: c.totals.infos,
  t_passes: c.totals.passes,
});

/** The batch's own fields when it is created. */
export interface NewBatch {
  readonly batchId: string;
  readonly treeId: string;
  readonly version: string;
  readonly adapterId: string;
  readonly total: number;
  readonly started: string;
  readonly chunks: number;
  /** Concurrent config fetches allowed on the adapter for this batch. */
  readonly concurrency: number;
  /** Epoch seconds after which DynamoDB removes the batch and its reports. */
  readonly expiresAt: number;
}

/** The engine's view of a batch. */
export interface BatchWork {
  readonly adapterId: string;
  readonly chunks: number;
  readonly concurrency: number;
  readonly treeId: string;
  readonly version: string;
  readonly expiresAt: number;
}

export interface ReportPage {
  readonly items: readonly Report[];
  /** Pass as `cursor` for the next page; absent on the last. */
  readonly next?: { readonly sk: string };
}

/** A counted report: what a chunk needs of it to add up its counts. */
export type ReportCounts = Pick<Report, 'grade' | 'totals'>;

const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

const toBatch = (item: Record<string, unknown>): Batch => ({
  batchId: item['batchId'] as string,
  treeId: item['treeId'] as string,
  version: item['version'] as string,
  adapterId: item['adapterId'] as string,
  status: item['status'] as BatchStatus,
  total: num(item['total']),
  done: num(item['done']),
  totals: { errors: num(item['t_errors']), warnings: num(item['t_warnings']), infos: num(item['t_infos']), passes: num(item['t_passes']) },
  grades: { pass: num(item['g_pass']), review: num(item['g_review']), fail: num(item['g_fail']), error: num(item['g_error']) },
  started: item['started'] as string,
  ...(typeof item['finished'] === 'string' ? { finished: item['finished'] } : {}),
  ...(typeof item['reason'] === 'string' ? { reason: item['reason'] } : {}),
});

const toReport = (item: Record<string, unknown>): Report => JSON.parse(item['report'] as string) as Report;

export class ComplianceStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async #send<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const reason = transientReason(error);
      if (reason) throw new ServiceUnavailable(`The compliance store is unavailable (${reason}); retry later.`);
      throw error;
    }
  }

  /**
   * Writes the plan and the chunks, then the batch record (conditionally: an id is used once).
   * Until the record exists the batch does not: a failure half way leaves only items that
   * expire with the retention.
   */
  async create(batch: NewBatch, plan: BatchPlan, chunks: readonly (readonly DeviceAssignment[])[]): Promise<void> {
    const pk = batchPk(batch.batchId);
    const items = [
      { pk, sk: 'PLAN', plan: JSON.stringify(plan), expiresAt: batch.expiresAt },
      ...chunks.map((devices, i) => ({ pk, sk: chunkSk(i), devices: JSON.stringify(devices.map((d) => [d.device, d.node])), expiresAt: batch.expiresAt })),
    ];
    await this.#putAll(items);
    await this.#send(() =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk,
            sk: 'META',
            ...batch,
            status: 'running',
            done: 0,
            ...countValues({ devices: 0, grades: { pass: 0, review: 0, fail: 0, error: 0 }, totals: { errors: 0, warnings: 0, infos: 0, passes: 0 } }),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async #get(pk: string, sk: string, consistent = true): Promise<Record<string, unknown> | undefined> {
    const out = await this.#send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: consistent })));
    return out.Item;
  }

  async getBatch(batchId: string): Promise<Batch | undefined> {
    const item = await this.#get(batchPk(batchId), 'META');
    return item ? toBatch(item) : undefined;
  }

  /** What the engine needs to run the batch; throws when the batch does not exist. */
  async getWork(batchId: string): Promise<BatchWork> {
    const item = await this.#get(batchPk(batchId), 'META');
    if (!item) throw new Error(`batch ${batchId} does not exist`);
    return {
      adapterId: item['adapterId'] as string,
      chunks: num(item['chunks']),
      concurrency: num(item['concurrency']),
      treeId: item['treeId'] as string,
      version: item['version'] as string,
      expiresAt: num(item['expiresAt']),
    };
  }

  async getPlan(batchId: string): Promise<BatchPlan> {
    const item = await this.#get(batchPk(batchId), 'PLAN');
    if (!item) throw new Error(`batch ${batchId} has no plan`);
    return JSON.parse(item['plan'] as string) as BatchPlan;
  }

  async getChunk(batchId: string, index: number): Promise<DeviceAssignment[]> {
    const item = await this.#get(batchPk(batchId), chunkSk(index));
    if (!item) throw new Error(`batch ${batchId} has no chunk ${index}`);
    return (JSON.parse(item['devices'] as string) as [string, string][]).map(([device, node]) => ({ device, node }));
  }

  /** The reports already written for some of `devices` (by device name). */
  async existingReports(batchId: string, devices: readonly string[]): Promise<Map<string, ReportCounts>> {
    const found = new Map<string, ReportCounts>();
    const pk = batchPk(batchId);
    for (let i = 0; i < devices.length; i += 100) {
      let keys: Record<string, unknown>[] = devices.slice(i, i + 100).map((d) => ({ pk, sk: `R#${deviceKey(d)}` }));
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
        if (attempt > 8) throw new ServiceUnavailable('The compliance store kept refusing reads; retry later.');
        const out = await this.#send(() =>
          this.client.send(
            new BatchGetCommand({
              RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'report' } },
            }),
          ),
        );
        for (const item of out.Responses?.[this.tableName] ?? []) {
          const report = toReport(item);
          found.set(report.device, { grade: report.grade, totals: report.totals });
        }
        keys = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    return found;
  }

  /**
   * Puts items 25 to a request (`BatchWriteItem`), sending back what DynamoDB leaves
   * unprocessed with a growing pause; an item that exists is replaced.
   */
  async #putAll(items: readonly Record<string, unknown>[]): Promise<void> {
    await Promise.all(
      Array.from({ length: Math.ceil(items.length / 25) }, async (_, n) => {
        let pending = items.slice(n * 25, n * 25 + 25).map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > 8) throw new ServiceUnavailable('The compliance store kept refusing writes; retry later.');
          if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
          const out = await this.#send(() => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } })));
          pending = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
        }
      }),
    );
  }

  /**
   * Writes reports, 25 to a request. A report's key is its batch and device, so writing a
   * device's report again replaces it: the engine writes a device only when the chunk found
   * no report of it, and no other run of the chunk writes at the same time (see engine.ts).
   */
  async putReports(reports: readonly Report[], expiresAt: number): Promise<void> {
    await this.#putAll(
      reports.map((report) => ({
        pk: batchPk(report.batchId),
        sk: `R#${report.reportId.slice(report.reportId.indexOf('-') + 1)}`,
        gpk: `${report.batchId}#${report.grade}`,
        report: JSON.stringify(report),
        expiresAt,
      })),
    );
  }

  /**
   * Adds a chunk's counts to the batch, once: the `D#` marker and the `ADD` are one
   * transaction, and the marker's condition cancels it when the chunk was counted before.
   */
  async countChunk(batchId: string, index: number, counts: ChunkCounts, expiresAt: number): Promise<void> {
    const pk = batchPk(batchId);
    const values = countValues(counts);
    try {
      await this.#send(() =>
        this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.tableName, Item: { pk, sk: countedSk(index), devices: counts.devices, expiresAt }, ConditionExpression: 'attribute_not_exists(pk)' } },
              {
                Update: {
                  TableName: this.tableName,
                  Key: { pk, sk: 'META' },
                  UpdateExpression: `ADD done :done, ${COUNT_FIELDS.map((f) => `${f} :${f}`).join(', ')}`,
                  ExpressionAttributeValues: { ':done': counts.devices, ...Object.fromEntries(COUNT_FIELDS.map((f) => [`:${f}`, values[f]])) },
                },
              },
            ],
          }),
        ),
      );
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      if (error instanceof Error && error.name === 'TransactionCanceledException' && reasons?.[0]?.Code === 'ConditionalCheckFailed') return;
      throw error;
    }
  }

  /** Ends the batch. `counts` (completed only) replaces the running sums with the exact totals. */
  async finish(batchId: string, status: Exclude<BatchStatus, 'running'>, finished: string, counts?: ChunkCounts, reason?: string): Promise<void> {
    const sets = ['#status = :status', 'finished = :finished'];
    const values: Record<string, unknown> = { ':status': status, ':finished': finished };
    if (counts) {
      sets.push('done = :done');
      values[':done'] = counts.devices;
      const v = countValues(counts);
      for (const f of COUNT_FIELDS) {
        sets.push(`${f} = :${f}`);
        values[`:${f}`] = v[f];
      }
    }
    if (reason) {
      sets.push('reason = :reason');
      values[':reason'] = reason;
    }
    await this.#send(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: batchPk(batchId), sk: 'META' },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  /** A page of the batch's reports (ordered by report id), optionally of one grade. */
  async listReports(batchId: string, options: { readonly grade?: Grade; readonly limit: number; readonly after?: string }): Promise<ReportPage> {
    const pk = batchPk(batchId);
    const byGrade = options.grade !== undefined;
    const out = await this.#send(() =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          ...(byGrade
            ? { IndexName: BY_GRADE_INDEX, KeyConditionExpression: 'gpk = :g', ExpressionAttributeValues: { ':g': `${batchId}#${options.grade}` } }
            : { KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)', ExpressionAttributeValues: { ':pk': pk, ':r': 'R#' } }),
          Limit: options.limit,
          ...(options.after ? { ExclusiveStartKey: byGrade ? { pk, sk: options.after, gpk: `${batchId}#${options.grade}` } : { pk, sk: options.after } } : {}),
        }),
      ),
    );
    const items = (out.Items ?? []).map(toReport);
    const last = out.LastEvaluatedKey?.['sk'];
    return { items, ...(typeof last === 'string' ? { next: { sk: last } } : {}) };
  }

  async getReport(reportId: string): Promise<Report | undefined> {
    const [batchId, key] = reportId.split('-');
    const item = await this.#get(batchPk(batchId!), `R#${key}`, false);
    return item ? toReport(item) : undefined;
  }
}
