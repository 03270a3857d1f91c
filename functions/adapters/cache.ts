/**
 * A small read-through cache of adapters for one function container (the relay reads the
 * adapter on every call; a warm container reuses what it read a moment ago).
 *
 * - Only adapters that serve are kept: a miss or a `STOPPED` adapter is never cached, and a
 *   read under way that found one is not joined, so an adapter created or started a moment
 *   ago is usable from the next call. A refusal (404, 409 `adapter-stopped`) is thus always
 *   decided by a read that began after the call did; it is rare, so the read is cheap.
 * - An entry is reused for `ttlMs` after the read that produced it started, then read afresh:
 *   a changed, stopped or deleted adapter takes effect within that time in every container.
 * - A call that failed in a way a stale adapter could explain (the orchestrator refused the
 *   credentials, could not be reached, or was not one the relay may reach) calls
 *   {@link CachedAdapters.forget}: the next call reads the adapter again at once.
 * - At most `maxEntries` adapters are kept; the one read longest ago goes first.
 * - Calls that find no fresh entry while a read of that adapter is under way wait for that
 *   read instead of starting their own, unless a `forget` came after it started or it started
 *   `ttlMs` ago or more (what it returns is then no fresher than an expired entry): when the
 *   entry of an adapter a batch is fetching through expires, its fetches in flight make one
 *   read, not one each.
 *
 * `ttlMs` 0 turns the cache off: every `get` reads the store.
 */
import type { Adapter } from './model.js';

/** What the cache reads through: the adapter store's `get`. */
export interface AdapterReader {
  get(name: string): Promise<Adapter | undefined>;
}

export interface CachedAdapters extends AdapterReader {
  /** Drops one adapter (the next `get` reads the store), or every adapter. */
  forget(name?: string): void;
}

export interface AdapterCacheOptions {
  /** How long a read adapter is reused, in ms; 0 disables the cache. */
  readonly ttlMs: number;
  /** Most adapters kept at once. */
  readonly maxEntries: number;
  /** Clock in ms (injectable for tests); default `Date.now`. */
  readonly now?: () => number;
}

/** Default and bounds of `ADAPTER_CACHE_TTL_SECONDS`. */
export const ADAPTER_CACHE_TTL_SECONDS = { default: 5, min: 0, max: 300 } as const;
/** Adapters a relay container keeps at most. */
export const ADAPTER_CACHE_MAX_ENTRIES = 256;

/** Whether the relay and compliance would serve through `adapter` (what the cache may keep). */
const serves = (adapter: Adapter | undefined): adapter is Adapter => adapter !== undefined && adapter.state !== 'STOPPED';

interface Entry {
  readonly adapter: Adapter;
  readonly expiresAt: number;
}

/** Wraps `store` with the cache described above. */
export const cachedAdapters = (store: AdapterReader, options: AdapterCacheOptions): CachedAdapters => {
  const { ttlMs } = options;
  const maxEntries = Math.max(1, options.maxEntries);
  const now = options.now ?? (() => Date.now());
  if (ttlMs <= 0) return { get: (name) => store.get(name), forget: () => undefined };

  const entries = new Map<string, Entry>();
  /** Reads under way, by adapter, with when and in which generation they started. */
  const reading = new Map<string, { readonly generation: number; readonly startedAt: number; readonly read: Promise<Adapter | undefined> }>();
  // Bumped by every `forget`: a read that started before it must not store what it read,
  // since the failure that called `forget` may have come after that read began.
  let generation = 0;

  const read = async (name: string, startedAt: number): Promise<Adapter | undefined> => {
    const startedIn = generation;
    const adapter = await store.get(name);
    if (serves(adapter) && startedIn === generation) {
      entries.delete(name);
      entries.set(name, { adapter, expiresAt: startedAt + ttlMs });
      // Maps iterate in insertion order: the first key is the entry read longest ago.
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    }
    return adapter;
  };

  return {
    async get(name) {
      const hit = entries.get(name);
      if (hit) {
        if (hit.expiresAt > now()) return hit.adapter;
        entries.delete(name);
      }
      const under = reading.get(name);
      if (under && under.generation === generation && now() - under.startedAt < ttlMs) {
        // That read may have begun before the adapter was created or started: a refusal is read again.
        const joined = await under.read;
        if (serves(joined)) return joined;
      }
      const startedAt = now();
      const started = { generation, startedAt, read: read(name, startedAt) };
      reading.set(name, started);
      try {
        return await started.read;
      } finally {
        if (reading.get(name) === started) reading.delete(name);
      }
    },
    forget(name) {
      generation++;
      if (name === undefined) entries.clear();
      else entries.delete(name);
    },
  };
};
