/** Grading as docs/compliance.md states it, and the per-adapter gate's cap and pause. */
import { describe, expect, it } from 'vitest';
import { AdapterGate, backoffMs } from '../../functions/compliance/gate.js';
import { gradeOf, ruleTotals, score } from '../../functions/compliance/grading.js';
import { configPath } from '../../functions/compliance/check.js';

const o = (severity: 'error' | 'warning' | 'info', passed: boolean) => ({ severity, passed });

describe('grading', () => {
  it('weighs error 2, warning 1, info 0.5, rounds to one decimal, and is 100 when no rule applies', () => {
    expect(score([])).toBe(100);
    expect(score([o('error', true), o('error', false)])).toBe(50);
    expect(score([o('error', true), o('warning', false)])).toBe(66.7);
    expect(score([o('error', true), o('error', true), o('warning', true), o('error', true), o('info', false)])).toBe(93.3);
    expect(score([o('info', false)])).toBe(0);
  });

  it('grades pass at 90 or more, review at 80 or more, fail below', () => {
    expect([100, 90, 89.9, 80, 79.9, 0].map(gradeOf)).toEqual(['pass', 'pass', 'review', 'review', 'fail', 'fail']);
  });

  it('counts failed rules by severity and passed rules', () => {
    expect(ruleTotals([o('error', false), o('warning', false), o('info', false), o('info', false), o('error', true)])).toEqual({ errors: 1, warnings: 1, infos: 2, passes: 1 });
  });
});

describe('the adapter gate', () => {
  it('never lets more than its limit run at once, and serves every caller', async () => {
    const gate = new AdapterGate({ limit: 3 });
    let running = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        gate.run(async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 1));
          running--;
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(3);
    expect(gate.peak).toBe(3);
  });

  it('holds every fetch back while paused', async () => {
    let now = 1_000;
    const slept: number[] = [];
    const gate = new AdapterGate({ limit: 2, now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) });
    gate.pause(500);
    gate.pause(200); // the longest pause wins
    await gate.run(async () => undefined);
    expect(slept).toEqual([500]);
  });

  it('backs off with full jitter, doubling from 250 ms up to 20 s', () => {
    expect([1, 2, 3, 10].map((a) => backoffMs(a, () => 1))).toEqual([250, 500, 1000, 20_000]);
    expect(backoffMs(4, () => 0)).toBe(0);
  });
});

describe('configPath', () => {
  it('puts a device name in the RESTCONF path, encoded, and refuses names the relay would refuse', () => {
    expect(configPath('edge 1')).toBe('/restconf/data/tailf-ncs:devices/device=edge%201/config');
    expect(configPath("pe(1)'")).toBe('/restconf/data/tailf-ncs:devices/device=pe%281%29%27/config');
    for (const bad of ['a/b', 'a%2e', '..', 'a\\b', 'x\ny']) expect(configPath(bad)).toBeUndefined();
  });
});
