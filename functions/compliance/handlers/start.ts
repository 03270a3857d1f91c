/**
 * POST /configuration_manager/compliance_reports (admin): plans a batch over a tree version's
 * devices, records it, starts its durable execution and answers 202 with the batch's path in
 * `Location`. Honours `Idempotency-Key` like the other POSTs: a retried start answers the
 * first answer and starts nothing more.
 *
 * Settings: the active profile's `configuration_manager` settings (`runtime/settings.ts`):
 * `complianceConcurrency` (concurrent configuration fetches per batch on the adapter, 1–100)
 * unless the adapter sets its own, and `reportRetentionDays` (1–3650), both taken when the
 * batch starts and kept with it. When a node of the version (or an exemption of the tree) selects
 * devices, NSO's inventory is read through the adapter (the relay's secrets and network).
 */
import { startComplianceBatch as validate } from '../../generated/validators.js';
import { createAdapterStore } from '../../adapters/store.js';
import { httpHandler, json } from '../../runtime/http.js';
import { idempotent } from '../../platform/idempotency.js';
import { currentSettings } from '../../runtime/settings.js';
import { createIdempotencyStore } from '../../platform/idempotency-store.js';
import { readVersion } from '../../trees/version-service.js';
import { createExemptionStore } from '../../exemptions/store.js';
import { createVersionStore } from '../../trees/version-store.js';
import { batchRelayGet } from '../batch-relay.js';
import { inventoryReader } from '../inventory.js';
import { startBatch, type StartBatchInput, type StartDeps } from '../service.js';
import { startDurableExecution } from '../durable-start.js';
import { createComplianceStore } from '../store.js';

const versions = createVersionStore();
const adapters = createAdapterStore();

const deps: Omit<StartDeps, 'retentionDays' | 'concurrency'> = {
  versions: (treeId, label) => readVersion(versions, treeId, label),
  adapters,
  store: createComplianceStore(),
  startExecution: startDurableExecution,
  now: () => new Date(),
  exemptions: createExemptionStore(),
};

const COLLECTION = '/configuration_manager/compliance_reports';

/** The batch's path as the client addressed the collection (stage or base path included). */
const batchLocation = (batchId: string, requestPath?: string): string => {
  const base = requestPath?.replace(/\/+$/, '');
  return `${base?.endsWith(COLLECTION) ? base : COLLECTION}/batches/${batchId}`;
};

const idempotency = idempotent({ store: createIdempotencyStore() });

const inventoryPage = batchRelayGet('compliance start inventory page');

export const handler = httpHandler<StartBatchInput>({ operation: 'startComplianceBatch', validate, idempotency }, async (event, context) => {
  const settings = (await currentSettings()).profile.applications.configuration_manager;
  const started = await startBatch(event.body, {
    ...deps,
    inventory: inventoryReader(inventoryPage(() => context.getRemainingTimeInMillis())),
    retentionDays: settings.reportRetentionDays,
    historyRetentionDays: settings.historyRetentionDays,
    concurrency: settings.complianceConcurrency,
  });
  return json(202, started, { Location: batchLocation(started.batchId, event.requestContext?.path) });
});
