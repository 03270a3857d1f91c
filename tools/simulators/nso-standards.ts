/**
 * The devices that show the sample tree `examples/standards-tree.json` at work: ten rules taken
 * from public standards (CIS Cisco IOS benchmark items, NSO's compliance templates), and for each
 * rule a device that passes it (`std-<rule>-pass`) and one that fails it (`std-<rule>-fail`).
 *
 * Every device starts from one hardened Cisco IOS configuration (as NSO's cisco-ios NED shows it
 * over RESTCONF) that meets all ten rules, and changes one part of it: a `-pass` device changes it
 * the way an operator may and still complies (often at the edge of the rule: the timeout bound
 * itself, no SNMP at all, servers listed in another order), a `-fail` device the way the standard
 * forbids. So each `-fail` device fails exactly its own rule and passes the nine others, and
 * every `-pass` device passes all ten: a batch over the sample tree has a known answer per device.
 */

type Json = null | boolean | number | string | Json[] | { [member: string]: Json };
type Config = { [member: string]: Json };

/** NSO's JSON for a YANG `empty` leaf (`aaa new-model`). */
const EMPTY: Json = [null];

const IOS = 'tailf-ned-cisco-ios';

/** The ids of the sample tree's rules, in the tree's order. */
export const STANDARDS_RULE_IDS = [
  'aaa-new-model',
  'ssh-version-2',
  'banner-motd',
  'vty-transport-ssh',
  'vty-exec-timeout',
  'snmp-no-default-community',
  'snmp-community-acl',
  'logging-host',
  'ntp-servers',
  'interface-description',
] as const;
export type StandardsRuleId = (typeof STANDARDS_RULE_IDS)[number];

const vty = (first: number, last: number, minutes: number, input: string[]): Json => ({
  first,
  last,
  'exec-timeout': { minutes, seconds: 0 },
  transport: { input },
});

/** The hardened configuration every standards device starts from: it meets all ten rules. */
export const standardsBaseline = (name: string): Config => ({
  [`${IOS}:hostname`]: name,
  [`${IOS}:aaa`]: { 'new-model': EMPTY },
  [`${IOS}:banner`]: { motd: 'Authorized access only. Disconnect now if you are not an authorized user.' },
  [`${IOS}:ip`]: { 'domain-name': 'lab.example', ssh: { version: 2 }, http: { server: false } },
  [`${IOS}:line`]: { vty: [vty(0, 4, 5, ['ssh']), vty(5, 15, 5, ['ssh'])] },
  [`${IOS}:snmp-server`]: { community: [{ name: 'n0c-r3ad', RO: EMPTY, 'access-list-name': 'SNMP-MGMT' }] },
  [`${IOS}:logging`]: { host: { ipv4: [{ host: '10.0.0.50' }] } },
  [`${IOS}:ntp`]: { server: { 'peer-list': [{ name: '10.0.0.1' }, { name: '10.0.0.2' }] } },
  [`${IOS}:interface`]: {
    Loopback: [{ name: '0', ip: { address: { primary: { address: '10.255.1.1', mask: '255.255.255.255' } } } }],
    GigabitEthernet: [
      { name: '0/0', description: 'uplink to core-1' },
      { name: '0/1', description: 'uplink to core-2' },
    ],
  },
});

/** Changes one member of the configuration (`undefined` removes it). */
const set =
  (member: string, value: Json | undefined) =>
  (config: Config): Config => {
    const { [`${IOS}:${member}`]: _, ...rest } = config;
    return value === undefined ? rest : { ...rest, [`${IOS}:${member}`]: value };
  };

const ip = (ssh: Json): ((config: Config) => Config) => set('ip', { 'domain-name': 'lab.example', ssh, http: { server: false } });
const banner = (motd: string) => set('banner', { motd });
const lines = (...vtys: Json[]) => set('line', { vty: vtys });
const communities = (...community: Json[]) => set('snmp-server', { community });
const syslog = (...hosts: string[]) => set('logging', { host: { ipv4: hosts.map((host) => ({ host })) } });
const ntp = (...peers: Json[]) => set('ntp', { server: { 'peer-list': peers } });
const interfaces = (...gigabit: Json[]) =>
  set('interface', {
    Loopback: [{ name: '0', ip: { address: { primary: { address: '10.255.1.1', mask: '255.255.255.255' } } } }],
    GigabitEthernet: gigabit,
  });

/** Per rule: how its passing device and its failing device differ from the baseline. */
export const STANDARDS_CASES: Readonly<Record<StandardsRuleId, { readonly pass: (c: Config) => Config; readonly fail: (c: Config) => Config }>> = {
  // `aaa new-model` with the rest of AAA configured passes; a device without it fails.
  'aaa-new-model': {
    pass: set('aaa', { 'new-model': EMPTY, authentication: { login: [{ name: 'default', group: 'tacacs+', local: EMPTY }] } }),
    fail: set('aaa', undefined),
  },
  // SSH version 2 with a longer retry count passes; `ip ssh version 1` fails.
  'ssh-version-2': { pass: ip({ version: 2, 'authentication-retries': 3 }), fail: ip({ version: 1 }) },
  // The British spelling in capitals passes the case-insensitive pattern; a welcome message fails.
  'banner-motd': { pass: banner('AUTHORISED USE ONLY - all activity is logged'), fail: banner('Welcome to the lab router') },
  // Three vty ranges, all SSH only, pass; telnet beside SSH on one range fails.
  'vty-transport-ssh': {
    pass: lines(vty(0, 4, 5, ['ssh']), vty(5, 15, 5, ['ssh']), vty(16, 31, 5, ['ssh'])),
    fail: lines(vty(0, 4, 5, ['ssh']), vty(5, 15, 5, ['ssh', 'telnet'])),
  },
  // The bound itself (10 minutes) passes; `exec-timeout 0 0` (never) on one range fails.
  'vty-exec-timeout': {
    pass: lines(vty(0, 4, 10, ['ssh']), vty(5, 15, 1, ['ssh'])),
    fail: lines(vty(0, 4, 5, ['ssh']), vty(5, 15, 0, ['ssh'])),
  },
  // No SNMP at all passes (no community, none of them a default one); `public` fails.
  'snmp-no-default-community': {
    pass: set('snmp-server', undefined),
    fail: communities({ name: 'n0c-r3ad', RO: EMPTY, 'access-list-name': 'SNMP-MGMT' }, { name: 'public', RO: EMPTY, 'access-list-name': 'SNMP-MGMT' }),
  },
  // Two communities, each with an ACL, pass; a second one without an ACL fails.
  'snmp-community-acl': {
    pass: communities({ name: 'n0c-r3ad', RO: EMPTY, 'access-list-name': 'SNMP-MGMT' }, { name: 'n0c-p0ll', RO: EMPTY, 'access-list-name': '99' }),
    fail: communities({ name: 'n0c-r3ad', RO: EMPTY, 'access-list-name': 'SNMP-MGMT' }, { name: 'n0c-p0ll', RO: EMPTY }),
  },
  // One collector inside the management prefix beside one outside passes; only outside ones fail.
  'logging-host': { pass: syslog('198.51.100.7', '10.20.0.50'), fail: syslog('192.0.2.99') },
  // The approved servers in another order, one preferred, pass; a third, unapproved server fails.
  'ntp-servers': {
    pass: ntp({ name: '10.0.0.2' }, { name: '10.0.0.1', prefer: EMPTY }),
    fail: ntp({ name: '10.0.0.1' }, { name: '10.0.0.2' }, { name: '203.0.113.5' }),
  },
  // Every GigabitEthernet described passes; one without a description fails.
  'interface-description': {
    pass: interfaces(
      { name: '0/0', description: 'uplink to core-1' },
      { name: '0/1', description: 'uplink to core-2' },
      { name: '0/2', description: 'printer VLAN 30' },
    ),
    fail: interfaces({ name: '0/0', description: 'uplink to core-1' }, { name: '0/1' }),
  },
};

/** The name of the device that passes (`pass`) or fails (`fail`) rule `rule`. */
export const standardsDeviceName = (rule: StandardsRuleId, outcome: 'pass' | 'fail'): string => `std-${rule}-${outcome}`;

/** Every standards device: name, the rule it is about, whether it should pass it, its configuration. */
export const standardsDevices = (): { readonly name: string; readonly rule: StandardsRuleId; readonly outcome: 'pass' | 'fail'; readonly config: Config }[] =>
  STANDARDS_RULE_IDS.flatMap((rule) =>
    (['pass', 'fail'] as const).map((outcome) => {
      const name = standardsDeviceName(rule, outcome);
      return { name, rule, outcome, config: STANDARDS_CASES[rule][outcome](standardsBaseline(name)) };
    }),
  );

/** The standards devices as NSO device entries (addresses in 10.254.0.0/24). */
export const standardsEntries = (): Config[] =>
  standardsDevices().map(({ name, config }, i) => ({
    name,
    address: `10.254.0.${i + 1}`,
    port: 22,
    authgroup: 'default',
    'device-type': { cli: { 'ned-id': 'cisco-ios-cli-6.100:cisco-ios-cli-6.100' } },
    state: { 'admin-state': 'unlocked' },
    config,
  }));
