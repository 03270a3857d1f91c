/**
 * CSV section of `npm run bench` (also `npx tsx bench/csv-export.ts [small] [large]`): the peak
 * memory of exporting a batch's reports as CSV through the streaming handler stack (middy's
 * streaming mode, the HTTP core, `batchReportPages`, `csvResponse`), for a batch of `small` and
 * of `large` devices (default 5,000 and 50,000). The export holds one store page at a time, so
 * the peak must not grow with the batch.
 *
 * The store is a stand-in that makes each page of reports when it is asked for it (as DynamoDB
 * answers a Query page): the figure is the function's own memory, without DynamoDB Local's
 * time to hold 50,000 reports. The client is a sink that counts bytes as it takes them, as a
 * download does. Memory is sampled (heap used, RSS) as every chunk is written, after a full
 * collection before each run (`--expose-gc`, which `bench/run.ts` passes).
 */
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Batch, Report } from '../functions/compliance/model.js';
import { batchReportPages } from '../functions/compliance/read.js';
import { REPORT_COLUMNS } from '../functions/compliance/report-columns.js';
import type { ComplianceStore, ReportCursor } from '../functions/compliance/store.js';
import { csvResponse } from '../functions/platform/csv.js';
import { emptyCounts } from '../functions/compliance/model.js';
import { installLambdaStreaming, invokeStreaming, responseStream } from '../tools/local/lambda-worker.js';
import { apiEvent, lambdaContext } from '../tools/simulators/api-events.js';

/** One measured export. */
export interface CsvRun {
  readonly devices: number;
  readonly rows: number;
  readonly bytes: number;
  readonly peakHeapBytes: number;
  readonly peakRssBytes: number;
  readonly ms: number;
}

const BATCH_ID = 'bec0ffee0123456789abcdef';

/** A report as a batch writes one, with a few issues (the CSV leaves them out; the store still reads them). */
const reportOf = (i: number): Report => ({
  reportId: `${BATCH_ID}-p${String(i).padStart(16, '0')}`,
  batchId: BATCH_ID,
  device: `edge-${String(i).padStart(6, '0')}.dc${i % 7}.example.net`,
  treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
  version: 'v12',
  node: i % 2 ? 'base/edge' : 'base/core',
  grade: i % 5 === 0 ? 'fail' : 'pass',
  score: i % 5 === 0 ? 72 : 100,
  totals: { errors: i % 5 === 0 ? 3 : 0, warnings: 1, infos: 2, passes: 40 },
  issues: Array.from({ length: i % 5 === 0 ? 3 : 0 }, (_, k) => ({
    ruleId: `rule-${k}`,
    node: 'base/edge',
    path: `/ncs:devices/device{edge-${i}}/config/interface${k}`,
    severity: 'error',
    message: 'expected value missing',
  })) as unknown as Report['issues'],
  sync: { mode: 'check', result: 'in-sync' },
  configId: `${(i * 2654435761).toString(16).padStart(8, '0')}`.repeat(8).slice(0, 64),
  checkedAt: '2026-11-23T10:00:00.000Z',
});

/** A store whose reports of one batch are made page by page, when asked for. */
const storeOf = (devices: number): ComplianceStore => {
  const batch: Batch = {
    batchId: BATCH_ID,
    kind: 'compliance',
    adapterId: 'lab-nso',
    status: 'completed',
    total: devices,
    done: devices,
    totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
    grades: emptyCounts().grades,
    sync: 'check',
    started: '2026-11-23T09:00:00.000Z',
    finished: '2026-11-23T10:00:00.000Z',
  } as Batch;
  return {
    getBatch: async () => batch,
    listReports: async (_batchId: string, options: { limit: number; from?: ReportCursor }) => {
      const start = options.from ? Number(options.from.sk) : 0;
      const end = Math.min(devices, start + options.limit);
      const items = Array.from({ length: end - start }, (_, k) => reportOf(start + k));
      return { items, ...(end < devices ? { next: { sk: String(end), skip: 0 } } : {}) };
    },
  } as unknown as ComplianceStore;
};

/** Exports a batch of `devices` reports through the streaming handler stack; samples memory at every chunk. */
export const measureExport = async (devices: number): Promise<CsvRun> => {
  installLambdaStreaming();
  // What the stack sets on the route's function (the roles it lets through); no metrics for a bench.
  process.env['ROUTE_ROLES'] ??= 'admin,apiread';
  process.env['METRICS_DISABLED'] ??= 'true';
  process.env['LOG_LEVEL'] ??= 'warn';
  // Loaded after the runtime's globals exist, as on Lambda.
  const { streamingHttpHandler } = await import('../functions/runtime/streaming-http.js');
  const store = storeOf(devices);
  const handler = streamingHttpHandler({ operation: 'benchCsvExport', timeoutEarlyInMillis: 0 }, async (event) =>
    csvResponse(REPORT_COLUMNS, await batchReportPages(store, (event.pathParameters as { batchId: string }).batchId), 'bench.csv'),
  );
  (globalThis as { gc?: () => void }).gc?.();
  let peakHeap = 0;
  let peakRss = 0;
  let bytes = 0;
  let rows = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  };
  const sink = responseStream((data) => {
    bytes += data.length;
    for (const byte of data) if (byte === 0x0a) rows++;
    sample();
  });
  const event = apiEvent({
    method: 'GET',
    resource: '/configuration_manager/compliance_reports/batches/{batchId}/reports',
    pathParameters: { batchId: BATCH_ID },
    headers: { Accept: 'text/csv' },
  }) as APIGatewayProxyEvent;
  const started = performance.now();
  await invokeStreaming(handler, event, sink, lambdaContext(900_000));
  const ms = performance.now() - started;
  // The header row's line end counts as a line; the metadata has none.
  return { devices, rows: rows - 1, bytes, peakHeapBytes: peakHeap, peakRssBytes: peakRss, ms: Math.round(ms) };
};

/** The last line a run prints: what `bench/run.ts` reads back. */
export const CSV_RESULT_PREFIX = 'CSV_RESULT ';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const sizes = [Number(process.argv[2] ?? 5_000), Number(process.argv[3] ?? 50_000)];
  const runs: CsvRun[] = [];
  for (const devices of sizes) {
    const run = await measureExport(devices);
    if (run.rows !== devices) throw new Error(`bench: exported ${run.rows} rows of ${devices}`);
    console.error(
      `csv: ${devices} devices, ${run.bytes} B in ${run.ms} ms: peak heap ${(run.peakHeapBytes / 2 ** 20).toFixed(1)} MiB, peak RSS ${(run.peakRssBytes / 2 ** 20).toFixed(1)} MiB`,
    );
    runs.push(run);
  }
  console.log(`${CSV_RESULT_PREFIX}${JSON.stringify(runs)}`);
}
