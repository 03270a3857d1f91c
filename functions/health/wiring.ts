/**
 * The adapter health functions' clients, created once per container: the adapter store, the
 * secrets resolver and an orchestrator client with the relay's guards (loopback only in
 * local mode).
 */
import { createAdapterStore } from '../adapters/store.js';
import { createHttpClient } from '../outbound/http-client.js';
import { secretResolver } from '../outbound/secrets/resolver.js';
import { integerEnv, optionalEnv } from '../platform/env.js';
import type { AdapterHealthDeps } from './adapter-health.js';
import { createProbeCache } from './probe-cache.js';

export const adapterHealthDeps: AdapterHealthDeps = {
  store: createAdapterStore(),
  secrets: secretResolver,
  client: createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' }),
  /** `HEALTH_ADAPTER_TIMEOUT_MS` (default 3000): one probe's limit, also capped by the adapter's own `timeoutMs`. */
  timeoutMs: integerEnv('HEALTH_ADAPTER_TIMEOUT_MS', 3_000, 100, 10_000),
  /** `HEALTH_PROBE_CACHE_SECONDS` (default 10, 0 to 60): how long a probe's result is reused. */
  probes: createProbeCache({ ttlMs: integerEnv('HEALTH_PROBE_CACHE_SECONDS', 10, 0, 60) * 1000 }),
};
