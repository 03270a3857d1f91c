/**
 * Recent probe results of one container. An adapter is probed at most once per `ttlMs` by
 * each warm health function, whatever the number of requests asking (concurrent requests
 * share the probe in flight), so a caller polling the health routes cannot turn each of its
 * requests into credentialed calls to every orchestrator. A result belongs to one version of
 * the adapter's record: any change to it (address, username, password reference, timeout)
 * makes the next request probe again.
 */
import type { Adapter } from '../adapters/model.js';
import type { AdapterHealth } from './adapter-probe.js';

/** A probe's result and when it was taken. */
export interface CheckedHealth {
  readonly health: AdapterHealth;
  /** ISO time the probe ran. */
  readonly checkedAt: string;
}

export interface ProbeCache {
  /** The adapter's cached result while fresh, else the result of `probe` (run once for concurrent callers). */
  check(adapter: Adapter, probe: () => Promise<AdapterHealth>): Promise<CheckedHealth>;
}

/** Adapters remembered at most: the oldest entry goes first past this. */
const MAX_ENTRIES = 1_000;

const versionOf = (a: Adapter): string => JSON.stringify([a.baseUrl, a.auth.username, a.auth.password, a.timeoutMs ?? null, a.lastUpdated]);

export const createProbeCache = (options: { readonly ttlMs: number; readonly now?: () => number }): ProbeCache => {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { readonly version: string; readonly result: Promise<CheckedHealth>; expiresAt: number }>();
  return {
    check(adapter, probe) {
      const version = versionOf(adapter);
      const cached = entries.get(adapter.name);
      if (cached && cached.version === version && cached.expiresAt > now()) return cached.result;
      const result = probe().then((health) => ({ health, checkedAt: new Date(now()).toISOString() }));
      // In flight: shared until it settles; then fresh for ttlMs from the moment it ended.
      const entry = { version, result, expiresAt: Number.POSITIVE_INFINITY };
      entries.delete(adapter.name);
      entries.set(adapter.name, entry);
      if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      result.then(
        () => (entry.expiresAt = now() + options.ttlMs),
        () => entries.get(adapter.name) === entry && entries.delete(adapter.name),
      );
      return result;
    },
  };
};
