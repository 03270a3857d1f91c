/**
 * The read side of plan history: the batch list, a batch's delta, a plan's trend, a device's
 * history. Each answer's rows come from one of the history store's row-page generators (flat
 * rows but for the counts objects); a route answers one page of them, a cursor carrying where the
 * next starts and what it was issued for (reused with other filters, it is a 400).
 */
import { createHash } from 'node:crypto';
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { BadRequest, Conflict, NotFound } from '../platform/problem.js';
import { DELTA_CHANGES, type BatchDelta, type DeltaChange, type DeltaRow, type DeviceHistory, type DevicePoint, type TrendPoint } from './history-model.js';
import { shownRules } from './history.js';
import { timeRange, type BatchFilter, type HistoryStore, type RowPage } from './history-store.js';
import type { Batch } from './model.js';
import type { ComplianceStore } from './store.js';

/** Rows per page (default, most) of each list. */
export const HISTORY_PAGE_LIMITS = {
  batches: { default: 50, max: 200 },
  delta: { default: 200, max: 1000 },
  trend: { default: 366, max: 366 },
  device: { default: 100, max: 400 },
} as const;

/**
 * Rows a CSV export reads from the store at a time (one query a page): the export holds one
 * page in memory whatever the list's length.
 */
export const HISTORY_EXPORT_PAGE = 250;

/** Every row of a row-page generator, a page at a time, as a CSV export takes them. */
async function* rowsOf<T>(pages: AsyncIterable<RowPage<T>>): AsyncGenerator<readonly T[]> {
  for await (const page of pages) yield page.rows;
}

/** The date and time fields of an ISO 8601 text (the route's pattern has checked its shape). */
const FIELDS = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?)?/;

/**
 * Whether the date is one the calendar has and the time one a clock shows: `Date.parse` moves
 * `2026-02-30` to March 2 and takes `T24:00` for the next midnight, which a range must refuse.
 */
const isCalendarTime = (value: string): boolean => {
  const [, year, month, day, hour = '0', minute = '0', second = '0'] = FIELDS.exec(value) ?? [];
  if (year === undefined) return false;
  // setUTCFullYear, not Date.UTC: years 0 to 99 stay themselves.
  const last = new Date(new Date(0).setUTCFullYear(Number(year), Number(month), 0)).getUTCDate();
  return (
    Number(month) >= 1 && Number(month) <= 12 && Number(day) >= 1 && Number(day) <= last && Number(hour) <= 23 && Number(minute) <= 59 && Number(second) <= 59
  );
};

/** A date without a time: `to` then means the end of that day (UTC), `from` its start. */
const DATE_ONLY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/**
 * An ISO 8601 date or time of a query, as the stored times spell it; a 400 naming the field when
 * it is none. Both ends are inclusive: a date-only `to` is the last millisecond of that day, so
 * `to=2026-11-27` includes a batch started at 03:00 that day.
 */
export const queryTime = (value: string | undefined, field: 'from' | 'to'): string | undefined => {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time) || !isCalendarTime(value)) {
    throw new BadRequest(`The ${field} query parameter is not an ISO 8601 date or time.`, [{ in: 'query', field, message: 'is not an ISO 8601 date or time' }]);
  }
  const endOfDay = field === 'to' && DATE_ONLY.test(value) ? 86_400_000 - 1 : 0;
  return new Date(time + endOfDay).toISOString();
};

/** Whether a sort key `<prefix><time>#<id>` lies in the range a list was asked for (a cursor's key must). */
const inRange = (key: string, prefix: string, range: { readonly from?: string; readonly to?: string }): boolean => {
  const { from, to } = timeRange(prefix, range.from, range.to);
  return key >= from && key <= to;
};

/** Parameters in a stable order: the same filters give the same scope whatever order the query string had. */
const sorted = (value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))) : value;

/** A query's `from` and `to` as the stored times spell them (each only when sent); a 400 naming the one that is no time. */
export const queryRange = (query: { readonly from?: string | undefined; readonly to?: string | undefined }): { from?: string; to?: string } => ({
  ...(query.from ? { from: queryTime(query.from, 'from')! } : {}),
  ...(query.to ? { to: queryTime(query.to, 'to')! } : {}),
});

/** What a cursor is issued for: a digest of the list's own parameters. */
const scopeOf = (parts: readonly unknown[]): string =>
  createHash('sha256')
    .update(JSON.stringify(parts.map(sorted)))
    .digest('base64url')
    .slice(0, 16);

/** DynamoDB's longest sort key (bytes): a longer start key is a database error, never a page. */
const MAX_SORT_KEY_BYTES = 1024;

/**
 * Where a page starts (the cursor's key), or nothing; a 400 for a cursor of another list or
 * filter, or whose key the list's own query could not have given (DynamoDB refuses a start key
 * outside the query's key condition: that must be a 400, never a database error).
 */
const startOf = (cursor: string | undefined, scope: string, valid: (key: string) => boolean): string | undefined => {
  if (cursor === undefined) return undefined;
  const fields = decodeCursor(cursor, ['s', 'k'], (f) => f.s === scope && Buffer.byteLength(f.k, 'utf8') <= MAX_SORT_KEY_BYTES && valid(f.k));
  if (!fields) throw invalidCursor();
  return fields.k;
};

/** The first page a row-page generator gives, with the cursor of the next. */
const firstPage = async <T>(pages: AsyncGenerator<RowPage<T>>, scope: string): Promise<{ items: readonly T[]; next?: string }> => {
  const { value } = await pages.next();
  await pages.return(undefined);
  const page = value as RowPage<T> | undefined;
  return { items: page?.rows ?? [], ...(page?.last ? { next: encodeCursor({ s: scope, k: page.last }) } : {}) };
};

const LIST_KEY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z#[0-9a-f]{24}$/;

/** The batch list's row pages: newest first, filtered. */
export const batchRows = (history: HistoryStore, filter: BatchFilter, limit: number, after?: string): AsyncGenerator<RowPage<Batch>> =>
  history.batchPages(filter, { limit, ...(after ? { after } : {}) });

/** `GET …/compliance_reports/batches`: a page of batches, newest first. */
export const listBatches = async (history: HistoryStore, filter: BatchFilter, query: { readonly limit: number; readonly cursor?: string }) => {
  const scope = scopeOf(['batches', filter]);
  const after = startOf(query.cursor, scope, (k) => LIST_KEY.test(k) && inRange(k, '', filter));
  return firstPage(batchRows(history, filter, query.limit, after), scope);
};

/** `GET …/compliance_reports/batches?format=csv`: every batch the filter selects, newest first. */
export const exportBatches = (history: HistoryStore, filter: BatchFilter): AsyncGenerator<readonly Batch[]> =>
  rowsOf(batchRows(history, filter, HISTORY_EXPORT_PAGE));

/** A batch that has a delta: of a plan, completed; otherwise a 404 or a 409 saying why. */
const deltaBatch = async (store: ComplianceStore, history: HistoryStore, batchId: string): Promise<BatchDelta> => {
  const item = await store.getBatchItem(batchId);
  if (!item) throw new NotFound(`No compliance batch has the id '${batchId}'.`);
  const planId = item['planId'];
  if (typeof planId !== 'string') throw new Conflict(`Batch '${batchId}' ran for no compliance plan: only a plan's batches are compared.`, 'no-plan');
  // The delta is whole once its counts are stored, just before the batch is marked completed.
  const delta = history.deltaOf(item);
  if (item['status'] === 'failed' || !delta) {
    throw new Conflict(`Batch '${batchId}' is ${String(item['status'])}: a delta exists once a batch has completed.`, 'batch-not-completed');
  }
  return { batchId, planId, ...delta };
};

/** A delta's row pages, by class then device. */
export const deltaRows = (
  history: HistoryStore,
  batchId: string,
  change: DeltaChange | undefined,
  limit: number,
  after?: string,
): AsyncGenerator<RowPage<DeltaRow>> => history.deltaPages(batchId, { limit, ...(change ? { change } : {}), ...(after ? { after } : {}) });

/** `GET …/batches/{batchId}/delta`: the delta's counts and a page of its rows. */
export const readDelta = async (
  store: ComplianceStore,
  history: HistoryStore,
  batchId: string,
  query: { readonly change?: DeltaChange; readonly limit: number; readonly cursor?: string },
) => {
  const scope = scopeOf(['delta', batchId, query.change ?? '*']);
  const classes = query.change ? [query.change] : DELTA_CHANGES;
  const after = startOf(query.cursor, scope, (k) => classes.some((c) => k.startsWith(`X#${c}#`) && k.length > `X#${c}#`.length));
  const delta = await deltaBatch(store, history, batchId);
  return { ...delta, ...(await firstPage(deltaRows(history, batchId, query.change, query.limit, after), scope)) };
};

/** `GET …/batches/{batchId}/delta?format=csv`: every row of the delta (of one class); a 404 or a 409 first, as the JSON answer. */
export const exportDelta = async (
  store: ComplianceStore,
  history: HistoryStore,
  batchId: string,
  change: DeltaChange | undefined,
): Promise<AsyncGenerator<readonly DeltaRow[]>> => {
  await deltaBatch(store, history, batchId);
  return rowsOf(deltaRows(history, batchId, change, HISTORY_EXPORT_PAGE));
};

/** A plan's trend's row pages, oldest first. */
export const trendRows = (
  history: HistoryStore,
  planId: string,
  range: { from?: string; to?: string },
  limit: number,
  after?: string,
): AsyncGenerator<RowPage<TrendPoint>> => history.trendPages(planId, { ...range, limit, ...(after ? { after } : {}) });

/** `GET …/compliance_plans/{planId}/trend`: a page of the plan's trend points, oldest first. */
export const readTrend = async (
  history: HistoryStore,
  planId: string,
  query: { readonly from?: string; readonly to?: string; readonly limit: number; readonly cursor?: string },
) => {
  const range = { ...(query.from ? { from: query.from } : {}), ...(query.to ? { to: query.to } : {}) };
  const scope = scopeOf(['trend', planId, range]);
  const after = startOf(query.cursor, scope, (k) => inRange(k, 'T#', range));
  return { planId, ...(await firstPage(trendRows(history, planId, range, query.limit, after), scope)) };
};

/** `GET …/compliance_plans/{planId}/trend?format=csv`: every trend point in the range, oldest first. */
export const exportTrend = (history: HistoryStore, planId: string, range: { from?: string; to?: string }): AsyncGenerator<readonly TrendPoint[]> =>
  rowsOf(trendRows(history, planId, range, HISTORY_EXPORT_PAGE));

/**
 * Whether a plan has any trend point, whatever its time: a deleted plan's history stays readable
 * until it expires, so the trend route answers 404 only for a plan id with neither.
 */
export const hasTrend = async (history: HistoryStore, planId: string): Promise<boolean> => {
  const pages = trendRows(history, planId, {}, 1);
  const { value } = await pages.next();
  await pages.return(undefined);
  return ((value as RowPage<TrendPoint> | undefined)?.rows.length ?? 0) > 0;
};

/** A device's points' row pages, newest first. */
export const deviceRows = (history: HistoryStore, planId: string, device: string, range: { from?: string; to?: string }, limit: number, after?: string) =>
  history.devicePages(planId, device, { ...range, limit, ...(after ? { after } : {}) });

/** A device's state in a plan; a 404 when it has no history there. */
const deviceStateOf = async (history: HistoryStore, planId: string, device: string) => {
  const state = await history.deviceState(planId, device);
  if (!state) throw new NotFound(`Device '${device}' has no history in compliance plan '${planId}' (never checked by a completed batch of it, or expired).`);
  return state;
};

/** `GET …/compliance_plans/{planId}/devices/{device}`: a page of the device's points and its rules' states; 404 when it has no history. */
export const readDeviceHistory = async (
  history: HistoryStore,
  planId: string,
  device: string,
  query: { readonly from?: string; readonly to?: string; readonly limit: number; readonly cursor?: string },
): Promise<DeviceHistory> => {
  const range = { ...(query.from ? { from: query.from } : {}), ...(query.to ? { to: query.to } : {}) };
  const scope = scopeOf(['device', planId, device, range]);
  const after = startOf(query.cursor, scope, (k) => inRange(k, 'H#', range));
  const state = await deviceStateOf(history, planId, device);
  const page = await firstPage(deviceRows(history, planId, device, range, query.limit, after), scope);
  return { planId, device, points: page.items, rules: shownRules(state.rules), ...(page.next ? { next: page.next } : {}) };
};

/** `GET …/compliance_plans/{planId}/devices/{device}?format=csv`: every point of the device in the range, newest first; a 404 first when it has no history. */
export const exportDeviceHistory = async (
  history: HistoryStore,
  planId: string,
  device: string,
  range: { from?: string; to?: string },
): Promise<AsyncGenerator<readonly DevicePoint[]>> => {
  await deviceStateOf(history, planId, device);
  return rowsOf(deviceRows(history, planId, device, range, HISTORY_EXPORT_PAGE));
};
