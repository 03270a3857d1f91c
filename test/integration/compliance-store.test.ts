/**
 * The compliance store's packs of reports against DynamoDB Local: how reports are grouped and
 * named, the 400 KB item limit (counted in bytes), paging through packs with every page size,
 * the chunk's own reports read back for a retry, one report by id, and counting a chunk once.
 */
import { BatchWriteCommand, DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { GRADES, type Grade } from '../../functions/compliance/grading.js';
import { REDACTED } from '../../functions/platform/redaction.js';
import { emptyCounts, REPORT_ID_PATTERN, type Report, type ReportIssue } from '../../functions/compliance/model.js';
import { ComplianceStore, parseReportId, type ChunkReport, type DeviceReport, type ReportCursor } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { documentClientWith } from '../support/dynamo-hook.js';
import { createTables } from '../../tools/local/table-copies.js';

let store: ComplianceStore;
let table: string;
const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
let batchSeq = 0;

/** A new batch of `chunks` chunks of `perChunk` devices (`d<chunk>-<position>`). */
const newBatch = async (chunks: number, perChunk: number): Promise<string> => {
  const batchId = (++batchSeq).toString(16).padStart(24, '0');
  await store.create(
    {
      batchId,
      treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
      version: 'v1',
      adapterId: 'lab-nso',
      total: chunks * perChunk,
      started: '2026-11-25T10:00:00.000Z',
      chunks,
      concurrency: 10,
      expiresAt,
    },
    { variables: {}, rulesByNode: {}, nodes: ['base'] },
    Array.from({ length: chunks }, (_, c) => Array.from({ length: perChunk }, (_, p) => ({ device: `d${c}-${p}`, node: 'base' }))),
  );
  return batchId;
};

const deviceReport = (batchId: string, device: string, grade: Grade, extra: Partial<DeviceReport> = {}): DeviceReport => ({
  batchId,
  device,
  treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
  version: 'v1',
  node: 'base',
  grade,
  ...(grade === 'error'
    ? { reason: 'The orchestrator does not know the device.' }
    : grade === 'out-of-sync'
      ? { diff: '-  "hostname": "a"\n+  "hostname": "b"\n', sync: { mode: 'check', result: 'out-of-sync' } }
      : { score: grade === 'pass' ? 100 : grade === 'review' ? 85 : 40 }),
  totals: { errors: grade === 'fail' ? 2 : 0, warnings: grade === 'review' ? 1 : 0, infos: 0, passes: 3 },
  issues: [],
  checkedAt: '2026-11-25T10:00:00.000Z',
  ...extra,
});

/** The grade of position `p` in a mixed chunk: mostly pass, every kind present. */
const gradeAt = (p: number): Grade => (p % 7 === 3 ? 'fail' : p % 11 === 5 ? 'review' : p % 13 === 6 ? 'error' : p % 17 === 8 ? 'out-of-sync' : 'pass');

const chunkReports = (batchId: string, chunk: number, positions: readonly number[]): ChunkReport[] =>
  positions.map((position) => ({ position, report: deviceReport(batchId, `d${chunk}-${position}`, gradeAt(position)) }));

/** The batch's stored pack items, in key order. */
const packs = async (batchId: string): Promise<Record<string, unknown>[]> => {
  const out = await documentClient.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
      ExpressionAttributeValues: { ':pk': `B#${batchId}`, ':r': 'R#' },
    }),
  );
  return out.Items ?? [];
};

/** Every page of the list at `limit`, in order. */
const pages = async (batchId: string, limit: number, grade?: Grade): Promise<Report[][]> => {
  const out: Report[][] = [];
  let from: ReportCursor | undefined;
  do {
    const page = await store.listReports(batchId, { limit, ...(grade ? { grade } : {}), ...(from ? { from } : {}) });
    out.push([...page.items]);
    from = page.next;
    expect(out.length, 'pages end').toBeLessThan(500);
  } while (from);
  return out;
};

beforeAll(async () => {
  const tables = await createTables();
  table = tables['compliance'];
  store = new ComplianceStore(documentClient, table);
});

describe('compliance report packs', () => {
  it('groups what a chunk hands in by grade, one item each, and names every report after its pack', async () => {
    const batchId = await newBatch(2, 40);
    const stored = await store.putReports(batchId, { chunk: 1, attempt: 1 }, chunkReports(batchId, 1, [9, 3, 0, 5, 6, 17, 24, 38]), expiresAt);
    expect(stored.map((r) => r.device).sort()).toEqual(['d1-0', 'd1-17', 'd1-24', 'd1-3', 'd1-38', 'd1-5', 'd1-6', 'd1-9']);
    const items = await packs(batchId);
    // pass: 0, 9; fail: 3, 17, 24, 38; review: 5; error: 6.
    expect(items.map((i) => i['sk'])).toEqual(['R#error#000001#01#0006', 'R#fail#000001#01#0003', 'R#pass#000001#01#0000', 'R#review#000001#01#0005']);
    for (const item of items) expect(item['expiresAt']).toBe(expiresAt);
    const fail = JSON.parse(items[1]!['rows'] as string) as Record<string, unknown>[];
    expect(fail.map((r) => r['device'])).toEqual(['d1-3', 'd1-17', 'd1-24', 'd1-38']); // chunk order, whatever order they came in
    // What the pack's key and attributes say is not repeated in its rows.
    expect(items[1]).toMatchObject({ treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6', version: 'v1' });
    expect(Object.keys(fail[0]!)).toEqual(['position', 'device', 'node', 'score', 'totals', 'issues', 'checkedAt']);
    expect(fail.map((r) => r['position'])).toEqual([3, 17, 24, 38]);
    for (const report of stored) {
      expect(report.reportId).toMatch(new RegExp(REPORT_ID_PATTERN));
      expect(Object.keys(report)[0]).toBe('reportId');
      expect(await store.getReport(report.reportId)).toEqual(report);
    }
    expect(stored.find((r) => r.device === 'd1-17')!.reportId).toBe(`${batchId}-f0000010100030017`);
  });

  it('starts a new pack past 64 KB of UTF-8 (counting bytes, not characters), and stores a big report alone', async () => {
    const batchId = await newBatch(1, 10);
    const withMessage = (position: number, message: string): ChunkReport => ({
      position,
      report: deviceReport(batchId, `d0-${position}`, 'fail', {
        issues: [{ ruleId: 'r', node: 'base', path: '/x', severity: 'error', mode: 'required', message }],
      }),
    });
    // About 24 KB of two-byte characters each: five fit 64 KB by characters, two by bytes.
    const stored = await store.putReports(
      batchId,
      { chunk: 0, attempt: 1 },
      [0, 1, 2, 3, 4, 5, 6].map((p) => withMessage(p, 'é'.repeat(12_000))),
      expiresAt,
    );
    let items = await packs(batchId);
    expect(items.map((i) => (JSON.parse(i['rows'] as string) as unknown[]).length)).toEqual([2, 2, 2, 1]);
    for (const item of items) expect(Buffer.byteLength(item['rows'] as string, 'utf8')).toBeLessThanOrEqual(64 * 1024 + 2);
    for (const report of stored) expect((await store.getReport(report.reportId))?.device).toBe(report.device);
    // A 300 KB report (the most issues a report keeps) is a pack of its own, and DynamoDB takes it.
    const [big] = await store.putReports(batchId, { chunk: 0, attempt: 1 }, [withMessage(8, 'é'.repeat(150_000))], expiresAt);
    items = await packs(batchId);
    expect(items).toHaveLength(5);
    expect((await store.getReport(big!.reportId))?.issues[0]?.message).toHaveLength(150_000);
    // Past what an item holds: refused, nothing written.
    await expect(store.putReports(batchId, { chunk: 0, attempt: 1 }, [withMessage(9, '€'.repeat(130_000))], expiresAt)).rejects.toThrow(RangeError);
    expect(await packs(batchId)).toHaveLength(5);
  });

  it('pages through packs at every page size: each report once, in order, no empty page before the end', async () => {
    const batchId = await newBatch(3, 30);
    // Chunk 0 in three hand-ins, chunk 1 in one, chunk 2 in two: packs of 1 to 20 reports.
    const handIns: [number, number[]][] = [
      [0, Array.from({ length: 10 }, (_, i) => i)],
      [0, Array.from({ length: 15 }, (_, i) => 10 + i)],
      [0, [25, 26, 27, 28, 29]],
      [1, Array.from({ length: 30 }, (_, i) => i)],
      [2, [4]],
      [2, Array.from({ length: 29 }, (_, i) => (i < 4 ? i : i + 1))],
    ];
    const all: Report[] = [];
    for (const [chunk, positions] of handIns)
      all.push(...(await store.putReports(batchId, { chunk, attempt: 1 }, chunkReports(batchId, chunk, positions), expiresAt)));
    expect(all).toHaveLength(90);
    const order = (reports: readonly Report[]) => reports.map((r) => r.reportId);
    // The order: by grade, then by chunk and hand-in (the pack's first position), then in the chunk.
    const expected = [...all].sort(
      (a, b) =>
        (a.grade === b.grade ? 0 : a.grade < b.grade ? -1 : 1) ||
        (a.reportId.slice(26, 38) < b.reportId.slice(26, 38) ? -1 : a.reportId.slice(26, 38) > b.reportId.slice(26, 38) ? 1 : 0) ||
        Number(a.reportId.slice(-4)) - Number(b.reportId.slice(-4)),
    );
    for (const limit of [1, 2, 3, 4, 5, 7, 10, 11, 20, 29, 30, 31, 50, 89, 90, 91, 200]) {
      const walked = await pages(batchId, limit);
      expect(order(walked.flat()), `limit ${limit}`).toEqual(order(expected));
      for (const page of walked.slice(0, -1)) expect(page).toHaveLength(limit);
      expect(walked.at(-1)!.length, `last page at limit ${limit}`).toBeGreaterThan(0);
    }
    for (const grade of GRADES) {
      const ofGrade = expected.filter((r) => r.grade === grade);
      for (const limit of [1, 3, 8, 100]) {
        const walked = await pages(batchId, limit, grade);
        expect(order(walked.flat()), `${grade} at ${limit}`).toEqual(order(ofGrade));
        // A grade no report has (kept: this batch is no backup) is one empty page.
        if (ofGrade.length === 0) expect(walked).toEqual([[]]);
        else expect(walked.at(-1)!.length).toBeGreaterThan(0);
      }
    }
  });

  it("starts a page at the first report of the next pack when the cursor's own pack is gone", async () => {
    const batchId = await newBatch(2, 10);
    await store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [0, 1, 2]), expiresAt);
    const next = await store.putReports(batchId, { chunk: 1, attempt: 1 }, chunkReports(batchId, 1, [0, 1, 2]), expiresAt);
    const first = await store.listReports(batchId, { limit: 2, grade: 'pass' });
    expect(first.next).toEqual({ sk: 'R#pass#000000#01#0000', skip: 2 });
    // TTL (or anything else) removes the pack the cursor points into.
    await documentClient.send(new DeleteCommand({ TableName: table, Key: { pk: `B#${batchId}`, sk: first.next!.sk } }));
    const after = await store.listReports(batchId, { limit: 10, grade: 'pass', from: first.next! });
    expect(after.items.map((r) => r.reportId)).toEqual(next.filter((r) => r.grade === 'pass').map((r) => r.reportId));
  });

  it('reads reports stored one to an item before packs: in the list, by id, and from a cursor on them', async () => {
    const batchId = await newBatch(1, 3);
    const key = 'c'.repeat(32);
    const legacy: Report = { reportId: `${batchId}-${key}`, ...deviceReport(batchId, 'old-device', 'review') };
    await documentClient.send(
      new PutCommand({ TableName: table, Item: { pk: `B#${batchId}`, sk: `R#${key}`, gpk: `${batchId}#review`, report: JSON.stringify(legacy), expiresAt } }),
    );
    const stored = await store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [0, 1]), expiresAt);
    expect(new RegExp(REPORT_ID_PATTERN).test(legacy.reportId)).toBe(true);
    expect(await store.getReport(legacy.reportId)).toEqual(legacy);
    const walked = (await pages(batchId, 1)).flat();
    expect(walked.map((r) => r.reportId).sort()).toEqual([legacy, ...stored].map((r) => r.reportId).sort());
    expect(parseReportId(legacy.reportId)).toEqual({ batchId, sk: `R#${key}` });
  });

  it('reads packs of whole reports as the previous release stored them: by id, in the list, from a cursor into them, and for a retry', async () => {
    const batchId = await newBatch(2, 4);
    // Chunk 0 run 1 hands in positions 0 to 3 as whole reports, each with its id first.
    const whole = (grade: Grade, positions: readonly number[]): Report[] =>
      positions.map((p) => ({
        reportId: `${batchId}-${grade[0]}00000001${String(positions[0]).padStart(4, '0')}${String(p).padStart(4, '0')}`,
        ...deviceReport(batchId, `d0-${p}`, grade),
      }));
    const oldPass = whole('pass', [0, 2, 3]);
    const oldFail = whole('fail', [1]);
    for (const [grade, reports] of [
      ['pass', oldPass],
      ['fail', oldFail],
    ] as const) {
      const sk = `R#${grade}#000000#01#${String(reports[0]!.reportId.slice(-8, -4))}`;
      await documentClient.send(new PutCommand({ TableName: table, Item: { pk: `B#${batchId}`, sk, reports: JSON.stringify(reports), expiresAt } }));
    }
    const stored = await store.putReports(batchId, { chunk: 1, attempt: 1 }, chunkReports(batchId, 1, [0, 1, 2, 3]), expiresAt);
    for (const report of [...oldPass, ...oldFail]) {
      expect(parseReportId(report.reportId)?.sk).toMatch(/^R#(pass|fail)#000000#01#000[01]$/);
      expect(await store.getReport(report.reportId)).toEqual(report);
    }
    const walked = (await pages(batchId, 2)).flat();
    expect(walked.map((r) => r.reportId).sort()).toEqual([...oldPass, ...oldFail, ...stored].map((r) => r.reportId).sort());
    expect((await pages(batchId, 1, 'pass')).flat().filter((r) => r.device.startsWith('d0-'))).toEqual(oldPass);
    const found = await store.existingReports(batchId, 0);
    expect([...found.keys()].sort()).toEqual(['d0-0', 'd0-1', 'd0-2', 'd0-3']);
    expect(found.get('d0-1')).toEqual({ grade: 'fail', totals: oldFail[0]!.totals });
  });

  it('masks device secrets that an earlier release stored unmasked, in every read: by id, in the list, one to an item', async () => {
    const batchId = await newBatch(3, 2);
    const secret = 'Sup3rS3cretEnable';
    const leaky: ReportIssue = {
      ruleId: 'enable',
      node: 'base',
      path: '/tailf-ned-cisco-ios:enable/secret',
      severity: 'error',
      mode: 'exact',
      message: `expected "x", found the string ${JSON.stringify(secret)}`,
      expected: 'x',
      actual: secret,
    };
    const unmasked = (device: string, reportId: string): Report => ({ reportId, ...deviceReport(batchId, device, 'fail', { issues: [leaky] }) });
    const inPack = unmasked('packed', `${batchId}-f0000000100000000`);
    await documentClient.send(
      new PutCommand({ TableName: table, Item: { pk: `B#${batchId}`, sk: 'R#fail#000000#01#0000', reports: JSON.stringify([inPack]), expiresAt } }),
    );
    const key = 'd'.repeat(32);
    const alone = unmasked('alone', `${batchId}-${key}`);
    await documentClient.send(
      new PutCommand({ TableName: table, Item: { pk: `B#${batchId}`, sk: `R#${key}`, gpk: `${batchId}#fail`, report: JSON.stringify(alone), expiresAt } }),
    );
    const read = [await store.getReport(inPack.reportId), await store.getReport(alone.reportId), ...(await pages(batchId, 5)).flat()];
    expect(read).toHaveLength(4);
    for (const report of read) {
      expect(JSON.stringify(report)).not.toContain(secret);
      // Everything at or below a member named like a secret is masked, what the rule expects too.
      expect(report?.issues[0]).toMatchObject({ ruleId: 'enable', expected: REDACTED, actual: REDACTED });
    }
    // What the reader sees is what the stored item holds, less the secret.
    expect(JSON.stringify(inPack)).toContain(secret);
  });

  it('returns each report as a whole report, whatever its pack leaves out', async () => {
    const batchId = await newBatch(1, 3);
    const handedIn = [
      {
        position: 0,
        report: deviceReport(batchId, 'd0-0', 'fail', {
          issues: [{ ruleId: 'r', node: 'base', path: '/x', severity: 'error', mode: 'required', message: 'missing' }],
          issuesOmitted: 2,
        }),
      },
      { position: 1, report: deviceReport(batchId, 'd0-1', 'error') },
    ];
    const stored = await store.putReports(batchId, { chunk: 0, attempt: 1 }, handedIn, expiresAt);
    for (const { report } of handedIn) {
      const back = (await pages(batchId, 10)).flat().find((r) => r.device === report.device)!;
      expect(back).toEqual({ reportId: back.reportId, ...report });
      expect(Object.keys(back).slice(0, 7)).toEqual(['reportId', 'batchId', 'device', 'treeId', 'version', 'node', 'grade']);
      expect(await store.getReport(back.reportId)).toEqual(back);
      expect(stored.find((r) => r.device === report.device)).toEqual(back);
    }
  });

  it('names a report after its pack even when what was handed in carries an id or a position of its own', async () => {
    const batchId = await newBatch(1, 3);
    const carrying = { ...deviceReport(batchId, 'd0-2', 'pass'), reportId: `${batchId}-p0000000100009999`, position: 7 } as DeviceReport;
    const [stored] = await store.putReports(batchId, { chunk: 0, attempt: 1 }, [{ position: 2, report: carrying }], expiresAt);
    expect(stored!.reportId).toBe(`${batchId}-p0000000100020002`);
    const [back] = (await pages(batchId, 10)).flat();
    expect(back!.reportId).toBe(stored!.reportId);
    expect(back).not.toHaveProperty('position');
    expect(await store.getReport(stored!.reportId)).toEqual(back);
  });

  it('skips what a damaged pack item holds that cannot be a report, and reads the rest', async () => {
    const batchId = await newBatch(1, 3);
    const [good] = await store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [0]), expiresAt);
    const row = (position: unknown) => ({
      position,
      device: `d0-${String(position)}`,
      node: 'base',
      score: 100,
      totals: { errors: 0, warnings: 0, infos: 0, passes: 3 },
      issues: [],
      checkedAt: '2026-11-25T10:00:00.000Z',
    });
    const put = (sk: string, rows: string) =>
      documentClient.send(
        new PutCommand({ TableName: table, Item: { pk: `B#${batchId}`, sk, treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6', version: 'v1', rows, expiresAt } }),
      );
    // Rows whose position cannot name a report, beside one that can.
    await put('R#pass#000000#02#0001', JSON.stringify([row(1), row(3.5), row('4'), row(-1), row(10_000), null, 'x', row(5)]));
    // Not an array of rows; a key that is no pack's.
    await put('R#pass#000000#03#0000', JSON.stringify({ position: 0 }));
    await put(`R#${'d'.repeat(32)}`, JSON.stringify([row(6)]));
    const walked = (await pages(batchId, 3)).flat();
    expect(walked.map((r) => r.device).sort()).toEqual(['d0-0', 'd0-1', 'd0-5']);
    for (const report of walked) {
      expect(report.reportId).toMatch(new RegExp(REPORT_ID_PATTERN));
      expect(await store.getReport(report.reportId)).toEqual(report);
    }
    expect(walked.find((r) => r.device === 'd0-0')).toEqual(good);
    expect([...(await store.existingReports(batchId, 0)).keys()].sort()).toEqual(['d0-0', 'd0-1', 'd0-5']);
  });

  it('refuses a report of a grade no pack holds, writing nothing', async () => {
    const batchId = await newBatch(1, 3);
    const odd = { position: 1, report: { ...deviceReport(batchId, 'd0-1', 'pass'), grade: 'excellent' } as unknown as DeviceReport };
    await expect(store.putReports(batchId, { chunk: 0, attempt: 1 }, [...chunkReports(batchId, 0, [0]), odd], expiresAt)).rejects.toThrow(
      /no grade a pack can hold/,
    );
    expect(await packs(batchId)).toEqual([]);
  });

  it('refuses a hand-in whose reports are not all of the batch and one tree version, writing nothing', async () => {
    const batchId = await newBatch(1, 3);
    const mixed = (extra: Partial<DeviceReport>): ChunkReport[] => [
      { position: 0, report: deviceReport(batchId, 'd0-0', 'pass') },
      { position: 1, report: deviceReport(batchId, 'd0-1', 'fail', extra) },
    ];
    for (const extra of [{ version: 'v2' }, { treeId: 'f'.repeat(24) }, { batchId: 'e'.repeat(24) }]) {
      await expect(store.putReports(batchId, { chunk: 0, attempt: 1 }, mixed(extra), expiresAt), JSON.stringify(extra)).rejects.toThrow(RangeError);
    }
    expect(await packs(batchId)).toEqual([]);
  });

  it('answers an empty page for a batch without reports, and nothing for ids that name no report', async () => {
    const batchId = await newBatch(1, 3);
    expect(await store.listReports(batchId, { limit: 10 })).toEqual({ items: [] });
    expect(await store.listReports(batchId, { limit: 10, grade: 'fail' })).toEqual({ items: [] });
    const [report] = await store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [0]), expiresAt);
    expect(await store.getReport(report!.reportId)).toEqual(report);
    // The pack exists but holds no such position; another batch; not an id at all.
    expect(await store.getReport(`${report!.reportId.slice(0, -4)}0002`)).toBeUndefined();
    expect(await store.getReport(report!.reportId.replace(batchId, 'f'.repeat(24)))).toBeUndefined();
    const digits = (n: number) => '0'.repeat(n);
    for (const id of [
      '',
      'x',
      `${batchId}-x${digits(16)}`,
      `${batchId}-p${digits(15)}`,
      `${batchId}-p${digits(17)}`,
      `${batchId}-p${digits(15)}a`,
      `${'A'.repeat(24)}-p${digits(16)}`,
      `${batchId}p${digits(16)}`,
    ]) {
      expect(parseReportId(id), id).toBeUndefined();
      expect(await store.getReport(id)).toBeUndefined();
    }
    expect(parseReportId(`${batchId}-r0000420200170023`)).toEqual({ batchId, sk: 'R#review#000042#02#0017' });
  });

  it('refuses positions and chunks its keys cannot hold, writing nothing', async () => {
    const batchId = await newBatch(1, 3);
    await expect(
      store.putReports(batchId, { chunk: 0, attempt: 1 }, [{ position: 10_000, report: deviceReport(batchId, 'd0-0', 'pass') }], expiresAt),
    ).rejects.toThrow(RangeError);
    await expect(
      store.putReports(batchId, { chunk: 0, attempt: 1 }, [{ position: -1, report: deviceReport(batchId, 'd0-0', 'pass') }], expiresAt),
    ).rejects.toThrow(RangeError);
    await expect(store.putReports(batchId, { chunk: 1_000_000, attempt: 1 }, chunkReports(batchId, 0, [0]), expiresAt)).rejects.toThrow(RangeError);
    await expect(store.putReports(batchId, { chunk: 0.5, attempt: 1 }, chunkReports(batchId, 0, [0]), expiresAt)).rejects.toThrow(RangeError);
    await expect(store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [1, 2, 1]), expiresAt)).rejects.toThrow(RangeError);
    for (const attempt of [0, 100, 1.5])
      await expect(store.putReports(batchId, { chunk: 0, attempt }, chunkReports(batchId, 0, [0]), expiresAt)).rejects.toThrow(RangeError);
    expect(await packs(batchId)).toEqual([]);
  });

  it("reads back a chunk's own reports for a retry, of every grade and no other chunk", async () => {
    const batchId = await newBatch(3, 20);
    await store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [0, 1, 2, 3, 4, 5, 6]), expiresAt);
    await store.putReports(batchId, { chunk: 1, attempt: 1 }, chunkReports(batchId, 1, [0, 3, 5, 6, 7]), expiresAt);
    await store.putReports(batchId, { chunk: 1, attempt: 1 }, chunkReports(batchId, 1, [10, 12]), expiresAt);
    await store.putReports(batchId, { chunk: 2, attempt: 1 }, chunkReports(batchId, 2, [1]), expiresAt);
    const found = await store.existingReports(batchId, 1);
    expect([...found.keys()].sort()).toEqual(['d1-0', 'd1-10', 'd1-12', 'd1-3', 'd1-5', 'd1-6', 'd1-7']);
    expect(found.get('d1-3')).toEqual({ grade: 'fail', totals: { errors: 2, warnings: 0, infos: 0, passes: 3 } });
    expect(found.get('d1-5')?.grade).toBe('review');
    expect(found.get('d1-6')?.grade).toBe('error');
    expect((await store.existingReports(batchId, 2)).size).toBe(1);
    expect((await store.existingReports(batchId, 9)).size).toBe(0);
  });

  it('never lets a late write of an earlier attempt replace what a retry stored', async () => {
    const batchId = await newBatch(1, 20);
    // Attempt 2 found nothing and stored devices 0, 7, 9 and 14; then attempt 1's write of 0 and
    // 7 (sent before its process died) reaches DynamoDB.
    const retry = await store.putReports(batchId, { chunk: 0, attempt: 2 }, chunkReports(batchId, 0, [0, 7, 9, 14]), expiresAt);
    const late = await store.putReports(batchId, { chunk: 0, attempt: 1 }, chunkReports(batchId, 0, [0, 7]), expiresAt);
    for (const report of [...retry, ...late]) expect(await store.getReport(report.reportId)).toEqual(report);
    expect([...(await store.existingReports(batchId, 0)).keys()].sort()).toEqual(['d0-0', 'd0-14', 'd0-7', 'd0-9']);
    expect((await pages(batchId, 100)).flat()).toHaveLength(6);
  });

  it('fails a hand-in only once every one of its requests has ended: none is still on its way', async () => {
    const batchId = await newBatch(1, 40);
    // 30 reports of ~40 KB: a pack each, so two BatchWriteItem requests. The first is refused
    // at once; the second reaches DynamoDB 300 ms later.
    const big = 'x'.repeat(40_000);
    const reports = Array.from({ length: 30 }, (_, position) => ({
      position,
      report: deviceReport(batchId, `d0-${position}`, 'fail', {
        issues: [{ ruleId: 'r', node: 'base', path: '/x', severity: 'error', mode: 'required', message: big }],
      }),
    }));
    let writes = 0;
    const slowAndFailing = new ComplianceStore(
      documentClientWith(async (command) => {
        if (!(command instanceof BatchWriteCommand)) return;
        if (++writes === 1) throw Object.assign(new Error('refused'), { name: 'InternalServerError' });
        await new Promise((r) => setTimeout(r, 300));
      }),
      table,
    );
    await expect(slowAndFailing.putReports(batchId, { chunk: 0, attempt: 1 }, reports, expiresAt)).rejects.toThrow();
    expect(writes).toBe(2);
    // The second request's five packs are stored by the time the hand-in is reported failed.
    expect(await packs(batchId)).toHaveLength(5);
  });

  it('counts a chunk once, and refuses to count into a batch that does not exist', async () => {
    const batchId = await newBatch(2, 5);
    const counts = {
      ...emptyCounts(),
      devices: 5,
      grades: { pass: 3, review: 1, fail: 1, error: 0, 'out-of-sync': 0, kept: 0 },
      totals: { errors: 2, warnings: 1, infos: 0, passes: 12 },
    };
    await store.countChunk(batchId, 0, counts);
    await store.countChunk(batchId, 0, counts);
    await store.countChunk(batchId, 1, counts);
    await store.countChunk(batchId, 1, counts);
    expect(await store.getBatch(batchId)).toMatchObject({
      done: 10,
      grades: { pass: 6, review: 2, fail: 2, error: 0, 'out-of-sync': 0, kept: 0 },
      totals: { errors: 4, warnings: 2, infos: 0, passes: 24 },
    });
    const ghost = 'e'.repeat(24);
    await expect(store.countChunk(ghost, 0, counts)).rejects.toThrow(/conditional/i);
    expect(await store.getBatch(ghost)).toBeUndefined();
  });
});
