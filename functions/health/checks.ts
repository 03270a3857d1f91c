/**
 * Dependency checks for the health routes: each check runs under its own short time limit,
 * all run at once, and each reports `up` or `down` with its latency. A check's failure is
 * logged (dependency and kind of failure only) and never shown: the answer says which
 * dependency is down, not why in the words of a library.
 */
import { logger } from '../platform/logger.js';
import { HttpProblem } from '../platform/problem.js';
import { NO_STORE } from './about.js';
import type { SecretsBackend } from '../outbound/secrets/backend.js';

export type DependencyStatus = 'up' | 'down';

/** One dependency probe. It should honour `signal`; the time limit applies even if it does not. */
export interface Check {
  readonly name: string;
  /** Extra facts shown beside the result (e.g. the secrets backend's kind). Never secrets. */
  readonly details?: Readonly<Record<string, string>>;
  run(signal: AbortSignal): Promise<void>;
}

export interface CheckResult {
  readonly status: DependencyStatus;
  readonly latencyMs: number;
  /** Why a dependency is down: it did not answer in time, or it failed. */
  readonly reason?: 'timeout' | 'error';
  readonly [detail: string]: unknown;
}

export interface CheckOptions {
  readonly timeoutMs: number;
  /** Monotonic milliseconds; injectable for tests. */
  readonly now?: () => number;
}

class CheckTimeout extends Error {}

/** Runs one check under its time limit. Never throws. */
export const runCheck = async (check: Check, options: CheckOptions): Promise<CheckResult> => {
  const now = options.now ?? (() => performance.now());
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new CheckTimeout());
      reject(new CheckTimeout());
    }, options.timeoutMs);
  });
  const start = now();
  try {
    await Promise.race([check.run(controller.signal), limit]);
    return { ...check.details, status: 'up', latencyMs: Math.round(now() - start) };
  } catch (error) {
    const latencyMs = Math.round(now() - start);
    const reason = error instanceof CheckTimeout || controller.signal.aborted ? 'timeout' : 'error';
    logger.warn('health check failed', { dependency: check.name, reason, latencyMs });
    return { ...check.details, status: 'down', latencyMs, reason };
  } finally {
    clearTimeout(timer);
  }
};

export interface HealthReport {
  readonly status: DependencyStatus;
  readonly checkedAt: string;
  readonly dependencies: Readonly<Record<string, CheckResult>>;
}

/** Runs every check at once; the report is `up` only when every dependency is. */
export const runChecks = async (checks: readonly Check[], options: CheckOptions & { readonly clock?: () => Date }): Promise<HealthReport> => {
  const results = await Promise.all(checks.map(async (c) => [c.name, await runCheck(c, options)] as const));
  return {
    status: results.every(([, r]) => r.status === 'up') ? 'up' : 'down',
    checkedAt: (options.clock?.() ?? new Date()).toISOString(),
    dependencies: Object.fromEntries(results),
  };
};

/**
 * 503 with the health report: a problem document (like every 5xx of this API) whose
 * extension members carry the same `checkedAt` and `dependencies` as the 200 answer.
 */
export class DependencyDown extends HttpProblem {
  constructor(report: HealthReport) {
    const down = Object.entries(report.dependencies)
      .filter(([, r]) => r.status === 'down')
      .map(([name]) => name);
    super(
      503,
      'dependency-down',
      'Service Unavailable',
      `A dependency is down: ${down.join(', ')}.`,
      { health: 'down', checkedAt: report.checkedAt, dependencies: report.dependencies },
      { 'Retry-After': '30', ...NO_STORE },
    );
  }
}

/** The secrets store answers (Vault: `sys/health` and a valid token; local: the file is readable). */
export const secretsCheck = (backend: Pick<SecretsBackend, 'kind' | 'health'>): Check => ({
  name: 'secrets',
  details: { backend: backend.kind },
  run: () => backend.health(),
});
