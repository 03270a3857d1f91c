/** The health checks' core: time limits, aggregation, bounded concurrency. */
import { describe, expect, it } from 'vitest';
import { mapLimited } from '../../functions/health/adapter-probe.js';
import { DependencyDown, runCheck, runChecks, type Check } from '../../functions/health/checks.js';
import { toProblem } from '../../functions/runtime/http.js';
import { problemResponse } from '../../functions/platform/problem.js';

const never: Check = { name: 'hangs', run: () => new Promise(() => undefined) };
const fine: Check = { name: 'fine', details: { backend: 'local' }, run: async () => undefined };
const broken: Check = {
  name: 'broken',
  run: async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:8200'), { name: 'ResourceNotFoundException' });
  },
};

describe('runCheck', () => {
  it('gives up on a check that ignores its signal once its own time limit passes, and aborts the signal', async () => {
    let seen: AbortSignal | undefined;
    const result = await runCheck({ name: 'slow', run: (signal) => ((seen = signal), new Promise(() => undefined)) }, { timeoutMs: 20 });
    expect(result).toEqual({ status: 'down', reason: 'timeout', latencyMs: expect.any(Number) });
    expect(seen?.aborted).toBe(true);
  });

  it('reports a failing check as down with reason error and nothing of the error itself', async () => {
    const result = await runCheck(broken, { timeoutMs: 1000 });
    expect(result).toEqual({ status: 'down', reason: 'error', latencyMs: expect.any(Number) });
  });

  it('measures latency with the given clock and keeps the check’s details', async () => {
    const ticks = [100, 142];
    expect(await runCheck(fine, { timeoutMs: 1000, now: () => ticks.shift()! })).toEqual({ status: 'up', backend: 'local', latencyMs: 42 });
  });
});

describe('runChecks', () => {
  it('is up only when every check is', async () => {
    const clock = () => new Date('2026-01-02T03:04:05.678Z');
    expect(await runChecks([fine], { timeoutMs: 50, clock })).toMatchObject({ status: 'up', checkedAt: '2026-01-02T03:04:05.678Z' });
    const report = await runChecks([fine, never, broken], { timeoutMs: 50, clock });
    expect(report.status).toBe('down');
    expect(Object.keys(report.dependencies)).toEqual(['fine', 'hangs', 'broken']);
  });

  it('renders a down report as a 503 problem whose extensions carry the report', async () => {
    const report = await runChecks([fine, broken], { timeoutMs: 50 });
    const res = problemResponse(toProblem(new DependencyDown(report)), 'req-9');
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'Content-Type': 'application/problem+json', 'Retry-After': '30', 'Cache-Control': 'no-store' });
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: 503, health: 'down', detail: 'A dependency is down: broken.', requestId: 'req-9', dependencies: report.dependencies });
    expect(res.body).not.toMatch(/ECONNREFUSED|10\.0\.0\.5|ResourceNotFoundException/);
  });
});

describe('mapLimited', () => {
  it('keeps the input order and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimited([5, 1, 4, 2, 3, 0, 6], 3, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      for (let i = 0; i < n; i++) await Promise.resolve();
      running -= 1;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0, 60]);
    expect(peak).toBe(3);
    expect(await mapLimited([], 3, async () => 1)).toEqual([]);
  });
});
