/**
 * How the authorizer obtains the issuer's keys: a fetcher for `aws-jwt-verify`'s JWKS cache
 * that goes to the network at most once per interval.
 *
 * `aws-jwt-verify`'s own fetcher uses `https.request` only (a plain `http://127.0.0.1` JWKS,
 * which local mode and the tests serve, fails with "Protocol not supported"), retries
 * immediately once on any network error, and its penalty box only slows down refetches
 * after a fetch that succeeded without the wanted `kid` — a failing endpoint is hit on
 * every request with an unknown `kid`. This fetcher does one attempt per interval per URL,
 * whatever the outcome, so a flood of forged `kid`s or a dead endpoint costs the issuer at
 * most one request per interval. The library's cache still deduplicates concurrent fetches
 * and keeps the last good JWKS when a later fetch fails, so callers whose key is cached keep
 * working while the endpoint is down.
 */
import http from 'node:http';
import https from 'node:https';
import type { Fetcher } from 'aws-jwt-verify/https';
import { assertIsJwks, SimpleJwksCache, type Jwks, type PenaltyBox } from 'aws-jwt-verify/jwk';
import { safeJsonParse, type Json } from 'aws-jwt-verify/safe-json-parse';

/** How often an unknown `kid` may send the authorizer back to the JWKS endpoint. */
export const DEFAULT_REFETCH_INTERVAL_MS = 5_000;
/** Whole-request budget for one JWKS download, well inside the authorizer's 5 s timeout. */
export const DEFAULT_FETCH_TIMEOUT_MS = 3_000;
/** A JWKS is a few keys: anything this large is not one. */
export const MAX_JWKS_BYTES = 256 * 1024;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Checks a configured JWKS URL: `https://` anywhere, `http://` only on loopback (local mode
 * and tests). Throws a configuration error otherwise, at load.
 */
export const checkJwksUrl = (raw: string): URL => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('configuration error: JWKS_URL is not a URL');
  }
  if (url.username || url.password) throw new Error('configuration error: JWKS_URL must not carry credentials');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return url;
  throw new Error('configuration error: JWKS_URL must be https:// (http:// is accepted on loopback only)');
};

/** Raised instead of fetching when the last attempt on this URL is too recent. */
export class JwksRateLimitedError extends Error {
  constructor() {
    super('JWKS refetch suppressed: the last attempt is too recent');
    this.name = 'JwksRateLimitedError';
  }
}

/** Raised when the JWKS endpoint cannot be read (network, status, size, time-out). */
export class JwksFetchError extends Error {
  constructor(reason: string) {
    super(`JWKS could not be fetched: ${reason}`);
    this.name = 'JwksFetchError';
  }
}

export interface RateLimitedFetcherOptions {
  /** Minimum time between two network attempts on one URL. */
  readonly minIntervalMs?: number;
  readonly timeoutMs?: number;
  /** Injected clock (milliseconds), for tests. */
  readonly now?: () => number;
}

/** One GET, no redirects followed (a 3xx is an error), body capped, one deadline for it all. */
const download = (url: string, timeoutMs: number): Promise<ArrayBuffer> =>
  new Promise((resolve, reject) => {
    const client = url.startsWith('https:') ? https : http;
    let settled = false;
    let req: http.ClientRequest | undefined;
    const finish = (err: Error | null, body: Buffer = Buffer.alloc(0)): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req?.destroy();
        reject(err);
      } else {
        resolve(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer);
      }
    };
    const timer = setTimeout(() => finish(new JwksFetchError('time-out')), timeoutMs);
    timer.unref();
    req = client.get(url, { headers: { accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        finish(new JwksFetchError(`status ${res.statusCode ?? 'unknown'}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_JWKS_BYTES) finish(new JwksFetchError('document too large'));
        else chunks.push(chunk);
      });
      res.on('end', () => finish(null, Buffer.concat(chunks)));
      res.on('error', () => finish(new JwksFetchError('response interrupted')));
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish(new JwksFetchError(err.code ?? 'network error')));
  });

/**
 * A {@link Fetcher} that fetches plain `http://` (loopback) and `https://` URLs and makes at
 * most one network attempt per `minIntervalMs` per URL. `attempts` counts them (for tests).
 */
export class RateLimitedJwksFetcher implements Fetcher {
  readonly #minIntervalMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #lastAttempt = new Map<string, number>();
  #attempts = 0;

  constructor(options: RateLimitedFetcherOptions = {}) {
    this.#minIntervalMs = options.minIntervalMs ?? DEFAULT_REFETCH_INTERVAL_MS;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
  }

  get attempts(): number {
    return this.#attempts;
  }

  async fetch(uri: string): Promise<ArrayBuffer> {
    const now = this.#now();
    const last = this.#lastAttempt.get(uri);
    if (last !== undefined && now - last < this.#minIntervalMs) throw new JwksRateLimitedError();
    this.#lastAttempt.set(uri, now);
    this.#attempts += 1;
    return download(uri, this.#timeoutMs);
  }
}

/**
 * The library's penalty box, switched off: {@link RateLimitedJwksFetcher} already limits
 * every refetch, and a second, longer back-off would only delay picking up a rotated key.
 */
export const noPenaltyBox: PenaltyBox = {
  wait: async () => undefined,
  registerFailedAttempt: () => undefined,
  registerSuccessfulAttempt: () => undefined,
};

/** A JWKS cache over a {@link RateLimitedJwksFetcher}, and whether it ever held keys. */
export interface JwksSource {
  readonly cache: SimpleJwksCache;
  readonly fetcher: RateLimitedJwksFetcher;
  /** True once a JWKS document was downloaded and parsed: the cache holds keys from then on. */
  readonly hasKeys: () => boolean;
}

/** Builds the per-container JWKS cache. */
export const createJwksSource = (options: RateLimitedFetcherOptions = {}): JwksSource => {
  const fetcher = new RateLimitedJwksFetcher(options);
  let loaded = false;
  const cache = new SimpleJwksCache({
    fetcher,
    penaltyBox: noPenaltyBox,
    jwksParser: (body: ArrayBuffer): Jwks => {
      let parsed: Json;
      try {
        parsed = safeJsonParse(new TextDecoder('utf-8', { fatal: true }).decode(body));
      } catch {
        throw new JwksFetchError('the document is not JSON');
      }
      assertIsJwks(parsed);
      loaded = true;
      return parsed;
    },
  });
  return { cache, fetcher, hasKeys: () => loaded };
};
