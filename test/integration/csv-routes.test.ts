/**
 * A list route as JSON and as streamed CSV (DynamoDB Local): the batch's reports route, asked by
 * `Accept` and by `format`, its problems still JSON, and an export longer than a store page.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Report } from '../../functions/compliance/model.js';
import { REPORT_EXPORT_PAGE } from '../../functions/compliance/read.js';
import { ComplianceStore, type DeviceReport } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { collectStreamed } from '../../tools/local/response-stream.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';

const BATCH = 'cafe0123456789abcdef0123';
const OTHER = 'cafe0123456789abcdef9999';
const REPORTS_PATH = '/configuration_manager/compliance_reports/batches/{batchId}/reports';
const HEADER = 'reportId,device,node,grade,score,errors,warnings,infos,passes,exempted,sync,configId,checkedAt,reason';
/** More devices than two store pages of an export: the stream must carry rows of three. */
const DEVICES = 2 * REPORT_EXPORT_PAGE + 7;
let handler: unknown;

const gradeOf = (i: number): Report['grade'] => (i % 10 === 0 ? 'error' : i % 3 === 0 ? 'fail' : 'pass');

const EXEMPTION = { exemptionId: '019abc0123450123456789ab', ruleId: 'ntp', until: '2027-01-01T00:00:00Z', reason: 'migration', by: 'alice' };

const report = (i: number): DeviceReport => {
  const grade = gradeOf(i);
  return {
    batchId: BATCH,
    // A device name a spreadsheet would run, one with a comma and a quote, and plain ones.
    device: i === 1 ? '=cmd|calc' : i === 2 ? 'edge "a", west' : `r${String(i).padStart(5, '0')}`,
    treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
    version: 'v1',
    node: 'base',
    grade,
    ...(grade === 'error' ? { reason: 'The orchestrator does not know\nthe device.' } : { score: grade === 'pass' ? 100 : 50 }),
    totals: { errors: grade === 'fail' ? 2 : 0, warnings: 1, infos: 0, passes: 7 },
    issues: [],
    // Device 3's two exempted rules listed, one left out for size: its column counts three.
    ...(i === 3
      ? {
          exempted: (['ntp', 'banner'] as const).map((ruleId) => ({ ruleId, node: 'base', severity: 'error', outcome: 'fail' as const, exemption: EXEMPTION })),
          exemptedOmitted: 1,
        }
      : {}),
    sync: { mode: 'check', result: 'in-sync' },
    checkedAt: '2026-11-23T10:00:00.000Z',
  };
};

const request = (query: Record<string, string> = {}, headers: Record<string, string> = {}, batchId = BATCH) =>
  apiEvent({ method: 'GET', resource: REPORTS_PATH, pathParameters: { batchId }, query, headers });

beforeAll(async () => {
  const tables = await createTables();
  const store = new ComplianceStore(documentClient, tables['compliance']);
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  const devices = Array.from({ length: DEVICES }, (_, i) => ({ device: report(i).device, node: 'base' }));
  await store.create(
    {
      batchId: BATCH,
      treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
      version: 'v1',
      adapterId: 'lab-nso',
      total: DEVICES,
      started: new Date(Date.now() - 60_000).toISOString(),
      chunks: 1,
      concurrency: 10,
      expiresAt,
    },
    { variables: {}, rulesByNode: {}, nodes: ['base'] },
    [devices],
  );
  await store.putReports(
    BATCH,
    { chunk: 0, attempt: 1 },
    Array.from({ length: DEVICES }, (_, i) => ({ position: i, report: report(i) })),
    expiresAt,
  );
  vi.resetModules();
  handler = (await import('../../functions/compliance/handlers/list-reports.js')).handler;
});

const asHandler = () => handler as Parameters<typeof invoke>[0];
const lines = (body: string) => body.split('\r\n').slice(0, -1);

describe('a list route as JSON and as CSV', () => {
  it('answers JSON pages as before, with Accept: application/json or none', async () => {
    for (const headers of [{}, { Accept: 'application/json' }, { Accept: '*/*' }] as Record<string, string>[]) {
      const page = await invoke(asHandler(), request({ limit: '3' }, headers), lambdaContext(10_000));
      expect(page.status).toBe(200);
      expect(page.contentType).toBe('application/json');
      expect(page.body.items).toHaveLength(3);
      expect(page.body.next).toEqual(expect.any(String));
    }
  });

  it('streams every report as CSV, asked by Accept or by format, in rows of several store pages', async () => {
    for (const [query, headers] of [
      [{}, { Accept: 'text/csv' }],
      [{ format: 'csv' }, { Accept: 'application/json' }],
    ] as const) {
      const { result, chunks } = await collectStreamed(handler, request(query, headers), lambdaContext(30_000));
      expect(result.statusCode).toBe(200);
      expect(result.headers?.['Content-Type']).toMatch(/^text\/csv; charset=utf-8/);
      expect(result.headers?.['Content-Disposition']).toBe(`attachment; filename="${BATCH}-reports.csv"`);
      // The header row, then one chunk per store page: three pages of rows.
      expect(chunks[0]).toBe(`${HEADER}\r\n`);
      expect(chunks.length).toBeGreaterThanOrEqual(4);
      const body = result.body;
      expect(body.endsWith('\r\n')).toBe(true);
      const rows = lines(body).slice(1);
      // The error reason holds a newline: inside quotes, not a record end.
      const records = body.split(/\r\n(?=[0-9a-f]{24}-|$)/).slice(1, -1);
      expect(records).toHaveLength(DEVICES);
      expect(rows.some((r) => r.includes(`,'=cmd|calc,`))).toBe(true);
      expect(rows.some((r) => r.includes(',"edge ""a"", west",'))).toBe(true);
      expect(records.find((r) => r.includes(',r00003,'))).toMatch(/^[0-9a-f]{24}-\w+,r00003,base,fail,50,2,1,0,7,3,in-sync,,2026-11-23T10:00:00.000Z,$/);
      expect(records.find((r) => r.includes(',r00010,'))).toContain(
        ',error,,0,1,0,7,0,in-sync,,2026-11-23T10:00:00.000Z,"The orchestrator does not know\nthe device."',
      );
    }
  });

  it('applies the grade filter to the export', async () => {
    const { result } = await collectStreamed(handler, request({ format: 'csv', grade: 'fail' }), lambdaContext(30_000));
    const records = lines(result.body).slice(1);
    const fails = Array.from({ length: DEVICES }, (_, i) => i).filter((i) => gradeOf(i) === 'fail').length;
    expect(records).toHaveLength(fails);
    expect(records.every((r) => r.split(',')[3] === 'fail')).toBe(true);
    expect(result.headers?.['Content-Disposition']).toBe(`attachment; filename="${BATCH}-fail-reports.csv"`);
  });

  it('keeps its problems JSON when CSV is asked', async () => {
    const unknown = await invoke(asHandler(), request({ format: 'csv' }, {}, OTHER), lambdaContext(10_000));
    expect(unknown.status).toBe(404);
    expect(unknown.contentType).toBe('application/problem+json');

    const badFormat = await invoke(asHandler(), request({ format: 'xml' }, { Accept: 'text/csv' }), lambdaContext(10_000));
    expect(badFormat.status).toBe(400);
    expect(badFormat.contentType).toBe('application/problem+json');
    expect(badFormat.body.errors).toEqual([expect.objectContaining({ in: 'query', field: 'format' })]);

    const paged = await invoke(asHandler(), request({ format: 'csv', limit: '5' }), lambdaContext(10_000));
    expect(paged.status).toBe(400);
    expect(paged.body.errors).toEqual([{ in: 'query', field: 'limit', message: 'is not allowed with format csv' }]);
  });
});
