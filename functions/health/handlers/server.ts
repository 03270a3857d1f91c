/**
 * `GET /health/server` (admin, apiread): the serving function's runtime, region, memory,
 * name and version, and whether this container started cold. It checks no dependency
 * (that is `GET /health/system`).
 */
import { getServerHealth as validate } from '../../generated/validators.js';
import { json, staticHttpHandler } from '../../platform/http-core.js';
import { LAMBDA_ENV, serverHealth } from '../runtime.js';
import { NO_STORE } from '../about.js';

/** When this container loaded the function, and how many invocations it has served. */
const startedAt = new Date(Date.now() - process.uptime() * 1000);
let invocations = 0;

export const handler = staticHttpHandler({ operation: 'getServerHealth', validate }, async (_event, context) => {
  invocations += 1;
  const configured = Number(LAMBDA_ENV.memoryMb || context.memoryLimitInMB);
  return json(
    200,
    serverHealth({
      nodeVersion: process.version,
      architecture: process.arch,
      ...(LAMBDA_ENV.executionEnv ? { executionEnv: LAMBDA_ENV.executionEnv } : {}),
      ...(LAMBDA_ENV.region ? { region: LAMBDA_ENV.region } : {}),
      functionName: context.functionName,
      functionVersion: context.functionVersion,
      ...(Number.isFinite(configured) && configured > 0 ? { configuredMemoryMb: configured } : {}),
      ...(LAMBDA_ENV.initializationType ? { initializationType: LAMBDA_ENV.initializationType } : {}),
      memory: process.memoryUsage(),
      uptimeSeconds: process.uptime(),
      startedAt,
      invocation: invocations,
    }),
    NO_STORE,
  );
});
