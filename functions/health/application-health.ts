/**
 * The health of the service's applications: each one's run state (from the profiles table, read
 * now, not from a cache) and the health of what it depends on: the tables its routes use and,
 * for an application that resolves secrets (`orch_manager`), the secrets store. Which
 * dependencies an application has is derived from the route table
 * (`applicationNeeds` of the generated route index), so a new route of an application brings its tables along.
 *
 * An application is `up` when it runs and every dependency answers, `stopped` when an
 * administrator stopped it, `down` otherwise. Each dependency is checked once per request,
 * whichever applications share it, under `HEALTH_CHECK_TIMEOUT_MS`.
 */
import type { SecretsBackend } from '../outbound/secrets/backend.js';
import type { ApplicationName } from '../platform/applications.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HttpProblem } from '../platform/problem.js';
import { applicationNeeds } from '../generated/route-index.js';
import type { TableKey } from '../platform/route.js';
import { tableEnv } from '../platform/tables.js';
import type { ApplicationRun, RuntimeRecord } from '../runtime/profile-store.js';
import { runCheck, secretsCheck, type Check, type CheckResult } from './checks.js';
import { dynamoTableCheck } from './dynamo-check.js';
import { NO_STORE } from './about.js';

export type ApplicationStatus = 'up' | 'down' | 'stopped';

export interface ApplicationHealth extends ApplicationRun {
  readonly name: ApplicationName;
  readonly status: ApplicationStatus;
  readonly checkedAt: string;
  readonly dependencies: Readonly<Record<string, CheckResult>>;
}

export interface ApplicationHealthDeps {
  readonly runtime: () => Promise<RuntimeRecord>;
  readonly client: DynamoDBDocumentClient;
  readonly secrets: Pick<SecretsBackend, 'kind' | 'health'>;
  readonly timeoutMs: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly clock?: () => Date;
}

/** The checks of one application's dependencies, by name. */
const checksOf = (name: ApplicationName, deps: ApplicationHealthDeps): Check[] => {
  const needs = applicationNeeds[name];
  const env = deps.env ?? process.env;
  return [
    ...(Object.keys(needs.tables ?? {}) as TableKey[]).map((key) => {
      const table = env[tableEnv(key)];
      // The stack grants this function every table an application uses: a missing one is a broken deployment.
      if (!table) throw new Error(`configuration error: environment variable ${tableEnv(key)} is required`);
      return dynamoTableCheck(deps.client, key, table);
    }),
    ...(needs.secrets ? [secretsCheck(deps.secrets)] : []),
  ];
};

/** The health of the named applications; every dependency checked once. */
export const applicationsHealth = async (names: readonly ApplicationName[], deps: ApplicationHealthDeps): Promise<ApplicationHealth[]> => {
  const perApp = names.map((name) => [name, checksOf(name, deps)] as const);
  const unique = new Map<string, Check>();
  for (const [, checks] of perApp) for (const check of checks) unique.set(check.name, check);
  const [runtime, ...results] = await Promise.all([
    deps.runtime().then(
      (r) => r,
      () => undefined,
    ),
    ...[...unique.values()].map(async (check) => [check.name, await runCheck(check, { timeoutMs: deps.timeoutMs })] as const),
  ]);
  const byName = new Map(results);
  const checkedAt = (deps.clock?.() ?? new Date()).toISOString();
  return perApp.map(([name, checks]) => {
    const dependencies: Record<string, CheckResult> = Object.fromEntries(checks.map((c) => [c.name, byName.get(c.name)!]));
    // The profiles table is among the dependencies: when it cannot be read, the state is unknown and the status down.
    const run: ApplicationRun = runtime?.applications[name] ?? { state: 'RUNNING' };
    const down = !runtime || Object.values(dependencies).some((d) => d.status === 'down');
    return { name, ...run, status: down ? 'down' : run.state === 'STOPPED' ? 'stopped' : 'up', checkedAt, dependencies };
  });
};

/** 503 carrying the health answer: an application is stopped or a dependency is down. */
export class ApplicationUnhealthy extends HttpProblem {
  constructor(detail: string, body: Readonly<Record<string, unknown>>) {
    super(503, 'application-unhealthy', 'Service Unavailable', detail, body, { 'Retry-After': '30', ...NO_STORE });
  }
}
