/** What the plan handlers share: the stores, the schedules and the batch starter, made on first use. */
import { createAdapterStore } from '../../adapters/store.js';
import { startDurableExecution } from '../../compliance/durable-start.js';
import { inventoryReader } from '../../compliance/inventory.js';
import { startBatch } from '../../compliance/service.js';
import { createComplianceStore } from '../../compliance/store.js';
import { requestCaller } from '../../platform/caller.js';
import type { HttpEvent } from '../../platform/http-core.js';
import { InternalError } from '../../platform/problem.js';
import { currentSettings } from '../../runtime/settings.js';
import { readVersion } from '../../trees/version-service.js';
import { createVersionStore } from '../../trees/version-store.js';
import { planSchedules } from '../schedules.js';
import type { PlanDeps } from '../service.js';
import { createPlanStore } from '../store.js';

let deps: PlanDeps | undefined;

/** How long a plan's start may spend reading NSO's inventory: inside the 28 s its functions have, with room to record the batch. */
const INVENTORY_BUDGET_MS = 20_000;

/** The container's plan dependencies. Batches take the active profile's settings when they start, as `POST …/compliance_reports` does. */
export const planDeps = (): PlanDeps => {
  if (deps) return deps;
  const versions = createVersionStore();
  const adapters = createAdapterStore();
  const compliance = createComplianceStore();
  const now = () => new Date();
  deps = {
    store: createPlanStore(),
    versions: (treeId, label) => readVersion(versions, treeId, label),
    adapters,
    schedules: planSchedules(),
    batchStatus: async (batchId) => (await compliance.getBatch(batchId))?.status,
    startBatch: async (input, batchId) => {
      const settings = (await currentSettings()).profile.applications.configuration_manager;
      const deadline = Date.now() + INVENTORY_BUDGET_MS;
      return startBatch(input, {
        // The relay is loaded only when a version selects: it reads its secrets settings on load.
        inventory: async (adapterId, selectors) => {
          const { batchRelayGet } = await import('../../compliance/batch-relay.js');
          return inventoryReader(batchRelayGet('plan run inventory page')(() => deadline - Date.now()))(adapterId, selectors);
        },
        versions: (treeId, label) => readVersion(versions, treeId, label),
        adapters,
        store: compliance,
        startExecution: startDurableExecution,
        now,
        newId: () => batchId,
        retentionDays: settings.reportRetentionDays,
        historyRetentionDays: settings.historyRetentionDays,
        concurrency: settings.complianceConcurrency,
      });
    },
    now,
  };
  return deps;
};

/** The caller's token subject: a route behind the authorizer always has one. */
export const callerOf = (event: Pick<HttpEvent, 'requestContext'>): string => {
  const caller = requestCaller(event);
  if (!caller) throw new InternalError('a compliance plan route was reached without the authorizer context');
  return caller.subject;
};

/** A path under the API as the client addressed it (stage or base path included). */
export const locationOf = (path: string, requestPath: string | undefined, resource: string): string => {
  const base = requestPath?.endsWith(resource) ? requestPath.slice(0, requestPath.length - resource.length) : '';
  return `${base}${path}`;
};
