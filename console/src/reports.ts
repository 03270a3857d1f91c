/**
 * A batch's device reports, read page by page and kept for the session, so the device page opened
 * from the batch table shows at once. Only the newest few batches are kept.
 */
import { readAll } from './api.js';
import type { Report } from './types.js';

const KEPT = 3;
const cache = new Map<string, { reports: Report[]; complete: boolean }>();

const path = (batchId: string) => `/configuration_manager/compliance_reports/batches/${encodeURIComponent(batchId)}/reports`;

/**
 * Reads every report of a batch, calling `onProgress` after each page with all read so far; a
 * finished batch read before is answered from memory.
 */
export const batchReports = async (
  batchId: string,
  finished: boolean,
  onProgress: (reports: readonly Report[], more: boolean) => void,
  signal?: AbortSignal,
): Promise<Report[]> => {
  const kept = cache.get(batchId);
  if (kept?.complete && finished) {
    onProgress(kept.reports, false);
    return kept.reports;
  }
  const reports = await readAll<Report>(path(batchId), { limit: '200' }, { onPage: onProgress, ...(signal ? { signal } : {}) });
  if (!signal?.aborted) {
    cache.delete(batchId);
    cache.set(batchId, { reports, complete: finished });
    while (cache.size > KEPT) cache.delete(cache.keys().next().value as string);
  }
  return reports;
};

/** One device's report in a batch: from memory when the batch was read, else by reading its pages until found. */
export const deviceReport = async (batchId: string, device: string, signal?: AbortSignal): Promise<Report | undefined> => {
  const kept = cache.get(batchId)?.reports.find((report) => report.device === device);
  if (kept) return kept;
  let found: Report | undefined;
  const controller = new AbortController();
  signal?.addEventListener('abort', () => controller.abort());
  await readAll<Report>(
    path(batchId),
    { limit: '200' },
    {
      signal: controller.signal,
      onPage: (reports) => {
        found = reports.find((report) => report.device === device);
        if (found) controller.abort();
      },
    },
  );
  return found;
};
