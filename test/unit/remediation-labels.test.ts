/** Rollback labels of a run's commits (engine.ts `commitLabel`): one per device, whatever the names. */
import { describe, expect, it } from 'vitest';
import { commitLabel } from '../../functions/remediation/engine.js';
import { MAX_COMMIT_TEXT, commitText } from '../../functions/remediation/nso.js';

const RUN = 'a'.repeat(24);

describe('the rollback label of a device’s commit', () => {
  it('names the device when its name travels whole', () => {
    expect(commitLabel(RUN, 'edge-00001')).toBe(`remediation/${RUN}/edge-00001`);
  });

  it('stays within the bound and unchanged by the relay’s rules, whatever the name', () => {
    for (const device of ['x'.repeat(253), '路'.repeat(253), 'a%b', 'tab\there', 'back\\slash', '#abc', 'edge-1-rollback']) {
      const label = commitLabel(RUN, device);
      expect(label.length).toBeLessThanOrEqual(MAX_COMMIT_TEXT);
      expect(commitText(label)).toBe(label);
    }
  });

  it('differs for names that the bound or the relay’s rules would make equal', () => {
    const pairs = [
      [`${'x'.repeat(240)}1`, `${'x'.repeat(240)}2`],
      ['a%b', 'a_b'],
      ['a\tb', 'a_b'],
      ['#0', '#1'],
    ];
    for (const [one, other] of pairs) expect(commitLabel(RUN, one!)).not.toBe(commitLabel(RUN, other!));
    const devices = ['a', 'b', `${'y'.repeat(250)}`, `${'y'.repeat(251)}`, 'a%', 'a_'];
    expect(new Set(devices.map((d) => commitLabel(RUN, d))).size).toBe(devices.length);
  });

  it('differs between runs', () => {
    expect(commitLabel(RUN, 'r1')).not.toBe(commitLabel('b'.repeat(24), 'r1'));
  });
});
