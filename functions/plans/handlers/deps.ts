/** What the plan handlers share: the stores, the schedules and the batch starter, made on first use. */
import { createAdapterStore } from '../../adapters/store.js';
import { startDurableExecution } from '../../compliance/durable-start.js';
import { currentBatch } from '../../compliance/read.js';
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
    batch: (batchId) => currentBatch(compliance, batchId, now()),
    startBatch: async (input, batchId) => {
      const settings = (await currentSettings()).profile.applications.configuration_manager;
      return startBatch(input, {
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
export const callerOf = (event: Pick<HttpEvent, 'requestContext'>): string => callerSubject(event, 'a compliance plan route');
