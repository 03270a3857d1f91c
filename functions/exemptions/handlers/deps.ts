/** What the exemption handlers share: the stores, made on first use, and the caller. */
import { callerSubject } from '../../platform/caller.js';
import type { HttpEvent } from '../../platform/http-core.js';
import { createTreeStore } from '../../trees/store.js';
import type { ExemptionDeps } from '../service.js';
import { createExemptionStore } from '../store.js';

let deps: ExemptionDeps | undefined;

/** The container's exemption dependencies. */
export const exemptionDeps = (): ExemptionDeps => {
  deps ??= { store: createExemptionStore(), trees: createTreeStore(), now: () => new Date() };
  return deps;
};

/** The caller's token subject: a route behind the authorizer always has one. */
export const callerOf = (event: Pick<HttpEvent, 'requestContext'>): string => callerSubject(event, 'an exemption route');

/** The path parameters the validator checked. */
export const pathOf = (event: Pick<HttpEvent, 'pathParameters'>): { treeId: string; exemptionId: string } =>
  event.pathParameters as { treeId: string; exemptionId: string };
