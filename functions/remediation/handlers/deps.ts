/** What the handlers that start runs and rollbacks share: the stores, the audit trail and the durable starter. */
import { createAdapterStore } from '../../adapters/store.js';
import type { HttpEvent } from '../../platform/http-core.js';
import { requestCaller } from '../../platform/caller.js';
import { InternalError } from '../../platform/problem.js';
import { createComplianceStore } from '../../compliance/store.js';
import { changelogAudit } from '../audit.js';
import { startRemediationExecution } from '../durable-start.js';
import type { Actor } from '../model.js';
import type { RemediationDeps } from '../service.js';
import { remediationStore } from '../wiring.js';

/** The container's dependencies, made on first use. */
let deps: RemediationDeps | undefined;
export const startDeps = (): RemediationDeps =>
  (deps ??= {
    compliance: createComplianceStore(),
    adapters: createAdapterStore(),
    store: remediationStore(),
    audit: changelogAudit(),
    startExecution: startRemediationExecution,
    now: () => new Date(),
  });

/** The caller, as the authorizer named them: a route behind the authorizer always has one. */
export const actorOf = (event: Pick<HttpEvent, 'requestContext'>): Actor => {
  const caller = requestCaller(event);
  if (!caller) throw new InternalError('a remediation route was reached without the authorizer context');
  return { subject: caller.subject, roles: caller.roles };
};

const RUNS = '/configuration_manager/remediations';

/** A run's path as the client addressed the API (stage or base path included). */
export const runLocation = (remediationId: string, requestPath: string | undefined, resource: string): string => {
  // The part of the request's path before the API's own path is the stage or the base path.
  const base = requestPath?.endsWith(resource) ? requestPath.slice(0, requestPath.length - resource.length) : '';
  return `${base}${RUNS}/${remediationId}`;
};
