/**
 * The one address policy of the service: which IP addresses and host names no orchestrator
 * may be reached at. Adapters check their `baseUrl` against it when written; the relay and the
 * health checks check every address a host name resolves to when connecting (a name accepted
 * earlier may later resolve elsewhere: DNS rebinding).
 */
import { BlockList, isIP } from 'node:net';

type Family = 'ipv4' | 'ipv6';

/**
 * The refused ranges, built on first use rather than at load: most functions that import this
 * module (through the adapter rules) never check an address. The family of each range is
 * written out, since telling it with `isIP` would compile Node's IPv6 regular expression
 * (milliseconds of a cold start).
 */
const subnets = (entries: readonly (readonly [string, number, Family])[]): BlockList => {
  const list = new BlockList();
  for (const [address, prefix, family] of entries) list.addSubnet(address, prefix, family);
  return list;
};

interface Ranges {
  readonly metadata: BlockList;
  readonly linkLocal: BlockList;
  readonly unspecified: BlockList;
  readonly notUnicast: BlockList;
  readonly loopback: BlockList;
}

let built: Ranges | undefined;
/** Refused address ranges, each with the reason a user reads. Order matters: the first match names the reason. */
const ranges = (): Ranges =>
  (built ??= {
    metadata: subnets([
      ['169.254.169.254', 32, 'ipv4'], // AWS, Azure, GCP, OpenStack, Oracle instance metadata
      ['169.254.170.2', 32, 'ipv4'], // ECS task metadata and credentials
      ['100.100.100.200', 32, 'ipv4'], // Alibaba Cloud metadata
      ['192.0.0.192', 32, 'ipv4'], // Oracle Cloud legacy metadata
      ['fd00:ec2::', 32, 'ipv6'], // AWS IPv6 instance metadata, DNS and time services (fd00:ec2::254…)
    ]),
    linkLocal: subnets([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
    unspecified: subnets([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
    notUnicast: subnets([
      ['224.0.0.0', 4, 'ipv4'], // multicast
      ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
      ['ff00::', 8, 'ipv6'], // IPv6 multicast
    ]),
    loopback: subnets([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  });

const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
]);

/** The eight 16-bit words of a valid IPv6 address (a dotted IPv4 tail counts as two). */
const ipv6Words = (address: string): number[] | undefined => {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail];
  return groups.length === 8 ? groups.map((g) => Number.parseInt(g, 16)) : undefined;
};

/** The IPv4 address an IPv6 one embeds: IPv4-compatible `::a.b.c.d` or NAT64 `64:ff9b::/96` (mapped ones BlockList handles). */
const embeddedIpv4 = (address: string): string | undefined => {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const [hi = 0, lo = 0] = words.slice(6);
  const compatible = words.slice(0, 6).every((w) => w === 0) && hi !== 0; // `::` and `::1` are not IPv4
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  return compatible || nat64 ? [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.') : undefined;
};

/**
 * Why the service must not connect to this IP address, or undefined when it may. Exported
 * for the relay, which checks the addresses a host name resolves to at connect time (a name
 * accepted here may later resolve to a refused address).
 */
export const addressRefusal = (address: string, options: { readonly allowLoopback: boolean }): string | undefined => {
  const family = isIP(address);
  if (family === 0) return 'is not an IP address';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  const { metadata, linkLocal, unspecified, notUnicast, loopback } = ranges();
  if (metadata.check(address, type)) return 'is a cloud metadata address';
  if (linkLocal.check(address, type)) return 'is a link-local address';
  if (unspecified.check(address, type)) return 'is an unspecified address (0.0.0.0 or ::)';
  if (notUnicast.check(address, type)) return 'is a multicast or broadcast address';
  if (!options.allowLoopback && loopback.check(address, type)) return 'is a loopback address (allowed in local mode only)';
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return addressRefusal(v4, options);
  }
  return undefined;
};

/** Why the service must not connect to this host name (not an IP), or undefined. */
export const hostNameRefusal = (host: string, allowLoopback: boolean): string | undefined => {
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (METADATA_NAMES.has(name)) return 'is a cloud metadata host';
  if (!allowLoopback && (name === 'localhost' || name.endsWith('.localhost'))) return 'is a loopback host (allowed in local mode only)';
  return undefined;
};

