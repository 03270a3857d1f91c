/**
 * `GET /health/system` (admin, apiread): whether the service's dependencies answer: each
 * DynamoDB table the function is bound to, and the secrets store. 200 when all are up;
 * 503 (problem+json with the same report) when any is down.
 *
 * `HEALTH_CHECK_TIMEOUT_MS` (default 2000) bounds each check; they run at once, so the
 * route answers within about that time even when a dependency hangs.
 */
import { getSystemHealth as validate } from '../../generated/validators.js';
import { secretsBackend } from '../../outbound/secrets/resolver.js';
import { documentClient } from '../../platform/dynamo.js';
import { integerEnv } from '../../platform/env.js';
import { httpHandler, json } from '../../runtime/http.js';
import { DependencyDown, runChecks, secretsCheck, type Check } from '../checks.js';
import { boundTables, dynamoTableCheck } from '../dynamo-check.js';
import { NO_STORE } from '../about.js';

const TIMEOUT_MS = integerEnv('HEALTH_CHECK_TIMEOUT_MS', 2_000, 50, 10_000);

const checks: readonly Check[] = [...boundTables().map(({ key, name }) => dynamoTableCheck(documentClient, key, name)), secretsCheck(secretsBackend)];

/** Runs the checks; throws {@link DependencyDown} (503) when one is down. */
export const systemHealth = async (all: readonly Check[], timeoutMs: number) => {
  const report = await runChecks(all, { timeoutMs });
  if (report.status === 'down') throw new DependencyDown(report);
  return { health: report.status, ...report };
};

export const handler = httpHandler({ operation: 'getSystemHealth', validate }, async () => json(200, await systemHealth(checks, TIMEOUT_MS), NO_STORE));
