/**
 * The API: every live route, assembled from the features' own tables (`<feature>/routes.ts`).
 * The CDK stack, the OpenAPI document, the request validators, the generated route index and
 * the tests are all derived from {@link liveRoutes}. The order is the API's: the OpenAPI
 * document and the validators list the routes in it. The removed routes are in `removed.ts`.
 */
import { type ApplicationName, applicationOf, APPLICATIONS } from '../platform/applications.js';
import type { LiveRoute, TableAccess, TableKey } from '../platform/route.js';
import { adapterReadRoutes, adapterRoutes } from '../adapters/routes.js';
import { applicationChangelogRoutes, applicationRoutes } from '../applications/routes.js';
import { complianceRoutes } from '../compliance/routes.js';
import { configRoutes } from '../configs/routes.js';
import { consoleRoutes } from '../console/routes.js';
import { exemptionRoutes } from '../exemptions/routes.js';
import { planHistoryRoutes } from '../plans/history-routes.js';
import { applicationHealthRoutes, operationsRoutes } from '../health/routes.js';
import { planRoutes } from '../plans/routes.js';
import { profileRoutes } from '../profiles/routes.js';
import { relayRoutes } from '../relay/routes.js';
import { remediationRoutes } from '../remediation/routes.js';
import { treeRoutes } from '../trees/routes.js';

/** The routes of the applications, adapters and operations; {@link liveRoutes} adds the runtime routes. */
const serviceRoutes: readonly LiveRoute[] = [
  ...relayRoutes,
  ...treeRoutes,
  ...exemptionRoutes,
  ...adapterRoutes,
  ...applicationChangelogRoutes,
  ...adapterReadRoutes,
  ...operationsRoutes,
  ...complianceRoutes,
  ...planRoutes,
  ...planHistoryRoutes,
  ...remediationRoutes,
  ...configRoutes,
  ...consoleRoutes,
];

/** Applications and profiles: the service's own runtime settings. */
const runtimeRoutes: readonly LiveRoute[] = [...profileRoutes, ...applicationRoutes];

/**
 * What an application depends on: every table its routes use (read access is enough to check
 * one), and the secrets store when one of its routes resolves secrets.
 */
export const applicationDependencies = (name: ApplicationName): LiveRoute['needs'] => {
  const routes = serviceRoutes.filter((r) => applicationOf(r.path) === name);
  const tables = Object.fromEntries(routes.flatMap((r) => Object.keys(r.needs.tables ?? {})).map((key) => [key, 'read'])) as Partial<
    Record<TableKey, TableAccess>
  >;
  return { tables: { ...tables, profiles: 'read' }, ...(routes.some((r) => r.needs.secrets) ? { secrets: 'read' as const } : {}) };
};

const everyDependency = (): LiveRoute['needs'] => {
  const all = APPLICATIONS.map(applicationDependencies);
  return { tables: Object.assign({}, ...all.map((n) => n.tables)), ...(all.some((n) => n.secrets) ? { secrets: 'read' as const } : {}) };
};

/**
 * The functions that use DynamoDB, and every route of an application, read the active profile
 * (their log level; for the routes of an application, whether it runs): read access to the
 * profiles table unless they write it. The routes of an application are marked with it. A
 * function with no table (`/status`, `/health/server`, the schema routes) depends on nothing
 * and logs at the deployment's `LOG_LEVEL`.
 */
const withRuntimeSettings = (route: LiveRoute): LiveRoute => {
  const application = applicationOf(route.path);
  const reads = (application !== undefined || Object.keys(route.needs.tables ?? {}).length > 0) && route.needs.tables?.profiles === undefined;
  const stopped = `${application} is stopped (\`application-stopped\`, \`application\` names it)`;
  return {
    ...route,
    ...(application
      ? {
          application,
          responses: {
            ...route.responses,
            503: route.responses[503] ? `${route.responses[503]}; or ${stopped}` : `A dependency is unavailable, or ${stopped}`,
          },
        }
      : {}),
    ...(reads ? { needs: { ...route.needs, tables: { ...route.needs.tables, profiles: 'read' } } } : {}),
  };
};

export const liveRoutes: readonly LiveRoute[] = [...serviceRoutes, ...runtimeRoutes, ...applicationHealthRoutes(everyDependency())].map(withRuntimeSettings);

/** The live route with this operation id (throws on an unknown id: a programming error). */
export const liveRoute = (operationId: string): LiveRoute => {
  const route = liveRoutes.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`unknown operation ${operationId}`);
  return route;
};
