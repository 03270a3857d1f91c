/**
 * Which failures of an AWS dependency are worth retrying later: the service is unreachable,
 * timed out, throttled or failing on its side. The HTTP stack answers those with 503 and
 * `Retry-After` instead of 500, whichever handler met them.
 */

import { ServiceUnavailable } from './problem.js';

const TRANSIENT_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  // S3's names for a failure on its side (it answers them with 500 or 503).
  'SlowDown',
  'InternalError',
  'ServiceUnavailableException',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/** Why `error` is transient (`unreachable`, `throttled or failing`…), or `undefined` when it is not. */
export const transientReason = (error: unknown, depth = 0): string | undefined => {
  if (!(error instanceof Error) || depth > 5) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return 'unreachable';
  if (TRANSIENT_ERRORS.has(error.name)) return 'throttled or failing';
  if ((error as { $retryable?: unknown }).$retryable) return 'transient failure';
  // Any 5xx answer of an AWS service is its failure, not the request's: a retry may succeed.
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 500) return 'failing';
  // The SDK wraps socket errors; the code sits on the cause.
  if (error.cause !== undefined && error.cause !== error) return transientReason(error.cause, depth + 1);
  return undefined;
};

/**
 * A runner of calls to one store: a transient failure (see {@link transientReason}) becomes a 503
 * naming the store, which the client may retry; any other error passes unchanged.
 */
export const storeCaller =
  (store: string) =>
  async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const reason = transientReason(error);
      if (reason) throw new ServiceUnavailable(`The ${store} is unavailable (${reason}); retry later.`);
      throw error;
    }
  };
