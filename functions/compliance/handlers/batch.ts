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
 * `COMPLIANCE_CHUNK_CONCURRENCY` (chunks at once, default 3), `RELAY_MAX_BODY_BYTES`, `EVENT_BUS_NAME`
 * (the bus of the compliance events, functions/compliance/events.ts).
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { relayRestAction } from '../../relay/service.js';
import { batchRelayDeps, batchRelayGet } from '../batch-relay.js';
import { ConfigHistory } from '../../configs/archive.js';
import { archiveStores } from '../../configs/wiring.js';
import { integerEnv } from '../../platform/env.js';
import { metrics } from '../../platform/metrics.js';
import { currentSettings } from '../../runtime/settings.js';
import { evaluateRules } from '../../trees/rules.js';
import { runBatch, type BatchEvent, type EngineDeps } from '../engine.js';
import { complianceEvents } from '../events.js';
import { recordBatchEnd, recordDeviceChecked, recordFetchFailure } from '../metrics.js';
import { createHistoryStore } from '../history-store.js';
import { createComplianceStore } from '../store.js';

const store = createComplianceStore();

/** Each fetch or sync action logged at debug level under this message. */
const CALL = 'compliance fetch';

/** The container's configuration history: what it uploaded and found unchanged is counted on it. */
export const configArchive = new ConfigHistory({
  ...archiveStores(),
  retentionDays: async () => (await currentSettings()).profile.applications.configuration_manager.configRetentionDays,
});

/** The engine's dependencies in this container (tests wrap them to inject faults). */
export const engineDeps: EngineDeps = {
  store,
  history: createHistoryStore(store),
  relayGet: batchRelayGet(CALL),
  relayPost: (remainingTimeMs) => (adapterId, path, body) =>
    relayRestAction(
      {
        adapterId,
        request: { params: { method: 'POST', path, accept: 'application/yang-data+json', contentType: 'application/yang-data+json' }, body },
      },
      batchRelayDeps(remainingTimeMs, CALL),
    ),
  evaluate: evaluateRules,
  archive: configArchive,
  now: () => new Date(),
  chunkConcurrency: integerEnv('COMPLIANCE_CHUNK_CONCURRENCY', 3, 1, 20),
  onDeviceChecked: (report) => recordDeviceChecked(report.grade),
  onFetchFailure: recordFetchFailure,
  onBatchEnd: recordBatchEnd,
  afterStep: () => metrics.flush(),
  events: complianceEvents(),
};

export const handler = withDurableExecution(async (event: BatchEvent, context) => runBatch(event, context, engineDeps));
