import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as policy from '../../functions/outbound/address-policy.js';

// Each test gets the module afresh: the refused ranges are built on first use and kept in the
// module, so a range list built by an earlier test (or by mutation testing's first run) would
// otherwise answer without the code under test running at all.
let { addressRefusal, hostNameRefusal } = policy;
beforeEach(async () => {
  vi.resetModules();
  ({ addressRefusal, hostNameRefusal } = await import('../../functions/outbound/address-policy.js'));
});

describe('addressRefusal', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::169.254.169.254', 'metadata'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['fd00:ec2::23', 'metadata'],
    // IPv6 forms that embed a refused IPv4 address are refused like it.
    ['2002:a9fe:a9fe::1', 'metadata'], // 6to4
    ['2002:7f00:1::', 'loopback'],
    ['64:ff9b:1::a9fe:a9fe', 'metadata'], // NAT64 local use, /96
    ['64:ff9b:1:a9fe:a9:fe00::', 'metadata'], // NAT64 local use, /48
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['::ffff:0:169.254.169.254', 'metadata'], // SIIT
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['2001:0:a9fe:a9fe::1', 'metadata'], // Teredo server
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'], // Teredo client 169.254.169.254 (XOR 0xffff)
    ['2002:a9fe:1::', 'link-local'],
    ['2002:e000:1::', 'multicast'],
    ['2002::', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['::', 'unspecified'],
  ])('refuses %s', (address, reason) => {
    expect(addressRefusal(address, { allowLoopback: false })).toContain(reason);
  });

  it.each([
    '10.1.2.3',
    '192.168.0.10',
    '172.16.0.1',
    '2001:db8::1',
    'fd12:3456::1',
    '100.64.0.1',
    '8.8.8.8',
    '2002:808:808::1',
    '64:ff9b::8.8.8.8',
    '2001:0:808:808::f7f7:f7f7',
  ])('allows %s', (address) => {
    expect(addressRefusal(address, { allowLoopback: false })).toBeUndefined();
  });

  it.each([
    '64:ff9b:0:a9fe:a9:fe00:808:808', // the well-known NAT64 prefix embeds at /96 only, never at /48
    '64:ff9a::a9fe:a9fe', // not NAT64: the second word differs
    '65:ff9b::a9fe:a9fe', // not NAT64: the first word differs
    '::ffff:1:a9fe:a9fe', // neither mapped nor SIIT translated: a word between ffff and the IPv4 address
    '::1:169.254.169.254', // not IPv4-compatible: a non-zero word before it
  ])('allows %s, which embeds no IPv4 address', (address) => {
    expect(addressRefusal(address, { allowLoopback: false })).toBeUndefined();
  });

  it.each([
    ['::ffff:0:169.254.169.254', 'embeds a cloud metadata address (169.254.169.254)'],
    ['64:ff9b::169.254.169.254', 'embeds a cloud metadata address (169.254.169.254)'],
    ['2002:a9fe:1::', 'embeds a link-local address (169.254.0.1)'],
    ['::127.0.0.1', 'embeds a loopback address (allowed in local mode only) (127.0.0.1)'],
    ['::ffff:169.254.169.254', 'is a cloud metadata address'],
    ['fd00:ec2::254', 'is a cloud metadata address'],
    ['fe80::1', 'is a link-local address'],
    ['0.1.2.3', 'is an unspecified address (0.0.0.0 or ::)'],
    ['239.255.255.250', 'is a multicast or broadcast address'],
    ['ff02::1', 'is a multicast or broadcast address'],
    ['127.255.255.254', 'is a loopback address (allowed in local mode only)'],
  ])('says why %s is refused: %s', (address, reason) => {
    expect(addressRefusal(address, { allowLoopback: false })).toBe(reason);
  });

  it('lets an embedded loopback address through in local mode, like the address itself', () => {
    expect(addressRefusal('::127.0.0.1', { allowLoopback: true })).toBeUndefined();
    expect(addressRefusal('64:ff9b::7f00:1', { allowLoopback: true })).toBeUndefined();
    expect(addressRefusal('64:ff9b::a9fe:a9fe', { allowLoopback: true })).toBe('embeds a cloud metadata address (169.254.169.254)');
  });

  it('refuses what is not an IP address', () => {
    expect(addressRefusal('nso.example.net', { allowLoopback: true })).toBe('is not an IP address');
  });
});

describe('addressRefusal, the ranges the relay relies on', () => {
  it.each(['10.0.0.5', '172.16.3.4', '192.168.1.1', '8.8.8.8', '2001:db8::1', 'fd12:3456::1'])('allows %s', (ip) => {
    expect(addressRefusal(ip, { allowLoopback: false })).toBeUndefined();
  });

  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '169.254.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::169.254.169.254',
  ])('always blocks %s', (ip) => {
    expect(addressRefusal(ip, { allowLoopback: true })).toEqual(expect.any(String));
    expect(addressRefusal(ip, { allowLoopback: false })).toEqual(expect.any(String));
  });

  it.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])('blocks loopback %s outside local mode only', (ip) => {
    expect(addressRefusal(ip, { allowLoopback: false })).toMatch(/loopback/);
    expect(addressRefusal(ip, { allowLoopback: true })).toBeUndefined();
  });
});

describe('hostNameRefusal', () => {
  it.each([
    'metadata.google.internal',
    'metadata.goog',
    'metadata',
    'instance-data',
    'instance-data.ec2.internal',
    'metadata.tencentyun.com',
    'METADATA.google.internal.',
    'Metadata.Goog..',
  ])('refuses the metadata host %s, in local mode too', (host) => {
    expect(hostNameRefusal(host, true)).toBe('is a cloud metadata host');
    expect(hostNameRefusal(host, false)).toBe('is a cloud metadata host');
  });

  it.each(['metadata.example.net', 'my-metadata', 'instance-data.example.net', 'goog'])('allows %s, which only looks like one', (host) => {
    expect(hostNameRefusal(host, false)).toBeUndefined();
  });

  it.each(['localhost', 'LOCALHOST.', 'api.localhost', 'a.b.localhost..'])('refuses the loopback host %s outside local mode only', (host) => {
    expect(hostNameRefusal(host, false)).toBe('is a loopback host (allowed in local mode only)');
    expect(hostNameRefusal(host, true)).toBeUndefined();
  });

  it.each(['nso.example.net', 'notlocalhost', 'localhost.example.net'])('allows %s outside local mode', (host) => {
    expect(hostNameRefusal(host, false)).toBeUndefined();
  });
});
