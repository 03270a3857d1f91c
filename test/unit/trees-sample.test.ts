import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deviceAssignments } from '../../functions/trees/config-model.js';
import { evaluateRules } from '../../functions/trees/rules.js';
import { checkSeedInput } from '../../functions/trees/seed.js';
import { SAMPLE_TREES_FILE } from '../../tools/local/seed.js';
import { defaultNsoData } from '../../tools/simulators/nso-simulator.js';

/** Every sample version with content, each device on it checked against the simulator's config. */
const outcomes = () => {
  const checked = checkSeedInput(JSON.parse(readFileSync(SAMPLE_TREES_FILE, 'utf8')));
  expect(checked.rejected).toEqual([]);
  const devices = (defaultNsoData()['tailf-ncs:devices'] as { device: { name: string; config: unknown }[] }).device;
  const out: Record<string, Record<string, string>> = {};
  for (const { tree, contents } of checked.valid) {
    contents.forEach((content, i) => {
      if (!content) return;
      for (const a of deviceAssignments(content.root)) {
        const config = devices.find((d) => d.name === a.device)?.config;
        expect(config, `${a.device} is a device of the NSO simulator`).toBeDefined();
        const results = evaluateRules(config, content.variables ?? {}, a.rules);
        out[`${tree.name}@${tree.versions[i]}/${a.device}`] = Object.fromEntries(results.map((r) => [r.id, r.status]));
      }
    });
  }
  return out;
};

describe('sample trees (local mode)', () => {
  it('hold content for the simulator’s devices: some compliant, some not', () => {
    expect(outcomes()).toEqual({
      'access-switch-standard@1/ce0': { hostname: 'pass', loopback0: 'pass', 'uplink-described': 'pass', 'no-http-server': 'pass' },
      'access-switch-standard@2/ce0': { hostname: 'pass', 'ntp-servers': 'fail', loopback0: 'pass', 'uplink-described': 'pass', 'no-http-server': 'pass' },
      'core-router-baseline@3/pe0': { hostname: 'pass', loopback0: 'pass', 'ntp-servers': 'fail' },
    });
  });
});
