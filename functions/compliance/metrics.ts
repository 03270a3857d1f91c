/**
 * Compliance metrics (EMF, namespace of functions/platform/metrics.ts): devices checked by
 * grade, config fetches that failed by adapter, batches ended by status. The stack alarms on
 * `ComplianceBatches` with `Status=failed`.
 */
import { metrics, type Metrics } from '../platform/metrics.js';
import type { Grade } from './grading.js';

/** One device checked (`ComplianceDevicesChecked`, by grade and in total). */
export const recordDeviceChecked = (grade: Grade, sink: Metrics = metrics): void => {
  sink.add('ComplianceDevicesChecked', 'Count', 1, { Grade: grade }, [[]]);
};

/** One config fetch that gave no configuration (`ComplianceFetchFailures`, by adapter and in total). */
export const recordFetchFailure = (adapter: string, _kind: string, sink: Metrics = metrics): void => {
  sink.add('ComplianceFetchFailures', 'Count', 1, { Adapter: adapter }, [[]]);
};

/** One batch ended (`ComplianceBatches`, by status). */
export const recordBatchEnd = (outcome: { readonly status: 'completed' | 'failed' }, sink: Metrics = metrics): void => {
  sink.add('ComplianceBatches', 'Count', 1, { Status: outcome.status });
};
