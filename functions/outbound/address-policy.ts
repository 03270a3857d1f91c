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
  // Mutation: equivalent mutants in this parser, reached only for an address `isIP` accepted as IPv6: `toUpperCase()`
  // (parseInt takes either case), the dotted quad's `$` dropped (it can only end the address), `halves.length > 2` →
  // `false` (one `::` at most), either `halves.length === 2` → `true` (without `::` `halves[1]` decides, the fill is
  // 0) and `groups.length === 8` → `true` (a valid address yields eight).
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

/**
 * The IPv4 addresses an IPv6 one embeds, each refused as the IPv4 address itself would be:
 * IPv4-compatible `::a.b.c.d`, IPv4-mapped `::ffff:a.b.c.d`, SIIT's IPv4-translated
 * `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, NAT64 local use `64:ff9b:1::/48` (at /48 and at /96,
 * RFC 6052's two placements that matter here), 6to4 `2002:AABB:CCDD::/48` and Teredo
 * `2001:0::/32` (its server, and its client XOR 0xffff). A gateway that translates any of
 * these would otherwise carry the relay to the IPv4 address inside.
 */
const embeddedIpv4s = (address: string): string[] => {
  const words = ipv6Words(address);
  // Mutation: a non-empty array (uncovered) is equivalent: `ipv6Words` never fails on an address `isIP` accepted.
  if (!words) return [];
  const v4 = (hi: number, lo: number): string => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
  const [w0, w1, w2, w3, w4, w5, hi = 0, lo = 0] = words as [number, number, number, number, number, number, number, number];
  const zeros = (from: number, to: number): boolean => words.slice(from, to).every((w) => w === 0);
  const out: string[] = [];
  if (zeros(0, 6) && hi !== 0) out.push(v4(hi, lo)); // compatible (`::` and `::1` are not IPv4)
  // Mutation: → `false` is equivalent: Node's BlockList matches an IPv4-mapped address against the IPv4 ranges
  // itself, with the same reason, before this is read.
  if (zeros(0, 5) && w5 === 0xffff) out.push(v4(hi, lo)); // mapped
  if (zeros(0, 4) && w4 === 0xffff && w5 === 0) out.push(v4(hi, lo)); // SIIT translated
  if (w0 === 0x64 && w1 === 0xff9b) {
    if (w2 !== 1)
      out.push(v4(hi, lo)); // NAT64 well-known /96
    else {
      // Local use: the /96 placement, and the /48 one (bits 48–63 and 72–87; 64–71 is the "u"
      // octet). An all-zero placement is the other layout's, not an address.
      const at48 = v4(w3, ((w4 & 0xff) << 8) | (w5 >> 8));
      for (const candidate of [v4(hi, lo), at48]) if (candidate !== '0.0.0.0') out.push(candidate);
    }
  }
  if (w0 === 0x2002) out.push(v4(w1, w2)); // 6to4
  if (w0 === 0x2001 && w1 === 0) out.push(v4(w2, w3), v4(hi ^ 0xffff, lo ^ 0xffff)); // Teredo server and client
  return out;
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
  // Mutation: → `true` is equivalent: an IPv4 address gives `ipv6Words` two words, not eight, so it embeds nothing;
  // `/^is /` → `/is /` below too (every reason starts with `is `, replaced once).
  if (family === 6) {
    for (const v4 of embeddedIpv4s(address)) {
      const refusal = addressRefusal(v4, options);
      if (refusal) return `${refusal.replace(/^is /, 'embeds ')} (${v4})`;
    }
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
