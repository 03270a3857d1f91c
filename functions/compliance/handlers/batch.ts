/**
 * The durable function that runs compliance batches (`withDurableExecution`): started by
 * `POST /configuration_manager/compliance_reports` with `{ batchId }`, it checks the batch's
 * devices chunk by chunk (see engine.ts) and ends the batch `completed` or `failed`.
 *
 * The container's clients are created once, as the relay's are: the adapter store (cached a
 * few seconds), the secrets resolver, and the orchestrator client with its keep-alive agents.
 *
 * Every configuration fetched is kept in the configuration history (functions/configs/archive.ts),
 * for the active profile's `configRetentionDays`.
 *
 * Configuration: `COMPLIANCE_TABLE`, `ADAPTERS_TABLE`, `CONFIGS_TABLE`, `CONFIGS_BUCKET` (and
 * `CONFIGS_KMS_KEY`), `PROFILES_TABLE`, the secrets variables, `LOCAL_MODE`,
 * `COMPLIANCE_CHUNK_CONCURRENCY` (chunks at once, default 3), `RELAY_MAX_BODY_BYTES`.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { ADAPTER_CACHE_MAX_ENTRIES, ADAPTER_CACHE_TTL_SECONDS, cachedAdapters } from '../../adapters/cache.js';
import { createAdapterStore } from '../../adapters/store.js';
import { createHttpClient } from '../../outbound/http-client.js';
import { DEFAULT_LIMITS, relayRestAction, type RelayLogLine } from '../../relay/service.js';
import { secretResolver } from '../../outbound/secrets/resolver.js';
import { ConfigHistory } from '../../configs/archive.js';
import { archiveStores } from '../../configs/wiring.js';
import { integerEnv, optionalEnv } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { metrics, recordRelayCall } from '../../platform/metrics.js';
import { currentSettings } from '../../runtime/settings.js';
import { evaluateRules } from '../../trees/rules.js';
import { runBatch, type BatchEvent, type EngineDeps } from '../engine.js';
import { recordBatchEnd, recordDeviceChecked, recordFetchFailure } from '../metrics.js';
import { createComplianceStore } from '../store.js';

const adapters = cachedAdapters(createAdapterStore(), {
  ttlMs: integerEnv('ADAPTER_CACHE_TTL_SECONDS', ADAPTER_CACHE_TTL_SECONDS.default, ADAPTER_CACHE_TTL_SECONDS.min, ADAPTER_CACHE_TTL_SECONDS.max) * 1000,
  maxEntries: ADAPTER_CACHE_MAX_ENTRIES,
});
const client = createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' });
const limits = { ...DEFAULT_LIMITS, maxBodyBytes: integerEnv('RELAY_MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes, 1024, DEFAULT_LIMITS.maxBodyBytes) };

const TIMED_OUT = new Set(['timeout', 'aborted']);
/** One debug line per fetch or sync action (a batch makes thousands); the metrics count them all. */
const log = (line: RelayLogLine): void => {
  logger.debug('compliance fetch', { ...line });
  if (line.upstreamMs !== undefined) {
    recordRelayCall({ adapter: line.adapter, outcome: line.upstreamStatus ?? (TIMED_OUT.has(line.outcome) ? 'timeout' : 'error'), latencyMs: line.upstreamMs });
  }
};

/** The container's configuration history: what it uploaded and found unchanged is counted on it. */
export const configArchive = new ConfigHistory({
  ...archiveStores(),
  retentionDays: async () => (await currentSettings()).profile.applications.configuration_manager.configRetentionDays,
});

/** The engine's dependencies in this container (tests wrap them to inject faults). */
export const engineDeps: EngineDeps = {
  store: createComplianceStore(),
  relayGet: (remainingTimeMs) => (adapterId, path) =>
    relayRestAction(
      { adapterId, request: { params: { method: 'GET', path, accept: 'application/yang-data+json' }, body: {} } },
      { adapters, secrets: secretResolver, client, remainingTimeMs, log, limits },
    ),
  relayPost: (remainingTimeMs) => (adapterId, path, body) =>
    relayRestAction(
      {
        adapterId,
        request: { params: { method: 'POST', path, accept: 'application/yang-data+json', contentType: 'application/yang-data+json' }, body },
      },
      { adapters, secrets: secretResolver, client, remainingTimeMs, log, limits },
    ),
  evaluate: evaluateRules,
  archive: configArchive,
  now: () => new Date(),
  chunkConcurrency: integerEnv('COMPLIANCE_CHUNK_CONCURRENCY', 3, 1, 20),
  onDeviceChecked: (report) => recordDeviceChecked(report.grade),
  onFetchFailure: recordFetchFailure,
  onBatchEnd: recordBatchEnd,
  afterStep: () => metrics.flush(),
};

export const handler = withDurableExecution(async (event: BatchEvent, context) => runBatch(event, context, engineDeps));
