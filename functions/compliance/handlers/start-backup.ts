/**
 * POST /configuration_manager/backups (admin): reads the adapter's device list from its NSO (a
 * page at a time, through the relay) unless the request names the devices, records a batch of
 * kind `backup` and starts its durable execution, and answers 202 with the batch's path in
 * `Location` (a compliance batch path: the batch and its reports are read there). Honours
 * `Idempotency-Key` like the other POSTs.
 *
 * Settings: the active profile's `configuration_manager` settings, as a compliance batch:
 * `complianceConcurrency` (concurrent configuration fetches on the adapter) unless the adapter
 * sets its own, and `reportRetentionDays`. Configuration: `COMPLIANCE_TABLE`, `ADAPTERS_TABLE`,
 * `IDEMPOTENCY_TABLE`, the secrets variables, `LOCAL_MODE`, `COMPLIANCE_FUNCTION`.
 */
import { createAdapterStore } from '../../adapters/store.js';
import { startBackupBatch as validate } from '../../generated/validators.js';
import { createHttpClient } from '../../outbound/http-client.js';
import { secretResolver } from '../../outbound/secrets/resolver.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { idempotent } from '../../platform/idempotency.js';
import { optionalEnv } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { DEFAULT_LIMITS, relayRestAction } from '../../relay/service.js';
import { httpHandler, json } from '../../runtime/http.js';
import { currentSettings } from '../../runtime/settings.js';
import { startBackup, type StartBackupInput } from '../backups.js';
import { startDurableExecution } from '../durable-start.js';
import { createComplianceStore } from '../store.js';

const adapters = createAdapterStore();
const store = createComplianceStore();
const client = createHttpClient({ allowLoopback: optionalEnv('LOCAL_MODE', 'false') === 'true' });
const idempotency = idempotent({ store: createIdempotencyStore() });

const COLLECTION = '/configuration_manager/backups';
const BATCHES = '/configuration_manager/compliance_reports/batches';

/** The batch's path as the client addressed the API (stage or base path included). */
const batchLocation = (batchId: string, requestPath?: string): string => {
  const base = requestPath?.replace(/\/+$/, '');
  return `${base?.endsWith(COLLECTION) ? base.slice(0, -COLLECTION.length) : ''}${BATCHES}/${batchId}`;
};

export const handler = httpHandler<StartBackupInput>({ operation: 'startBackupBatch', validate, idempotency }, async (event, context) => {
  const settings = (await currentSettings()).profile.applications;
  const started = await startBackup(event.body, {
    adapters,
    store,
    startExecution: startDurableExecution,
    now: () => new Date(),
    retentionDays: settings.configuration_manager.reportRetentionDays,
    concurrency: settings.configuration_manager.complianceConcurrency,
    relayGet: (adapterId, path) =>
      relayRestAction(
        { adapterId, request: { params: { method: 'GET', path, accept: 'application/yang-data+json' }, body: {} } },
        {
          adapters,
          secrets: secretResolver,
          client,
          remainingTimeMs: () => context.getRemainingTimeInMillis(),
          log: (line) => logger.debug('backup device list page', { ...line }),
          limits: { ...DEFAULT_LIMITS, defaultTimeoutMs: settings.orch_manager.orchestratorTimeoutMs },
        },
      ),
  });
  return json(202, started, { Location: batchLocation(started.batchId, event.requestContext?.path) });
});
