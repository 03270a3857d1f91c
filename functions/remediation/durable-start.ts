/**
 * Starts a remediation run's durable execution (`REMEDIATION_FUNCTION`: the run function's
 * `live` alias) with its {@link RemediationEvent}, named `<remediationId>` for the run and
 * `<remediationId>-rollback` for its rollback (`-rollback-<n>` for its n-th attempt): a start repeated for the same run runs it once.
 */
import { startDurable } from '../compliance/durable-start.js';
import type { RemediationEvent } from './model.js';
import { remediationExecutionName } from './service.js';

export const startRemediationExecution = (event: RemediationEvent): Promise<void> =>
  startDurable('REMEDIATION_FUNCTION', remediationExecutionName(event), {
    remediationId: event.remediationId,
    action: event.action,
    ...(event.attempt === undefined ? {} : { attempt: event.attempt }),
  });
