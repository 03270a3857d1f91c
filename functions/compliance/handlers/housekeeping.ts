/**
 * The batch function's housekeeping (functions/compliance/housekeeping.ts), invoked by an
 * EventBridge schedule: ends the batches whose execution ended without them, prunes the
 * versions no execution can use, and sets the configuration history bucket's lifecycle from the
 * active profile's `configRetentionDays` (functions/configs/lifecycle.ts). One summary log line a run.
 *
 * Configuration: `COMPLIANCE_TABLE`, `COMPLIANCE_FUNCTION_NAME` (the batch function, unqualified),
 * `PROFILES_TABLE`, `CONFIGS_BUCKET`.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { reconcileLifecycle, s3Lifecycle } from '../../configs/lifecycle.js';
import { createS3Client } from '../../configs/s3.js';
import { CONFIGS_BUCKET_ENV } from '../../configs/wiring.js';
import { requiredEnv } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { metrics } from '../../platform/metrics.js';
import { currentSettings } from '../../runtime/settings.js';
import { runHousekeeping, type HousekeepingOutcome } from '../housekeeping.js';
import { lambdaBatchFunctionApi } from '../lambda-api.js';
import { createComplianceStore } from '../store.js';

const lambda = lambdaBatchFunctionApi(new LambdaClient({}), requiredEnv('COMPLIANCE_FUNCTION_NAME'));
const store = createComplianceStore();
const lifecycle = s3Lifecycle(createS3Client(), requiredEnv(CONFIGS_BUCKET_ENV));

export const handler = async (): Promise<HousekeepingOutcome> => {
  try {
    // Each task runs whatever the other's outcome: a bucket that refuses its lifecycle must not stop the sweep.
    const [batches, configLifecycle] = await Promise.allSettled([
      runHousekeeping({ lambda, store, now: () => new Date() }),
      currentSettings().then((s) => reconcileLifecycle(lifecycle, s.profile.applications.configuration_manager.configRetentionDays)),
    ]);
    if (configLifecycle.status === 'fulfilled') logger.info('configuration history lifecycle', { ...configLifecycle.value });
    else logger.error('configuration history lifecycle not set', { error: configLifecycle.reason });
    if (batches.status === 'rejected') throw batches.reason;
    const outcome = batches.value;
    logger.info('compliance housekeeping', { endedBatches: outcome.endedBatches, deletedVersions: outcome.deleted, keptVersions: outcome.kept });
    if (configLifecycle.status === 'rejected') throw configLifecycle.reason;
    return outcome;
  } finally {
    metrics.flush();
  }
};
