/** What the plan handlers share: the stores, the schedules and the batch starter, made on first use. */
import { createAdapterStore } from '../../adapters/store.js';
import { startDurableExecution } from '../../compliance/durable-start.js';
import { currentBatch } from '../../compliance/read.js';
import { inventoryReader } from '../../compliance/inventory.js';
import { createExemptionStore } from '../../exemptions/store.js';
import { startBatch } from '../../compliance/service.js';
import { createComplianceStore } from '../../compliance/store.js';
import { callerSubject } from '../../platform/caller.js';
import type { HttpEvent } from '../../platform/http-core.js';
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
  const exemptions = createExemptionStore();
  const now = () => new Date();
  deps = {
    store: createPlanStore(),
    versions: (treeId, label) => readVersion(versions, treeId, label),
    adapters,
    schedules: planSchedules(),
    batch: (batchId) => currentBatch(compliance, batchId, now()),
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
        exemptions,
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
export const callerOf = (event: Pick<HttpEvent, 'requestContext'>): string => callerSubject(event, 'a compliance plan route');
