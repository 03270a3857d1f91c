/** More live routes than the route table has, to measure the stacks as the service grows. */
import { liveRoutes } from '../../functions/api/routes.js';
import type { LiveRoute } from '../../functions/platform/route.js';

/** Features the next routes belong to: existing ones, and new ones (each a part of its own). */
const TAGS = ['trees', 'adapters', 'profiles', 'operations', 'drift', 'remediation', 'plans'] as const;

/**
 * The route table and synthetic routes up to `total`: each a copy of a real route (its handler,
 * needs and roles) on a path of its own, spread over {@link TAGS}. One in ten, and the copies of
 * routes that do, wait on an orchestrator: the latency alarms leave them out, however many.
 */
export const withSyntheticRoutes = (total: number): LiveRoute[] => {
  const models = liveRoutes.filter((r) => r.operationId !== 'relayRestAction' && r.operationId !== 'startComplianceBatch');
  const extra = Array.from({ length: Math.max(0, total - liveRoutes.length) }, (_, i): LiveRoute => {
    const model = models[i % models.length]!;
    const tag = TAGS[i % TAGS.length]!;
    return {
      ...model,
      operationId: `synthetic${i}`,
      tag,
      path: `/${tag}_next/items${Math.floor(i / 3)}/{id}${i % 3 ? `/part${i % 3}` : ''}`,
      needs: { ...model.needs, orchestrator: model.needs.orchestrator || i % 10 === 0 },
    };
  });
  return [...liveRoutes, ...extra];
};
