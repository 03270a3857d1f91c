/**
 * The history lists' query checks, made before any read: a time the calendar has not, or a
 * cursor whose key the list's own query could not have given, is a 400 (a start key outside a
 * query's key condition would be a database error, a 500).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DELTA_CHANGES } from '../../functions/compliance/history-model.js';
import { queryTime, readDelta, readTrend } from '../../functions/compliance/history-read.js';
import type { HistoryStore } from '../../functions/compliance/history-store.js';
import type { ComplianceStore } from '../../functions/compliance/store.js';
import { encodeCursor } from '../../functions/platform/cursor.js';
import { BadRequest } from '../../functions/platform/problem.js';

/** Stores no check may reach: a read means a forged cursor got through. */
const unreachable = new Proxy({}, { get: () => () => Promise.reject(new Error('the store was read')) });
const store = unreachable as ComplianceStore;
const history = unreachable as HistoryStore;
const BATCH = 'd0000000000000000000000e';
/** A cursor for `parts` (the scope any client can compute: cursors are not secret, their checks are what holds). */
const forged = (parts: readonly unknown[], k: string): string =>
  encodeCursor({ s: createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16), k });

describe('history query times', () => {
  it.each(['2026-02-30', '2026-02-29', '2025-13-01', '2025-00-10', '2025-04-31', '2026-01-01T24:00Z', '2026-01-01T23:60Z', '2026-01-01T23:59:60Z'])(
    'refuses %s, which the calendar or the clock has not',
    (value) => {
      expect(() => queryTime(value, 'to')).toThrow(BadRequest);
    },
  );

  it.each([
    ['2024-02-29', 'to', '2024-02-29T23:59:59.999Z'],
    ['0004-02-29', 'from', '0004-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59Z', 'to', '2026-12-31T23:59:59.000Z'],
    ['2026-06-30T01:00+02:00', 'from', '2026-06-29T23:00:00.000Z'],
  ] as const)('takes %s as %s', (value, field, stored) => {
    expect(queryTime(value, field)).toBe(stored);
  });
});

describe('history cursors', () => {
  it.each([
    ['new', 'X#newly-failing#zzz'],
    ['fixed', 'X#fixed'],
    ['fixed', 'X#fixed#'],
    [undefined, 'X#other#r1'],
    [undefined, 'X#'],
    ['gone', `X#gone#${'r'.repeat(1100)}`],
  ] as const)('refuses a delta cursor (change %s) with key %s before any read', async (change, key) => {
    const cursor = forged(['delta', BATCH, change ?? '*'], key);
    await expect(readDelta(store, history, BATCH, { ...(change ? { change } : {}), limit: 10, cursor })).rejects.toThrow(BadRequest);
  });

  it('reads on from a delta cursor of its own class', async () => {
    for (const change of DELTA_CHANGES) {
      const cursor = forged(['delta', BATCH, change], `X#${change}#r1`);
      await expect(readDelta(store, history, BATCH, { change, limit: 10, cursor })).rejects.toThrow('the store was read');
    }
  });

  it('refuses a trend cursor whose key lies outside the range asked', async () => {
    const range = { from: '2026-01-01T00:00:00.000Z' };
    const cursor = forged(['trend', 'p1', range], 'T#2025-12-31T00:00:00.000Z#b');
    await expect(readTrend(history, 'p1', { ...range, limit: 10, cursor })).rejects.toThrow(BadRequest);
  });
});
