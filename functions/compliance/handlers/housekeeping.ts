/**
 * The batch function's housekeeping (functions/compliance/housekeeping.ts), invoked by an
 * EventBridge schedule: ends the batches whose execution ended without them, prunes the
 * versions no execution can use. One summary log line a run.
 *
 * Configuration: `COMPLIANCE_TABLE`, `COMPLIANCE_FUNCTION_NAME` (the batch function, unqualified).
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { requiredEnv } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { metrics } from '../../platform/metrics.js';
import { runHousekeeping, type HousekeepingOutcome } from '../housekeeping.js';
import { lambdaBatchFunctionApi } from '../lambda-api.js';
import { createComplianceStore } from '../store.js';

const lambda = lambdaBatchFunctionApi(new LambdaClient({}), requiredEnv('COMPLIANCE_FUNCTION_NAME'));
const store = createComplianceStore();

export const handler = async (): Promise<HousekeepingOutcome> => {
  try {
    const outcome = await runHousekeeping({ lambda, store, now: () => new Date() });
    logger.info('compliance housekeeping', { endedBatches: outcome.endedBatches, deletedVersions: outcome.deleted, keptVersions: outcome.kept });
    return outcome;
  } finally {
    metrics.flush();
  }
};
