/**
 * IPv4 and IPv6 addresses and prefixes as rule `cidr` predicates read them. Every address is
 * held as 128 bits: an IPv4 address `a.b.c.d` as its IPv4-mapped IPv6 form `::ffff:a.b.c.d`
 * and an IPv4 prefix of length n as that form's prefix of length 96 + n. So `::ffff:10.1.2.3`
 * and `10.1.2.3` are the same address, an IPv4 prefix holds only IPv4 (and mapped) addresses,
 * and `::/0` holds every address. Strict text forms only: decimal IPv4 octets without leading
 * zeros, no zone (`%eth0`), a prefix length without leading zeros.
 */

/** An address (length 128) or a prefix: its bits and how many of them count. */
export interface Prefix {
  readonly bits: bigint;
  readonly length: number;
}

const IPV4 = /^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;
const LENGTH = /^(0|[1-9][0-9]{0,2})$/;
const MAPPED = 0xffffn << 32n;
const ALL_ONES = (1n << 128n) - 1n;

/** The 32 bits of an IPv4 address in dotted-quad form, or `undefined`. */
const ipv4Bits = (text: string): bigint | undefined => {
  const m = IPV4.exec(text);
  if (!m) return undefined;
  let bits = 0n;
  for (let i = 1; i <= 4; i++) {
    const octet = Number(m[i]);
    if (octet > 255) return undefined;
    bits = (bits << 8n) | BigInt(octet);
  }
  return bits;
};

/** The 16-bit groups of one side of `::` (empty text: none), or `undefined`. */
const groupsOf = (text: string, lastMayBeIpv4: boolean): bigint[] | undefined => {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: bigint[] = [];
  for (const [i, part] of parts.entries()) {
    if (lastMayBeIpv4 && i === parts.length - 1 && part.includes('.')) {
      const v4 = ipv4Bits(part);
      if (v4 === undefined) return undefined;
      groups.push(v4 >> 16n, v4 & 0xffffn);
    } else if (HEX_GROUP.test(part)) groups.push(BigInt(`0x${part}`));
    else return undefined;
  }
  return groups;
};

/** The 128 bits of an IPv6 address (RFC 4291 text forms, a trailing dotted quad allowed), or `undefined`. */
const ipv6Bits = (text: string): bigint | undefined => {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0] as string, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1] as string, true) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  // `::` stands for at least one group of zeros; without it there must be exactly eight.
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let bits = 0n;
  for (const group of [...head, ...Array<bigint>(missing).fill(0n), ...tail]) bits = (bits << 16n) | group;
  return bits;
};

/** An address as 128 bits with its family's width (32 or 128), or `undefined`. */
const addressOf = (text: string): { readonly bits: bigint; readonly width: number } | undefined => {
  const v4 = ipv4Bits(text);
  if (v4 !== undefined) return { bits: MAPPED | v4, width: 32 };
  // Mutation: dropping this check (→ `false`, or `includes("")`) is equivalent: a text without a
  // colon is at most one group, and ipv6Bits refuses anything but eight.
  if (!text.includes(':')) return undefined;
  const v6 = ipv6Bits(text);
  return v6 === undefined ? undefined : { bits: v6, width: 128 };
};

const mask = (length: number): bigint => (ALL_ONES << BigInt(128 - length)) & ALL_ONES;

/**
 * `text` (an address, or a prefix `address/length`) as a {@link Prefix}, or `undefined` when it
 * is neither. Bits below the length are kept: an interface address `10.1.2.3/24` is read as
 * written (it lies inside `10.1.0.0/16`).
 */
export const parsePrefix = (text: string): Prefix | undefined => {
  const slash = text.indexOf('/');
  // Mutation: `slash < 0` → `slash <= 0` is equivalent: a text starting with `/`
  // is no address with the slash (no IPv4 octet or IPv6 group holds one) or without it (empty).
  const address = addressOf(slash < 0 ? text : text.slice(0, slash));
  if (!address) return undefined;
  const offset = 128 - address.width;
  // Mutation: `slash <= 0` is equivalent: with a slash at 0 there was no address to get here.
  if (slash < 0) return { bits: address.bits, length: 128 };
  const length = text.slice(slash + 1);
  if (!LENGTH.test(length) || Number(length) > address.width) return undefined;
  return { bits: address.bits, length: offset + Number(length) };
};

/**
 * Why `text` cannot be one of a rule's `cidr` prefixes (an address or `address/length` with no
 * bits set below the length); `undefined` when it can.
 */
export const prefixProblem = (text: string): string | undefined => {
  const prefix = parsePrefix(text);
  if (!prefix) return `${JSON.stringify(text)} is not an IPv4 or IPv6 address or prefix (address/length)`;
  if ((prefix.bits & ~mask(prefix.length)) !== 0n) return `${JSON.stringify(text)} has bits set after its prefix length`;
  return undefined;
};

/** True when every address of `inner` lies inside `outer`. */
export const insidePrefix = (inner: Prefix, outer: Prefix): boolean => {
  if (inner.length < outer.length) return false;
  const m = mask(outer.length);
  return (inner.bits & m) === (outer.bits & m);
};
