/**
 * A completed compliance batch of many devices, written with the compliance store's own
 * writes (the ones the batch engine makes: `create`, `putReports` per chunk, `countChunk`,
 * `finish`), so the API serves it exactly as it serves a batch that ran. Generated at test
 * time, never committed: the grades, scores and issues follow from each device's position.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GRADES, type Grade } from '../../functions/compliance/grading.js';
import { addCounts, emptyCounts, type ChunkCounts, type ReportIssue } from '../../functions/compliance/model.js';
import { CHUNK_SIZE, newBatchId } from '../../functions/compliance/service.js';
import { ComplianceStore, type ChunkReport, type DeviceReport } from '../../functions/compliance/store.js';

/** The tree version and adapter the batch claims to have checked against. */
export interface LargeBatchSpec {
  readonly devices: number;
  readonly treeId: string;
  readonly version: string;
  readonly adapterId: string;
  /** When the batch started; it finished an hour later. */
  readonly started: Date;
}

/** The batch written, and what a reader must find in it. */
export interface LargeBatch {
  readonly batchId: string;
  /** Every device's name and grade, by position in the batch. */
  readonly devices: readonly { readonly device: string; readonly grade: Grade }[];
  readonly grades: Readonly<Record<Grade, number>>;
}

/** Device `n`'s name: sites of 100 devices each, so a search by site matches 100 names. */
export const largeBatchDevice = (n: number): string => `site${String(Math.floor(n / 100)).padStart(3, '0')}-sw${String(n % 100).padStart(2, '0')}`;

/** Device `n`'s grade: mostly pass, every grade present, none in a pattern a sort would hide. */
export const largeBatchGrade = (n: number): Grade =>
  n % 7 === 3 ? 'fail' : n % 11 === 5 ? 'review' : n % 97 === 13 ? 'error' : n % 89 === 8 ? 'out-of-sync' : n % 101 === 50 ? 'kept' : 'pass';

const RULES = 10;

const issue = (n: number): ReportIssue => ({
  ruleId: 'ntp-servers',
  node: 'base',
  path: '/tailf-ned-cisco-ios:ntp/server/peer-list',
  severity: 'error',
  mode: 'exact',
  message: 'The NTP servers differ from the standard.',
  expected: ['10.0.0.1', '10.0.0.2'],
  actual: ['10.0.0.1', `192.0.2.${n % 250}`],
});

/** The report device `n` gets: its grade decides the rest. */
const reportOf = (batchId: string, spec: LargeBatchSpec, n: number, checkedAt: string): DeviceReport => {
  const grade = largeBatchGrade(n);
  const head = { batchId, device: largeBatchDevice(n), treeId: spec.treeId, version: spec.version, node: 'base', grade, checkedAt };
  if (grade === 'error')
    return { ...head, reason: 'The orchestrator does not know the device.', totals: { errors: 0, warnings: 0, infos: 0, passes: 0 }, issues: [] };
  if (grade === 'out-of-sync') {
    const totals = { errors: 0, warnings: 0, infos: 0, passes: 0 };
    return {
      ...head,
      totals,
      issues: [],
      sync: { mode: 'check', result: 'out-of-sync' },
      diff: `-  hostname ${head.device}\n+  hostname ${head.device}-old\n`,
    };
  }
  const failed = grade === 'fail' ? 2 : grade === 'review' ? 1 : 0;
  const score = grade === 'fail' ? 60 : grade === 'review' ? 85 : 100;
  return {
    ...head,
    score,
    totals: { errors: grade === 'fail' ? failed : 0, warnings: grade === 'review' ? 1 : 0, infos: 0, passes: RULES - failed },
    issues: grade === 'fail' || grade === 'review' ? [issue(n)] : [],
  };
};

/** A chunk's counts, as the engine tallies them device by device. */
const countsOf = (reports: readonly ChunkReport[]): ChunkCounts =>
  reports.reduce<ChunkCounts>((sum, { report }) => {
    const one = emptyCounts();
    return addCounts(sum, { devices: 1, grades: { ...one.grades, [report.grade]: 1 }, totals: report.totals });
  }, emptyCounts());

/** Writes a completed batch of `spec.devices` devices in chunks of the engine's size. */
export const writeLargeBatch = async (client: DynamoDBDocumentClient, table: string, spec: LargeBatchSpec): Promise<LargeBatch> => {
  const store = new ComplianceStore(client, table);
  const batchId = newBatchId();
  const positions = Array.from({ length: spec.devices }, (_, n) => n);
  const chunks = Array.from({ length: Math.ceil(spec.devices / CHUNK_SIZE) }, (_, c) => positions.slice(c * CHUNK_SIZE, (c + 1) * CHUNK_SIZE));
  const started = spec.started.toISOString();
  const finished = new Date(spec.started.getTime() + 3_600_000).toISOString();
  const expiresAt = Math.floor(spec.started.getTime() / 1000) + 90 * 86_400;
  await store.create(
    {
      batchId,
      treeId: spec.treeId,
      version: spec.version,
      adapterId: spec.adapterId,
      total: spec.devices,
      started,
      chunks: chunks.length,
      concurrency: 10,
      sync: 'check',
      expiresAt,
    },
    { variables: {}, rulesByNode: {}, nodes: ['base'] },
    chunks.map((chunk) => chunk.map((n) => ({ device: largeBatchDevice(n), node: 'base' }))),
  );
  let total = emptyCounts();
  for (const [index, chunk] of chunks.entries()) {
    const reports = chunk.map((n, position) => ({ position, report: reportOf(batchId, spec, n, finished) }));
    await store.putReports(batchId, { chunk: index, attempt: 1 }, reports, expiresAt);
    const counts = countsOf(reports);
    await store.countChunk(batchId, index, counts);
    total = addCounts(total, counts);
  }
  await store.finish(batchId, 'completed', finished, total);
  const devices = positions.map((n) => ({ device: largeBatchDevice(n), grade: largeBatchGrade(n) }));
  const grades = Object.fromEntries(GRADES.map((g) => [g, devices.filter((d) => d.grade === g).length])) as Record<Grade, number>;
  return { batchId, devices, grades };
};
