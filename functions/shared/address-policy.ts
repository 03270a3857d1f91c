/**
 * The one address policy of the service: which IP addresses and host names no orchestrator
 * may be reached at. Adapters check their `baseUrl` against it when written; the relay and the
 * health checks check every address a host name resolves to when connecting (a name accepted
 * earlier may later resolve elsewhere: DNS rebinding).
 */
import { BlockList, isIP } from 'node:net';

const subnets = (entries: readonly (readonly [string, number])[]): BlockList => {
  const list = new BlockList();
  for (const [address, prefix] of entries) list.addSubnet(address, prefix, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return list;
};

/** Refused address ranges, each with the reason a user reads. Order matters: the first match names the reason. */
const METADATA = subnets([
  ['169.254.169.254', 32], // AWS, Azure, GCP, OpenStack, Oracle instance metadata
  ['169.254.170.2', 32], // ECS task metadata and credentials
  ['100.100.100.200', 32], // Alibaba Cloud metadata
  ['192.0.0.192', 32], // Oracle Cloud legacy metadata
  ['fd00:ec2::', 32], // AWS IPv6 instance metadata, DNS and time services (fd00:ec2::254…)
]);
const LINK_LOCAL = subnets([
  ['169.254.0.0', 16],
  ['fe80::', 10],
]);
const UNSPECIFIED = subnets([
  ['0.0.0.0', 8],
  ['::', 128],
]);
const NOT_UNICAST = subnets([
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
  ['ff00::', 8], // IPv6 multicast
]);
const LOOPBACK = subnets([
  ['127.0.0.0', 8],
  ['::1', 128],
]);

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
  if (METADATA.check(address, type)) return 'is a cloud metadata address';
  if (LINK_LOCAL.check(address, type)) return 'is a link-local address';
  if (UNSPECIFIED.check(address, type)) return 'is an unspecified address (0.0.0.0 or ::)';
  if (NOT_UNICAST.check(address, type)) return 'is a multicast or broadcast address';
  if (!options.allowLoopback && LOOPBACK.check(address, type)) return 'is a loopback address (allowed in local mode only)';
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

