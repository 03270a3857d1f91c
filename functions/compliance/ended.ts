/**
 * A batch ended `failed` from outside its durable execution: by a read that finds it running
 * past its deadline, or by the sweep that finds its execution ended (timed out, failed,
 * stopped) without it. Either way once (a conditional write), with the log line and the
 * `ComplianceBatches` `Status=failed` metric that the batch's own end gives, so the same alarm fires.
 */
import { logger } from '../platform/logger.js';
import { metrics, type Metrics } from '../platform/metrics.js';
import type { Batch } from './model.js';
import { recordBatchEnd } from './metrics.js';
import type { ComplianceStore } from './store.js';

/** Ends the batch `failed` if it is still running; the batch as ended, or `undefined` when it was not running. */
export const endBatchFailed = async (
  store: Pick<ComplianceStore, 'failIfRunning'>,
  end: { readonly batchId: string; readonly finished: string; readonly reason: string; readonly foundBy: 'read' | 'sweep' },
  sink: Metrics = metrics,
): Promise<Batch | undefined> => {
  const ended = await store.failIfRunning(end.batchId, end.finished, end.reason);
  if (ended) {
    logger.error('compliance batch ended failed outside its execution', { batchId: end.batchId, foundBy: end.foundBy, reason: end.reason });
    recordBatchEnd({ status: 'failed' }, sink);
  }
  return ended;
};
