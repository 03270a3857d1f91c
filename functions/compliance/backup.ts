/**
 * A backup batch's work on one device: fetch its configuration as a compliance batch does
 * (check.ts: same relay, gate, retries and failure rules) and keep it in the configuration
 * history, grading nothing. A configuration that could not be fetched gets a report with grade
 * `error` and the reason; a kept one a report with grade `kept` naming the configuration. A
 * history that cannot store it throws: the chunk fails and runs again, the device is never
 * reported `error` for it.
 */
import type { ConfigArchive, ConfigSource } from '../configs/model.js';
import { archived, errorReport, fetchConfig, isoTimestamp, type CheckDeps, type FetchTarget } from './check.js';
import type { DeviceReport } from './store.js';

/** The backup batch a device is kept for. */
export interface BackupTarget extends FetchTarget {
  /** The batch as the history names its takes: a device kept again after a crash replaces its entry. */
  readonly source: ConfigSource;
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
  const { configId } = await archived(fetched.config, undefined, device, target, deps);
  return { ...head, grade: 'kept', totals: NO_RULES, issues: [], ...(configId ? { configId } : {}), checkedAt: isoTimestamp(deps.now()) };
};
