import { describe, expect, it } from 'vitest';
import { cachedAdapters, type AdapterReader } from '../../functions/adapters/cache.js';
import type { Adapter } from '../../functions/adapters/model.js';

const adapter = (name: string, baseUrl = 'https://nso.example.net'): Adapter => ({
  name,
  type: 'nso',
  baseUrl,
  auth: { type: 'basic', username: 'admin', password: `$VAULT_netconfig/adapters/${name}#password` },
  created: '2024-01-01T00:00:00.000Z',
  lastUpdated: '2024-01-01T00:00:00.000Z',
});

/** An adapter store behind the reader interface, counting reads; `release` lets a read end on demand. */
const store = (initial: Adapter[] = []) => {
  const items = new Map(initial.map((a) => [a.name, a]));
  const reads: string[] = [];
  let gate: Promise<void> | undefined;
  const reader: AdapterReader = {
    get: async (name) => {
      reads.push(name);
      // The item as it is when the read starts: a change afterwards is not seen by it.
      const found = items.get(name);
      if (gate) await gate;
      return found;
    },
  };
  return {
    reader,
    reads,
    put: (a: Adapter) => items.set(a.name, a),
    remove: (name: string) => items.delete(name),
    /** Holds every read until the returned function is called. */
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
};

const serving = (a: Adapter | undefined): boolean => a !== undefined && a.state !== 'STOPPED';

const clock = (start = 1_000_000) => {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

describe('cachedAdapters', () => {
  it('reuses a found adapter within the TTL and reads it again once the TTL has passed', async () => {
    const s = store([adapter('lab')]);
    const c = clock();
    const cache = cachedAdapters(s.reader, { ttlMs: 5_000, maxEntries: 10, now: c.now });
    expect(await cache.get('lab')).toEqual(adapter('lab'));
    s.put(adapter('lab', 'https://moved.example.net'));
    c.advance(4_999);
    expect((await cache.get('lab'))?.baseUrl).toBe('https://nso.example.net');
    expect(s.reads).toEqual(['lab']);
    c.advance(1);
    expect((await cache.get('lab'))?.baseUrl).toBe('https://moved.example.net');
    expect(s.reads).toEqual(['lab', 'lab']);
  });

  it('counts the TTL from the start of the read that filled the entry', async () => {
    const s = store([adapter('lab')]);
    const c = clock();
    const cache = cachedAdapters(s.reader, { ttlMs: 1_000, maxEntries: 10, now: c.now });
    const release = s.hold();
    const pending = cache.get('lab');
    c.advance(600); // the read itself took 600 ms
    release();
    await pending;
    c.advance(400);
    await cache.get('lab');
    expect(s.reads).toHaveLength(2);
  });

  it('never caches a miss: an adapter created after a miss is found by the next call', async () => {
    const s = store();
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 10, now: clock().now });
    expect(await cache.get('new')).toBeUndefined();
    expect(await cache.get('new')).toBeUndefined();
    expect(s.reads).toEqual(['new', 'new']);
    s.put(adapter('new'));
    expect(await cache.get('new')).toEqual(adapter('new'));
  });

  it('never caches a stopped adapter: one started after a refusal serves from the next call, a stop is seen within the TTL', async () => {
    const stopped: Adapter = { ...adapter('lab'), state: 'STOPPED' };
    const s = store([adapter('lab')]);
    const c = clock();
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 10, now: c.now });
    await cache.get('lab');
    s.put(stopped);
    // The bound of a stop: the running entry serves until its TTL has passed.
    c.advance(59_999);
    expect((await cache.get('lab'))?.state).toBeUndefined();
    c.advance(1);
    expect((await cache.get('lab'))?.state).toBe('STOPPED');
    expect((await cache.get('lab'))?.state).toBe('STOPPED');
    s.put(adapter('lab'));
    expect((await cache.get('lab'))?.state).toBeUndefined();
    expect(s.reads).toEqual(['lab', 'lab', 'lab', 'lab']);
  });

  it.each([
    ['stopped', (s: ReturnType<typeof store>) => s.put({ ...adapter('lab'), state: 'STOPPED' })],
    ['missing', (s: ReturnType<typeof store>) => s.remove('lab')],
  ] as const)('reads again instead of joining a read under way that found the adapter %s', async (_, refuse) => {
    const s = store([adapter('lab')]);
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 10, now: clock().now });
    refuse(s);
    const release = s.hold();
    const early = cache.get('lab');
    // Created or started while the early read was under way.
    s.put(adapter('lab'));
    const next = cache.get('lab');
    release();
    expect(serving(await early)).toBe(false);
    expect(serving(await next)).toBe(true);
    expect(s.reads).toEqual(['lab', 'lab']);
  });

  it('reads a deleted adapter again once its entry expired, and then misses', async () => {
    const s = store([adapter('lab')]);
    const c = clock();
    const cache = cachedAdapters(s.reader, { ttlMs: 1_000, maxEntries: 10, now: c.now });
    await cache.get('lab');
    s.remove('lab');
    c.advance(1_000);
    expect(await cache.get('lab')).toBeUndefined();
    expect(await cache.get('lab')).toBeUndefined();
    expect(s.reads).toEqual(['lab', 'lab', 'lab']);
  });

  it('keeps at most maxEntries adapters, dropping the one read longest ago', async () => {
    const s = store(['a', 'b', 'c', 'd'].map((n) => adapter(n)));
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 3, now: clock().now });
    for (const name of ['a', 'b', 'c', 'd']) await cache.get(name);
    s.reads.length = 0;
    for (const name of ['b', 'c', 'd']) await cache.get(name);
    expect(s.reads).toEqual([]);
    await cache.get('a');
    expect(s.reads).toEqual(['a']);
    // Reading `a` again dropped `b`, then the oldest entry.
    await cache.get('b');
    expect(s.reads).toEqual(['a', 'b']);
  });

  it('drops one adapter on forget: the next call reads it afresh, the others stay cached', async () => {
    const s = store([adapter('lab'), adapter('other')]);
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 10, now: clock().now });
    await cache.get('lab');
    await cache.get('other');
    s.put(adapter('lab', 'https://moved.example.net'));
    cache.forget('lab');
    expect((await cache.get('lab'))?.baseUrl).toBe('https://moved.example.net');
    await cache.get('other');
    expect(s.reads).toEqual(['lab', 'other', 'lab']);
  });

  it('drops every adapter on forget without a name', async () => {
    const s = store([adapter('lab'), adapter('other')]);
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 10, now: clock().now });
    await cache.get('lab');
    await cache.get('other');
    cache.forget();
    await cache.get('lab');
    await cache.get('other');
    expect(s.reads).toEqual(['lab', 'other', 'lab', 'other']);
  });

  it('does not keep what a read that was under way during a forget returned', async () => {
    const s = store([adapter('lab')]);
    const cache = cachedAdapters(s.reader, { ttlMs: 60_000, maxEntries: 10, now: clock().now });
    const release = s.hold();
    const pending = cache.get('lab');
    s.put(adapter('lab', 'https://moved.example.net'));
    cache.forget('lab');
    release();
    expect((await pending)?.baseUrl).toBe('https://nso.example.net');
    expect((await cache.get('lab'))?.baseUrl).toBe('https://moved.example.net');
    expect(s.reads).toHaveLength(2);
  });

  it('makes one read for the calls that miss while it is under way, and a fresh one after a forget', async () => {
    const s = store([adapter('lab'), adapter('edge')]);
    const time = clock();
    const cache = cachedAdapters(s.reader, { ttlMs: 5_000, maxEntries: 10, now: time.now });
    let release = s.hold();
    const first = Array.from({ length: 50 }, () => cache.get('lab'));
    const other = cache.get('edge');
    release();
    expect((await Promise.all(first)).every((a) => a?.name === 'lab')).toBe(true);
    expect((await other)?.name).toBe('edge');
    expect(s.reads).toEqual(['lab', 'edge']);
    // The entry expires while 50 fetches are in flight: one read again.
    time.advance(5_000);
    release = s.hold();
    const again = Array.from({ length: 50 }, () => cache.get('lab'));
    // A call after a forget does not join the read that started before it.
    s.put(adapter('lab', 'https://moved.example.net'));
    cache.forget('lab');
    const afterForget = cache.get('lab');
    release();
    expect((await Promise.all(again)).every((a) => a?.baseUrl === 'https://nso.example.net')).toBe(true);
    expect((await afterForget)?.baseUrl).toBe('https://moved.example.net');
    expect(s.reads).toEqual(['lab', 'edge', 'lab', 'lab']);
    expect((await cache.get('lab'))?.baseUrl).toBe('https://moved.example.net');
    expect(s.reads).toHaveLength(4);
  });

  it('does not join a read that started a TTL ago or more: what it returns is no fresher than an expired entry', async () => {
    const s = store([adapter('lab')]);
    const time = clock();
    const cache = cachedAdapters(s.reader, { ttlMs: 5_000, maxEntries: 10, now: time.now });
    const release = s.hold();
    const slow = cache.get('lab');
    s.put(adapter('lab', 'https://moved.example.net'));
    time.advance(4_999);
    const joined = cache.get('lab');
    time.advance(1);
    const fresh = cache.get('lab');
    release();
    expect((await slow)?.baseUrl).toBe('https://nso.example.net');
    expect((await joined)?.baseUrl).toBe('https://nso.example.net');
    expect((await fresh)?.baseUrl).toBe('https://moved.example.net');
    expect(s.reads).toEqual(['lab', 'lab']);
  });

  it('keeps a newer read joinable when an older one ends after it started', async () => {
    const releases: ((a: Adapter) => void)[] = [];
    let reads = 0;
    const cache = cachedAdapters(
      {
        get: (name) => {
          reads++;
          return new Promise<Adapter | undefined>((resolve) => releases.push(resolve)).then((a) => a ?? adapter(name));
        },
      },
      { ttlMs: 60_000, maxEntries: 10, now: clock().now },
    );
    const older = cache.get('lab');
    cache.forget('lab');
    const newer = cache.get('lab');
    releases[0]!(adapter('lab', 'https://old.example.net'));
    expect((await older)?.baseUrl).toBe('https://old.example.net');
    // The older read has ended; the newer is still under way and is joined.
    const joining = cache.get('lab');
    expect(reads).toBe(2);
    releases[1]!(adapter('lab', 'https://new.example.net'));
    expect((await newer)?.baseUrl).toBe('https://new.example.net');
    expect((await joining)?.baseUrl).toBe('https://new.example.net');
    expect(reads).toBe(2);
  });

  it('lets every call that joined a failed read see the failure, and the next call read again', async () => {
    let fail = true;
    let reads = 0;
    let release!: () => void;
    const cache = cachedAdapters(
      {
        get: async (name) => {
          reads++;
          await new Promise<void>((resolve) => (release = resolve));
          if (fail) throw new Error('store down');
          return adapter(name);
        },
      },
      { ttlMs: 60_000, maxEntries: 10, now: clock().now },
    );
    const joined = [cache.get('lab'), cache.get('lab'), cache.get('lab')];
    release();
    for (const call of joined) await expect(call).rejects.toThrow('store down');
    expect(reads).toBe(1);
    fail = false;
    const next = cache.get('lab');
    release();
    expect(await next).toEqual(adapter('lab'));
    expect(reads).toBe(2);
  });

  it('does not cache a failed read', async () => {
    let fail = true;
    const reads: string[] = [];
    const cache = cachedAdapters(
      {
        get: async (name) => {
          reads.push(name);
          if (fail) throw new Error('store down');
          return adapter(name);
        },
      },
      { ttlMs: 60_000, maxEntries: 10, now: clock().now },
    );
    await expect(cache.get('lab')).rejects.toThrow('store down');
    fail = false;
    expect(await cache.get('lab')).toEqual(adapter('lab'));
    expect(await cache.get('lab')).toEqual(adapter('lab'));
    expect(reads).toEqual(['lab', 'lab']);
  });

  it('reads the store on every call when the TTL is 0', async () => {
    const s = store([adapter('lab')]);
    const cache = cachedAdapters(s.reader, { ttlMs: 0, maxEntries: 10, now: clock().now });
    await cache.get('lab');
    s.put(adapter('lab', 'https://moved.example.net'));
    expect((await cache.get('lab'))?.baseUrl).toBe('https://moved.example.net');
    cache.forget('lab');
    expect(s.reads).toEqual(['lab', 'lab']);
  });
});
