import { describe, expect, it } from 'vitest';
import { BENCH_RULES } from '../../bench/compliance.js';
import { measurePathologicalPattern, PATHOLOGICAL_PATTERN, PATTERN_SIZES, patternGrowth, type PatternRun } from '../../bench/rules.js';
import { RULE_MATCHES, type Rule } from '../../functions/trees/config-model.js';
import { evaluateRules } from '../../functions/trees/rules.js';
import { FLEET_LANGUAGE_RULES, FLEET_VARIABLES, fleetConfig, fleetName } from '../../tools/simulators/nso-fleet.js';

const language = FLEET_LANGUAGE_RULES as readonly Rule[];

describe('the compliance bench tree', () => {
  it('holds a rule of every form of the rule language', () => {
    const wildcard = language.filter((r) => r.path.split('/').includes('*'));
    for (const match of RULE_MATCHES)
      expect(
        wildcard.some((r) => r.match === match),
        match,
      ).toBe(true);
    for (const form of ['pattern', 'oneOf', 'cidr', 'range', 'strict', 'allowEmpty'] as const) {
      expect(
        language.some((r) => r[form] !== undefined),
        form,
      ).toBe(true);
    }
    expect(language.some((r) => r.cidr?.some((entry) => entry.includes('{{')))).toBe(true);
    expect(BENCH_RULES).toEqual(expect.arrayContaining([...FLEET_LANGUAGE_RULES]));
  });

  it('has each form act on every fleet device and pass there, so the grades stay the fleet’s own', () => {
    for (let index = 0; index < 10; index++) {
      const results = evaluateRules(fleetConfig(index, fleetName(index)), FLEET_VARIABLES, language);
      expect(results.map((r) => [r.id, r.status])).toEqual(language.map((r) => [r.id, 'pass']));
      // Every wildcard but the allowEmpty one reaches a place the device has.
      for (const r of results) if (r.matches !== undefined && r.id !== 'ports-described') expect(r.matches, r.id).toBeGreaterThan(0);
    }
  });
});

describe('the pathological-pattern workload', () => {
  it('evaluates one pattern rule over a leaf of each size, the pattern failing on every one', () => {
    const runs = measurePathologicalPattern(1);
    expect(runs.map((r) => [r.pattern, r.valueBytes, r.rounds])).toEqual(PATTERN_SIZES.map((size) => [PATHOLOGICAL_PATTERN, size, 1]));
    for (const r of runs) expect(r.configBytes).toBeGreaterThan(r.valueBytes);
  });

  it('gives the growth of the time per KB from the smallest size to the largest', () => {
    const run = (valueBytes: number, p50Ms: number): PatternRun => ({ pattern: 'x', valueBytes, configBytes: valueBytes, p50Ms, msPerKb: 0, rounds: 1 });
    expect(patternGrowth([run(200_000, 8), run(50_000, 2), run(100_000, 4)])).toBeCloseTo(1, 10);
    expect(patternGrowth([run(50_000, 1), run(200_000, 16)])).toBeCloseTo(4, 10);
    expect(patternGrowth([run(50_000, 1)])).toBeUndefined();
    expect(patternGrowth([run(50_000, 0), run(200_000, 1)])).toBeUndefined();
  });
});
