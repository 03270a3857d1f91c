/**
 * Measurement: a plan's history read through the local gateway (`npm start`'s stack, a real
 * token, the authorizer, the functions in their own processes, DynamoDB Local). The plan is
 * seeded through the compliance history store: a device checked once a day for a year (each
 * day's point and state computed by `deviceStep`, as the engine's history step does, so the
 * `STATE` item holds the rules a year of checks leaves) and the trend of the last 90 of those
 * daily batches. Then a few clients in parallel ask for all 90 trend points in one page and for
 * the device's 365 points in one page, each answer checked for its row count.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Grade } from '../functions/compliance/grading.js';
import { devicePointItem, trendPointItem } from '../functions/compliance/history-items.js';
import { createHistoryStore, type DeviceWrite } from '../functions/compliance/history-store.js';
import { deviceStep, type CheckedDevice, type StoredState } from '../functions/compliance/history.js';
import { createComplianceStore } from '../functions/compliance/store.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../tools/local/config.js';
import { documentClientFor } from '../tools/local/seed.js';
import type { LocalStack } from '../tools/local/start.js';
import { summarize, type Summary } from './stats.js';

/** The figure: each read answers at p99 within this. */
export const HISTORY_P99_LIMIT_MS = 200;
/** Trend points of the plan (90 daily batches), all in one page. */
export const TREND_POINTS = 90;
/** Daily points of the device (a year), all in one page. */
export const DEVICE_POINTS = 365;

const DAY_MS = 86_400_000;
const PLAN_ID = 'b0000000000000000000e537';
/** A range before any point: the plan's trend there is the floor (same route, same path through the gateway, no rows). */
const EMPTY_RANGE = 'from=2000-01-01&to=2000-01-02';
const DEVICE = 'bench-pe0';
const RULES = ['ntp-servers', 'snmp-community', 'login-banner'];
/** The rules the tree version gives the device: every rule it checks. */
const EVALUABLE: ReadonlySet<string> = new Set(RULES);

/** Measured requests of one route. */
export interface HistoryReadRun {
  readonly route: string;
  /** Rows each answer held (checked on every answer). */
  readonly rows: number;
  readonly concurrency: number;
  readonly latency: Summary;
  /** Answers that were not 200 or held another number of rows. */
  readonly errors: number;
}

/** The batch id of day `day` (24 hex digits, as the service makes them). */
const batchIdOf = (day: number): string => `b0000000000000000${day.toString(16).padStart(7, '0')}`;

/** What the daily check of day `day` found: one rule failing some days, two others. */
const checkOf = (day: number, at: string): CheckedDevice => {
  const failing = RULES.filter((_, r) => (day + r) % (5 + 2 * r) === 0);
  const grade: Grade = failing.length >= 2 ? 'fail' : failing.length === 1 ? 'review' : 'pass';
  return { device: DEVICE, batchId: batchIdOf(day), at, grade, score: 100 - 10 * failing.length, failing, reportId: `${batchIdOf(day)}-0` };
};

/** Runs `task(0 … count − 1)` on `concurrency` workers. */
const pool = async (count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
};

/**
 * Seeds the plan's history in the local stack's compliance table: the device's 365 daily points,
 * the last day's written as the engine writes it (point, `STATE` computed over the year, delta
 * row), and the trend points of the last 90 days.
 */
export const seedPlanHistory = async (client: DynamoDBDocumentClient, table: string, now: number): Promise<{ planId: string; device: string }> => {
  const batches = createComplianceStore(client, table);
  const history = createHistoryStore(batches, client, table);
  const expiry = { history: Math.floor(now / 1000) + 400 * 86_400, batch: Math.floor(now / 1000) + 30 * 86_400 };
  const writes: DeviceWrite[] = [];
  let stored: StoredState | undefined;
  for (let day = 0; day < DEVICE_POINTS; day++) {
    const at = new Date(now - (DEVICE_POINTS - day) * DAY_MS).toISOString();
    const checked = checkOf(day, at);
    const step = deviceStep(stored, checked, day > 0 ? batchIdOf(day - 1) : undefined, EVALUABLE);
    writes.push({ checked, ...step });
    stored = step.state;
  }
  const last = writes.at(-1)!;
  await batches.putItems(writes.slice(0, -1).map(({ checked: { device, ...point } }) => devicePointItem(PLAN_ID, device, point, expiry.history)));
  await history.writeDevices(PLAN_ID, last.checked.batchId, [last], expiry);
  await batches.putItems(
    writes.slice(-TREND_POINTS).map(({ checked }) =>
      trendPointItem(
        PLAN_ID,
        {
          batchId: checked.batchId,
          kind: 'compliance',
          status: 'completed',
          started: checked.at,
          finished: new Date(Date.parse(checked.at) + 600_000).toISOString(),
          total: 1_000,
          grades: { pass: 900, review: 60, fail: 30, error: 10, 'out-of-sync': 0, kept: 0 },
          totals: { errors: 45, warnings: 120, infos: 300, passes: 9_000 },
          delta: { 'newly-failing': 3, fixed: 4, changed: 5, new: 0, gone: 0 },
        },
        expiry.history,
      ),
    ),
  );
  return { planId: PLAN_ID, device: DEVICE };
};

/** `requests` GETs of `path` by `concurrency` clients after `warmup` unmeasured ones; each answer must be 200 with `rows` rows. */
export const measureRead = async (
  stack: LocalStack,
  o: { path: string; rows: (body: unknown) => number; expected: number; requests: number; warmup: number; concurrency: number },
): Promise<HistoryReadRun> => {
  const url = `${stack.baseUrl}${o.path}`;
  const headers = { Authorization: `Bearer ${stack.token(['apiread'])}` };
  const samples: number[] = [];
  let errors = 0;
  const once = async (measured: boolean): Promise<void> => {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    const body = res.status === 200 ? ((await res.json()) as unknown) : await res.text();
    const ms = performance.now() - t0;
    if (!measured) return;
    samples.push(ms);
    if (res.status !== 200 || o.rows(body) !== o.expected) errors++;
  };
  await pool(o.warmup, o.concurrency, () => once(false));
  await pool(o.requests, o.concurrency, () => once(true));
  return { route: `GET ${o.path}`, rows: o.expected, concurrency: o.concurrency, latency: summarize(samples), errors };
};

/** What the section measured: the seeding's time, the floor (an empty trend) and the two reads. */
export interface HistoryReads {
  readonly seedSeconds: number;
  readonly floor: HistoryReadRun;
  readonly trend: HistoryReadRun;
  readonly device: HistoryReadRun;
}

/**
 * Seeds the plan and measures, on a started local stack, the plan's trend over a range without
 * points (the floor: gateway, authorizer, function and its reads, no rows), then both reads.
 */
export const measureHistoryReads = async (stack: LocalStack, o: { requests: number; concurrency: number }): Promise<HistoryReads> => {
  const t0 = performance.now();
  const table = stack.tables['compliance'];
  if (!table) throw new Error('the local stack has no compliance table');
  const client = documentClientFor(new DynamoDBClient({ endpoint: stack.dynamodbEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }));
  const { planId, device } = await seedPlanHistory(client, table, Date.now());
  const seedSeconds = (performance.now() - t0) / 1000;
  const base = `/configuration_manager/compliance_plans/${planId}`;
  const common = { requests: o.requests, warmup: 2 * o.concurrency, concurrency: o.concurrency };
  const trendRows = (b: unknown) => (b as { items?: unknown[] }).items?.length ?? -1;
  const floor = await measureRead(stack, { ...common, path: `${base}/trend?${EMPTY_RANGE}`, rows: trendRows, expected: 0 });
  const trend = await measureRead(stack, { ...common, path: `${base}/trend`, rows: trendRows, expected: TREND_POINTS });
  const deviceRun = await measureRead(stack, {
    ...common,
    path: `${base}/devices/${device}?limit=${DEVICE_POINTS}`,
    rows: (b) => (b as { points?: unknown[] }).points?.length ?? -1,
    expected: DEVICE_POINTS,
  });
  return { seedSeconds, floor, trend, device: deviceRun };
};
