/**
 * The compliance read routes through their real handlers against DynamoDB Local: a batch and
 * its reports written by the store the engine uses, read back while the batch runs and after;
 * every status of each route.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { emptyCounts, type Report } from '../../functions/compliance/model.js';
import { ComplianceStore, type DeviceReport } from '../../functions/compliance/store.js';
import { encodeCursor } from '../../functions/platform/cursor.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** When the batch started: a minute before the tests, so that it is still running when they read it. */
const STARTED = new Date(Date.now() - 60_000).toISOString();
const BATCH = 'abcdef0123456789abcdef01';
let store: ComplianceStore;
let getBatch: Handler;
let listReports: Handler;
let getReport: Handler;
let stored: Report[];

const report = (device: string, grade: Report['grade']): DeviceReport => ({
  batchId: BATCH,
  device,
  treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
  version: 'v1',
  node: 'base',
  grade,
  ...(grade === 'error' ? { reason: 'The orchestrator does not know the device.' } : { score: grade === 'pass' ? 100 : 50 }),
  totals: { errors: grade === 'fail' ? 1 : 0, warnings: 0, infos: 0, passes: 1 },
  issues: [],
  checkedAt: '2026-11-23T10:00:00.000Z',
});

const call = (handler: Handler, resource: string, pathParameters: Record<string, string>, query?: Record<string, string>) =>
  invoke(handler, apiEvent({ method: 'GET', resource, pathParameters, ...(query ? { query } : {}) }), lambdaContext(10_000));

const BATCH_PATH = '/configuration_manager/compliance_reports/batches/{batchId}';
const REPORTS_PATH = `${BATCH_PATH}/reports`;
const REPORT_PATH = '/configuration_manager/compliance_reports/{reportId}';

beforeAll(async () => {
  const tables = await createTables();
  store = new ComplianceStore(documentClient, tables['compliance']);
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  await store.create(
    {
      batchId: BATCH,
      treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
      version: 'v1',
      adapterId: 'lab-nso',
      total: 5,
      // A batch started a minute ago: far from its deadline, after which a read ends it failed.
      started: STARTED,
      chunks: 1,
      concurrency: 10,
      expiresAt,
    },
    { variables: {}, rulesByNode: {}, nodes: ['base'] },
    [['d1', 'd2', 'd3', 'd4', 'd5'].map((device) => ({ device, node: 'base' }))],
  );
  stored = await store.putReports(
    BATCH,
    { chunk: 0, attempt: 1 },
    [
      { position: 0, report: report('d1', 'pass') },
      { position: 1, report: report('d2', 'fail') },
      { position: 2, report: report('d3', 'pass') },
    ],
    expiresAt,
  );
  vi.resetModules();
  getBatch = (await import('../../functions/compliance/handlers/get-batch.js')).handler as Handler;
  listReports = (await import('../../functions/compliance/handlers/list-reports.js')).handler as Handler;
  getReport = (await import('../../functions/compliance/handlers/get-report.js')).handler as Handler;
});

describe('compliance read routes', () => {
  it('shows a running batch and the reports written so far, then the completed batch', async () => {
    const running = await call(getBatch, BATCH_PATH, { batchId: BATCH });
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ batchId: BATCH, status: 'running', total: 5, done: 0, started: STARTED });
    expect(running.body.finished).toBeUndefined();

    const page1 = await call(listReports, REPORTS_PATH, { batchId: BATCH }, { limit: '2' });
    expect(page1.status).toBe(200);
    expect(page1.body.items).toHaveLength(2);
    const page2 = await call(listReports, REPORTS_PATH, { batchId: BATCH }, { limit: '2', cursor: page1.body.next });
    const seen = [...page1.body.items, ...page2.body.items].map((r: Report) => r.device).sort();
    expect(seen).toEqual(['d1', 'd2', 'd3']);
    expect(page2.body.next).toBeUndefined();

    const failed = await call(listReports, REPORTS_PATH, { batchId: BATCH }, { grade: 'fail' });
    expect(failed.body.items.map((r: Report) => r.device)).toEqual(['d2']);

    const counts = { ...emptyCounts(), devices: 5, grades: { pass: 2, review: 0, fail: 1, error: 2, 'out-of-sync': 0, kept: 0 } };
    await store.countChunk(BATCH, 0, counts);
    await store.countChunk(BATCH, 0, counts); // counted once
    await store.finish(BATCH, 'completed', '2026-11-23T10:05:00.000Z', counts);
    const done = await call(getBatch, BATCH_PATH, { batchId: BATCH });
    expect(done.body).toMatchObject({
      status: 'completed',
      done: 5,
      grades: { pass: 2, review: 0, fail: 1, error: 2, 'out-of-sync': 0, kept: 0 },
      finished: '2026-11-23T10:05:00.000Z',
    });
  });

  it('answers one report by id, and 404 for an unknown one', async () => {
    const d2 = stored.find((r) => r.device === 'd2')!;
    const found = await call(getReport, REPORT_PATH, { reportId: d2.reportId });
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ reportId: d2.reportId, ...report('d2', 'fail') });
    // Well-formed ids that name no report: another batch, a pack that does not exist, a position the pack does not hold.
    for (const reportId of [d2.reportId.replace(BATCH, 'f'.repeat(24)), d2.reportId.replace(/-f/, '-p'), `${d2.reportId.slice(0, -4)}0009`]) {
      const missing = await call(getReport, REPORT_PATH, { reportId });
      expect(missing.status, reportId).toBe(404);
      expect(missing.contentType).toBe('application/problem+json');
    }
  });

  it('answers 404 for an unknown batch and 400 for malformed ids, grades and cursors', async () => {
    expect((await call(getBatch, BATCH_PATH, { batchId: 'f'.repeat(24) })).status).toBe(404);
    expect((await call(listReports, REPORTS_PATH, { batchId: 'f'.repeat(24) })).status).toBe(404);
    expect((await call(getBatch, BATCH_PATH, { batchId: 'XYZ' })).status).toBe(400);
    expect((await call(getReport, REPORT_PATH, { reportId: 'not-a-report' })).status).toBe(400);
    expect((await call(listReports, REPORTS_PATH, { batchId: BATCH }, { grade: 'great' })).status).toBe(400);
    expect((await call(listReports, REPORTS_PATH, { batchId: BATCH }, { cursor: 'bm9wZQ' })).status).toBe(400);
    // A cursor of the unfiltered list is refused for the `fail` list (it names another listing).
    const first = await call(listReports, REPORTS_PATH, { batchId: BATCH }, { limit: '1' });
    expect((await call(listReports, REPORTS_PATH, { batchId: BATCH }, { grade: 'fail', cursor: first.body.next })).status).toBe(400);
    // Cursors this API never issues: a pack of another grade than the list's, a position
    // that is not a number or out of range, a key outside the reports, another batch.
    const forged = (grade: string, sk: string, n: string, b = BATCH) => encodeCursor({ b, g: grade, sk, n });
    expect((await call(listReports, REPORTS_PATH, { batchId: BATCH }, { grade: 'fail', cursor: forged('fail', 'R#pass#000000#01#0000', '0') })).status).toBe(
      400,
    );
    expect((await call(listReports, REPORTS_PATH, { batchId: BATCH }, { grade: 'fail', cursor: forged('fail', 'R#fail#000000#01#0001', '0') })).status).toBe(
      200,
    );
    for (const cursor of [
      forged('*', 'R#pass#000000#01#0000', '-1'),
      forged('*', 'R#pass#000000#01#0000', '01'),
      forged('*', 'R#pass#000000#01#0000', '10000'),
      forged('*', 'R#pass#000000#01#0000', '1e3'),
      forged('*', 'META', '0'),
      forged('*', 'R#great#000000#01#0000', '0'),
      forged('*', 'R#pass#000000#01#0000', '0', 'f'.repeat(24)),
    ]) {
      const refused = await call(listReports, REPORTS_PATH, { batchId: BATCH }, { cursor });
      expect(refused.status, Buffer.from(cursor, 'base64url').toString()).toBe(400);
    }
    // A well-formed cursor of the list still works: the page after the first report.
    const second = await call(listReports, REPORTS_PATH, { batchId: BATCH }, { limit: '1', cursor: first.body.next });
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].reportId).not.toBe(first.body.items[0].reportId);
  });
});
