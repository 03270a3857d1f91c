/**
 * The durable-engine benchmarks' arithmetic (a run's summary, the median of the rounds' ratios)
 * and the remediation benchmark's setup: every fleet device fails a rule the dry-run fixes, so
 * the floor and the engine each send a transaction for every device.
 */
import { describe, expect, it } from 'vitest';
import { medianRatios, summarizeRun } from '../../bench/durable.js';
import { BENCH_RULES, BENCH_VARIABLES, REMEDIATION_CONCURRENCY, VARIANTS, remediationRatio, type RemediationRun } from '../../bench/remediation.js';
import type { PlanRule } from '../../functions/compliance/model.js';
import { remediateDevice } from '../../functions/remediation/generate.js';
import { applyEdits, listKeysFrom } from '../../functions/remediation/patch.js';
import { evaluateRules } from '../../functions/trees/rules.js';
import { FLEET_LIST_KEYS, fleetConfig, fleetName } from '../../tools/simulators/nso-fleet.js';

const run = (variant: string, round: number, seconds: number, concurrency = REMEDIATION_CONCURRENCY): RemediationRun => ({
  ...summarizeRun(variant, concurrency, 100, seconds, [1, 2, 3], round, { rssHighWaterMiB: 1, cpuSeconds: 1 }),
});

describe('summarizeRun', () => {
  it('rounds seconds to hundredths and per-device times to tenths, and gives devices per second', () => {
    const summary = summarizeRun('floor', 50, 1000, 2.345, [10, 20, 30, 40], 2, { rssHighWaterMiB: 7, cpuSeconds: 1.5, dynamoCpuSeconds: 0.25 });
    expect(summary).toEqual({
      variant: 'floor',
      concurrency: 50,
      devices: 1000,
      seconds: 2.35,
      devicesPerSecond: 426,
      p50Ms: 25,
      p99Ms: 39.7,
      round: 2,
      rssHighWaterMiB: 7,
      cpuSeconds: 1.5,
      dynamoCpuSeconds: 0.25,
    });
  });
});

describe('medianRatios', () => {
  it('pairs each variant run with the base run of the same round and concurrency, and takes the median', () => {
    const runs = [run('floor', 1, 2), run('engine', 1, 3), run('floor', 2, 4), run('engine', 2, 4), run('floor', 3, 1), run('engine', 3, 5)];
    // Ratios 1.5, 1 and 5: the median is 1.5, not the ratio of the sums (12 / 7).
    expect(medianRatios(runs, 'engine', 'floor')).toEqual([{ concurrency: REMEDIATION_CONCURRENCY, ratio: 1.5 }]);
  });

  it('keeps concurrencies apart and leaves out runs with no pair', () => {
    const runs = [run('floor', 1, 2, 10), run('engine', 1, 2, 10), run('engine', 1, 9, 50), run('engine', 2, 3, 10)];
    expect(medianRatios(runs, 'engine', 'floor')).toEqual([{ concurrency: 10, ratio: 1 }]);
  });
});

describe('remediationRatio', () => {
  it('is the engine over the floor at the benchmark concurrency, undefined without pairs', () => {
    expect(remediationRatio([run(VARIANTS.floor, 1, 2), run(VARIANTS.engine, 1, 2.5)])).toBe(1.25);
    expect(remediationRatio([run(VARIANTS.engine, 1, 2.5)])).toBeUndefined();
    expect(remediationRatio([run(VARIANTS.floor, 1, 2, 10), run(VARIANTS.engine, 1, 2.5, 10)])).toBeUndefined();
  });
});

describe('the remediation benchmark fleet', () => {
  const rules = BENCH_RULES.map((r) => ({ ...r, node: 'base' })) as unknown as PlanRule[];
  const listKeys = listKeysFrom(FLEET_LIST_KEYS);

  // The fleet repeats every ten devices (nso-fleet.ts FLEET_DEVIATIONS).
  it.each(Array.from({ length: 10 }, (_, i) => i))('device %i fails netops-user, and its generated patch fixes it', (index) => {
    const device = fleetName(index);
    const config = fleetConfig(index, device);
    const before = evaluateRules(config, BENCH_VARIABLES, rules);
    expect(before.find((v) => v.id === 'netops-user')?.status).toBe('fail');
    const { patch, rules: remediated } = remediateDevice({ device, config, rules, variables: BENCH_VARIABLES, listKeys });
    expect(remediated.find((r) => r.ruleId === 'netops-user')).toHaveProperty('edits');
    const after = evaluateRules(applyEdits(config, patch!['ietf-yang-patch:yang-patch'].edit, listKeys), BENCH_VARIABLES, rules);
    expect(after.find((v) => v.id === 'netops-user')?.status).toBe('pass');
  });
});
