/**
 * Whether an adapter's orchestrator answers: one light, authenticated RESTCONF call,
 * `GET /restconf` (the API root resource of RFC 8040 §3.3; NSO answers it without touching
 * its datastore), with the adapter's own credentials, through the relay's SSRF-guarded
 * client. 2xx is `up`; anything else is `down` with a reason. Never shown: the adapter's
 * address, username or password.
 */
import type { Adapter, SecretResolver } from '../adapters/model.js';
import { OutboundError, type HttpClient } from '../outbound/http-client.js';
import { InvalidBaseUrl, adapterOrigin, buildTarget } from '../outbound/target.js';
import { logger } from '../platform/logger.js';
import { HttpProblem } from '../platform/problem.js';
import { traceSubsegment } from '../platform/tracing.js';
import type { DependencyStatus } from './checks.js';
import { NO_STORE } from './about.js';

/** The probe's request target and media type. */
export const PROBE_PATH = '/restconf';
export const PROBE_ACCEPT = 'application/yang-data+json';
const PROBE_MAX_BODY_BYTES = 64 * 1024;

/** Why an orchestrator counts as down. */
export type ProbeFailure =
  | 'timeout'
  | 'unreachable'
  | 'tls'
  | 'refused-address'
  | 'unauthorized'
  | 'unexpected-status'
  | 'secrets-unavailable'
  | 'secret-unusable'
  | 'misconfigured'
  /** Stopped by an admin (`PUT /adapters/{name}/stop`): not probed, nothing sent. */
  | 'stopped';

export interface AdapterHealth {
  readonly name: string;
  readonly type: Adapter['type'];
  readonly status: DependencyStatus;
  /** Time of the HTTP exchange only (not the secret lookup); absent when nothing was sent. */
  readonly latencyMs?: number;
  /** The orchestrator's HTTP status, when it answered. */
  readonly httpStatus?: number;
  readonly reason?: ProbeFailure;
}

export interface ProbeDeps {
  readonly client: HttpClient;
  /** `forget` drops a cached password after a 401 (it may have been rotated). */
  readonly secrets: SecretResolver & { forget?(reference: string): void };
  /** Time limit of one probe. */
  readonly timeoutMs: number;
  readonly now?: () => number;
}

const FAILURES: Record<OutboundError['failure'], ProbeFailure> = {
  timeout: 'timeout',
  aborted: 'timeout',
  connect: 'unreachable',
  protocol: 'unreachable',
  'too-large': 'unexpected-status',
  tls: 'tls',
  blocked: 'refused-address',
};

/** Probes one adapter's orchestrator. Never throws for the orchestrator's or the store's failures. */
export const probeAdapter = async (adapter: Adapter, deps: ProbeDeps): Promise<AdapterHealth> => {
  const now = deps.now ?? (() => performance.now());
  const base = { name: adapter.name, type: adapter.type };
  const down = (reason: ProbeFailure, extra: { latencyMs?: number; httpStatus?: number; code?: string } = {}): AdapterHealth => {
    logger.warn('adapter health check failed', { adapter: adapter.name, reason, ...extra });
    const { code: _code, ...shown } = extra;
    return { ...base, status: 'down', ...shown, reason };
  };

  let target;
  try {
    target = buildTarget(adapterOrigin(adapter.baseUrl), PROBE_PATH);
  } catch (error) {
    if (!(error instanceof InvalidBaseUrl)) throw error;
  }
  if (!target) return down('misconfigured');

  let password: string;
  try {
    password = await deps.secrets.resolve(adapter.auth.password);
  } catch (error) {
    if (!(error instanceof HttpProblem)) throw error;
    return down(error.status === 503 ? 'secrets-unavailable' : 'secret-unusable');
  }

  const started = now();
  const elapsed = () => Math.round(now() - started);
  const timeoutMs = Math.min(adapter.timeoutMs ?? deps.timeoutMs, deps.timeoutMs);
  try {
    const response = await traceSubsegment(
      `orchestrator ${adapter.name}`,
      { http: { method: 'GET', url: `${target.origin.origin}${PROBE_PATH}` }, annotations: { adapter: adapter.name, purpose: 'health' } },
      async (sub) => {
        const res = await deps.client.send({
          target,
          method: 'GET',
          headers: {
            Accept: PROBE_ACCEPT,
            Authorization: `Basic ${Buffer.from(`${adapter.auth.username}:${password}`, 'utf8').toString('base64')}`,
          },
          timeoutMs,
          maxBodyBytes: PROBE_MAX_BODY_BYTES,
        });
        sub.setHttpStatus(res.status);
        return res;
      },
    );
    const latencyMs = elapsed();
    if (response.status >= 200 && response.status < 300) return { ...base, status: 'up', latencyMs, httpStatus: response.status };
    if (response.status === 401 || response.status === 403) {
      if (response.status === 401) deps.secrets.forget?.(adapter.auth.password);
      return down('unauthorized', { latencyMs, httpStatus: response.status });
    }
    return down('unexpected-status', { latencyMs, httpStatus: response.status });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return down(FAILURES[error.failure], { latencyMs: elapsed(), ...(error.code ? { code: error.code } : {}) });
  }
};

/** Runs `fn` over `items`, at most `limit` at a time, keeping the order of `items`. */
export const mapLimited = async <T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};

/** 503 for `GET /health/adapters/{name}` when the orchestrator is down: the health fields ride along. */
export class AdapterDown extends HttpProblem {
  constructor(health: AdapterHealth, checkedAt: string) {
    super(
      503,
      'adapter-down',
      'Service Unavailable',
      `The orchestrator of adapter '${health.name}' does not answer as it should (${health.reason ?? 'down'}).`,
      { health: 'down', checkedAt, adapter: health },
      { 'Retry-After': '30', ...NO_STORE },
    );
  }
}
