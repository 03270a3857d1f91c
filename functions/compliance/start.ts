/**
 * POST /configuration_manager/compliance_reports (admin): plans a batch over a tree version's
 * devices, records it, starts its durable execution and answers 202 with the batch's path in
 * `Location`. Honours `Idempotency-Key` like the other POSTs: a retried start answers the
 * first answer and starts nothing more.
 *
 * Settings: `COMPLIANCE_CONCURRENCY` (concurrent configuration fetches per batch on the
 * adapter, 1–100, default 10) unless the adapter sets its own `complianceConcurrency`;
 * `COMPLIANCE_RETENTION_DAYS` (1–3650, default 90).
 */
import { startComplianceBatch as validate } from '../generated/validators.js';
import { createAdapterStore } from '../adapters/store.js';
import { documentClient } from '../shared/dynamo.js';
import { integerEnv, requiredEnv } from '../shared/env.js';
import { httpHandler, json } from '../shared/http.js';
import { idempotent } from '../shared/idempotency.js';
import { createIdempotencyStore } from '../shared/idempotency-store.js';
import { readVersion } from '../trees/versions.js';
import { DynamoVersionStore } from '../trees/version-store.js';
import { startBatch, type StartBatchInput, type StartDeps } from './core.js';
import { startDurableExecution } from './durable-start.js';
import { ComplianceStore } from './store.js';

const versions = new DynamoVersionStore(documentClient, requiredEnv('TREES_TABLE'));
const adapters = createAdapterStore();
const defaultConcurrency = integerEnv('COMPLIANCE_CONCURRENCY', 10, 1, 100);

const deps: StartDeps = {
  versions: (treeId, label) => readVersion(versions, treeId, label),
  adapters,
  store: new ComplianceStore(documentClient, requiredEnv('COMPLIANCE_TABLE')),
  startExecution: startDurableExecution,
  now: () => new Date(),
  retentionDays: integerEnv('COMPLIANCE_RETENTION_DAYS', 90, 1, 3650),
  concurrency: defaultConcurrency,
};

const COLLECTION = '/configuration_manager/compliance_reports';

/** The batch's path as the client addressed the collection (stage or base path included). */
const batchLocation = (batchId: string, requestPath?: string): string => {
  const base = requestPath?.replace(/\/+$/, '');
  return `${base?.endsWith(COLLECTION) ? base : COLLECTION}/batches/${batchId}`;
};

const idempotency = idempotent({ store: createIdempotencyStore() });

export const handler = httpHandler<StartBatchInput>({ operation: 'startComplianceBatch', validate, idempotency }, async (event) => {
  const started = await startBatch(event.body, deps);
  return json(202, started, { Location: batchLocation(started.batchId, event.requestContext?.path) });
});
