/**
 * A backup batch's work on one device: fetch its configuration as a compliance batch does
 * (check.ts: same relay, gate, retries and failure rules) and keep it in the configuration
 * history, grading nothing. A configuration that could not be fetched gets a report with grade
 * `error` and the reason; a kept one a report with grade `kept` naming the configuration. A
 * history that cannot store it throws: the chunk fails and runs again, the device is never
 * reported `error` for it.
 */
import type { ConfigArchive } from '../configs/model.js';
import { logger } from '../platform/logger.js';
import type { JsonValue } from '../trees/config-model.js';
import { errorReport, fetchConfig, isoTimestamp, type CheckDeps, type FetchTarget } from './check.js';
import type { DeviceReport } from './store.js';

/** The backup batch a device is kept for. */
export interface BackupTarget extends FetchTarget {
  /** When the batch started (ISO 8601): names the takes, so a device kept again after a crash replaces its entry. */
  readonly started: string;
}

export interface BackupDeps extends CheckDeps {
  readonly archive: ConfigArchive;
}

const NO_RULES = { errors: 0, warnings: 0, infos: 0, passes: 0 } as const;

/** Fetches one device's configuration and keeps it; returns its report (not yet stored). */
export const backupDevice = async (device: string, target: BackupTarget, deps: BackupDeps): Promise<DeviceReport> => {
  const fetched = await fetchConfig(device, target, deps);
  const head = { batchId: target.batchId, device };
  if (!('config' in fetched)) {
    deps.onFetchFailure?.(target.adapterId, fetched.kind);
    return errorReport(head, fetched, deps);
  }
  const takenAt = deps.now();
  let configId: string;
  try {
    ({ configId } = await deps.archive.record({
      adapterId: target.adapterId,
      device,
      config: fetched.config as JsonValue,
      source: { kind: 'backup', batchId: target.batchId, batchStarted: target.started },
      takenAt,
    }));
  } catch (error) {
    logger.error('backup could not keep a configuration; the chunk fails', { batchId: target.batchId, device, error });
    throw error;
  }
  return { ...head, grade: 'kept', totals: NO_RULES, issues: [], configId, checkedAt: isoTimestamp(takenAt) };
};
