/**
 * Facts about the container serving a request: runtime, region, memory, function name and
 * version, and whether this is the container's first invocation (a cold start).
 */
import { optionalEnv } from '../platform/env.js';

export interface RuntimeFacts {
  readonly nodeVersion: string;
  /** `AWS_EXECUTION_ENV`, e.g. `AWS_Lambda_nodejs22.x`; absent outside Lambda. */
  readonly executionEnv?: string;
  readonly architecture: string;
  readonly region?: string;
  readonly functionName: string;
  readonly functionVersion: string;
  /** Memory configured for the function (MB). */
  readonly configuredMemoryMb?: number;
  /** `on-demand`, `provisioned-concurrency` or `snap-start` (Lambda's `AWS_LAMBDA_INITIALIZATION_TYPE`). */
  readonly initializationType?: string;
  readonly memory: NodeJS.MemoryUsage;
  readonly uptimeSeconds: number;
  readonly startedAt: Date;
  /** 1 for the container's first invocation. */
  readonly invocation: number;
}

const mb = (bytes: number): number => Math.round((bytes / 1_048_576) * 10) / 10;

/** The `/health/server` document. */
export const serverHealth = (facts: RuntimeFacts) => ({
  status: 'up' as const,
  runtime: {
    name: 'nodejs',
    version: facts.nodeVersion,
    architecture: facts.architecture,
    ...(facts.executionEnv ? { executionEnv: facts.executionEnv } : {}),
  },
  region: facts.region ?? null,
  function: { name: facts.functionName, version: facts.functionVersion },
  memory: {
    configuredMb: facts.configuredMemoryMb ?? null,
    rssMb: mb(facts.memory.rss),
    heapUsedMb: mb(facts.memory.heapUsed),
    heapTotalMb: mb(facts.memory.heapTotal),
    externalMb: mb(facts.memory.external),
  },
  container: {
    start: facts.invocation === 1 ? ('cold' as const) : ('warm' as const),
    invocation: facts.invocation,
    ...(facts.initializationType ? { initializationType: facts.initializationType } : {}),
    startedAt: facts.startedAt.toISOString(),
    uptimeSeconds: Math.round(facts.uptimeSeconds * 10) / 10,
  },
});

/** The Lambda environment, read once per container. */
export const LAMBDA_ENV = {
  executionEnv: optionalEnv('AWS_EXECUTION_ENV', ''),
  region: optionalEnv('AWS_REGION', optionalEnv('AWS_DEFAULT_REGION', '')),
  memoryMb: optionalEnv('AWS_LAMBDA_FUNCTION_MEMORY_SIZE', ''),
  initializationType: optionalEnv('AWS_LAMBDA_INITIALIZATION_TYPE', ''),
} as const;
