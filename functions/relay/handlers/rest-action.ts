/**
 * `POST /orch_manager/restAction/{adapterId}` (admin, spec 4.1): relays one REST action to the
 * orchestrator behind the named adapter and answers `[ { result, data } ]`.
 *
 * The container's clients are created here, once: the adapter store, the secrets resolver,
 * and the orchestrator client whose keep-alive agents carry connections across invocations.
 *
 * Configuration: `ADAPTERS_TABLE`, `IDEMPOTENCY_TABLE`, the secrets variables (`SECRETS_BACKEND`…), `LOCAL_MODE`
 * (`true` lets the relay reach loopback orchestrators, as the local simulator),
 * `RELAY_MAX_BODY_BYTES` (default 4 MiB, at most 4 MiB: the orchestrator body read at most).
 * The active profile's `orch_manager` settings (`runtime/settings.ts`) give the default
 * orchestrator timeout and how long a warm container reuses an adapter it read
 * (`adapterCacheSeconds`; see `adapters/cache.ts`).
 */
import { ADAPTER_CACHE_MAX_ENTRIES, cachedAdapters, type CachedAdapters } from '../../adapters/cache.js';
import { createAdapterStore } from '../../adapters/store.js';
import { adapterNameFromPath } from '../../adapters/validate.js';
import { relayRestAction as validate } from '../../generated/validators.js';
import { secretResolver } from '../../outbound/secrets/resolver.js';
import { integerEnv, optionalEnv, requiredEnv } from '../../platform/env.js';
import { documentClient } from '../../platform/dynamo.js';
import { httpHandler, json } from '../../runtime/http.js';
import { idempotent } from '../../platform/idempotency.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { logger } from '../../platform/logger.js';
import { currentSettings, onSettingsChange } from '../../runtime/settings.js';
import { recordRelayCall } from '../../platform/metrics.js';
import { traceSubsegment } from '../../platform/tracing.js';
import { callLineLevel } from '../call-log.js';
import { createHttpClient } from '../../outbound/http-client.js';
import { createCallSlots } from '../call-slots.js';
import { DEFAULT_LIMITS, relayRestAction, type RelayDeps, type RelayLogLine, type RestActionRequest } from '../service.js';

const MAX_BODY = DEFAULT_LIMITS.maxBodyBytes;

// Found adapters are reused for a few seconds (the active profile's `adapterCacheSeconds`); a miss
// is never cached, and a call that fails in a way a stale adapter explains drops its entry
// (`relayRestAction` calls `forget`). A new period, or a restart of orch_manager, starts a new cache.
const adapterStore = createAdapterStore();
let adapters: CachedAdapters = cachedAdapters(adapterStore, { ttlMs: 0, maxEntries: ADAPTER_CACHE_MAX_ENTRIES });
let adapterCacheSeconds: number | undefined;
onSettingsChange((next, previous) => {
  const restarted = next.applications.orch_manager.restarted !== previous?.applications.orch_manager.restarted;
  if (previous && restarted) secretResolver.forget();
  if (restarted || next.profile.applications.orch_manager.adapterCacheSeconds !== adapterCacheSeconds) {
    adapterCacheSeconds = next.profile.applications.orch_manager.adapterCacheSeconds;
    adapters = cachedAdapters(adapterStore, { ttlMs: adapterCacheSeconds * 1000, maxEntries: ADAPTER_CACHE_MAX_ENTRIES });
  }
});
const client = createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' });
const limits = { ...DEFAULT_LIMITS, maxBodyBytes: integerEnv('RELAY_MAX_BODY_BYTES', MAX_BODY, 1024, MAX_BODY) };

/** Outcomes of an exchange that ended without an answer in time. */
const TIMED_OUT = new Set(['timeout', 'aborted']);

/**
 * Writes a call's lines at the adapter's level (see call-log.ts): the call line at error, warn or
 * info by the status answered, and at debug or trace the exchange line.
 */
const log = ({ logLevel, exchange, ...line }: RelayLogLine): void => {
  logger.log(callLineLevel(line.status), 'relay call', { ...line }, logLevel);
  if (exchange) logger.log(logLevel === 'trace' ? 'trace' : 'debug', 'relay exchange', { adapter: line.adapter, ...exchange }, logLevel);
  // Metrics only for exchanges that happened: an unknown or refused name never becomes a dimension.
  if (line.upstreamMs !== undefined) {
    recordRelayCall({
      adapter: line.adapter,
      outcome: line.upstreamStatus ?? (TIMED_OUT.has(line.outcome) ? 'timeout' : 'error'),
      latencyMs: line.upstreamMs,
    });
  }
};

const traceCall: RelayDeps['traceCall'] = (adapter, request, send) =>
  traceSubsegment(
    `orchestrator ${adapter}`,
    // The tracer records origin and path only: never the query or credentials.
    { http: { method: request.method, url: `${request.target.origin.origin}${request.target.path}` }, annotations: { adapter, purpose: 'relay' } },
    async (sub) => {
      const response = await send();
      sub.setHttpStatus(response.status);
      return response;
    },
  );

// Retries carrying the same Idempotency-Key reach the orchestrator once. Only answers given
// after the request may have reached it are kept: a refusal that sent nothing (unknown
// adapter, connection refused, unknown host, refused address, failed TLS handshake) runs again.
const idempotency = idempotent({ store: createIdempotencyStore(), keep: 'effects' });
const callSlots = createCallSlots(documentClient, requiredEnv('IDEMPOTENCY_TABLE'));

export const handler = httpHandler<RestActionRequest>({ operation: 'relayRestAction', validate, idempotency }, async (event, context, { signal }) => {
  const adapterId = adapterNameFromPath(event.pathParameters?.['adapterId'], 'adapterId');
  const settings = (await currentSettings()).profile.applications.orch_manager;
  if (adapterCacheSeconds === undefined) {
    // No settings read in this container (its function may not read profiles): the built-in period.
    adapterCacheSeconds = settings.adapterCacheSeconds;
    adapters = cachedAdapters(adapterStore, { ttlMs: adapterCacheSeconds * 1000, maxEntries: ADAPTER_CACHE_MAX_ENTRIES });
  }
  // A cap on the calls in flight through the adapter (0: none); the lease cannot outlive this function.
  const release =
    settings.maxConcurrentCallsPerAdapter > 0
      ? await callSlots.acquire(adapterId, settings.maxConcurrentCallsPerAdapter, context.getRemainingTimeInMillis())
      : undefined;
  let results;
  try {
    results = await relayRestAction(
      { adapterId, request: event.body, signal },
      {
        adapters,
        secrets: secretResolver,
        client,
        remainingTimeMs: () => context.getRemainingTimeInMillis(),
        log,
        limits: { ...limits, defaultTimeoutMs: settings.orchestratorTimeoutMs },
        traceCall,
      },
    );
  } finally {
    await release?.();
  }
  return json(200, results);
});
