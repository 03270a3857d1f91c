/**
 * The hourly housekeeping, invoked by an EventBridge schedule: sweeps the durable functions
 * (functions/compliance/housekeeping.ts), the batch function (ends the batches whose execution
 * ended without them) and the remediation function (ends the runs and rollbacks whose execution
 * ended without them, with their audit end entry), pruning the versions no execution of either
 * can use; and sets the configuration history bucket's lifecycle from the active profile's
 * `configRetentionDays` (functions/configs/lifecycle.ts). It lives above the features because it
 * assembles theirs. One summary log line a run.
 *
 * Configuration: `COMPLIANCE_TABLE`, `CHANGELOG_TABLE`, `COMPLIANCE_FUNCTION_NAME` and
 * `REMEDIATION_FUNCTION_NAME` (the durable functions, unqualified), `PROFILES_TABLE`, `CONFIGS_BUCKET`.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { endBatchOfExecution, runHousekeeping, type FunctionHousekeeping, type SweptFunction } from '../../compliance/housekeeping.js';
import { lambdaDurableFunctionApi } from '../../compliance/lambda-api.js';
import { createComplianceStore } from '../../compliance/store.js';
import { reconcileLifecycle, s3Lifecycle } from '../../configs/lifecycle.js';
import { createS3Client } from '../../configs/s3.js';
import { CONFIGS_BUCKET_ENV } from '../../configs/wiring.js';
import { requiredEnv } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { metrics } from '../../platform/metrics.js';
import { changelogAudit, recordEndFromStore } from '../../remediation/audit.js';
import { endRemediationOfExecution } from '../../remediation/ended.js';
import { createRemediationStore } from '../../remediation/store.js';
import { currentSettings } from '../../runtime/settings.js';

const client = new LambdaClient({});
const remediations = createRemediationStore();
const audit = changelogAudit();
const swept: readonly SweptFunction[] = [
  {
    name: 'ComplianceBatch',
    lambda: lambdaDurableFunctionApi(client, requiredEnv('COMPLIANCE_FUNCTION_NAME')),
    endWork: endBatchOfExecution(createComplianceStore()),
  },
  {
    name: 'RemediationRun',
    lambda: lambdaDurableFunctionApi(client, requiredEnv('REMEDIATION_FUNCTION_NAME')),
    endWork: endRemediationOfExecution({ store: remediations, onEnd: (end) => recordEndFromStore(audit, remediations, end) }),
  },
];
const lifecycle = s3Lifecycle(createS3Client(), requiredEnv(CONFIGS_BUCKET_ENV));

export const handler = async (): Promise<Record<string, FunctionHousekeeping>> => {
  try {
    // Each task runs whatever the other's outcome: a bucket that refuses its lifecycle must not stop the sweep.
    const [sweep, configLifecycle] = await Promise.allSettled([
      runHousekeeping(swept, new Date()),
      currentSettings().then((s) => reconcileLifecycle(lifecycle, s.profile.applications.configuration_manager.configRetentionDays)),
    ]);
    if (configLifecycle.status === 'fulfilled') logger.info('configuration history lifecycle', { ...configLifecycle.value });
    else logger.error('configuration history lifecycle not set', { error: configLifecycle.reason });
    if (sweep.status === 'rejected') throw sweep.reason;
    logger.info('compliance housekeeping', { ...sweep.value });
    if (configLifecycle.status === 'rejected') throw configLifecycle.reason;
    return sweep.value;
  } finally {
    metrics.flush();
  }
};
