/**
 * The columns of a plan history's lists as CSV (`?format=csv`): the batch list, a batch's delta,
 * a plan's trend and a device's points. Counts objects are flat, one column per member, named in
 * camelCase (`out-of-sync` → `outOfSync`, `newly-failing` → `newlyFailing`) so that every header
 * is a plain identifier in a spreadsheet or a dataframe.
 */
import type { CsvColumn } from '../platform/csv.js';
import { GRADES, type RuleTotals } from './grading.js';
import { DELTA_CHANGES, type DeltaCounts, type DeltaRow, type DevicePoint, type TrendPoint } from './history-model.js';
import type { Batch, GradeCounts } from './model.js';

/** `out-of-sync` → `outOfSync`. */
const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** One column per grade: how many devices got it. */
const gradeColumns = <Row>(grades: (row: Row) => GradeCounts): CsvColumn<Row>[] => GRADES.map((g) => ({ name: camel(g), value: (row: Row) => grades(row)[g] }));

/** One column per rule total. */
const totalColumns = <Row>(totals: (row: Row) => RuleTotals): CsvColumn<Row>[] =>
  (['errors', 'warnings', 'infos', 'passes'] as const).map((t) => ({ name: t, value: (row: Row) => totals(row)[t] }));

/** One column per delta class: its device count; empty cells when the row has no delta. */
const deltaColumns = <Row>(delta: (row: Row) => DeltaCounts | undefined): CsvColumn<Row>[] =>
  DELTA_CHANGES.map((c) => ({ name: camel(c), value: (row: Row) => delta(row)?.[c] }));

/** `GET …/compliance_reports/batches?format=csv`: one row per batch, newest first. */
export const BATCH_COLUMNS: readonly CsvColumn<Batch>[] = [
  { name: 'batchId', value: (b) => b.batchId },
  { name: 'kind', value: (b) => b.kind },
  { name: 'planId', value: (b) => b.planId },
  { name: 'treeId', value: (b) => b.treeId },
  { name: 'version', value: (b) => b.version },
  { name: 'adapterId', value: (b) => b.adapterId },
  { name: 'status', value: (b) => b.status },
  { name: 'sync', value: (b) => b.sync },
  { name: 'started', value: (b) => b.started },
  { name: 'finished', value: (b) => b.finished },
  { name: 'total', value: (b) => b.total },
  { name: 'done', value: (b) => b.done },
  ...gradeColumns<Batch>((b) => b.grades),
  ...totalColumns<Batch>((b) => b.totals),
  // Failed batches only: why.
  { name: 'reason', value: (b) => b.reason },
];

/** `GET …/batches/{batchId}/delta?format=csv`: one row per device that moved, by class then device. */
export const DELTA_COLUMNS: readonly CsvColumn<DeltaRow>[] = [
  { name: 'device', value: (r) => r.device },
  { name: 'change', value: (r) => r.change },
  { name: 'from', value: (r) => r.from },
  { name: 'to', value: (r) => r.to },
  { name: 'reportId', value: (r) => r.reportId },
];

/** `GET …/compliance_plans/{planId}/trend?format=csv`: one row per batch of the plan, oldest first. */
export const TREND_COLUMNS: readonly CsvColumn<TrendPoint>[] = [
  { name: 'batchId', value: (p) => p.batchId },
  { name: 'kind', value: (p) => p.kind },
  { name: 'status', value: (p) => p.status },
  { name: 'started', value: (p) => p.started },
  { name: 'finished', value: (p) => p.finished },
  { name: 'total', value: (p) => p.total },
  ...gradeColumns<TrendPoint>((p) => p.grades),
  ...totalColumns<TrendPoint>((p) => p.totals),
  ...deltaColumns<TrendPoint>((p) => p.delta),
];

/** `GET …/compliance_plans/{planId}/devices/{device}?format=csv`: one row per batch that graded the device, newest first. */
export const DEVICE_POINT_COLUMNS: readonly CsvColumn<DevicePoint>[] = [
  { name: 'batchId', value: (p) => p.batchId },
  { name: 'at', value: (p) => p.at },
  { name: 'grade', value: (p) => p.grade },
  { name: 'score', value: (p) => p.score },
  // Rule ids hold no space (RULE_ID_PATTERN_SOURCE), so one cell lists them space-separated.
  { name: 'failing', value: (p) => p.failing?.join(' ') },
  { name: 'reportId', value: (p) => p.reportId },
];
