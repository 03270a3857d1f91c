/**
 * The relay's dependencies in a durable function that calls NSO device by device (the batch
 * function, the remediation function), made once per container: the adapter store (cached a few
 * seconds), the secrets resolver, the orchestrator client with its keep-alive agents, the
 * relay's body cap (`RELAY_MAX_BODY_BYTES`), and a log that writes one debug line per call (a
 * batch makes thousands) while the relay metrics count them all.
 */
import { ADAPTER_CACHE_MAX_ENTRIES, ADAPTER_CACHE_TTL_SECONDS, cachedAdapters } from '../adapters/cache.js';
import { createAdapterStore } from '../adapters/store.js';
import { createHttpClient } from '../outbound/http-client.js';
import { secretResolver } from '../outbound/secrets/resolver.js';
import { integerEnv, optionalEnv } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { recordRelayCall } from '../platform/metrics.js';
import { DEFAULT_LIMITS, relayRestAction, type RelayDeps, type RelayLogLine } from '../relay/service.js';
import type { RelayGet } from './check.js';

const TIMED_OUT = new Set(['timeout', 'aborted']);

let made: Omit<RelayDeps, 'remainingTimeMs' | 'log'> | undefined;

/** The container's relay dependencies, given how much time the invocation has left; each call logged as `message`. */
export const batchRelayDeps = (remainingTimeMs: () => number, message: string): RelayDeps => {
  made ??= {
    adapters: cachedAdapters(createAdapterStore(), {
      ttlMs: integerEnv('ADAPTER_CACHE_TTL_SECONDS', ADAPTER_CACHE_TTL_SECONDS.default, ADAPTER_CACHE_TTL_SECONDS.min, ADAPTER_CACHE_TTL_SECONDS.max) * 1000,
      maxEntries: ADAPTER_CACHE_MAX_ENTRIES,
    }),
    secrets: secretResolver,
    client: createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' }),
    limits: { ...DEFAULT_LIMITS, maxBodyBytes: integerEnv('RELAY_MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes, 1024, DEFAULT_LIMITS.maxBodyBytes) },
  };
  const log = (line: RelayLogLine): void => {
    logger.debug(message, { ...line });
    if (line.upstreamMs !== undefined) {
      recordRelayCall({
        adapter: line.adapter,
        outcome: line.upstreamStatus ?? (TIMED_OUT.has(line.outcome) ? 'timeout' : 'error'),
        latencyMs: line.upstreamMs,
      });
    }
  };
  return { ...made, remainingTimeMs, log };
};

/** The relay's GET of a device's data (`application/yang-data+json`), given how much time the invocation has left. */
export const batchRelayGet =
  (message: string) =>
  (remainingTimeMs: () => number): RelayGet =>
  (adapterId, path) =>
    relayRestAction(
      { adapterId, request: { params: { method: 'GET', path, accept: 'application/yang-data+json' }, body: {} } },
      batchRelayDeps(remainingTimeMs, message),
    );
