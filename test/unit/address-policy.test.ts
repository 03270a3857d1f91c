import { describe, expect, it } from 'vitest';
import { addressRefusal, hostNameRefusal } from '../../functions/shared/address-policy.js';

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

  it.each(['10.1.2.3', '192.168.0.10', '172.16.0.1', '2001:db8::1', 'fd12:3456::1', '100.64.0.1', '8.8.8.8', '2002:808:808::1', '64:ff9b::8.8.8.8', '2001:0:808:808::f7f7:f7f7'])('allows %s', (address) => {
    expect(addressRefusal(address, { allowLoopback: false })).toBeUndefined();
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
  it.each(['metadata.google.internal', 'METADATA.google.internal.', 'instance-data'])('refuses the metadata host %s', (host) => {
    expect(hostNameRefusal(host, true)).toMatch(/metadata/);
  });

  it('refuses localhost outside local mode only', () => {
    expect(hostNameRefusal('api.localhost', false)).toMatch(/loopback/);
    expect(hostNameRefusal('localhost', true)).toBeUndefined();
    expect(hostNameRefusal('nso.example.net', false)).toBeUndefined();
  });
});
