/**
 * The columns of a batch's reports as CSV (`GET …/batches/{batchId}/reports?format=csv`): one
 * row per device, its grade and rule totals flat; the issues and the diff stay in the JSON
 * report (`GET …/compliance_reports/{reportId}`), which `reportId` names.
 */
import type { CsvColumn } from '../platform/csv.js';
import type { Report } from './model.js';

export const REPORT_COLUMNS: readonly CsvColumn<Report>[] = [
  { name: 'reportId', value: (r) => r.reportId },
  { name: 'device', value: (r) => r.device },
  { name: 'node', value: (r) => r.node },
  { name: 'grade', value: (r) => r.grade },
  { name: 'score', value: (r) => r.score },
  { name: 'errors', value: (r) => r.totals.errors },
  { name: 'warnings', value: (r) => r.totals.warnings },
  { name: 'infos', value: (r) => r.totals.infos },
  { name: 'passes', value: (r) => r.totals.passes },
  // Rules an exemption took out of the score and the totals, passing or not.
  { name: 'exempted', value: (r) => (r.exempted?.length ?? 0) + (r.exemptedOmitted ?? 0) },
  // What came of the sync step (`in-sync`, `out-of-sync`, …); empty when none ran.
  { name: 'sync', value: (r) => r.sync?.result },
  { name: 'configId', value: (r) => r.configId },
  { name: 'checkedAt', value: (r) => r.checkedAt },
  // Grade `error` only: why the configuration could not be checked.
  { name: 'reason', value: (r) => r.reason },
];
