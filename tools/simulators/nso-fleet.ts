/**
 * A synthetic fleet for the NSO simulator (`--devices 10000` in local mode, the compliance
 * tests and the benchmark): deterministic device configurations, a known share of them
 * non-compliant with {@link FLEET_RULES}, some slow to answer, and names a tree may list that
 * NSO does not know. The same index always gives the same device, so a test can state
 * exactly which grades a batch must produce.
 */

import { standardsEntries } from './nso-standards.js';

type Json = null | boolean | number | string | Json[] | { [member: string]: Json };

export interface FleetSpec {
  /** Devices NSO knows: `<prefix>-00000` … */
  readonly devices: number;
  /** Default `edge`. */
  readonly prefix?: string;
  /** Every `slowEvery`-th device (index 1, 1+n, …) answers after `slowMs`; 0: none (default 0). */
  readonly slowEvery?: number;
  /** Default 200 ms. */
  readonly slowMs?: number;
  /** Names listed by {@link fleetNames} that NSO does not know (`<prefix>-missing-0` …); default 0. */
  readonly missing?: number;
  /**
   * Every `outOfSyncEvery`-th device (index 2, 2+n, …) starts changed behind NSO's back: its own
   * configuration is {@link fleetDrift} merged into NSO's copy; 0: none (default 0).
   */
  readonly outOfSyncEvery?: number;
  /**
   * Adds the devices of the standards sample tree (nso-standards.ts: `std-<rule>-pass` and
   * `std-<rule>-fail` for each of its ten rules) after the numbered ones; default false.
   */
  readonly standards?: boolean;
}

/**
 * The deviations, by `index % 10`:
 * - 3: no MOTD banner: fails an `info` rule (score 93.3, `pass`);
 * - 5: logs to the wrong host: fails a `warning` rule (86.7, `review`);
 * - 7: one NTP server and the HTTP server on: fails two `error` rules (46.7, `fail`);
 * every other index complies (100, `pass`).
 */
export const FLEET_DEVIATIONS = { 3: 'pass', 5: 'review', 7: 'fail' } as const;

export const fleetName = (index: number, prefix = 'edge'): string => `${prefix}-${String(index).padStart(5, '0')}`;

/** The grade a fleet device gets against {@link FLEET_RULES}. */
export const expectedGrade = (index: number): 'pass' | 'review' | 'fail' => FLEET_DEVIATIONS[(index % 10) as keyof typeof FLEET_DEVIATIONS] ?? 'pass';

/** Every name of the fleet: the devices NSO knows, then the ones it does not. */
export const fleetNames = (spec: FleetSpec): string[] => [
  ...Array.from({ length: spec.devices }, (_, i) => fleetName(i, spec.prefix)),
  ...Array.from({ length: spec.missing ?? 0 }, (_, i) => `${spec.prefix ?? 'edge'}-missing-${i}`),
];

/** The configuration of fleet device `index`, as NSO holds it (inside `config`). */
export const fleetConfig = (index: number, name: string): { [member: string]: Json } => {
  const kind = index % 10;
  return {
    'tailf-ned-cisco-ios:hostname': name,
    'tailf-ned-cisco-ios:ntp': { server: { 'peer-list': kind === 7 ? [{ name: '10.0.0.1' }] : [{ name: '10.0.0.1' }, { name: '10.0.0.2' }] } },
    'tailf-ned-cisco-ios:logging': { host: { ipv4: [{ host: kind === 5 ? '192.0.2.99' : '10.0.0.50' }] } },
    'tailf-ned-cisco-ios:ip': { http: { server: kind === 7 }, 'domain-name': 'lab.example' },
    ...(kind === 3 ? {} : { 'tailf-ned-cisco-ios:banner': { motd: 'Authorized access only' } }),
    'tailf-ned-cisco-ios:interface': {
      Loopback: [
        { name: '0', ip: { address: { primary: { address: `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`, mask: '255.255.255.255' } } } },
      ],
    },
  };
};

/**
 * The rules the fleet is graded against (a version's `base` node): weights 2 + 2 + 1 + 2 +
 * 0.5 = 7.5, with variables {@link FLEET_VARIABLES}.
 */
export const FLEET_RULES = [
  { id: 'hostname', path: '/tailf-ned-cisco-ios:hostname', mode: 'required', severity: 'error' },
  {
    id: 'ntp-servers',
    path: '/tailf-ned-cisco-ios:ntp/server/peer-list',
    mode: 'required',
    severity: 'error',
    value: [{ name: '{{ntp1}}' }, { name: '{{ntp2}}' }],
  },
  { id: 'syslog-host', path: '/tailf-ned-cisco-ios:logging/host/ipv4', mode: 'required', severity: 'warning', value: [{ host: '{{syslog}}' }] },
  { id: 'no-http-server', path: '/tailf-ned-cisco-ios:ip/http/server', mode: 'disallowed', severity: 'error', value: true },
  { id: 'motd-banner', path: '/tailf-ned-cisco-ios:banner/motd', mode: 'required', severity: 'info' },
] as const;

/**
 * Rules of every form the rule language has beyond {@link FLEET_RULES} (see `Rule` in
 * functions/trees/config-model.ts), over places every fleet device has, each passing on every
 * device (so a device's grade is the one {@link expectedGrade} names): a `*` path with `match`
 * `all` (and `cidr` through a variable), one with `any`, one with `none`, `pattern`, `oneOf`,
 * `range`, `strict`, and `allowEmpty` over a list the fleet does not have. The compliance
 * benchmark grades the fleet against both sets, so its durable engine and its plain loop
 * evaluate every form.
 */
export const FLEET_LANGUAGE_RULES = [
  {
    id: 'loopbacks-in-plan',
    path: '/tailf-ned-cisco-ios:interface/Loopback/*/ip/address/primary/address',
    mode: 'required',
    severity: 'error',
    match: 'all',
    cidr: ['{{loopbacks}}'],
  },
  { id: 'ntp-primary', path: '/tailf-ned-cisco-ios:ntp/server/peer-list/*/name', mode: 'required', severity: 'warning', match: 'any', value: '{{ntp1}}' },
  {
    id: 'syslog-not-reserved',
    path: '/tailf-ned-cisco-ios:logging/host/ipv4/*/host',
    mode: 'required',
    severity: 'error',
    match: 'none',
    cidr: ['0.0.0.0/8', '127.0.0.0/8', '255.255.255.255/32'],
  },
  { id: 'hostname-convention', path: '/tailf-ned-cisco-ios:hostname', mode: 'required', severity: 'info', pattern: '^[a-z]+-[0-9]{5}$' },
  { id: 'domain-known', path: '/tailf-ned-cisco-ios:ip/domain-name', mode: 'required', severity: 'warning', oneOf: ['lab.example', 'corp.example'] },
  { id: 'loopback-numbers', path: '/tailf-ned-cisco-ios:interface/Loopback/*/name', mode: 'required', severity: 'info', range: { min: 0, max: 99 } },
  { id: 'loopbacks-only-zero', path: '/tailf-ned-cisco-ios:interface/Loopback', mode: 'required', severity: 'warning', strict: true, value: [{ name: '0' }] },
  {
    id: 'ports-described',
    path: '/tailf-ned-cisco-ios:interface/GigabitEthernet/*/description',
    mode: 'required',
    severity: 'info',
    allowEmpty: true,
    pattern: '\\S',
  },
] as const;

export const FLEET_VARIABLES = { ntp1: '10.0.0.1', ntp2: '10.0.0.2', syslog: '10.0.0.50', loopbacks: '10.0.0.0/8' } as const;

/** Shards a fleet's devices are spread over (by index), each an NSO device group. */
export const FLEET_SHARDS = 4;
/** The group fleet device `index` is in: `<prefix>-shard-<index % 4>`. */
export const fleetShard = (index: number, prefix = 'edge'): string => `${prefix}-shard-${index % FLEET_SHARDS}`;
/** NSO's `platform` of every fleet device (IOS routers). */
export const FLEET_PLATFORM = { name: 'ios', version: '17.9', model: 'ISR4451-X' } as const;
export const FLEET_NED = 'cisco-ios-cli-6.100:cisco-ios-cli-6.100';

/**
 * The fleet's device groups: one per shard listing its devices by name (`device-name`), and
 * `<prefix>-fleet` holding the shard groups (`device-group`: nested, as NSO nests them).
 */
export const fleetGroups = (spec: FleetSpec): { [member: string]: Json }[] => {
  const prefix = spec.prefix ?? 'edge';
  const shards = Array.from({ length: FLEET_SHARDS }, (_, shard) => ({
    name: fleetShard(shard, prefix),
    'device-name': Array.from({ length: Math.max(0, Math.ceil((spec.devices - shard) / FLEET_SHARDS)) }, (_, k) => fleetName(shard + k * FLEET_SHARDS, prefix)),
  }));
  return [...shards, { name: `${prefix}-fleet`, 'device-group': shards.map((g) => g.name) }];
};

/** The fleet as NSO device entries: the numbered devices, then the standards devices when asked for. */
export const fleetEntries = (spec: FleetSpec): { [member: string]: Json }[] => [
  ...Array.from({ length: spec.devices }, (_, i) => {
    const name = fleetName(i, spec.prefix);
    return {
      name,
      address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      port: 22,
      authgroup: 'default',
      'device-type': { cli: { 'ned-id': FLEET_NED } },
      platform: { ...FLEET_PLATFORM },
      state: { 'admin-state': 'unlocked' },
      config: fleetConfig(i, name),
    };
  }),
  ...(spec.standards ? standardsEntries() : []),
];

/** Whether fleet device `name` is one of the slow ones. */
export const isSlow = (spec: FleetSpec, name: string): boolean => {
  const every = spec.slowEvery ?? 0;
  const prefix = `${spec.prefix ?? 'edge'}-`;
  if (every <= 0 || !name.startsWith(prefix)) return false;
  const index = Number(name.slice(prefix.length));
  return Number.isInteger(index) && index < spec.devices && index % every === 1 % every;
};

/** Whether fleet device `name` is one that starts out of sync. */
export const isOutOfSync = (spec: FleetSpec, name: string): boolean => {
  const every = spec.outOfSyncEvery ?? 0;
  const prefix = `${spec.prefix ?? 'edge'}-`;
  if (every <= 0 || !name.startsWith(prefix)) return false;
  const index = Number(name.slice(prefix.length));
  return Number.isInteger(index) && index < spec.devices && index % every === 2 % every;
};

/**
 * What was changed on an out-of-sync fleet device behind NSO's back (merged into its
 * configuration): a console login with a password, and a second syslog host; `undefined` for a device in sync.
 */
export const fleetDrift = (spec: FleetSpec, name: string): { [member: string]: Json } | undefined =>
  isOutOfSync(spec, name)
    ? {
        'tailf-ned-cisco-ios:username': [{ name: 'oncall', password: { secret: 'drift-Secret-42' } }],
        'tailf-ned-cisco-ios:logging': { host: { ipv4: [{ host: '198.51.100.7' }] } },
      }
    : undefined;

/**
 * The keys of the lists in the fleet's and the default devices' configurations, by schema path
 * (functions/remediation/patch.ts `listKeysFrom`): what a remediation start request sends as
 * `listKeys`, and what the simulator applies a YANG Patch with.
 */
export const FLEET_LIST_KEYS: Readonly<Record<string, readonly string[]>> = {
  'tailf-ned-cisco-ios:ntp/server/peer-list': ['name'],
  'tailf-ned-cisco-ios:logging/host/ipv4': ['host'],
  'tailf-ned-cisco-ios:interface/Loopback': ['name'],
  'tailf-ned-cisco-ios:interface/GigabitEthernet': ['name'],
  'tailf-ned-cisco-ios:username': ['name'],
  'tailf-ned-cisco-ios:line/vty': ['first'],
  'tailf-ned-cisco-ios:snmp-server/community': ['name'],
  'tailf-ned-cisco-ios-xr:interface/Loopback': ['id'],
};
