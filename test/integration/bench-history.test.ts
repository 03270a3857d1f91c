/**
 * The history section of `npm run bench` times two reads of a seeded plan: here the seed is
 * what the bench says it is (90 trend points and a year of one device's daily points, each in
 * one page of its route, and the rules a year of checks leaves), read with the routes' own code.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_POINTS, seedPlanHistory, TREND_POINTS } from '../../bench/history.js';
import { HISTORY_PAGE_LIMITS, readDeviceHistory, readTrend } from '../../functions/compliance/history-read.js';
import { HistoryStore } from '../../functions/compliance/history-store.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { createTables } from '../../tools/local/table-copies.js';

const NOW = Date.parse('2026-11-27T06:00:00.000Z');
let history: HistoryStore;
let seeded: { planId: string; device: string };

beforeAll(async () => {
  const table = (await createTables())['compliance']!;
  history = new HistoryStore(documentClient, table, new ComplianceStore(documentClient, table));
  seeded = await seedPlanHistory(documentClient, table, NOW);
});

describe('bench history seed', () => {
  it('holds 90 trend points, all in one page of the trend route, oldest first', async () => {
    const trend = await readTrend(history, seeded.planId, { limit: HISTORY_PAGE_LIMITS.trend.default });
    expect(trend.items).toHaveLength(TREND_POINTS);
    expect(trend.next).toBeUndefined();
    const started = trend.items.map((p) => p.started);
    expect(started).toEqual([...started].sort());
    expect(trend.items.every((p) => p.status === 'completed' && p.delta !== undefined)).toBe(true);
  });

  it("holds a year of the device's daily points in one page, newest first, and its rules' states", async () => {
    expect(DEVICE_POINTS).toBeLessThanOrEqual(HISTORY_PAGE_LIMITS.device.max);
    const device = await readDeviceHistory(history, seeded.planId, seeded.device, { limit: DEVICE_POINTS });
    expect(device.points).toHaveLength(DEVICE_POINTS);
    // A page as full as its limit carries a cursor (DynamoDB stops at the limit without looking
    // further); the page after it is empty.
    const after = await readDeviceHistory(history, seeded.planId, seeded.device, { limit: DEVICE_POINTS, ...(device.next ? { cursor: device.next } : {}) });
    expect(device.next === undefined || after.points.length === 0).toBe(true);
    expect(device.points[0]!.at > device.points.at(-1)!.at).toBe(true);
    const days = new Set(device.points.map((p) => p.at.slice(0, 10)));
    expect(days.size).toBe(DEVICE_POINTS);
    expect(device.rules.map((r) => r.ruleId).sort()).toEqual(['login-banner', 'ntp-servers', 'snmp-community']);
    expect(device.rules.every((r) => r.lastChangedAt <= device.points[0]!.at)).toBe(true);
  });
});
