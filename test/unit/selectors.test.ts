import { describe, expect, it } from 'vitest';
import type { Exemption } from '../../functions/exemptions/model.js';
import { groupMembers, inventoryReader } from '../../functions/compliance/inventory.js';
import type { NsoEntry } from '../../functions/compliance/nso-lists.js';
import { chunkEntries, decodeChunk, decodePlan, encodePlan } from '../../functions/compliance/plan.js';
import { planBatch } from '../../functions/compliance/service.js';
import { freezeExemptions, resolveTargets, selectorsOf } from '../../functions/compliance/targeting.js';
import type { Node, Version } from '../../functions/trees/config-model.js';
import { versionProblems } from '../../functions/trees/config-checks.js';
import { describeSelector, normalizeSelector, selects, selectorProblems, type DeviceFacts } from '../../functions/trees/selectors.js';

const facts = (name: string, more: Partial<DeviceFacts> = {}): DeviceFacts => ({ name, groups: new Set(), ...more });
const node = (name: string, more: Partial<Node> = {}): Node => ({ name, devices: [], rules: [], children: [], ...more });
const version = (root: Node): Version => ({
  name: 'v1',
  variables: {},
  root,
  created: '2026-01-01T00:00:00.000Z',
  createdBy: 't',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  lastUpdatedBy: 't',
});
const rule = (id: string) => ({ id, path: '/x', mode: 'required' as const, severity: 'error' as const });
const exemption = (id: string, more: Partial<Exemption>): Exemption => ({
  exemptionId: id.padStart(24, '0'),
  treeId: 'a'.repeat(24),
  ruleId: 'r1',
  until: '2027-01-01T00:00:00Z',
  reason: `because ${id}`,
  createdAt: '2026-01-01T00:00:00Z',
  createdBy: 'alice',
  updatedAt: '2026-01-02T00:00:00Z',
  updatedBy: 'bob',
  ...more,
});

describe('selects', () => {
  it('needs every member given to hold', () => {
    const pe = facts('pe-paris-1', { groups: new Set(['core']), platform: 'ios-xr', ned: 'cisco-iosxr-cli-7.52:cisco-iosxr-cli-7.52' });
    expect(selects({ group: 'core' }, pe)).toBe(true);
    expect(selects({ group: 'core', platform: 'ios-xr' }, pe)).toBe(true);
    expect(selects({ group: 'core', platform: 'ios' }, pe)).toBe(false);
    expect(selects({ group: 'edge' }, pe)).toBe(false);
    expect(selects({ group: 'core', namePattern: '^ce-' }, pe)).toBe(false);
  });

  it('finds a name pattern anywhere in the name unless anchored, with RE2 flags', () => {
    expect(selects({ namePattern: 'paris' }, facts('pe-paris-1'))).toBe(true);
    expect(selects({ namePattern: '^paris' }, facts('pe-paris-1'))).toBe(false);
    expect(selects({ namePattern: '-[0-9]+$' }, facts('pe-paris-1'))).toBe(true);
    expect(selects({ namePattern: 'PARIS' }, facts('pe-paris-1'))).toBe(false);
    expect(selects({ namePattern: '(?i)PARIS' }, facts('pe-paris-1'))).toBe(true);
  });

  it('compares platforms in any case, and NED ids in any case with or without their module prefix', () => {
    const xr = facts('pe0', { platform: 'IOS-XR', ned: 'cisco-iosxr-cli-7.52:cisco-iosxr-cli-7.52' });
    expect(selects({ platform: 'ios-xr' }, xr)).toBe(true);
    expect(selects({ ned: 'Cisco-IOSXR-cli-7.52' }, xr)).toBe(true);
    expect(selects({ ned: 'cisco-iosxr-cli-7.52:cisco-iosxr-cli-7.52' }, xr)).toBe(true);
    expect(selects({ ned: 'cisco-iosxr-cli-7.5' }, xr)).toBe(false);
    expect(selects({ platform: 'ios' }, facts('x'))).toBe(false);
    expect(selects({ ned: 'cisco-ios-cli-6.100' }, facts('x'))).toBe(false);
  });

  it('lets a pattern that does not compile select nothing (writes refuse it)', () => {
    expect(selects({ namePattern: '(' }, facts('(('))).toBe(false);
  });

  it('normalizes and describes selectors in a fixed order', () => {
    expect(Object.keys(normalizeSelector({ ned: 'n', group: 'g', extra: 1 } as never))).toEqual(['group', 'ned']);
    expect(describeSelector({ platform: 'ios', group: 'core' })).toBe('group "core" and platform "ios"');
  });
});

describe('selector checks on writes', () => {
  it('names a pattern that is not RE2, an empty selector and a long member', () => {
    expect(selectorProblems({ namePattern: '(?<=a)b' }, ['select', 0])).toEqual([{ field: 'select.0.namePattern', message: expect.stringMatching(/RE2/) }]);
    expect(selectorProblems({}, ['select', 1])).toEqual([{ field: 'select.1', message: expect.stringMatching(/at least one of group/) }]);
    expect(selectorProblems({ group: 'x'.repeat(254) }, ['s'])).toEqual([{ field: 's.group', message: expect.stringMatching(/253/) }]);
    expect(selectorProblems({ group: 'core', namePattern: '^pe-' }, ['s'])).toEqual([]);
  });

  it('checks the selectors of every node of a version, and their number', () => {
    const root = node('base', {
      select: [{ namePattern: '[' }],
      children: [node('wan', { select: Array.from({ length: 21 }, (_, i) => ({ group: `g${i}` })) })],
    });
    const problems = versionProblems(root, {});
    expect(problems).toContainEqual(expect.objectContaining({ field: 'root.select.0.namePattern' }));
    expect(problems).toContainEqual({ field: 'root.children.0.select', message: 'has more than 20 selectors', kind: 'limit' });
  });

  it('counts selectors in the version size', () => {
    const select = Array.from({ length: 20 }, (_, i) => ({ group: `${i}`.padEnd(253, 'g'), namePattern: 'n'.repeat(253), platform: 'p'.repeat(253) }));
    const root = node('base', { children: Array.from({ length: 150 }, (_, i) => node(`n${i}`, { select })) });
    expect(versionProblems(root, {})).toContainEqual(
      expect.objectContaining({ field: 'root', kind: 'limit', message: expect.stringMatching(/bytes as JSON/) }),
    );
  });
});

describe('device groups', () => {
  const group = (name: string, devices: string[] = [], groups: string[] = [], member: string[] = []): NsoEntry => ({
    name,
    'device-name': devices,
    'device-group': groups,
    ...(member.length ? { member } : {}),
  });

  it('includes the devices of nested groups, at any depth', () => {
    const members = groupMembers(
      [group('all', [], ['eu', 'us']), group('eu', ['pe-paris'], ['eu-north']), group('eu-north', ['pe-oslo']), group('us', ['pe-nyc'])],
      new Set(['all', 'eu', 'us']),
    );
    expect([...members.get('all')!].sort()).toEqual(['pe-nyc', 'pe-oslo', 'pe-paris']);
    expect([...members.get('eu')!].sort()).toEqual(['pe-oslo', 'pe-paris']);
    expect([...members.get('us')!]).toEqual(['pe-nyc']);
  });

  it('ends a cycle where it began, and takes NSO’s flattened members too', () => {
    const members = groupMembers([group('a', ['d1'], ['b']), group('b', ['d2'], ['a']), group('c', [], ['c'], ['d3'])], new Set(['a', 'c', 'nope']));
    expect([...members.get('a')!].sort()).toEqual(['d1', 'd2']);
    expect([...members.get('c')!]).toEqual(['d3']);
    expect(members.get('nope')!.size).toBe(0);
  });
});

describe('resolving a version’s targets', () => {
  const inventory = [
    facts('pe-1', { groups: new Set(['core']), platform: 'ios-xr' }),
    facts('pe-2', { groups: new Set(['core']), platform: 'ios-xr' }),
    facts('ce-1', { platform: 'ios' }),
    facts('bad/name', { groups: new Set(['core']) }),
  ];

  it('adds each node’s selected devices after the listed ones, counting only those it selected', () => {
    const root = node('base', {
      devices: ['lab-1'],
      children: [node('core', { devices: ['pe-1'], select: [{ group: 'core' }] }), node('access', { select: [{ platform: 'IOS' }] })],
    });
    const { nodeOf, selections } = resolveTargets(version(root), inventory);
    expect([...nodeOf]).toEqual([
      ['lab-1', 'base'],
      ['pe-1', 'base/core'],
      ['pe-2', 'base/core'],
      ['ce-1', 'base/access'],
    ]);
    expect(selections).toEqual([
      { node: 'base/core', select: [{ group: 'core' }], devices: 1 },
      { node: 'base/access', select: [{ platform: 'IOS' }], devices: 1 },
    ]);
  });

  it('refuses with 409 a device listed on one node and selected by another, naming both', () => {
    const root = node('base', { devices: ['pe-2'], children: [node('core', { select: [{ group: 'core' }] })] });
    expect(() => resolveTargets(version(root), inventory)).toThrow(
      expect.objectContaining({
        status: 409,
        slug: 'device-on-two-nodes',
        detail: expect.stringMatching(/"pe-2" is listed on node base and selected by node base\/core/),
      }),
    );
  });

  it('refuses with 409 a device selected by two nodes', () => {
    const root = node('base', { children: [node('core', { select: [{ group: 'core' }] }), node('xr', { select: [{ platform: 'ios-xr' }] })] });
    expect(() => resolveTargets(version(root), inventory)).toThrow(
      expect.objectContaining({ status: 409, detail: expect.stringMatching(/"pe-1" is selected by node base\/core and selected by node base\/xr/) }),
    );
  });

  it('lets the start name selected devices, and refuses one neither listed nor selected', () => {
    const v = version(node('base', { rules: [rule('r1')], select: [{ namePattern: '^pe-' }] }));
    const { nodeOf } = resolveTargets(v, inventory);
    expect(planBatch(v, ['pe-2'], nodeOf).devices).toEqual([{ device: 'pe-2', node: 'base' }]);
    expect(() => planBatch(v, ['ce-1'], nodeOf)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('reads the inventory only for selectors: of nodes and of exemptions', () => {
    const v = version(node('base', { children: [node('core', { select: [{ group: 'core' }] })] }));
    expect(selectorsOf(v, [exemption('1', { devices: ['x'] }), exemption('2', { selector: { platform: 'ios' } })])).toEqual([
      { group: 'core' },
      { platform: 'ios' },
    ]);
    expect(selectorsOf(version(node('base')), [exemption('1', { devices: ['x'] })])).toEqual([]);
  });
});

describe('freezing exemptions', () => {
  const inventory = new Map([['pe-1', facts('pe-1', { groups: new Set(['core']) })]]);

  it('keeps those that apply to some device and name a rule of the plan, and names each device’s by place', () => {
    const active = [
      exemption('1', { devices: ['ce-1'] }),
      exemption('2', { ruleId: 'other', devices: ['ce-1'] }),
      exemption('3', { selector: { group: 'core' } }),
      exemption('4', { devices: ['gone'] }),
      exemption('5', { selector: { namePattern: '-1$' } }),
    ];
    const { exemptions, placesOf } = freezeExemptions(active, ['ce-1', 'pe-1'], new Set(['r1']), inventory);
    expect(exemptions.map((e) => e.exemptionId.slice(-1))).toEqual(['1', '3', '5']);
    expect(exemptions[0]).toEqual({ exemptionId: '1'.padStart(24, '0'), ruleId: 'r1', until: '2027-01-01T00:00:00Z', reason: 'because 1', by: 'bob' });
    expect(placesOf('ce-1')).toEqual([0, 2]);
    expect(placesOf('pe-1')).toEqual([1, 2]);
    expect(placesOf('nobody')).toEqual([]);
  });
});

describe('the stored plan and chunks with exemptions', () => {
  const v = version(node('base', { devices: ['a', 'b'], rules: [rule('r1')] }));
  const frozen = { exemptionId: 'e'.repeat(24), ruleId: 'r1', until: '2027-01-01T00:00:00Z', reason: 'change freeze', by: 'bob' };

  it('keeps the exemptions once in the plan and each device’s places in its chunk entry', () => {
    const { plan } = planBatch(v);
    const withExemptions = { ...plan, exemptions: [frozen] };
    expect(decodePlan(encodePlan(withExemptions))).toEqual(withExemptions);
    const devices = [
      { device: 'a', node: 'base', exemptions: [0] },
      { device: 'b', node: 'base' },
    ];
    const json = JSON.stringify(devices.map(chunkEntries(withExemptions)));
    expect(json).toBe('[["a",0,[0]],["b",0]]');
    expect(decodeChunk(json, withExemptions)).toEqual(devices);
    expect(() => chunkEntries(withExemptions)({ device: 'a', node: 'base', exemptions: [1] })).toThrow(RangeError);
  });

  it('still reads plans without exemptions and two-element entries', () => {
    const { plan } = planBatch(v);
    expect(decodePlan(encodePlan(plan))).toEqual(plan);
    expect(encodePlan(plan)).not.toContain('exemptions');
    expect(decodeChunk('[["a",0],["b","base"]]', plan)).toEqual([
      { device: 'a', node: 'base' },
      { device: 'b', node: 'base' },
    ]);
  });
});

describe('reading the inventory a page at a time', () => {
  const devices = Array.from({ length: 5 }, (_, i) => ({
    name: `d${i}`,
    platform: { name: i % 2 ? 'ios-xr' : 'ios' },
    'device-type':
      i === 4 ? { netconf: { 'ned-id': 'juniper-junos-nc-4.0:juniper-junos-nc-4.0' } } : { cli: { 'ned-id': 'cisco-ios-cli-6.100:cisco-ios-cli-6.100' } },
  }));
  const groups = [
    { name: 'g0', 'device-name': ['d0'] },
    { name: 'g1', 'device-group': ['g0', 'g2'] },
    { name: 'g2', 'device-name': ['d3'] },
  ];
  const asked: string[] = [];
  const relayGet = async (_adapter: string, path: string) => {
    asked.push(path);
    const query = new URL(path, 'http://x').searchParams;
    const [offset, limit] = [Number(query.get('offset')), Number(query.get('limit'))];
    const [member, list] = path.includes('device-group') ? ['tailf-ncs:device-group', groups] : ['tailf-ncs:device', devices];
    return [{ result: '200', data: { [member]: (list as object[]).slice(offset, offset + limit) } }];
  };

  it('asks only for what the selectors need, pages both lists, and reads nested groups and every NED case', async () => {
    const facts = await inventoryReader(relayGet, 2, 2)('nso', [{ group: 'g1' }, { ned: 'junos' }]);
    expect(asked).toEqual([
      '/restconf/data/tailf-ncs:devices/device?fields=name;device-type/cli/ned-id;device-type/netconf/ned-id;device-type/generic/ned-id;device-type/snmp/ned-id&offset=0&limit=2',
      '/restconf/data/tailf-ncs:devices/device-group?fields=name;device-name;device-group;member&offset=0&limit=2',
      '/restconf/data/tailf-ncs:devices/device?fields=name;device-type/cli/ned-id;device-type/netconf/ned-id;device-type/generic/ned-id;device-type/snmp/ned-id&offset=2&limit=2',
      '/restconf/data/tailf-ncs:devices/device-group?fields=name;device-name;device-group;member&offset=2&limit=2',
      '/restconf/data/tailf-ncs:devices/device?fields=name;device-type/cli/ned-id;device-type/netconf/ned-id;device-type/generic/ned-id;device-type/snmp/ned-id&offset=4&limit=2',
    ]);
    expect(facts.map((f) => [f.name, [...f.groups], f.ned])).toEqual([
      ['d0', ['g1'], 'cisco-ios-cli-6.100:cisco-ios-cli-6.100'],
      ['d1', [], 'cisco-ios-cli-6.100:cisco-ios-cli-6.100'],
      ['d2', [], 'cisco-ios-cli-6.100:cisco-ios-cli-6.100'],
      ['d3', ['g1'], 'cisco-ios-cli-6.100:cisco-ios-cli-6.100'],
      ['d4', [], 'juniper-junos-nc-4.0:juniper-junos-nc-4.0'],
    ]);
    asked.length = 0;
    await inventoryReader(relayGet, 10)('nso', [{ namePattern: 'd' }]);
    expect(asked).toEqual(['/restconf/data/tailf-ncs:devices/device?fields=name&offset=0&limit=10']);
  });
});
