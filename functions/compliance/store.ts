/**
 * Compliance batches and reports in DynamoDB (table `compliance`). One partition per batch:
 *
 * | sk                      | what                                                                  |
 * |-------------------------|-----------------------------------------------------------------------|
 * | `META`                  | the batch: status, counts (numbers the chunks `ADD` to), the set of counted chunks, timestamps |
 * | `PLAN`                  | the frozen nodes with their rules, and the variables (JSON, see plan.ts) |
 * | `C#000042`              | chunk 42: its devices and their nodes' places in the plan (JSON)      |
 * | `R#fail#000042#02#0017` | a pack: reports of one grade stored by run 2 of chunk 42; 17 is the position in the chunk of its first device |
 *
 * Every item carries `expiresAt` (epoch seconds): DynamoDB's TTL removes a batch and its
 * reports after the retention.
 *
 * Reports are stored in packs: the reports a chunk hands in together (up to 1,000) are grouped
 * by grade, and each group is one item (split into packs of at most {@link PACK_BYTES} of rows).
 * A pack says once what its reports share: the batch and grade in its key, the tree and version
 * as attributes; `rows` (JSON) holds the rest of each report with its device's position, from
 * which its id is made again. That is about half the bytes of whole reports, which DynamoDB
 * bills by and the SDK and DynamoDB serialize and parse.
 * A pack's key is its grade, its chunk, the chunk's run that stored it (its attempt, counted
 * across the chunk's parts) and its first device's position in the chunk. A run writes a device
 * at most once, so no two packs
 * share a key: nothing stored is ever overwritten, not even by a write that reaches DynamoDB
 * late from a run that died. A report id names the pack that holds it, and one grade's reports are a range of
 * keys, so no index is needed. Against one item per device (and one index entry), a batch
 * writes a small fraction of the items and requests, and a page of reports reads a few items.
 *
 * A chunk is counted once: the update that adds its counts also adds its number to `counted`,
 * on the condition that the number is not there yet. A chunk that runs again after a crash
 * reads which of its devices have a report, checks only the others, and never recounts.
 */
import { BatchWriteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ServiceUnavailable } from '../platform/problem.js';
import { storeCaller } from '../platform/transient.js';
import { WRITE_ID_ATTRIBUTE, holdsWrite, newWriteId, refusedOnCondition, settleWrite } from '../platform/settled-write.js';
import { GRADES, type Grade } from './grading.js';
import {
  REPORT_ID_PATTERN,
  emptyCounts,
  type Batch,
  type BatchKind,
  type BatchPlan,
  type BatchStatus,
  type ChunkCounts,
  type ChunkDevice,
  type NodeSelection,
  type SyncMode,
  type Report,
} from './model.js';
import { chunkEntries, decodeChunk, decodePlan, encodePlan } from './plan.js';
import { trendPointItem } from './history-items.js';
import { shownIssue } from './shown.js';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';

/** Devices a chunk may hold: a position in the chunk is 4 digits. */
export const MAX_CHUNK_DEVICES = 10_000;
/**
 * Chunks a batch may have: the batch item's `counted` set holds up to this many chunk numbers
 * (about 3.5 bytes each: ~175 KB of DynamoDB's 400 KB item). The trees' limits make far fewer:
 * a version of 350,000 bytes holds fewer than 90,000 devices, so at most about 90 chunks of
 * 1,000 (see docs/compliance.md, "Limits and quotas").
 */
export const MAX_CHUNKS = 50_000;
/** Runs of a chunk (attempts, across its parts) the keys can tell apart: a run is 2 digits. */
export const MAX_ATTEMPTS = 99;
/**
 * JSON bytes of rows a pack takes before another pack starts: reading one report reads its
 * pack, so packs stay small (at most 8 read units to read any report of a pack of several). A
 * report bigger than this is a pack of its own.
 */
const PACK_BYTES = 64 * 1024;
/** JSON bytes of one report's row at most, inside DynamoDB's 400 KB item with its key and other attributes. */
export const MAX_REPORT_BYTES = 380_000;

export const batchPk = (batchId: string): string => `B#${batchId}`;
/** The batch list's partition (`byList`): every batch item carries it. */
export const LIST_PARTITION = 'BATCH';
const chunkSk = (index: number): string => `C#${String(index).padStart(6, '0')}`;
const pad = (n: number, digits: number): string => String(n).padStart(digits, '0');
const packPrefix = (grade: Grade, chunk: number): string => `R#${grade}#${pad(chunk, 6)}#`;
const REPORT_ID = new RegExp(REPORT_ID_PATTERN);
/** A pack's sort key: its grade, chunk, run and first position. */
const PACK_SK = /^R#(error|fail|kept|out-of-sync|pass|review)#([0-9]{6})#([0-9]{2})#([0-9]{4})$/;
const INITIAL: Readonly<Record<string, Grade>> = { e: 'error', f: 'fail', k: 'kept', o: 'out-of-sync', p: 'pass', r: 'review' };

/** A report's id: its batch, its pack's key (grade, chunk, attempt, first position) and its own position. */
const reportIdOf = (batchId: string, grade: Grade, pack: PackOf, first: number, position: number): string =>
  `${batchId}-${grade[0]}${pad(pack.chunk, 6)}${pad(pack.attempt, 2)}${pad(first, 4)}${pad(position, 4)}`;

/** Which run of which chunk stores reports: part of its packs' keys. */
export interface PackOf {
  readonly chunk: number;
  /** The chunk's run (its step's attempt, counted across its parts), 1 to {@link MAX_ATTEMPTS}. */
  readonly attempt: number;
}

/** The batch and the pack's sort key of a report id, or `undefined` when it is not one. */
export const parseReportId = (reportId: string): { readonly batchId: string; readonly sk: string } | undefined => {
  if (!REPORT_ID.test(reportId)) return undefined;
  const batchId = reportId.slice(0, 24);
  const rest = reportId.slice(25);
  // A report stored on its own before packs: its key is the rest of its id.
  if (rest.length === 32) return { batchId, sk: `R#${rest}` };
  return { batchId, sk: `${packPrefix(INITIAL[rest[0]!]!, Number(rest.slice(1, 7)))}${rest.slice(7, 9)}#${rest.slice(9, 13)}` };
};

/** A checked device's report before it is stored: the store names it when it packs it. */
export type DeviceReport = Omit<Report, 'reportId'>;

/** A report to store, with its device's position in the chunk. */
export interface ChunkReport {
  readonly position: number;
  readonly report: DeviceReport;
}

/** Where a page of reports starts: a pack's key, and how many of its reports the last page took. */
export interface ReportCursor {
  readonly sk: string;
  readonly skip: number;
}

/** The sort key of a pack, or of a report stored on its own before packs: where a page of reports may start. */
export const REPORTS_SK_PATTERN = /^R#((error|fail|kept|out-of-sync|pass|review)#[0-9]{6}#[0-9]{2}#[0-9]{4}|[0-9a-f]{32})$/;

/** The batch item's count attribute of a grade (`out-of-sync` → `g_out_of_sync`: expression names take no `-`). */
const gradeField = (grade: Grade): string => `g_${grade.replace(/-/g, '_')}`;
const COUNT_FIELDS = [...GRADES.map(gradeField), 't_errors', 't_warnings', 't_infos', 't_passes'] as const;

const countValues = (c: ChunkCounts): Record<(typeof COUNT_FIELDS)[number], number> => ({
  ...Object.fromEntries(GRADES.map((g) => [gradeField(g), c.grades[g]])),
  t_errors: c.totals.errors,
  t_warnings: c.totals.warnings,
  t_infos: c.totals.infos,
  t_passes: c.totals.passes,
});

/** The batch's own fields when it is created. */
export interface NewBatch {
  readonly batchId: string;
  /** Default `compliance`. */
  readonly kind?: BatchKind;
  /** The tree version a compliance batch checks against; a backup has none. */
  readonly treeId?: string;
  readonly version?: string;
  /** The compliance plan the batch runs for (functions/plans), if any. */
  readonly planId?: string;
  readonly adapterId: string;
  readonly total: number;
  readonly started: string;
  readonly chunks: number;
  /** Concurrent config fetches allowed on the adapter for this batch. */
  readonly concurrency: number;
  /** What NSO is asked before each device is graded; absent: `none` (as a batch started before sync modes). */
  readonly sync?: SyncMode;
  /** Epoch seconds after which DynamoDB removes the batch and its reports. */
  readonly expiresAt: number;
  /** A plan's batch: epoch seconds after which its history items (trend point, device points and states) expire; default `expiresAt`. */
  readonly historyExpiresAt?: number;
  /** What the nodes' selectors chose when the batch started (compliance batches whose version selects). */
  readonly selections?: readonly NodeSelection[];
}

/** The engine's view of a batch. */
export interface BatchWork {
  readonly kind: BatchKind;
  readonly adapterId: string;
  readonly chunks: number;
  readonly concurrency: number;
  readonly treeId?: string;
  readonly version?: string;
  readonly planId?: string;
  readonly sync: SyncMode;
  readonly expiresAt: number;
  /** A plan's batch: when the history it writes expires (epoch seconds). */
  readonly historyExpiresAt?: number;
  /** When the batch started (ISO 8601): with its id, what names the configurations it keeps. */
  readonly started: string;
}

export interface ReportPage {
  readonly items: readonly Report[];
  /** Pass as `from` for the next page; absent on the last. */
  readonly next?: ReportCursor;
}

/** A counted report: what a chunk needs of it to add up its counts. */
export type ReportCounts = Pick<Report, 'grade' | 'totals'>;

export const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

/** A batch's kind: batches stored before backups existed are compliance batches. */
const kindOf = (item: Record<string, unknown>): BatchKind => (item['kind'] === 'backup' ? 'backup' : 'compliance');
/** The tree version a compliance batch checks against; nothing for a backup. */
const versionOf = (item: Record<string, unknown>): Pick<Batch, 'treeId' | 'version'> =>
  typeof item['treeId'] === 'string' ? { treeId: item['treeId'], version: item['version'] as string } : {};

/** A batch as its stored item (or the batch list's copy of it) says. */
export const toBatch = (item: Record<string, unknown>): Batch => ({
  batchId: item['batchId'] as string,
  kind: kindOf(item),
  ...versionOf(item),
  ...(typeof item['planId'] === 'string' ? { planId: item['planId'] } : {}),
  adapterId: item['adapterId'] as string,
  status: item['status'] as BatchStatus,
  total: num(item['total']),
  done: num(item['done']),
  totals: { errors: num(item['t_errors']), warnings: num(item['t_warnings']), infos: num(item['t_infos']), passes: num(item['t_passes']) },
  grades: Object.fromEntries(GRADES.map((g) => [g, num(item[gradeField(g)])])) as Batch['grades'],
  // A batch started before sync modes graded NSO's copy as it was.
  sync: (item['sync'] as SyncMode | undefined) ?? 'none',
  started: item['started'] as string,
  ...(typeof item['finished'] === 'string' ? { finished: item['finished'] } : {}),
  ...(typeof item['reason'] === 'string' ? { reason: item['reason'] } : {}),
  ...(Array.isArray(item['selections']) ? { selections: item['selections'] as NodeSelection[] } : {}),
});

/** What a pack's row keeps of a report: all but what the pack's key and attributes say. */
type RowFields = Omit<Report, 'reportId' | 'batchId' | 'treeId' | 'version' | 'grade'>;
/** A report as its pack's `rows` keep it: its row fields and its device's position. */
type PackRow = RowFields & { readonly position: number };

/** A report's row fields, without an id or a position it may carry (they would hide the ones its pack gives it). */
const rowFieldsOf = (report: DeviceReport): RowFields => {
  const {
    batchId: _batchId,
    treeId: _treeId,
    version: _version,
    grade: _grade,
    reportId: _reportId,
    position: _position,
    ...row
  } = report as DeviceReport & {
    readonly reportId?: unknown;
    readonly position?: unknown;
  };
  return row;
};

/**
 * The whole report a row stands for, its id first: what a read returns and what `putReports`
 * answers. Its issues are shown as the redaction rule shows them (`shown.ts`): reports are
 * masked before they are stored, and masked again here, which changes nothing for them but
 * masks what an earlier release stored unmasked, for every reader.
 */
const reportOf = (
  reportId: string,
  batchId: string,
  treeId: string | undefined,
  version: string | undefined,
  grade: Grade,
  { device, node, ...rest }: RowFields,
): Report => ({
  reportId,
  batchId,
  device,
  ...(treeId === undefined ? {} : { treeId, version }),
  ...(node === undefined ? {} : { node }),
  grade,
  ...rest,
  ...shownIssues(rest),
});

/** A report's issues as shown ({@link reportOf}); nothing when it has none. */
const shownIssues = ({ issues }: Pick<Report, 'issues'>): Partial<Pick<Report, 'issues'>> => (issues?.length ? { issues: issues.map(shownIssue) } : {});

/**
 * The reports of an item in the reports' key range: a pack, or what earlier releases stored
 * there, still read until their retention removes it: a pack of whole reports (`reports`), or
 * one report on its own (`R#<32 hex digits of the device name's SHA-256>`, `report`).
 */
const packOf = (item: Record<string, unknown>): Report[] => {
  if (typeof item['rows'] === 'string') {
    // R#<grade>#<chunk>#<run>#<first position>: a report id is the batch, the grade's initial, the three numbers and its own position.
    const key = PACK_SK.exec(String(item['sk']));
    const rows: unknown = JSON.parse(item['rows']);
    if (!key || !Array.isArray(rows)) return [];
    const [, grade, chunk, run, first] = key as unknown as [string, Grade, string, string, string];
    const batchId = String(item['pk']).slice(2);
    const treeId = item['treeId'] as string | undefined;
    const version = item['version'] as string | undefined;
    const idPrefix = `${batchId}-${grade[0]}${chunk}${run}${first}`;
    return (rows as (PackRow | null)[])
      .filter(
        (row): row is PackRow =>
          typeof row === 'object' && row !== null && Number.isInteger(row.position) && row.position >= 0 && row.position < MAX_CHUNK_DEVICES,
      )
      .map(({ position, ...row }) => reportOf(`${idPrefix}${pad(position, 4)}`, batchId, treeId, version, grade, row));
  }
  const whole = (report: Report): Report => ({ ...report, ...shownIssues(report) });
  if (typeof item['reports'] === 'string') return (JSON.parse(item['reports']) as Report[]).map(whole);
  if (typeof item['report'] === 'string') return [whole(JSON.parse(item['report']) as Report)];
  return [];
};

/** Runs a call to the compliance table: a transient failure becomes a 503 for the caller. */
export const storeCall = storeCaller('compliance store');

export class ComplianceStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  #send<T>(call: () => Promise<T>): Promise<T> {
    return storeCall(call);
  }

  /**
   * Writes the plan and the chunks, then the batch record (conditionally: an id is used once).
   * Until the record exists the batch does not: a failure half way leaves only items that
   * expire with the retention. Every device of a compliance batch must be on a node `plan.nodes`
   * lists; a backup batch has no plan, and its chunks hold device names only.
   */
  async create(batch: NewBatch, plan: BatchPlan | undefined, chunks: readonly (readonly ChunkDevice[])[]): Promise<void> {
    const pk = batchPk(batch.batchId);
    const entry: (device: ChunkDevice) => unknown = plan ? chunkEntries(plan) : ({ device }) => device;
    const { historyExpiresAt, ...fields } = batch;
    const items = [
      ...(plan ? [{ pk, sk: 'PLAN', plan: encodePlan(plan), expiresAt: batch.expiresAt }] : []),
      ...(batch.planId
        ? [
            trendPointItem(
              batch.planId,
              { ...batch, kind: batch.kind ?? 'compliance', status: 'running', grades: emptyCounts().grades, totals: emptyCounts().totals },
              historyExpiresAt ?? batch.expiresAt,
            ),
          ]
        : []),
      ...chunks.map((devices, i) => ({ pk, sk: chunkSk(i), devices: JSON.stringify(devices.map(entry)), expiresAt: batch.expiresAt })),
    ];
    await this.#putAll(items);
    // The id is used once; a resend of this put that meets its own first attempt is no conflict.
    const writeId = newWriteId();
    const meta = {
      pk,
      sk: 'META',
      ...fields,
      ...(historyExpiresAt === undefined ? {} : { historyExpiresAt }),
      list: LIST_PARTITION,
      listSk: `${batch.started}#${batch.batchId}`,
      status: 'running',
      done: 0,
      ...countValues(emptyCounts()),
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
    if (outcome === 'refused') throw new Error(`batch ${batch.batchId} exists already`);
  }

  async #get(pk: string, sk: string, consistent = true): Promise<Record<string, unknown> | undefined> {
    const out = await this.#send(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: consistent })));
    return out.Item;
  }

  /** The batch's stored item as it is (the history reads its delta fields). */
  async getBatchItem(batchId: string): Promise<Record<string, unknown> | undefined> {
    return this.#get(batchPk(batchId), 'META');
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
      kind: kindOf(item),
      adapterId: item['adapterId'] as string,
      chunks: num(item['chunks']),
      concurrency: num(item['concurrency']),
      sync: (item['sync'] as SyncMode | undefined) ?? 'none',
      ...versionOf(item),
      ...(typeof item['planId'] === 'string' ? { planId: item['planId'] } : {}),
      expiresAt: num(item['expiresAt']),
      ...(typeof item['historyExpiresAt'] === 'number' ? { historyExpiresAt: item['historyExpiresAt'] } : {}),
      started: item['started'] as string,
    };
  }

  async getPlan(batchId: string): Promise<BatchPlan> {
    const item = await this.#get(batchPk(batchId), 'PLAN');
    if (!item) throw new Error(`batch ${batchId} has no plan`);
    return decodePlan(item['plan'] as string);
  }

  /** A chunk's devices, with their nodes' paths from the batch's plan (a backup batch has none). */
  async getChunk(batchId: string, index: number, plan?: BatchPlan): Promise<ChunkDevice[]> {
    const item = await this.#get(batchPk(batchId), chunkSk(index));
    if (!item) throw new Error(`batch ${batchId} has no chunk ${index}`);
    return decodeChunk(item['devices'] as string, plan);
  }

  /** The reports already written for a chunk's devices (by device name): one consistent range read per grade. */
  async existingReports(batchId: string, chunk: number): Promise<Map<string, ReportCounts>> {
    const found = new Map<string, ReportCounts>();
    for (const grade of GRADES) {
      const prefix = packPrefix(grade, chunk);
      await this.#range(batchId, { from: prefix, to: `${prefix}~`, consistent: true }, (item) => {
        for (const report of packOf(item)) found.set(report.device, { grade: report.grade, totals: report.totals });
        return true;
      });
    }
    return found;
  }

  /**
   * Reads a range of a batch's sort keys in order, a page at a time, handing each item to
   * `take` until it returns false; returns the key after which reading stopped (`undefined`:
   * the range was read to its end).
   */
  async #range(
    batchId: string,
    range: { readonly from: string; readonly to: string; readonly consistent?: boolean; readonly pageSize?: () => number },
    take: (item: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown> | undefined> {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': batchPk(batchId), ':from': range.from, ':to': range.to },
            ConsistentRead: range.consistent ?? false,
            ...(range.pageSize ? { Limit: range.pageSize() } : {}),
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const item of out.Items ?? []) if (!take(item)) return item;
      start = out.LastEvaluatedKey;
    } while (start);
    return undefined;
  }

  /**
   * Puts items 25 to a request (`BatchWriteItem`), sending back what DynamoDB leaves
   * unprocessed with a growing pause; an item that exists is replaced. Settles only when every
   * request has (a failure is thrown after the others end), so no write of a call is still on
   * its way when the caller learns it failed.
   */
  async putItems(items: readonly Record<string, unknown>[]): Promise<void> {
    return this.#putAll(items);
  }

  /** Every report of a chunk, of every run that stored some (one consistent range read per grade). */
  async chunkReports(batchId: string, chunk: number): Promise<Report[]> {
    const found: Report[] = [];
    for (const grade of GRADES) {
      const prefix = packPrefix(grade, chunk);
      await this.#range(batchId, { from: prefix, to: `${prefix}~`, consistent: true }, (item) => {
        found.push(...packOf(item));
        return true;
      });
    }
    return found;
  }

  /** The names of a chunk's devices; `undefined` when the chunk is gone (its batch expired). */
  async chunkDeviceNames(batchId: string, index: number): Promise<string[] | undefined> {
    const item = await this.#get(batchPk(batchId), chunkSk(index), false);
    if (!item) return undefined;
    return (JSON.parse(item['devices'] as string) as ([string, unknown] | string)[]).map((e) => (typeof e === 'string' ? e : e[0]));
  }

  async #putAll(items: readonly Record<string, unknown>[]): Promise<void> {
    const outcomes = await Promise.allSettled(
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
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Stores reports that one run of a chunk checked, and returns them named. They are
   * grouped by grade, in chunk order, into packs of at most {@link PACK_BYTES} of rows, and the
   * packs are written 25 to a request. A pack's key is made of the run and its first
   * device's position, so packs never replace each other as long as a run hands in each
   * device once (the engine does). The reports must be of `batchId` and of one tree version.
   */
  async putReports(batchId: string, of: PackOf, reports: readonly ChunkReport[], expiresAt: number): Promise<Report[]> {
    const { chunk, attempt } = of;
    if (!Number.isInteger(chunk) || chunk < 0 || chunk >= MAX_CHUNKS) throw new RangeError(`chunk ${chunk} is out of range`);
    if (!Number.isInteger(attempt) || attempt < 1 || attempt > MAX_ATTEMPTS) throw new RangeError(`attempt ${attempt} is out of range`);
    if (new Set(reports.map((r) => r.position)).size !== reports.length) throw new RangeError('a device position is handed in twice');
    // Packs are made per grade: a report of any other would be left out, not stored.
    const unknownGrade = reports.find(({ report }) => !(GRADES as readonly string[]).includes(report.grade));
    if (unknownGrade) throw new RangeError(`the report of ${unknownGrade.report.device} has no grade a pack can hold (${String(unknownGrade.report.grade)})`);
    const treeId = reports[0]?.report.treeId;
    const version = reports[0]?.report.version;
    // A pack names the batch, tree and version once for all its rows.
    if (reports.some(({ report }) => report.batchId !== batchId || report.treeId !== treeId || report.version !== version)) {
      throw new RangeError(`the reports handed in are not all of batch ${batchId} and one tree version`);
    }
    const pk = batchPk(batchId);
    const named: Report[] = [];
    const items: Record<string, unknown>[] = [];
    for (const grade of GRADES) {
      const group = reports.filter((r) => r.report.grade === grade).sort((a, b) => a.position - b.position);
      let pack: string[] = [];
      let first = 0;
      let bytes = 0;
      const close = () => {
        if (pack.length)
          items.push({ pk, sk: `${packPrefix(grade, chunk)}${pad(attempt, 2)}#${pad(first, 4)}`, treeId, version, rows: `[${pack.join(',')}]`, expiresAt });
        pack = [];
        bytes = 0;
      };
      for (const { position, report } of group) {
        if (!Number.isInteger(position) || position < 0 || position >= MAX_CHUNK_DEVICES) throw new RangeError(`device position ${position} is out of range`);
        const fields = rowFieldsOf(report);
        // The fields always have members (the device at least): their JSON starts with `{"`.
        const row = `{"position":${position},${JSON.stringify(fields).slice(1)}`;
        // With the comma before it.
        const size = Buffer.byteLength(row, 'utf8') + 1;
        if (size > MAX_REPORT_BYTES)
          throw new RangeError(`the report of ${report.device} is ${size} bytes of JSON, more than the ${MAX_REPORT_BYTES} an item can hold`);
        if (pack.length && bytes + size > PACK_BYTES) close();
        if (!pack.length) first = position;
        const reportId = reportIdOf(batchId, grade, of, first, position);
        pack.push(row);
        bytes += size;
        named.push(reportOf(reportId, batchId, report.treeId, report.version, grade, fields));
      }
      close();
    }
    await this.#putAll(items);
    return named;
  }

  /**
   * Adds a chunk's counts to the batch, once: one conditional update `ADD`s the counts and the
   * chunk's number to the batch's `counted` set, and its condition (the number not in the set
   * yet) makes a second count of the chunk a no-op.
   */
  async countChunk(batchId: string, index: number, counts: ChunkCounts): Promise<void> {
    const values = countValues(counts);
    try {
      await this.#send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: batchPk(batchId), sk: 'META' },
            UpdateExpression: `ADD counted :chunk, done :done, ${COUNT_FIELDS.map((f) => `${f} :${f}`).join(', ')}`,
            ConditionExpression: 'attribute_exists(pk) AND NOT contains(counted, :index)',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            ExpressionAttributeValues: {
              ':chunk': new Set([index]),
              ':index': index,
              ':done': counts.devices,
              ...Object.fromEntries(COUNT_FIELDS.map((f) => [`:${f}`, values[f]])),
            },
          }),
        ),
      );
    } catch (error) {
      // Counted before: the batch item came back. No item: the batch does not exist.
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException' && (error as { Item?: unknown }).Item) return;
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

  /**
   * Ends a batch `failed` that is still `running` (its execution ended without its own end
   * step): a conditional write, so that of the readers and sweeps that find it, one ends it.
   * The batch as stored after the change; `undefined` when it was not running (or is gone).
   */
  async failIfRunning(batchId: string, finished: string, reason: string): Promise<Batch | undefined> {
    try {
      const out = await this.#send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: batchPk(batchId), sk: 'META' },
            UpdateExpression: 'SET #status = :failed, finished = :finished, reason = :reason',
            ConditionExpression: '#status = :running',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':failed': 'failed', ':running': 'running', ':finished': finished, ':reason': reason },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return out.Attributes ? toBatch(out.Attributes) : undefined;
    } catch (error) {
      if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
  }

  /**
   * A page of up to `limit` of the batch's reports, optionally of one grade. Reports come by
   * grade (error, fail, pass, review), then by chunk, then in the order the chunk stored them.
   */
  async listReports(batchId: string, options: { readonly grade?: Grade; readonly limit: number; readonly from?: ReportCursor }): Promise<ReportPage> {
    const prefix = options.grade ? `R#${options.grade}#` : 'R#';
    const items: Report[] = [];
    let next: ReportCursor | undefined;
    let first = true;
    await this.#range(
      batchId,
      // A pack holds up to 64 KB of rows (hundreds of reports): ask for a few packs at a time, not for a page of them.
      { from: options.from?.sk ?? prefix, to: `${prefix}~`, pageSize: () => Math.min(10, 1 + Math.ceil((options.limit - items.length) / 50)) },
      (item) => {
        // The cursor's reports to skip are those of its own pack: when that pack is gone (or
        // not yet visible to an eventually consistent read), the next one starts at its first.
        const skip = first && options.from && item['sk'] === options.from.sk ? options.from.skip : 0;
        first = false;
        // The page is full: this pack is where the next one starts.
        if (items.length === options.limit) {
          next = { sk: item['sk'] as string, skip: 0 };
          return false;
        }
        const pack = packOf(item);
        const taken = pack.slice(skip, skip + options.limit - items.length);
        items.push(...taken);
        const used = skip + taken.length;
        if (used >= pack.length) return true;
        next = { sk: item['sk'] as string, skip: used };
        return false;
      },
    );
    return { items, ...(next ? { next } : {}) };
  }

  async getReport(reportId: string): Promise<Report | undefined> {
    const where = parseReportId(reportId);
    if (!where) return undefined;
    const item = await this.#get(batchPk(where.batchId), where.sk, false);
    return item ? packOf(item).find((r) => r.reportId === reportId) : undefined;
  }
}

/** The compliance store over `tableName` (default: `COMPLIANCE_TABLE`), through the container's Document client: how handlers get one. */
export const createComplianceStore = (client: DynamoDBDocumentClient = documentClient, tableName: string = requiredEnv('COMPLIANCE_TABLE')): ComplianceStore =>
  new ComplianceStore(client, tableName);
