/**
 * The adapter health routes' core. A request probes at most one page of adapters (20), at most
 * 10 at once, and each adapter at most once per probe-cache period per container: an `apiread`
 * caller cannot turn its requests into a flood of credentialed calls to the orchestrators.
 */
import type { Adapter, AdapterState } from '../adapters/model.js';
import { listAdapters } from '../adapters/service.js';
import type { AdapterStore } from '../adapters/store.js';
import { isDamaged, type DamagedAdapter } from '../adapters/store.js';
import { SecretReferenceInvalid } from '../outbound/secrets/errors.js';
import { InternalError, NotFound } from '../platform/problem.js';
import { AdapterDown, mapLimited, probeAdapter, type AdapterHealth, type ProbeDeps } from './adapter-probe.js';
import type { DependencyStatus } from './checks.js';
import type { ProbeCache } from './probe-cache.js';

/** Probes run at once, at most this many (a page holds at most {@link MAX_HEALTH_PAGE}). */
export const PROBE_CONCURRENCY = 10;
/** Page size of `GET /health/adapters`: default and largest. */
export const DEFAULT_HEALTH_PAGE = 10;
export const MAX_HEALTH_PAGE = 20;

export interface AdapterHealthDeps extends ProbeDeps {
  readonly store: AdapterStore;
  /** Recent results, so that repeated requests do not probe again. */
  readonly probes: ProbeCache;
  readonly clock?: () => Date;
}

/** One adapter's health, its lifecycle state, and when its probe ran (a result may be reused for a few seconds). */
export type CheckedAdapterHealth = AdapterHealth & { readonly state?: AdapterState; readonly checkedAt: string };

export interface AdaptersHealthPage {
  /**
   * `up` when every adapter of the page is up (or there is none); `degraded` when one is
   * misconfigured (a damaged record, a `$ENC` password); else `down` when one is down.
   */
  readonly status: DependencyStatus | 'degraded';
  readonly health: DependencyStatus | 'degraded';
  readonly checkedAt: string;
  readonly adapters: readonly CheckedAdapterHealth[];
  /** Pass as `cursor` for the next page; absent on the last one. */
  readonly next?: string;
}

/** The health of an adapter whose stored record cannot be used (nothing is sent). */
const misconfigured = (name: string): AdapterHealth => ({ name, type: 'nso', status: 'down', reason: 'misconfigured' });

const nowIso = (deps: AdapterHealthDeps): string => (deps.clock?.() ?? new Date()).toISOString();

/** An adapter's health: nothing sent for a damaged record, else the probe's (possibly recent) result. */
const checked = async (deps: AdapterHealthDeps, adapter: Adapter | DamagedAdapter): Promise<CheckedAdapterHealth> => {
  if (isDamaged(adapter)) return { ...misconfigured(adapter.name), checkedAt: nowIso(deps) };
  const state = adapter.state ?? 'RUNNING';
  if (state === 'STOPPED') return { name: adapter.name, type: adapter.type, state, status: 'down', reason: 'stopped', checkedAt: nowIso(deps) };
  const { health, checkedAt } = await deps.probes.check(adapter, () => probeAdapter(adapter, deps));
  return { ...health, state, checkedAt };
};

/** `GET /health/adapters`: probes one page of adapters (sorted by name). Always 200: the service itself is fine. */
export const adaptersHealth = async (deps: AdapterHealthDeps, query: { readonly limit?: string; readonly cursor?: string }): Promise<AdaptersHealthPage> => {
  const page = await listAdapters(deps.store, { limit: query.limit ?? String(DEFAULT_HEALTH_PAGE), ...(query.cursor ? { cursor: query.cursor } : {}) });
  const adapters = await mapLimited(page.items, PROBE_CONCURRENCY, (adapter) => checked(deps, adapter));
  // A stopped adapter is down by an admin's choice: it does not make the service down.
  const serving = adapters.filter((a) => a.reason !== 'stopped');
  const status: AdaptersHealthPage['status'] = serving.every((a) => a.status === 'up')
    ? 'up'
    : serving.some((a) => a.reason === 'misconfigured')
      ? 'degraded'
      : 'down';
  return {
    status,
    health: status,
    checkedAt: nowIso(deps),
    adapters,
    ...(page.next ? { next: page.next } : {}),
  };
};

/** `GET /health/adapters/{name}`: 200 when the orchestrator answers; 503 ({@link AdapterDown}) when not; 404 for no adapter. */
export const adapterHealth = async (deps: AdapterHealthDeps, name: string) => {
  let adapter;
  try {
    adapter = await deps.store.get(name);
  } catch (error) {
    // A damaged record (a `$ENC` password, a missing field): this adapter is down, not the route.
    if (error instanceof InternalError || error instanceof SecretReferenceInvalid) {
      throw new AdapterDown(misconfigured(name), nowIso(deps));
    }
    throw error;
  }
  if (!adapter) throw new NotFound(`No adapter is named "${name}".`);
  const health = await checked(deps, adapter);
  const checkedAt = health.checkedAt;
  if (health.status === 'down') throw new AdapterDown(health, checkedAt);
  return { status: 'up' as const, health: 'up' as const, checkedAt, adapter: health };
};
