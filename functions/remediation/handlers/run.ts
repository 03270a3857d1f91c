/**
 * The durable function that runs remediation (`withDurableExecution`): started by
 * `POST …/batches/{batchId}/remediations` with `{ remediationId, action: "run" }` and by
 * `POST …/remediations/{remediationId}/rollback` with `action: "rollback"` (see engine.ts).
 *
 * The container's clients are created once, as the batch function's are: the adapter store
 * (cached a few seconds), the secrets resolver, and the orchestrator client with its keep-alive
 * agents. Every NSO call goes through the relay's own code (its SSRF rules, secrets, timeouts
 * and body cap). The end of a run and of a rollback is written to the adapter's changelog.
 *
 * Configuration: `COMPLIANCE_TABLE`, `ADAPTERS_TABLE`, `CHANGELOG_TABLE`, `PROFILES_TABLE`, the
 * secrets variables, `LOCAL_MODE`, `RELAY_MAX_BODY_BYTES`.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { ADAPTER_CACHE_MAX_ENTRIES, ADAPTER_CACHE_TTL_SECONDS, cachedAdapters } from '../../adapters/cache.js';
import { createAdapterStore } from '../../adapters/store.js';
import { createComplianceStore } from '../../compliance/store.js';
import { createHttpClient } from '../../outbound/http-client.js';
import { secretResolver } from '../../outbound/secrets/resolver.js';
import { integerEnv, optionalEnv } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { metrics, recordRelayCall } from '../../platform/metrics.js';
import { DEFAULT_LIMITS, relayRestAction, type RelayLogLine } from '../../relay/service.js';
import { evaluateRules } from '../../trees/rules.js';
import { changelogAudit, recordEndFromStore } from '../audit.js';
import { runRemediation, type RemediationEngineDeps } from '../engine.js';
import type { RemediationEvent } from '../model.js';
import { createNsoTransactions } from '../nso.js';
import { remediationStore } from '../wiring.js';

const adapters = cachedAdapters(createAdapterStore(), {
  ttlMs: integerEnv('ADAPTER_CACHE_TTL_SECONDS', ADAPTER_CACHE_TTL_SECONDS.default, ADAPTER_CACHE_TTL_SECONDS.min, ADAPTER_CACHE_TTL_SECONDS.max) * 1000,
  maxEntries: ADAPTER_CACHE_MAX_ENTRIES,
});
const client = createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' });
const limits = { ...DEFAULT_LIMITS, maxBodyBytes: integerEnv('RELAY_MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes, 1024, DEFAULT_LIMITS.maxBodyBytes) };
const TIMED_OUT = new Set(['timeout', 'aborted']);

/** One debug line per NSO call (a run makes thousands); the relay metrics count them all. */
const log = (line: RelayLogLine): void => {
  logger.debug('remediation call', { ...line });
  if (line.upstreamMs !== undefined) {
    recordRelayCall({ adapter: line.adapter, outcome: line.upstreamStatus ?? (TIMED_OUT.has(line.outcome) ? 'timeout' : 'error'), latencyMs: line.upstreamMs });
  }
};

const relayDeps = (remainingTimeMs: () => number) => ({ adapters, secrets: secretResolver, client, remainingTimeMs, log, limits });
const store = remediationStore();
const audit = changelogAudit();

/** The engine's dependencies in this container (tests and the bench wrap them). */
export const remediationDeps: RemediationEngineDeps = {
  store,
  batches: createComplianceStore(),
  relayGet: (remainingTimeMs) => (adapterId, path) =>
    relayRestAction({ adapterId, request: { params: { method: 'GET', path, accept: 'application/yang-data+json' }, body: {} } }, relayDeps(remainingTimeMs)),
  nso: (remainingTimeMs) => createNsoTransactions(relayDeps(remainingTimeMs)),
  evaluate: evaluateRules,
  now: () => new Date(),
  onEnd: (end) => recordEndFromStore(audit, store, end),
  afterStep: () => metrics.flush(),
};

export const handler = withDurableExecution(async (event: RemediationEvent, context) => runRemediation(event, context, remediationDeps));
