/** The read side of compliance: a batch, a page of its reports, one report. */
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { NotFound } from '../platform/problem.js';
import { batchDeadline, PAST_DEADLINE_REASON } from './deadline.js';
import { endBatchFailed } from './ended.js';
import type { Grade } from './grading.js';
import type { Batch, Report } from './model.js';
import { REPORTS_SK_PATTERN, type ComplianceStore, type ReportCursor } from './store.js';

/** Reports per page: default and most. */
export const REPORT_PAGE_LIMIT = { default: 50, max: 200 } as const;

/**
 * A batch as it stands; `undefined` when there is none. One still `running` past its deadline
 * ({@link batchDeadline}) cannot run any more: it is ended `failed` here (once, whoever reads it
 * first) and answered so.
 */
export const currentBatch = async (store: ComplianceStore, batchId: string, now: Date = new Date()): Promise<Batch | undefined> => {
  const batch = await store.getBatch(batchId);
  if (batch?.status !== 'running' || now.getTime() <= batchDeadline(batch.started)) return batch;
  const ended = await endBatchFailed(store, { batchId, finished: now.toISOString(), reason: PAST_DEADLINE_REASON, foundBy: 'read' });
  // Not running any more when written: another reader or the sweep ended it first.
  return ended ?? (await store.getBatch(batchId)) ?? batch;
};

/** {@link currentBatch}, a 404 when there is none. */
export const readBatch = async (store: ComplianceStore, batchId: string, now: Date = new Date()): Promise<Batch> => {
  const batch = await currentBatch(store, batchId, now);
  if (!batch) throw new NotFound(`No compliance batch has the id '${batchId}'.`);
  return batch;
};

export const readReport = async (store: ComplianceStore, reportId: string): Promise<Report> => {
  const report = await store.getReport(reportId);
  if (!report) throw new NotFound(`No compliance report has the id '${reportId}'.`);
  return report;
};

/**
 * A page of a batch's reports (also while it runs), optionally of one grade: `{ items, next? }`.
 * The cursor names the batch and the grade it was issued for: reused elsewhere it is a 400.
 */
export const listBatchReports = async (
  store: ComplianceStore,
  batchId: string,
  query: { readonly grade?: Grade; readonly limit: number; readonly cursor?: string },
): Promise<{ items: readonly Report[]; next?: string }> => {
  let from: ReportCursor | undefined;
  if (query.cursor !== undefined) {
    const fields = decodeCursor(
      query.cursor,
      ['b', 'g', 'sk', 'n'],
      (f) =>
        f.b === batchId &&
        f.g === (query.grade ?? '*') &&
        REPORTS_SK_PATTERN.test(f.sk) &&
        (query.grade === undefined || f.sk.startsWith(`R#${query.grade}#`)) &&
        /^(0|[1-9][0-9]{0,3})$/.test(f.n),
    );
    if (!fields) throw invalidCursor();
    from = { sk: fields.sk, skip: Number(fields.n) };
  }
  await readBatch(store, batchId);
  const page = await store.listReports(batchId, { limit: query.limit, ...(query.grade ? { grade: query.grade } : {}), ...(from ? { from } : {}) });
  return {
    items: page.items,
    ...(page.next ? { next: encodeCursor({ b: batchId, g: query.grade ?? '*', sk: page.next.sk, n: String(page.next.skip) }) } : {}),
  };
};

/** Reports per store read of an export: a few packs (see `listReports`), a bounded page in memory. */
export const REPORT_EXPORT_PAGE = 500;

/**
 * Every report of a batch (optionally of one grade), page by page as the store gives them: the
 * rows of a CSV export. The batch is read first, so an unknown batch is a 404 before any row.
 */
export const batchReportPages = async (store: ComplianceStore, batchId: string, grade?: Grade): Promise<AsyncIterable<readonly Report[]>> => {
  await readBatch(store, batchId);
  return (async function* () {
    let from: ReportCursor | undefined;
    do {
      const page = await store.listReports(batchId, { limit: REPORT_EXPORT_PAGE, ...(grade ? { grade } : {}), ...(from ? { from } : {}) });
      yield page.items;
      from = page.next;
    } while (from);
  })();
};
