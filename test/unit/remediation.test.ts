import { describe, expect, it } from 'vitest';
import { type RemediatedRule, type RemediationInput, remediateDevice } from '../../functions/remediation/generate.js';
import { applyEdits, formatTarget, listKeysFrom, PatchError, parseTarget, type YangPatchEdit } from '../../functions/remediation/patch.js';
import type { JsonValue } from '../../functions/trees/config-model.js';
import { evaluateRules } from '../../functions/trees/rules.js';

const IOS = 'tailf-ned-cisco-ios';
const lists = listKeysFrom({ [`${IOS}:interface/GigabitEthernet`]: ['name'], [`${IOS}:logging/host`]: ['ip', 'vrf'] });
const BASE = `/tailf-ncs:devices/device=R1/config`;
const policyKeys = listKeysFrom({ [`${IOS}:interface/GigabitEthernet`]: ['name'], [`${IOS}:logging/host`]: ['ip', 'vrf'], [`${IOS}:policy/rule`]: ['id'] });

const rule = (
  id: string,
  mode: RemediatedRule['mode'],
  path: string,
  value?: RemediatedRule['value'],
  extra: Partial<RemediatedRule> = {},
): RemediatedRule => ({
  id,
  mode,
  path,
  severity: 'error',
  ...(value === undefined ? {} : { value }),
  ...extra,
});

const config = () => ({
  [`${IOS}:hostname`]: 'r1',
  [`${IOS}:ntp`]: { server: ['10.0.0.9'], source: 'Loopback0' },
  [`${IOS}:interface`]: {
    GigabitEthernet: [
      { name: '0/1', description: 'uplink', mtu: 1500 },
      { name: '0/2', shutdown: [null] },
    ],
  },
  [`${IOS}:logging`]: { host: [{ ip: '10.1.1.1', vrf: 'mgmt' }] },
});

const remediate = (rules: RemediatedRule[], over: Partial<RemediationInput> = {}) =>
  remediateDevice({ device: 'R1', config: config(), rules, variables: { ntp: '10.0.0.1', site: 'Paris' }, listKeys: lists, ...over });

const edits = (r: ReturnType<typeof remediate>): readonly YangPatchEdit[] => r.patch?.['ietf-yang-patch:yang-patch'].edit ?? [];

/** The patch applied to the configuration: every rule passes afterwards. */
const allPassAfter = (r: ReturnType<typeof remediate>, rules: RemediatedRule[], variables = { ntp: '10.0.0.1', site: 'Paris' }) => {
  const after = applyEdits(config(), edits(r), lists);
  return evaluateRules(after, variables, rules).map((v) => v.status);
};

describe('remediation: required', () => {
  it('merges the expected value at its path, with variables substituted', () => {
    const rules = [rule('ntp', 'required', `/${IOS}:ntp`, { source: 'Loopback0', 'server-{{site}}': '{{ntp}}' })];
    const r = remediate(rules);
    expect(edits(r)).toEqual([
      { 'edit-id': 'ntp#1', operation: 'merge', target: `${BASE}/${IOS}:ntp`, value: { [`${IOS}:ntp`]: { source: 'Loopback0', 'server-Paris': '10.0.0.1' } } },
    ]);
    expect(r.rules).toEqual([{ ruleId: 'ntp', edits: ['ntp#1'] }]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('adds only the missing list entries, each at its key, and a leaf-list value at its value', () => {
    const rules = [
      rule('gi', 'required', `/${IOS}:interface/GigabitEthernet`, [{ name: '0/1' }, { name: '0/3', description: 'new' }]),
      rule('ntp', 'required', `/${IOS}:ntp/server`, ['10.0.0.9', '{{ntp}}']),
    ];
    const r = remediate(rules);
    expect(edits(r)).toEqual([
      {
        'edit-id': 'gi#1',
        operation: 'merge',
        target: `${BASE}/${IOS}:interface/GigabitEthernet=0%2F3`,
        value: { [`${IOS}:GigabitEthernet`]: [{ name: '0/3', description: 'new' }] },
      },
      { 'edit-id': 'ntp#1', operation: 'merge', target: `${BASE}/${IOS}:ntp/server=10.0.0.1`, value: { [`${IOS}:server`]: ['10.0.0.1'] } },
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass']);
  });

  it('addresses a path through a list entry by the entry keys, composite keys joined by a comma', () => {
    const rules = [
      rule('desc', 'required', `/${IOS}:interface/GigabitEthernet/1/description`, 'spare'),
      rule('host', 'required', `/${IOS}:logging/host/0`, { severity: 'debugging' }),
    ];
    const r = remediate(rules);
    expect(edits(r).map((e) => [e.target, e.value])).toEqual([
      [`${BASE}/${IOS}:interface/GigabitEthernet=0%2F2/description`, { [`${IOS}:description`]: 'spare' }],
      [`${BASE}/${IOS}:logging/host=10.1.1.1,mgmt`, { [`${IOS}:host`]: [{ ip: '10.1.1.1', vrf: 'mgmt', severity: 'debugging' }] }],
    ]);
  });

  it('passing rules produce nothing', () => {
    const r = remediate([rule('ok', 'required', `/${IOS}:hostname`, 'r1')]);
    expect(r).toEqual({ device: 'R1', rules: [] });
  });

  it('says why a required rule without a value cannot be remediated', () => {
    const r = remediate([rule('x', 'required', `/${IOS}:banner`)]);
    expect(r.patch).toBeUndefined();
    expect(r.rules).toStrictEqual([{ ruleId: 'x', unremediable: expect.stringMatching(/nothing to write/) }]);
  });
});

describe('remediation: exact', () => {
  it('replaces the node with the expected value', () => {
    const rules = [rule('ntp', 'exact', `/${IOS}:ntp`, { server: ['{{ntp}}'] })];
    const r = remediate(rules);
    expect(edits(r)).toEqual([{ 'edit-id': 'ntp#1', operation: 'replace', target: `${BASE}/${IOS}:ntp`, value: { [`${IOS}:ntp`]: { server: ['10.0.0.1'] } } }]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('makes a list exact: removes entries the value lacks, replaces the ones that differ', () => {
    const rules = [rule('gi', 'exact', `/${IOS}:interface/GigabitEthernet`, [{ name: '0/2', shutdown: [null] }, { name: '0/4' }])];
    const r = remediate(rules);
    expect(edits(r).map((e) => [e.operation, e.target])).toEqual([
      ['remove', `${BASE}/${IOS}:interface/GigabitEthernet=0%2F1`],
      ['replace', `${BASE}/${IOS}:interface/GigabitEthernet=0%2F4`],
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('replaces a list entry in place, and refuses to change its key', () => {
    const ok = [rule('e', 'exact', `/${IOS}:interface/GigabitEthernet/0`, { name: '0/1', mtu: 9000 })];
    expect(edits(remediate(ok))).toEqual([
      {
        'edit-id': 'e#1',
        operation: 'replace',
        target: `${BASE}/${IOS}:interface/GigabitEthernet=0%2F1`,
        value: { [`${IOS}:GigabitEthernet`]: [{ name: '0/1', mtu: 9000 }] },
      },
    ]);
    expect(allPassAfter(remediate(ok), ok)).toEqual(['pass']);
    const keyless = remediate([rule('e', 'exact', `/${IOS}:interface/GigabitEthernet/0`, { mtu: 9000 })]);
    expect(keyless.rules).toEqual([{ ruleId: 'e', unremediable: expect.stringMatching(/must hold its keys \(name\)/) }]);
    const moved = remediate([rule('e', 'exact', `/${IOS}:interface/GigabitEthernet/0`, { name: '0/9' })]);
    expect(moved.rules).toEqual([{ ruleId: 'e', unremediable: expect.stringMatching(/changes a key/) }]);
  });

  it('refuses an ordered comparison of lists, which NSO orders itself', () => {
    const r = remediate([rule('o', 'exact', `/${IOS}:ntp/server`, ['b', 'a'], { ordered: true })]);
    expect(r.rules).toEqual([{ ruleId: 'o', unremediable: expect.stringMatching(/in order/) }]);
    const single = [rule('o', 'exact', `/${IOS}:ntp/server`, ['b'], { ordered: true })];
    expect(allPassAfter(remediate(single), single)).toEqual(['pass']);
  });
});

describe('remediation: disallowed', () => {
  it('removes what is there: a node, a list entry holding the value, the members of an object', () => {
    const rules = [
      rule('host', 'disallowed', `/${IOS}:logging/host`, [{ vrf: 'mgmt' }]),
      rule('gone', 'disallowed', `/${IOS}:hostname`),
      rule('src', 'disallowed', `/${IOS}:ntp`, { source: 'Loopback0' }),
    ];
    const r = remediate(rules);
    expect(edits(r)).toEqual([
      { 'edit-id': 'host#1', operation: 'remove', target: `${BASE}/${IOS}:logging/host=10.1.1.1,mgmt` },
      { 'edit-id': 'gone#1', operation: 'remove', target: `${BASE}/${IOS}:hostname` },
      { 'edit-id': 'src#1', operation: 'remove', target: `${BASE}/${IOS}:ntp/source` },
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass', 'pass']);
  });

  it('removes a whole entry when the value names one of its keys, and every entry of a disallowed list', () => {
    const rules = [rule('e', 'disallowed', `/${IOS}:logging/host/0`, { ip: '10.1.1.1' }), rule('l', 'disallowed', `/${IOS}:ntp/server`)];
    const r = remediate(rules);
    expect(edits(r).map((e) => e.target)).toEqual([`${BASE}/${IOS}:logging/host=10.1.1.1,mgmt`, `${BASE}/${IOS}:ntp/server=10.0.0.9`]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass']);
  });

  it('refuses to disallow the whole configuration, or an entry whose removal moves the next one in its place', () => {
    const r = remediate([rule('all', 'disallowed', ''), rule('pos', 'disallowed', `/${IOS}:interface/GigabitEthernet/0`)]);
    expect(r.rules).toEqual([
      { ruleId: 'all', unremediable: 'the whole configuration always exists' },
      { ruleId: 'pos', unremediable: expect.stringMatching(/would not make the rule pass/) },
    ]);
  });
});

describe('remediation: what cannot be remediated', () => {
  it.each<[string, string, JsonValue, RegExp]>([
    ['a list whose keys are not known', `/${IOS}:unknown`, [{ a: 1 }], /keys of the list/],
    ['a member that is no YANG name', `/${IOS}:ntp/bad name`, 1, /^"bad name" is not a YANG node name$/],
    ['a top-level member without its module', '/hostname', 'x', /without its module/],
    ['a leaf-list value by position', `/${IOS}:ntp/server/0`, 'x', /leaf-list value by its position/],
    ['a list entry that does not exist', `/${IOS}:interface/GigabitEthernet/7/mtu`, 1, /no entry/],
    ['a key of a list entry', `/${IOS}:interface/GigabitEthernet/0/name`, 'x', /is the key name/],
    ['an entry of a list that is not there', `/${IOS}:vlan/0/id`, 1, /no list there/],
    ['a path below a value', `/${IOS}:hostname/x`, 1, /^\/tailf-ned-cisco-ios:hostname is a value, not a container$/],
    ['an empty list', `/${IOS}:ntp/peer`, [], /^tailf-ned-cisco-ios:ntp\/peer: an empty list/],
    [
      'entries without their key',
      `/${IOS}:interface/GigabitEthernet`,
      [{ mtu: 1 }],
      /^an entry of tailf-ned-cisco-ios:interface\/GigabitEthernet has no value for a key \(name\)$/,
    ],
    ['a leaf-list with a value twice', `/${IOS}:ntp/peer`, ['a', 'a'], /each value once/],
    ['entries mixing objects and values', `/${IOS}:ntp/peer`, ['a', { b: 1 }], /all objects or all values/],
    ['an entry with a member that is no YANG name', `/${IOS}:interface/GigabitEthernet`, [{ name: 'x', 'a b': 1 }], /not a YANG node name/],
    ['a scalar for the whole configuration', '', 1, /whole configuration is an object/],
    ['a scalar for a list entry', `/${IOS}:interface/GigabitEthernet/0`, 'x', /list entry and the value is not an object/],
    ['a list where the configuration has a value', `/${IOS}:hostname`, ['a'], /^\/tailf-ned-cisco-ios:hostname is not a list$/],
    ['a change of one key of two', `/${IOS}:logging/host/0`, { vrf: 'other' }, /changes a key/],
    ['a list value for a list entry', `/${IOS}:interface/GigabitEthernet/0`, [{ name: '0/1' }], /list entry and the value is not an object/],
    [
      'entries without one of two keys',
      `/${IOS}:logging/host`,
      [{ ip: 'a' }],
      /^an entry of tailf-ned-cisco-ios:logging\/host has no value for a key \(ip, vrf\)$/,
    ],
    [
      'two entries with one composite key',
      `/${IOS}:logging/host`,
      [
        { ip: 'a', vrf: 'b' },
        { ip: 'a', vrf: 'b', severity: 'x' },
      ],
      /have the same key a,b$/,
    ],
    [
      'two entries with one key',
      `/${IOS}:interface/GigabitEthernet`,
      [{ name: 'a' }, { name: 'a', mtu: 1 }],
      /^two entries of tailf-ned-cisco-ios:interface\/GigabitEthernet have the same key a$/,
    ],
  ])('says so for %s', (_, path, value, reason) => {
    const r = remediate([rule('r', 'required', path, value)]);
    expect(r.patch).toBeUndefined();
    expect(r.rules).toEqual([{ ruleId: 'r', unremediable: expect.stringMatching(reason) }]);
  });

  it.each<[string, RemediatedRule, RegExp]>([
    ['an exact list where the configuration has a container', rule('x', 'exact', `/${IOS}:ntp`, ['a']), /is not a list/],
    ['an exact leaf-list where the configuration has entries', rule('x', 'exact', `/${IOS}:interface/GigabitEthernet`, ['a']), /not of the kind/],
    ['removing entries whose keys are not known', rule('x', 'disallowed', `/${IOS}:route`), /cannot be named by key/],
    ['an ordered value holding a long list below', rule('x', 'exact', `/${IOS}:ntp`, { server: ['a', 'b'], source: 'x' }, { ordered: true }), /in order/],
    [
      'an exact entry without one of its keys',
      rule('x', 'exact', `/${IOS}:logging/host/0`, { ip: '10.1.1.1', severity: 'x' }),
      /^an exact value for the list entry .* must hold its keys \(ip, vrf\)$/,
    ],
    ['an exact list where an entry lacks its key', rule('x', 'exact', `/${IOS}:policy/rule`, [{ id: 'a' }]), /not of the kind/],
    ['removing a list where an entry lacks its key', rule('x', 'disallowed', `/${IOS}:policy/rule`), /cannot be named by key/],
    ['a disallowed member that is no YANG name', rule('x', 'disallowed', `/${IOS}:odd`, { 'bad name': 1 }), /^"bad name" is not a YANG node name$/],
  ])('says so for %s', (_, r, reason) => {
    const policy = { rule: [{ id: 'b' }, { comment: 'keyless' }] };
    const result = remediate([r], {
      config: { ...config(), [`${IOS}:route`]: [{ prefix: 'p' }], [`${IOS}:policy`]: policy, [`${IOS}:odd`]: { 'bad name': 1 } },
      listKeys: policyKeys,
    });
    expect(result.rules).toEqual([{ ruleId: 'x', unremediable: expect.stringMatching(reason) }]);
  });

  it('merges a value into the whole configuration', () => {
    const rules = [rule('root', 'required', '', { [`${IOS}:banner`]: 'hi' })];
    const r = remediate(rules);
    expect(edits(r)).toEqual([{ 'edit-id': 'root#1', operation: 'merge', target: BASE, value: { 'tailf-ncs:config': { [`${IOS}:banner`]: 'hi' } } }]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('removes a node whose disallowed value is empty', () => {
    const rules = [rule('x', 'disallowed', `/${IOS}:ntp`, {})];
    const r = remediate(rules);
    expect(edits(r)).toEqual([{ 'edit-id': 'x#1', operation: 'remove', target: `${BASE}/${IOS}:ntp` }]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('says so for a rule the evaluator cannot evaluate, and keeps the node of a plan rule', () => {
    const r = remediate([rule('v', 'required', `/${IOS}:x`, '{{missing}}', { node: 'base/wan' })]);
    expect(r.rules).toEqual([{ ruleId: 'v', node: 'base/wan', unremediable: expect.stringMatching(/cannot be evaluated.*missing/) }]);
  });

  it('remediates only the rules asked for', () => {
    const rules = [rule('a', 'required', `/${IOS}:a`, 1), rule('b', 'required', `/${IOS}:b`, 2)];
    const r = remediate(rules, { ruleIds: new Set(['b']), patchId: 'p1' });
    expect(r.patch).toEqual({ 'ietf-yang-patch:yang-patch': { 'patch-id': 'p1', edit: [expect.objectContaining({ 'edit-id': 'b#1' })] } });
    expect(r.rules.map((x) => x.ruleId)).toEqual(['b']);
  });
});

describe('remediation: shapes and names', () => {
  it('writes an exact list the configuration lacks entry by entry', () => {
    const rules = [rule('peers', 'exact', `/${IOS}:ntp/peer`, ['a', 'b'])];
    const r = remediate(rules);
    expect(edits(r).map((e) => [e.operation, e.target, e.value])).toEqual([
      ['replace', `${BASE}/${IOS}:ntp/peer=a`, { [`${IOS}:peer`]: ['a'] }],
      ['replace', `${BASE}/${IOS}:ntp/peer=b`, { [`${IOS}:peer`]: ['b'] }],
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('leaves entries that already match alone, whatever the order of their leaf-lists', () => {
    const cfg = { [`${IOS}:interface`]: { GigabitEthernet: [{ name: '0/1', tags: ['b', 'a'] }, { name: '0/2' }, { name: '0/3', tags: ['b', 'a'] }] } };
    const rules = [
      rule('gi', 'exact', `/${IOS}:interface/GigabitEthernet`, [
        { name: '0/1', tags: ['a', 'b'] },
        { name: '0/3', tags: ['b', 'a'] },
      ]),
    ];
    const r = remediate(rules, { config: cfg });
    expect(edits(r).map((e) => [e.operation, e.target])).toEqual([['remove', `${BASE}/${IOS}:interface/GigabitEthernet=0%2F2`]]);
  });

  it('checks the keys of a list inside a container value, by its schema path', () => {
    const rules = [rule('gi', 'required', `/${IOS}:interface`, { GigabitEthernet: [{ name: '0/3', mtu: 9000 }] })];
    const r = remediate(rules);
    expect(edits(r)).toEqual([
      {
        'edit-id': 'gi#1',
        operation: 'merge',
        target: `${BASE}/${IOS}:interface`,
        value: { [`${IOS}:interface`]: { GigabitEthernet: [{ name: '0/3', mtu: 9000 }] } },
      },
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
    const keyless = remediate([rule('gi', 'required', `/${IOS}:interface`, { GigabitEthernet: [{ mtu: 9000 }] })]);
    expect(keyless.rules).toEqual([{ ruleId: 'gi', unremediable: expect.stringMatching(/interface\/GigabitEthernet has no value for a key \(name\)/) }]);
  });

  it('writes a node whose name is also a member every JavaScript object has', () => {
    const rules = [rule('c', 'required', `/${IOS}:ntp/constructor`, ['x'])];
    const r = remediate(rules);
    expect(edits(r).map((e) => e.target)).toEqual([`${BASE}/${IOS}:ntp/constructor=x`]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('says so for a path through a list whose keys are not known, or through an entry without its key', () => {
    const cfg = { ...config(), [`${IOS}:routing`]: { route: [{ prefix: 'p' }] }, [`${IOS}:logging`]: { host: [{ ip: '10.1.1.1' }] } };
    const r = remediate([rule('a', 'required', `/${IOS}:routing/route/0/metric`, 1), rule('b', 'required', `/${IOS}:logging/host/0/severity`, 'debugging')], {
      config: cfg,
    });
    expect(r.rules).toEqual([
      { ruleId: 'a', unremediable: `the keys of the list ${IOS}:routing/route are not known` },
      { ruleId: 'b', unremediable: `the entry /${IOS}:logging/host/0 has no value for a key of ${IOS}:logging/host (ip, vrf)` },
    ]);
  });

  it('refuses an ordered list entry holding a leaf-list of two values', () => {
    const r = remediate([rule('o', 'exact', `/${IOS}:interface/GigabitEthernet`, [{ name: '0/1', tags: ['a', 'b'] }], { ordered: true })]);
    expect(r.rules).toEqual([{ ruleId: 'o', unremediable: expect.stringMatching(/in order/) }]);
  });

  it('removes a disallowed value, an empty disallowed list, and the leaf-list values an object names', () => {
    const rules = [
      rule('host', 'disallowed', `/${IOS}:hostname`, 'r1'),
      rule('servers', 'disallowed', `/${IOS}:ntp`, { server: ['10.0.0.9'] }),
      rule('logs', 'disallowed', `/${IOS}:logging/host`, []),
    ];
    const r = remediate(rules);
    expect(edits(r)).toEqual([
      { 'edit-id': 'host#1', operation: 'remove', target: `${BASE}/${IOS}:hostname` },
      { 'edit-id': 'servers#1', operation: 'remove', target: `${BASE}/${IOS}:ntp/server=10.0.0.9` },
      { 'edit-id': 'logs#1', operation: 'remove', target: `${BASE}/${IOS}:logging/host=10.1.1.1,mgmt` },
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass', 'pass']);
  });

  it('writes leaf-lists of numbers and booleans, creating the containers on the way', () => {
    const rules = [rule('vlans', 'required', `/${IOS}:vlan/ids`, [10, 20]), rule('flags', 'required', `/${IOS}:flags/set`, [true])];
    const r = remediate(rules);
    expect(edits(r).map((e) => e.target)).toEqual([`${BASE}/${IOS}:vlan/ids=10`, `${BASE}/${IOS}:vlan/ids=20`, `${BASE}/${IOS}:flags/set=true`]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass']);
    const gone = [rule('n', 'disallowed', `/${IOS}:logging/count`, 3), rule('b', 'disallowed', `/${IOS}:logging/on`, false)];
    const off = remediate(gone, { config: { ...config(), [`${IOS}:logging`]: { count: 3, on: false } } });
    expect(edits(off).map((e) => [e.operation, e.target])).toEqual([
      ['remove', `${BASE}/${IOS}:logging/count`],
      ['remove', `${BASE}/${IOS}:logging/on`],
    ]);
  });

  it('removes the disallowed members of the whole configuration, and of a list nested in a value', () => {
    const rules = [
      rule('root', 'disallowed', '', { [`${IOS}:hostname`]: 'r1' }),
      rule('gi', 'disallowed', `/${IOS}:interface`, { GigabitEthernet: [{ mtu: 1500 }, { shutdown: [null] }] }),
    ];
    const cfg = { ...config(), [`${IOS}:interface`]: { GigabitEthernet: [...config()[`${IOS}:interface`].GigabitEthernet, { name: '0/3' }] } };
    const r = remediate(rules, { config: cfg });
    expect(edits(r).map((e) => [e.operation, e.target])).toEqual([
      ['remove', `${BASE}/${IOS}:hostname`],
      ['remove', `${BASE}/${IOS}:interface/GigabitEthernet=0%2F1`],
      ['remove', `${BASE}/${IOS}:interface/GigabitEthernet=0%2F2`],
    ]);
  });

  it('names the patch after the device, and keeps the node of a plan rule in every outcome', () => {
    const rules = [
      rule('a', 'required', `/${IOS}:banner`, 'hi', { node: 'base' }),
      rule('b', 'required', `/${IOS}:ntp/source`, 'Loopback1', { node: 'base/wan' }),
      rule('c', 'exact', `/${IOS}:ntp`, { source: 'Loopback2' }, { node: 'base/wan' }),
    ];
    const r = remediate(rules);
    expect(r.patch?.['ietf-yang-patch:yang-patch']['patch-id']).toBe('remediation-R1');
    expect(r.rules).toStrictEqual([
      { ruleId: 'a', node: 'base', edits: ['a#1'] },
      { ruleId: 'b', node: 'base/wan', unremediable: expect.stringMatching(/conflict/), conflictsWith: ['c'] },
      { ruleId: 'c', node: 'base/wan', unremediable: expect.stringMatching(/conflict/), conflictsWith: ['b'] },
    ]);
  });
});

const GI = `/${IOS}:interface/GigabitEthernet`;
const GI_TARGET = `${BASE}/${IOS}:interface/GigabitEthernet`;
/** The edits as `operation target value` lines, for short expectations. */
const lines = (r: ReturnType<typeof remediate>): string[] =>
  edits(r).map((e) => `${e.operation} ${e.target.slice(BASE.length)}${e.value ? ` ${JSON.stringify(e.value)}` : ''}`);

describe('remediation: rules over several places (wildcards, match)', () => {
  it('makes the rule’s own edit at each match that does not hold, and none where it holds', () => {
    const rules = [rule('mtu', 'required', `${GI}/*/mtu`, 1500), rule('desc', 'exact', `${GI}/*/description`, 'edge {{site}}')];
    const r = remediate(rules);
    expect(lines(r)).toEqual([
      `merge /${IOS}:interface/GigabitEthernet=0%2F2/mtu {"${IOS}:mtu":1500}`,
      `replace /${IOS}:interface/GigabitEthernet=0%2F1/description {"${IOS}:description":"edge Paris"}`,
      `replace /${IOS}:interface/GigabitEthernet=0%2F2/description {"${IOS}:description":"edge Paris"}`,
    ]);
    expect(r.rules).toEqual([
      { ruleId: 'mtu', edits: ['mtu#1'] },
      { ruleId: 'desc', edits: ['desc#1', 'desc#2'] },
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass']);
  });

  it('removes at each match of a disallowed rule that holds the value, and only there', () => {
    const rules = [rule('uplink', 'disallowed', `${GI}/*/description`, 'uplink'), rule('mtu', 'disallowed', `${GI}/*/mtu`)];
    const r = remediate(rules);
    expect(lines(r)).toEqual([`remove /${IOS}:interface/GigabitEthernet=0%2F1/description`, `remove /${IOS}:interface/GigabitEthernet=0%2F1/mtu`]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass']);
  });

  it('fixes every failing match, not only those a report lists', () => {
    const many = { [`${IOS}:interface`]: { GigabitEthernet: Array.from({ length: 120 }, (_, i) => ({ name: `0/${i}` })) } };
    const rules = [rule('desc', 'required', `${GI}/*/description`, 'x')];
    const r = remediate(rules, { config: many });
    expect(edits(r)).toHaveLength(120);
    expect(edits(r).at(-1)?.target).toBe(`${GI_TARGET}=0%2F119/description`);
    expect(evaluateRules(applyEdits(many, edits(r), lists), {}, rules)[0]?.status).toBe('pass');
  });

  it('makes the edit of the negated mode at each match of a `none` rule that holds', () => {
    const rules = [
      rule('no-desc', 'required', `${GI}/*/description`, undefined, { match: 'none' }),
      rule('no-1500', 'exact', `${GI}/*/mtu`, 1500, { match: 'none' }),
      rule('sev', 'disallowed', `/${IOS}:logging/host/*`, { severity: 'warnings' }, { match: 'none' }),
    ];
    const r = remediate(rules);
    expect(lines(r)).toEqual([
      `remove /${IOS}:interface/GigabitEthernet=0%2F1/description`,
      `remove /${IOS}:interface/GigabitEthernet=0%2F1/mtu`,
      `merge /${IOS}:logging/host=10.1.1.1,mgmt {"${IOS}:host":[{"ip":"10.1.1.1","vrf":"mgmt","severity":"warnings"}]}`,
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass', 'pass']);
  });

  it('writes the value at each match of a `none` disallowed rule that lacks it', () => {
    const rules = [rule('mtu', 'disallowed', `${GI}/*/mtu`, 1500, { match: 'none' })];
    const r = remediate(rules);
    expect(lines(r)).toEqual([`merge /${IOS}:interface/GigabitEthernet=0%2F2/mtu {"${IOS}:mtu":1500}`]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('fixes the one match of an `any` rule, and cannot choose among several', () => {
    const one = [rule('one', 'required', `/${IOS}:hostname`, 'r9', { match: 'any' })];
    expect(lines(remediate(one))).toEqual([`merge /${IOS}:hostname {"${IOS}:hostname":"r9"}`]);
    const r = remediate([rule('some', 'required', `${GI}/*/mtu`, 9000, { match: 'any' })]);
    expect(r.patch).toBeUndefined();
    expect(r.rules).toEqual([
      {
        ruleId: 'some',
        unremediable:
          'none of the 2 matches of /tailf-ned-cisco-ios:interface/GigabitEthernet/*/mtu holds, and match "any" does not say which of them to change',
      },
    ]);
  });

  it('has nothing to apply a rule with no match to', () => {
    const r = remediate([rule('vlan', 'required', `/${IOS}:vlan/*/name`, 'x'), rule('any', 'required', `/${IOS}:vlan/*`, {}, { match: 'any' })]);
    expect(r.rules).toEqual([
      { ruleId: 'vlan', unremediable: 'nothing matches /tailf-ned-cisco-ios:vlan/*/name: there is nothing to apply the rule to' },
      { ruleId: 'any', unremediable: 'nothing matches /tailf-ned-cisco-ios:vlan/*: there is nothing to apply the rule to' },
    ]);
  });

  it('says why the first match it cannot fix stops the rule', () => {
    const r = remediate([rule('key', 'required', `${GI}/*/name`, 'x')]);
    expect(r.rules).toEqual([{ ruleId: 'key', unremediable: `${GI}/0/name is the key name of its list entry, which names the entry and cannot be changed` }]);
  });
});

describe('remediation: edits a removal takes along', () => {
  it('sends a removal below another removal, or a write below a later removal, as that removal', () => {
    const rules = [
      rule('w', 'required', `${GI}/*/speed`, 'auto', { allowEmpty: true }),
      rule('mtu', 'disallowed', `${GI}/*/mtu`),
      rule('gone', 'disallowed', GI),
    ];
    const r = remediate(rules);
    expect(lines(r)).toEqual([`remove /${IOS}:interface/GigabitEthernet=0%2F1`, `remove /${IOS}:interface/GigabitEthernet=0%2F2`]);
    expect(r.rules).toEqual([
      { ruleId: 'w', edits: ['gone#1', 'gone#2'] },
      { ruleId: 'mtu', edits: ['gone#1'] },
      { ruleId: 'gone', edits: ['gone#1', 'gone#2'] },
    ]);
    const after = applyEdits(config(), edits(r), lists);
    expect(applyEdits(after, edits(r), lists)).toEqual(after);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass', 'pass']);
  });

  it('keeps a write after a removal above it: the patch refuses it, and the removal is left out', () => {
    const r = remediate([rule('gone', 'disallowed', GI), rule('w', 'required', `${GI}/*/speed`, 'auto', { allowEmpty: true })]);
    expect(r.rules).toEqual([
      { ruleId: 'gone', unremediable: expect.stringMatching(/conflict/), conflictsWith: ['w'] },
      { ruleId: 'w', edits: ['w#1', 'w#2'] },
    ]);
  });
});

describe('remediation: strict lists', () => {
  it('removes the entries besides the expected ones and merges the missing ones', () => {
    const rules = [rule('ntp', 'required', `/${IOS}:ntp/server`, ['{{ntp}}'], { strict: true })];
    const r = remediate(rules);
    expect(lines(r)).toEqual([`remove /${IOS}:ntp/server=10.0.0.9`, `merge /${IOS}:ntp/server=10.0.0.1 {"${IOS}:server":["10.0.0.1"]}`]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });

  it('merges into an extra entry whose key a missing entry has, instead of removing it', () => {
    const rules = [rule('gi', 'required', GI, [{ name: '0/2', mtu: 9000 }], { strict: true })];
    const r = remediate(rules);
    expect(lines(r)).toEqual([
      `remove /${IOS}:interface/GigabitEthernet=0%2F1`,
      `merge /${IOS}:interface/GigabitEthernet=0%2F2 {"${IOS}:GigabitEthernet":[{"name":"0/2","mtu":9000}]}`,
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
    const after = applyEdits(config(), edits(r), lists);
    expect(after[`${IOS}:interface`]).toEqual({ GigabitEthernet: [{ name: '0/2', shutdown: [null], mtu: 9000 }] });
  });

  it('removes only the extra entries when every expected one is there', () => {
    const rules = [rule('gi', 'required', GI, [{ name: '0/1' }], { strict: true })];
    expect(lines(remediate(rules))).toEqual([`remove /${IOS}:interface/GigabitEthernet=0%2F2`]);
  });

  it('says so when an extra entry cannot be named by its key', () => {
    const policy = { rule: [{ id: 'b' }, { comment: 'keyless' }] };
    const r = remediate([rule('p', 'required', `/${IOS}:policy/rule`, [{ id: 'b' }], { strict: true })], {
      config: { ...config(), [`${IOS}:policy`]: policy },
      listKeys: policyKeys,
    });
    expect(r.rules).toEqual([{ ruleId: 'p', unremediable: `the entries at /${IOS}:policy/rule cannot be named by key` }]);
  });
});

describe('remediation: predicates', () => {
  it.each<[string, Partial<RemediatedRule>, string]>([
    ['pattern', { pattern: '^r' }, 'pattern'],
    ['oneOf and range', { oneOf: [1, 2], range: { min: 1 } }, 'oneOf, range'],
    ['cidr', { cidr: ['10.0.0.0/8'] }, 'cidr'],
  ])('cannot say which value to write for a required or exact rule with %s', (_, predicate, named) => {
    for (const mode of ['required', 'exact'] as const) {
      const r = remediate([rule('p', mode, `/${IOS}:banner`, undefined, predicate)]);
      expect(r.rules).toEqual([{ ruleId: 'p', unremediable: `the rule's ${named} says what the value at /${IOS}:banner may be, not which value to write` }]);
    }
  });

  it('removes the value a disallowed predicate matches: a leaf, a leaf-list value, at each match', () => {
    const cfg = { ...config(), [`${IOS}:ntp`]: { server: ['10.0.0.9', '192.0.2.1', '10.2.0.1'] } };
    const rules = [
      rule('host', 'disallowed', `/${IOS}:hostname`, undefined, { pattern: '^r[0-9]$' }),
      rule('ntp', 'disallowed', `/${IOS}:ntp/server`, undefined, { cidr: ['10.0.0.0/8'] }),
      rule('desc', 'disallowed', `${GI}/*/description`, undefined, { oneOf: ['uplink', 'spare'] }),
      rule('mtu', 'disallowed', `${GI}/*/mtu`, 1500, { range: { max: 1500 } }),
    ];
    const r = remediate(rules, { config: cfg });
    expect(lines(r)).toEqual([
      `remove /${IOS}:hostname`,
      `remove /${IOS}:ntp/server=10.0.0.9`,
      `remove /${IOS}:ntp/server=10.2.0.1`,
      `remove /${IOS}:interface/GigabitEthernet=0%2F1/description`,
      `remove /${IOS}:interface/GigabitEthernet=0%2F1/mtu`,
    ]);
    expect(evaluateRules(applyEdits(cfg, edits(r), lists), {}, rules).map((v) => v.status)).toEqual(['pass', 'pass', 'pass', 'pass']);
  });

  it('cannot make a `none` disallowed predicate hold', () => {
    const r = remediate([rule('p', 'disallowed', `${GI}/*/description`, undefined, { pattern: 'x', match: 'none' })]);
    expect(r.rules).toEqual([{ ruleId: 'p', unremediable: `the rule's pattern says what the value at ${GI}/0/description may be, not which value to write` }]);
  });

  it('removes the values a `none` required predicate finds', () => {
    const rules = [rule('p', 'required', `/${IOS}:ntp/server`, undefined, { cidr: ['10.0.0.0/8'], match: 'none' })];
    const r = remediate(rules);
    expect(lines(r)).toEqual([`remove /${IOS}:ntp/server=10.0.0.9`]);
    expect(allPassAfter(r, rules)).toEqual(['pass']);
  });
});

describe('remediation: a leaf-list value by its position', () => {
  it('is removed by its value, and the removal checked: the next value moving in fails it', () => {
    const one = [rule('first', 'disallowed', `/${IOS}:ntp/server/0`, '10.0.0.9')];
    expect(lines(remediate(one))).toEqual([`remove /${IOS}:ntp/server=10.0.0.9`]);
    const cfg = { ...config(), [`${IOS}:ntp`]: { server: ['10.0.0.9', '10.0.0.8'] } };
    const r = remediate([rule('first', 'disallowed', `/${IOS}:ntp/server/0`)], { config: cfg });
    expect(r.patch).toBeUndefined();
    expect(r.rules).toEqual([{ ruleId: 'first', unremediable: expect.stringMatching(/^the operations found would not make the rule pass: /) }]);
  });

  it('is written nowhere: a target names a leaf-list value by its value', () => {
    const r = remediate([rule('x', 'exact', `/${IOS}:ntp/server/0`, '10.0.0.1')]);
    expect(r.rules).toEqual([{ ruleId: 'x', unremediable: `/${IOS}:ntp/server/0 names a leaf-list value by its position, which a target cannot` }]);
  });

  it('is removed only when it has a value a target can name', () => {
    const r = remediate([rule('x', 'disallowed', `/${IOS}:shut/0`)], { config: { ...config(), [`${IOS}:shut`]: [null] } });
    expect(r.rules).toEqual([{ ruleId: 'x', unremediable: `/${IOS}:shut/0 names a leaf-list value by its position, which a target cannot` }]);
  });
});

describe('remediation: exempted rules', () => {
  const until = '2027-01-01T00:00:00.000Z';
  it('generates nothing for a failing exempted rule and says which exemption holds; other rules go on', () => {
    const rules = [
      rule('ntp', 'required', `/${IOS}:ntp/server`, ['{{ntp}}'], { node: 'base' }),
      rule('host', 'exact', `/${IOS}:hostname`, 'r9'),
      rule('ok', 'required', `/${IOS}:hostname`),
    ];
    const exemptions = new Map([
      ['ntp', { exemptionId: 'e'.repeat(24), until }],
      ['ok', { exemptionId: 'f'.repeat(24), until }],
    ]);
    const r = remediate(rules, { exemptions });
    expect(r.rules).toEqual([
      { ruleId: 'ntp', node: 'base', exempted: { exemptionId: 'e'.repeat(24), until } },
      { ruleId: 'host', edits: ['host#1'] },
    ]);
    expect(edits(r).map((e) => e['edit-id'])).toEqual(['host#1']);
  });

  it('sends no patch when every failing rule is exempted', () => {
    const r = remediate([rule('host', 'exact', `/${IOS}:hostname`, 'r9')], { exemptions: new Map([['host', { exemptionId: 'e'.repeat(24), until }]]) });
    expect(r).toEqual({ device: 'R1', rules: [{ ruleId: 'host', exempted: { exemptionId: 'e'.repeat(24), until } }] });
  });
});

describe('remediation: conflicting rules', () => {
  it('reports rules whose operations contradict, and sends the others', () => {
    const rules = [
      rule('want', 'required', `/${IOS}:ntp/source`, 'Loopback1'),
      rule('only', 'exact', `/${IOS}:ntp`, { server: ['10.0.0.9'], source: 'Loopback2' }),
      rule('fine', 'required', `/${IOS}:banner`, 'hi'),
    ];
    const r = remediate(rules);
    expect(r.rules).toStrictEqual([
      { ruleId: 'want', unremediable: 'its operations conflict with those of only: they cannot all hold', conflictsWith: ['only'] },
      { ruleId: 'only', unremediable: 'its operations conflict with those of want: they cannot all hold', conflictsWith: ['want'] },
      { ruleId: 'fine', edits: ['fine#1'] },
    ]);
    expect(edits(r).map((e) => e['edit-id'])).toEqual(['fine#1']);
  });

  it('reports a rule that would remove the entry another writes into', () => {
    const rules = [
      rule('drop', 'disallowed', `/${IOS}:interface/GigabitEthernet`, [{ name: '0/1' }]),
      rule('desc', 'required', `/${IOS}:interface/GigabitEthernet/0/description`, 'core'),
      rule('mtu', 'required', `/${IOS}:interface/GigabitEthernet/0/mtu`, 9000),
    ];
    const r = remediate(rules);
    // The removal makes the first write into the entry refused: those two conflict; with the
    // removal out, the other write goes through.
    expect(r.rules.map((x) => ('conflictsWith' in x ? [x.ruleId, x.conflictsWith] : x))).toEqual([
      ['drop', ['desc']],
      ['desc', ['drop']],
      { ruleId: 'mtu', edits: ['mtu#1'] },
    ]);
  });

  it('blames each broken rule on the operations that touch it, and keeps the ones that touch none', () => {
    const rules = [
      rule('source', 'required', `/${IOS}:ntp/source`, 'Loopback0'),
      rule('server', 'required', `/${IOS}:ntp/server`, ['10.0.0.9']),
      rule('only', 'exact', `/${IOS}:ntp`, { server: ['10.0.0.1'] }),
      rule('banner', 'required', `/${IOS}:banner`, 'hi'),
    ];
    const r = remediate(rules);
    expect(r.rules).toEqual([
      { ruleId: 'only', unremediable: 'its operations conflict with those of server, source: they cannot all hold', conflictsWith: ['server', 'source'] },
      { ruleId: 'banner', edits: ['banner#1'] },
    ]);
    expect(allPassAfter(r, rules)).toEqual(['pass', 'pass', 'fail', 'pass']);
  });

  it('blames the operations at, above or below a broken rule, and no other operation of the same rule', () => {
    const rules = [
      rule('ntp', 'required', `/${IOS}:ntp`, { source: 'Loopback0' }),
      rule('source', 'required', `/${IOS}:ntp/source`, 'Loopback0'),
      rule('drop', 'disallowed', `/${IOS}:ntp`, { source: 'Loopback0', server: ['10.0.0.9'] }),
      rule('banner', 'required', `/${IOS}:banner`, 'hi'),
      rule('nameA', 'required', `/${IOS}:hostname`, 'a'),
      rule('nameB', 'required', `/${IOS}:hostname`, 'b'),
    ];
    const r = remediate(rules);
    expect(r.rules).toEqual([
      { ruleId: 'drop', unremediable: expect.stringMatching(/conflict/), conflictsWith: ['ntp', 'source'] },
      { ruleId: 'banner', edits: ['banner#1'] },
      { ruleId: 'nameA', unremediable: expect.stringMatching(/conflict/), conflictsWith: ['nameB'] },
      { ruleId: 'nameB', unremediable: expect.stringMatching(/conflict/), conflictsWith: ['nameA'] },
    ]);
  });

  it('blames a refused edit on the rule it belongs to, whichever of its edits it is', () => {
    const rules = [
      rule('drop', 'disallowed', `/${IOS}:interface/GigabitEthernet`, [{ name: '0/1' }]),
      rule('strip', 'disallowed', `/${IOS}:interface/GigabitEthernet/0`, { description: 'uplink', mtu: 1500 }),
    ];
    const r = remediate(rules);
    expect(r.rules.map((x) => ('conflictsWith' in x ? [x.ruleId, x.conflictsWith] : x))).toEqual([
      ['drop', ['strip']],
      ['strip', ['drop']],
    ]);
    expect(r.patch).toBeUndefined();
  });

  it('never breaks a rule that passed', () => {
    const rules = [rule('keep', 'required', `/${IOS}:ntp/source`, 'Loopback0'), rule('only', 'exact', `/${IOS}:ntp`, { server: ['10.0.0.9'] })];
    const r = remediate(rules);
    expect(r.patch).toBeUndefined();
    expect(r.rules).toEqual([{ ruleId: 'only', unremediable: expect.stringMatching(/conflict with those of keep/), conflictsWith: ['keep'] }]);
  });
});

describe('targets', () => {
  it.each([
    ['a/b', 'a%2Fb'],
    ['k=v,w', 'k%3Dv%2Cw'],
    ['two words', 'two%20words'],
    ["it's (x)*!", 'it%27s%20%28x%29%2A%21'],
    ['café-Ω-😀', 'caf%C3%A9-%CE%A9-%F0%9F%98%80'],
  ])('percent-encodes %j in device names and keys, and parses it back', (name, encoded) => {
    const target = formatTarget(name, [{ name: `${IOS}:interface` }, { name: 'GigabitEthernet', keys: [name, '1'] }]);
    expect(target).toBe(`/tailf-ncs:devices/device=${encoded}/config/${IOS}:interface/GigabitEthernet=${encoded},1`);
    expect(parseTarget(target, 'e')).toEqual({ device: name, steps: [{ name: `${IOS}:interface` }, { name: 'GigabitEthernet', keys: [name, '1'] }] });
  });

  it('generates those targets for a device and a key with such names', () => {
    const named = { [`${IOS}:interface`]: { GigabitEthernet: [{ name: 'a/b=c, d é' }] } };
    const r = remediateDevice({
      device: 'edge/1=a, b',
      config: named,
      rules: [rule('d', 'required', `/${IOS}:interface/GigabitEthernet/0/description`, 'x')],
      variables: {},
      listKeys: lists,
    });
    expect(edits(r)[0]?.target).toBe(
      `/tailf-ncs:devices/device=edge%2F1%3Da%2C%20b/config/${IOS}:interface/GigabitEthernet=a%2Fb%3Dc%2C%20d%20%C3%A9/description`,
    );
  });

  it('says a name without a UTF-8 form cannot be remediated', () => {
    const r = remediateDevice({ device: '\ud800', config: {}, rules: [rule('d', 'required', `/${IOS}:x`, 1)], variables: {}, listKeys: lists });
    expect(r.rules).toEqual([{ ruleId: 'd', unremediable: expect.stringMatching(/percent-encoded/) }]);
  });

  it.each([
    ['/tailf-ncs:devices/device=R1', /not under/],
    ['/other/device=R1/config', /not under/],
    ['x/tailf-ncs:devices/device=R1/config', /not under/],
    ['/tailf-ncs:devices/device/config', /not under/],
    ['/tailf-ncs:devices/device=R1,R2/config', /not under/],
    ['/tailf-ncs:devices/device=R1/config=x', /not under/],
    ['/tailf-ncs:devices/device=R1/configuration', /not under/],
    ['/tailf-ncs:devices/device=R1/config/a b', /not a YANG node name/],
    ['/tailf-ncs:devices/device=%E0%A4/config', /percent-encoded/],
  ])('refuses the target %s', (target, reason) => {
    expect(() => parseTarget(target, 'e')).toThrow(reason);
  });
});

describe('applyEdits (RFC 8072 over JSON)', () => {
  const merge = (target: string, value: Record<string, unknown>, operation: YangPatchEdit['operation'] = 'merge'): YangPatchEdit => ({
    'edit-id': 'e',
    operation,
    target: `${BASE}${target}`,
    value: value as YangPatchEdit['value'],
  });

  it('merges containers member by member, list entries by key, leaf-list values once, and creates containers', () => {
    const after = applyEdits(
      config(),
      [
        merge('', { 'tailf-ncs:config': { [`${IOS}:ntp`]: { server: ['10.0.0.9', 'x'] }, [`${IOS}:new`]: { a: 1 } } }),
        merge(`/${IOS}:interface`, { [`${IOS}:interface`]: { GigabitEthernet: [{ name: '0/1', mtu: 9000 }, { name: '0/3' }] } }),
        merge(`/${IOS}:deep/er`, { [`${IOS}:er`]: 1 }),
      ],
      lists,
    );
    expect(after[`${IOS}:ntp`]).toEqual({ server: ['10.0.0.9', 'x'], source: 'Loopback0' });
    expect(after[`${IOS}:interface`]).toEqual({
      GigabitEthernet: [{ name: '0/1', description: 'uplink', mtu: 9000 }, { name: '0/2', shutdown: [null] }, { name: '0/3' }],
    });
    expect(after[`${IOS}:deep`]).toEqual({ er: 1 });
    expect(after[`${IOS}:new`]).toEqual({ a: 1 });
  });

  it('replaces, creates, deletes and removes; the last entry of a list takes the list with it', () => {
    const host = `/${IOS}:logging/host=10.1.1.1,mgmt`;
    const after = applyEdits(
      config(),
      [
        merge(`/${IOS}:ntp`, { [`${IOS}:ntp`]: { source: 'L1' } }, 'replace'),
        merge(`/${IOS}:banner`, { [`${IOS}:banner`]: 'hi' }, 'create'),
        { 'edit-id': 'd', operation: 'delete', target: `${BASE}${host}` },
        { 'edit-id': 'r', operation: 'remove', target: `${BASE}/${IOS}:nothing` },
        { 'edit-id': 'r2', operation: 'remove', target: `${BASE}/${IOS}:nothing/at=all` },
      ],
      lists,
    );
    expect(after[`${IOS}:ntp`]).toEqual({ source: 'L1' });
    expect(after[`${IOS}:banner`]).toBe('hi');
    expect(after[`${IOS}:logging`]).toEqual({});
    expect(applyEdits(config(), [{ 'edit-id': 'x', operation: 'remove', target: BASE }], lists)).toEqual({});
    expect(applyEdits(config(), [merge('', { 'tailf-ncs:config': { a: 1 } }, 'replace')], lists)).toEqual({ a: 1 });
  });

  it('never changes the configuration it is given, and keeps __proto__ a plain member', () => {
    const original = config();
    const after = applyEdits(original, [merge(`/${IOS}:ntp`, { [`${IOS}:ntp`]: JSON.parse('{"__proto__":{"polluted":1}}') })], lists);
    expect(original).toEqual(config());
    expect(Object.hasOwn(after[`${IOS}:ntp`] as object, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each<[string, YangPatchEdit, RegExp]>([
    ['create of what exists', merge(`/${IOS}:hostname`, { [`${IOS}:hostname`]: 'x' }, 'create'), /already exists/],
    ['create of an entry that exists', merge(`/${IOS}:logging/host=10.1.1.1,mgmt`, { host: [{ ip: '10.1.1.1', vrf: 'mgmt' }] }, 'create'), /already exists/],
    ['create of the configuration', merge('', { 'tailf-ncs:config': {} }, 'create'), /already exists/],
    ['delete of what is missing', { 'edit-id': 'e', operation: 'delete', target: `${BASE}/${IOS}:none` }, /does not exist/],
    ['delete of a missing entry', { 'edit-id': 'e', operation: 'delete', target: `${BASE}/${IOS}:ntp/server=1.2.3.4` }, /no entry/],
    ['a value naming another node', merge(`/${IOS}:hostname`, { [`${IOS}:other`]: 'x' }), /exactly the target node/],
    ['a value of two members', merge(`/${IOS}:hostname`, { [`${IOS}:hostname`]: 'x', b: 1 }), /exactly the target node/],
    ['an entry value that is not a one-entry list', merge(`/${IOS}:ntp/server=a`, { server: ['a', 'b'] }), /one entry/],
    ['an entry value naming another entry', merge(`/${IOS}:ntp/server=a`, { server: ['b'] }), /not the entry/],
    ['a path through a missing entry', merge(`/${IOS}:interface/GigabitEthernet=9/mtu`, { mtu: 1 }), /no entry 9/],
    ['a path through a value', merge(`/${IOS}:hostname/x`, { x: 1 }), /not a container/],
    ['an entry of what is no list', merge(`/${IOS}:hostname=a`, { hostname: ['a'] }), /not a list/],
    ['a list whose keys are unknown', merge(`/${IOS}:x=1`, { x: [{ a: 1 }] }), /keys of the list/],
    ['a merged entry without its key', merge(`/${IOS}:interface`, { interface: { GigabitEthernet: [{ mtu: 1 }] } }), /has no key/],
    ['a configuration that is not an object', merge('', { 'tailf-ncs:config': [1] }, 'replace'), /must be an object/],
    ['insert', { 'edit-id': 'e', operation: 'insert', target: `${BASE}/${IOS}:x` }, /not supported/],
    ['move', { 'edit-id': 'e', operation: 'move', target: `${BASE}/${IOS}:x` }, /not supported/],
  ])('refuses %s, naming the edit, and changes nothing', (_, edit, reason) => {
    const original = config();
    let thrown: unknown;
    try {
      applyEdits(original, [merge(`/${IOS}:banner`, { [`${IOS}:banner`]: 'first' }), edit], lists);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PatchError);
    expect((thrown as PatchError).message).toMatch(reason);
    expect((thrown as PatchError).editId).toBe(edit['edit-id']);
    expect(original).toEqual(config());
  });

  it('refuses edits of two devices', () => {
    const other = { 'edit-id': 'o', operation: 'remove', target: '/tailf-ncs:devices/device=R2/config/x' } as const;
    expect(() => applyEdits({}, [{ 'edit-id': 'a', operation: 'remove', target: `${BASE}/x` }, other], lists)).toThrow(/more than one device/);
  });
});
