/**
 * A plan history's lists as streamed CSV (DynamoDB Local): the batch list, a batch's delta, a
 * plan's trend and a device's points, each asked by `Accept` and by `format`, longer than two
 * store pages; their problems still JSON; the trend of an unknown plan id a 404.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { emptyDelta } from '../../functions/compliance/history.js';
import { devicePk, pointSk, trendPointItem } from '../../functions/compliance/history-items.js';
import { HISTORY_EXPORT_PAGE } from '../../functions/compliance/history-read.js';
import { HistoryStore } from '../../functions/compliance/history-store.js';
import { ComplianceStore, type NewBatch } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { PlanStore } from '../../functions/plans/store.js';
import { collectStreamed } from '../../tools/local/response-stream.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { conformanceRecorder } from '../support/conformance-recorder.js';

/** More rows than two store pages of an export: the stream must carry rows of three. */
const ROWS = 2 * HISTORY_EXPORT_PAGE + 7;
const PLAN = 'c0ffee0000000000000000a1';
/** A deleted plan: no plan item, its trend still kept. */
const DELETED = 'c0ffee0000000000000000a2';
/** A plan with no batch yet. */
const FRESH = 'c0ffee0000000000000000a3';
const NOBODY = 'c0ffee0000000000000000a4';
const TREE = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const DELTA_BATCH = 'd0000000000000000000000d';
const RUNNING = 'e0000000000000000000000e';
const DEVICE = '=cmd|calc';
const EXPIRES = 2_000_000_000;
const id = (n: number) => n.toString(16).padStart(24, '0');
const at = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 3_600_000).toISOString();
const grades = (n: number) => ({ pass: n, review: 1, fail: 2, error: 0, 'out-of-sync': 3, kept: 0 });
const totals = { errors: 4, warnings: 5, infos: 6, passes: 7 };

const handlers: Record<string, unknown> = {};
const ROUTES = {
  batches: { load: () => import('../../functions/compliance/handlers/list-batches.js'), resource: '/configuration_manager/compliance_reports/batches' },
  delta: {
    load: () => import('../../functions/compliance/handlers/get-delta.js'),
    resource: '/configuration_manager/compliance_reports/batches/{batchId}/delta',
  },
  trend: { load: () => import('../../functions/plans/handlers/get-trend.js'), resource: '/configuration_manager/compliance_plans/{planId}/trend' },
  device: {
    load: () => import('../../functions/plans/handlers/get-device-history.js'),
    resource: '/configuration_manager/compliance_plans/{planId}/devices/{device}',
  },
} as const;
type RouteName = keyof typeof ROUTES;

const request = (route: RouteName, pathParameters: Record<string, string>, query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  apiEvent({ method: 'GET', resource: ROUTES[route].resource, pathParameters, query, headers });

/** The records of a CSV body (no cell here holds a line break). */
const records = (body: string) => body.split('\r\n').slice(0, -1);

beforeAll(async () => {
  const tables = await createTables();
  const store = new ComplianceStore(documentClient, tables['compliance']);
  const history = new HistoryStore(documentClient, tables['compliance'], store);

  // ROWS batches of the plan, an hour apart, and one running batch of it (no delta).
  const batch = (batchId: string, started: string): NewBatch => ({
    batchId,
    treeId: TREE,
    version: 'v1',
    planId: PLAN,
    adapterId: 'lab-nso',
    total: 1,
    started,
    chunks: 1,
    concurrency: 1,
    expiresAt: EXPIRES,
  });
  for (let n = 0; n < ROWS; n += 25) {
    await Promise.all(Array.from({ length: Math.min(25, ROWS - n) }, (_, i) => store.create(batch(id(n + i + 1), at(n + i)), undefined, [[{ device: 'r1' }]])));
  }
  await store.create(batch(RUNNING, at(ROWS + 1)), undefined, [[{ device: 'r1' }]]);

  // A completed batch of the plan with ROWS delta rows: gone devices, and one newly failing whose name is a formula.
  await store.create(batch(DELTA_BATCH, at(ROWS + 2)), undefined, [[{ device: DEVICE }]]);
  await store.finish(DELTA_BATCH, 'completed', at(ROWS + 3));
  const gone = Array.from({ length: ROWS - 1 }, (_, i) => ({ device: `r${String(i).padStart(5, '0')}`, from: 'pass' as const }));
  await history.putGone(DELTA_BATCH, gone, EXPIRES);
  const checked = {
    device: DEVICE,
    batchId: DELTA_BATCH,
    at: at(ROWS + 3),
    grade: 'fail' as const,
    reportId: `${DELTA_BATCH}-f0000000100000000`,
    score: 40,
    failing: ['ntp.server', 'aaa:1'],
  };
  const state = { batchId: DELTA_BATCH, grade: 'fail' as const, at: checked.at, rules: {} };
  await history.writeDevices(PLAN, DELTA_BATCH, [{ checked, state, change: 'newly-failing', from: 'pass' }], { history: EXPIRES, batch: EXPIRES });
  await history.setDelta(DELTA_BATCH, { counts: { ...emptyDelta(), 'newly-failing': 1, gone: ROWS - 1 }, previousBatchId: id(1) });

  // ROWS trend points of the plan (every other one with its delta), one of the deleted plan.
  const point = (n: number) => ({
    batchId: id(n + 1),
    kind: 'compliance' as const,
    status: 'completed' as const,
    started: at(n),
    finished: at(n + 1),
    total: n + 6,
    grades: grades(n),
    totals,
    ...(n % 2 ? { delta: { 'newly-failing': 1, fixed: 2, changed: 3, new: 4, gone: 5 } } : {}),
  });
  await store.putItems(Array.from({ length: ROWS }, (_, n) => trendPointItem(PLAN, point(n), EXPIRES)));
  await store.putItems([trendPointItem(DELETED, point(0), EXPIRES)]);

  // The formula device's points: one per batch, newest last written.
  await store.putItems(
    Array.from({ length: ROWS - 1 }, (_, n) => ({
      pk: devicePk(PLAN, DEVICE),
      sk: pointSk(at(n), id(n + 1)),
      batchId: id(n + 1),
      at: at(n),
      grade: 'pass',
      score: 100,
      failing: [],
      reportId: `${id(n + 1)}-p0000000100000000`,
      expiresAt: EXPIRES,
    })),
  );

  await new PlanStore(documentClient, tables['compliance'], () => tables['changelog']).create({
    planId: FRESH,
    name: 'fresh',
    treeId: TREE,
    version: 'v1',
    adapterId: 'lab-nso',
    enabled: true,
    createdAt: at(0),
    createdBy: 'test',
    updatedAt: at(0),
    updatedBy: 'test',
    revision: 1,
  });
  vi.resetModules();
  for (const [name, route] of Object.entries(ROUTES)) handlers[name] = (await route.load()).handler;
});

const asHandler = (route: RouteName) => handlers[route] as Parameters<typeof invoke>[0];

/** The CSV answer of a route, asked by `Accept`, and checked to be the same asked by `format`. */
const exported = async (route: RouteName, path: Record<string, string>, query: Record<string, string> = {}) => {
  const byAccept = await collectStreamed(handlers[route], request(route, path, query, { Accept: 'text/csv' }), lambdaContext(30_000));
  const byFormat = await collectStreamed(
    handlers[route],
    request(route, path, { ...query, format: 'csv' }, { Accept: 'application/json' }),
    lambdaContext(30_000),
  );
  for (const { result } of [byAccept, byFormat]) {
    expect(result.statusCode).toBe(200);
    expect(result.headers?.['Content-Type']).toBe('text/csv; charset=utf-8; header=present');
  }
  expect(byFormat.result.body).toBe(byAccept.result.body);
  return { ...byAccept, rows: records(byAccept.result.body) };
};

describe("a plan history's lists as CSV", () => {
  it('exports every batch of the list, newest first, counts flat, over several store pages', async () => {
    const { result, chunks, rows } = await exported('batches', {}, { planId: PLAN });
    expect(result.headers?.['Content-Disposition']).toBe('attachment; filename="batches.csv"');
    expect(rows[0]).toBe(
      'batchId,kind,planId,treeId,version,adapterId,status,sync,started,finished,total,done,pass,review,fail,error,outOfSync,kept,errors,warnings,infos,passes,reason',
    );
    // The header, then a chunk per store page: at least three of rows.
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(rows).toHaveLength(1 + ROWS + 2);
    expect(rows[1]).toBe(`${DELTA_BATCH},compliance,${PLAN},${TREE},v1,lab-nso,completed,none,${at(ROWS + 2)},${at(ROWS + 3)},1,0,0,0,0,0,0,0,0,0,0,0,`);
    expect(rows.at(-1)!.startsWith(`${id(1)},compliance,`)).toBe(true);
  });

  it("applies the list's filters to the export", async () => {
    const { rows } = await exported('batches', {}, { status: 'running', from: at(ROWS - 3) });
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual([RUNNING, id(ROWS), id(ROWS - 1), id(ROWS - 2)]);
  });

  it("exports a delta's rows, the formula device guarded, by class then device", async () => {
    const { result, rows } = await exported('delta', { batchId: DELTA_BATCH });
    expect(result.headers?.['Content-Disposition']).toBe(`attachment; filename="${DELTA_BATCH}-delta.csv"`);
    expect(rows[0]).toBe('device,change,from,to,reportId');
    expect(rows).toHaveLength(1 + ROWS);
    // `gone` sorts before `newly-failing` in the table.
    expect(rows[1]).toBe('r00000,gone,pass,,');
    expect(rows.at(-1)).toBe(`'=cmd|calc,newly-failing,pass,fail,${DELTA_BATCH}-f0000000100000000`);

    const failing = await exported('delta', { batchId: DELTA_BATCH }, { change: 'newly-failing' });
    expect(failing.rows).toHaveLength(2);
    expect(failing.result.headers?.['Content-Disposition']).toBe(`attachment; filename="${DELTA_BATCH}-newly-failing-delta.csv"`);
  });

  it("exports a plan's trend oldest first, grades, totals and delta counts flat", async () => {
    const { result, rows, chunks } = await exported('trend', { planId: PLAN });
    expect(result.headers?.['Content-Disposition']).toBe(`attachment; filename="${PLAN}-trend.csv"`);
    expect(rows[0]).toBe(
      'batchId,kind,status,started,finished,total,pass,review,fail,error,outOfSync,kept,errors,warnings,infos,passes,newlyFailing,fixed,changed,new,gone',
    );
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    // The points written above, and the trend points the batches' creation wrote (running), by start.
    const ours = rows.slice(1).filter((r) => r.includes(',completed,') && !r.startsWith(DELTA_BATCH));
    expect(ours).toHaveLength(ROWS);
    expect(ours[0]).toBe(`${id(1)},compliance,completed,${at(0)},${at(1)},6,0,1,2,0,3,0,4,5,6,7,,,,,`);
    expect(ours[1]).toBe(`${id(2)},compliance,completed,${at(1)},${at(2)},7,1,1,2,0,3,0,4,5,6,7,1,2,3,4,5`);

    const ranged = await exported('trend', { planId: PLAN }, { from: at(10), to: at(12) });
    expect(ranged.rows.slice(1).map((r) => r.split(',')[0])).toEqual([id(11), id(12), id(13)]);
  });

  it("exports a device's points newest first", async () => {
    const { result, rows, chunks } = await exported('device', { planId: PLAN, device: DEVICE });
    expect(result.headers?.['Content-Disposition']).toBe(`attachment; filename="${PLAN}-_cmd_calc-history.csv"`);
    expect(rows[0]).toBe('batchId,at,grade,score,failing,reportId');
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(rows).toHaveLength(1 + ROWS);
    expect(rows[1]).toBe(`${DELTA_BATCH},${at(ROWS + 3)},fail,40,ntp.server aaa:1,${DELTA_BATCH}-f0000000100000000`);
    expect(rows.at(-1)).toBe(`${id(1)},${at(0)},pass,100,,${id(1)}-p0000000100000000`);
  });
});

describe("a plan history's CSV problems", () => {
  const problem = async (route: RouteName, path: Record<string, string>, query: Record<string, string>) => {
    const answer = await invoke(asHandler(route), request(route, path, query, { Accept: 'text/csv' }), lambdaContext(10_000));
    expect(answer.contentType).toBe('application/problem+json');
    return answer;
  };

  it('answers problem+json before the first byte: unknown batch, batch of no delta, device of no history', async () => {
    expect((await problem('delta', { batchId: id(9999) }, {})).status).toBe(404);
    const running = await problem('delta', { batchId: RUNNING }, { format: 'csv' });
    expect(running.status).toBe(409);
    expect(running.body.type).toContain('batch-not-completed');
    expect((await problem('device', { planId: PLAN, device: 'nobody' }, { format: 'csv' })).status).toBe(404);
  });

  it.each<[RouteName, Record<string, string>]>([
    ['batches', {}],
    ['delta', { batchId: DELTA_BATCH }],
    ['trend', { planId: PLAN }],
    ['device', { planId: PLAN, device: DEVICE }],
  ])('refuses paging with the %s export, and an unknown format', async (route, path) => {
    const paged = await problem(route, path, { format: 'csv', limit: '5', cursor: 'abc' });
    expect(paged.status).toBe(400);
    expect(paged.body.errors).toEqual([
      { in: 'query', field: 'limit', message: 'is not allowed with format csv' },
      { in: 'query', field: 'cursor', message: 'is not allowed with format csv' },
    ]);
    const xml = await problem(route, path, { format: 'xml' });
    expect(xml.status).toBe(400);
    expect(xml.body.errors).toEqual([expect.objectContaining({ in: 'query', field: 'format' })]);
  });
});

describe('the trend of a plan id', () => {
  it('is a 404 when there is neither a plan nor a trend point, as JSON and as CSV', async () => {
    for (const query of [{}, { format: 'csv' }] as Record<string, string>[]) {
      const answer = await invoke(asHandler('trend'), request('trend', { planId: NOBODY }, query), lambdaContext(10_000));
      expect(answer.status).toBe(404);
      expect(answer.contentType).toBe('application/problem+json');
    }
  });

  it("reads a deleted plan's kept trend, and an existing plan's empty one", async () => {
    const deleted = await invoke(asHandler('trend'), request('trend', { planId: DELETED }), lambdaContext(10_000));
    expect(deleted.status).toBe(200);
    expect(deleted.body.items).toHaveLength(1);
    const fresh = await invoke(asHandler('trend'), request('trend', { planId: FRESH }), lambdaContext(10_000));
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({ planId: FRESH, items: [] });
    // Outside the deleted plan's range: its history exists, so an empty list, not a 404.
    const before = await invoke(asHandler('trend'), request('trend', { planId: DELETED }, { to: '2020-01-01' }), lambdaContext(10_000));
    expect(before.status).toBe(200);
    expect(before.body.items).toEqual([]);
    const csv = await exported('trend', { planId: FRESH });
    expect(csv.rows).toHaveLength(1);
  });
});

describe("a plan history's JSON answers", () => {
  it('are what openapi.json documents, member by member', async () => {
    const answers = conformanceRecorder();
    const asked: [RouteName, Record<string, string>, Record<string, string>][] = [
      ['batches', {}, {}],
      ['batches', {}, { planId: PLAN, limit: '5' }],
      ['delta', { batchId: DELTA_BATCH }, { limit: '5' }],
      ['delta', { batchId: DELTA_BATCH }, { change: 'newly-failing' }],
      ['trend', { planId: PLAN }, { limit: '5' }],
      ['device', { planId: PLAN, device: DEVICE }, { limit: '5' }],
    ];
    for (const [route, path, query] of asked) {
      const event = request(route, path, query);
      const answer = await invoke(asHandler(route), event, lambdaContext(10_000));
      expect(answer.status).toBe(200);
      // Each answer holds rows, so their schemas are checked too.
      expect(answer.body.items ?? answer.body.points).not.toHaveLength(0);
      answers.record(event, { statusCode: answer.status, headers: answer.headers as Record<string, string>, body: JSON.stringify(answer.body) });
    }
    const { problems, checked } = answers.check();
    expect(checked).toBe(asked.length);
    expect(problems).toEqual([]);
  });
});
