/**
 * The adapter health functions' clients, created once per container: the adapter store, the
 * secrets resolver and an orchestrator client with the relay's guards (loopback only in
 * local mode).
 */
import { createAdapterStore } from '../adapters/store.js';
import { createHttpClient } from '../shared/http-client.js';
import { secretResolver } from '../secrets/resolver.js';
import { integerEnv, optionalEnv } from '../shared/env.js';
import type { AdapterHealthDeps } from './adapter-health.js';

export const adapterHealthDeps: AdapterHealthDeps = {
  store: createAdapterStore(),
  secrets: secretResolver,
  client: createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' }),
  /** `HEALTH_ADAPTER_TIMEOUT_MS` (default 3000): one probe's limit, also capped by the adapter's own `timeoutMs`. */
  timeoutMs: integerEnv('HEALTH_ADAPTER_TIMEOUT_MS', 3_000, 100, 10_000),
};
