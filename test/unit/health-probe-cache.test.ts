import { describe, expect, it } from 'vitest';
import type { Adapter } from '../../functions/adapters/model.js';
import type { AdapterHealth } from '../../functions/health/adapter-probe.js';
import { createProbeCache } from '../../functions/health/probe-cache.js';

const adapter = (over: Partial<Adapter> = {}): Adapter => ({
  name: 'lab',
  type: 'nso',
  baseUrl: 'https://nso.example.net',
  auth: { type: 'basic', username: 'admin', password: '$VAULT_a#password' },
  created: '2026-01-01T00:00:00.000Z',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  ...over,
});
const up: AdapterHealth = { name: 'lab', type: 'nso', status: 'up', latencyMs: 1, httpStatus: 200 };

const setup = (ttlMs: number) => {
  let clock = 1_000_000;
  let probes = 0;
  const cache = createProbeCache({ ttlMs, now: () => clock });
  const probe = async () => {
    probes += 1;
    return up;
  };
  return { cache, probe, advance: (ms: number) => (clock += ms), probes: () => probes };
};

describe('probe cache', () => {
  it('reuses a result until exactly ttl after the probe ended, then probes again', async () => {
    const t = setup(10_000);
    const first = await t.cache.check(adapter(), t.probe);
    t.advance(9_999);
    expect(await t.cache.check(adapter(), t.probe)).toBe(first);
    t.advance(1);
    const second = await t.cache.check(adapter(), t.probe);
    expect(t.probes()).toBe(2);
    expect(second.checkedAt).not.toBe(first.checkedAt);
  });

  it.each<[string, Partial<Adapter>]>([
    ['address', { baseUrl: 'https://other.example.net' }],
    ['username', { auth: { type: 'basic', username: 'root', password: '$VAULT_a#password' } }],
    ['password reference', { auth: { type: 'basic', username: 'admin', password: '$VAULT_b#password' } }],
    ['timeout', { timeoutMs: 900 }],
    ['any write', { lastUpdated: '2026-01-02T00:00:00.000Z' }],
  ])('never serves a result to another version of the record (%s)', async (_, change) => {
    const t = setup(60_000);
    await t.cache.check(adapter(), t.probe);
    await t.cache.check(adapter(change), t.probe);
    expect(t.probes()).toBe(2);
  });

  it('keeps adapters apart, and with ttl 0 probes every time', async () => {
    const t = setup(0);
    await t.cache.check(adapter(), t.probe);
    await t.cache.check(adapter(), t.probe);
    expect(t.probes()).toBe(2);
    const u = setup(60_000);
    await u.cache.check(adapter({ name: 'a' }), u.probe);
    await u.cache.check(adapter({ name: 'b' }), u.probe);
    expect(u.probes()).toBe(2);
  });

  it('shares a probe in flight and forgets one that threw', async () => {
    const t = setup(60_000);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const slow = async () => {
      calls += 1;
      await gate;
      return up;
    };
    const all = Promise.all([t.cache.check(adapter(), slow), t.cache.check(adapter(), slow), t.cache.check(adapter(), slow)]);
    release();
    const results = await all;
    expect(calls).toBe(1);
    expect(new Set(results).size).toBe(1);

    const v = setup(60_000);
    await expect(v.cache.check(adapter(), () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await v.cache.check(adapter(), v.probe);
    expect(v.probes()).toBe(1);
  });
});
