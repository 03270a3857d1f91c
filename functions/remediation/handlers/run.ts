/**
 * The durable function that runs remediation (`withDurableExecution`): started by
 * `POST …/batches/{batchId}/remediations` with `{ remediationId, action: "run" }` and by
 * `POST …/remediations/{remediationId}/rollback` with `action: "rollback"` (see engine.ts).
 *
 * The container's relay clients are made once, as the batch function's are
 * (compliance/batch-relay.ts). Every NSO call goes through the relay's own code (its SSRF rules,
 * secrets, timeouts and body cap). The end of a run and of a rollback is written to the adapter's changelog.
 *
 * Configuration: `COMPLIANCE_TABLE`, `ADAPTERS_TABLE`, `CHANGELOG_TABLE`, `PROFILES_TABLE`, the
 * secrets variables, `LOCAL_MODE`, `RELAY_MAX_BODY_BYTES`.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { batchRelayDeps, batchRelayGet } from '../../compliance/batch-relay.js';
import { createComplianceStore } from '../../compliance/store.js';
import { metrics } from '../../platform/metrics.js';
import { evaluateRules } from '../../trees/rules.js';
import { changelogAudit, recordEndFromStore } from '../audit.js';
import { runRemediation, type RemediationEngineDeps } from '../engine.js';
import type { RemediationEvent } from '../model.js';
import { createNsoTransactions } from '../nso.js';
import { remediationStore } from '../wiring.js';

/** Each NSO call logged at debug level under this message. */
const CALL = 'remediation call';

const store = remediationStore();
const audit = changelogAudit();

/** The engine's dependencies in this container (tests and the bench wrap them). */
export const remediationDeps: RemediationEngineDeps = {
  store,
  batches: createComplianceStore(),
  relayGet: batchRelayGet(CALL),
  nso: (remainingTimeMs) => createNsoTransactions(batchRelayDeps(remainingTimeMs, CALL)),
  evaluate: evaluateRules,
  now: () => new Date(),
  onEnd: (end) => recordEndFromStore(audit, store, end),
  afterStep: () => metrics.flush(),
};

export const handler = withDurableExecution(async (event: RemediationEvent, context) => runRemediation(event, context, remediationDeps));
