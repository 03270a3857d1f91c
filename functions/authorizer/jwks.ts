/**
 * How the authorizer obtains the issuer's keys: a per-container cache of the JWKS as ready
 * `KeyObject`s, filled by a fetcher that goes to the network at most once per interval.
 *
 * - One attempt per interval per URL, whatever the outcome: a flood of forged `kid`s or a dead
 *   endpoint costs the issuer at most one request per interval.
 * - Concurrent lookups share one download.
 * - A failed refetch keeps the last good keys, so callers whose key is cached keep working
 *   while the endpoint is down; a successful one replaces them, so a key the issuer withdrew
 *   stops verifying.
 * - Each JWK is checked and imported once, when the document arrives: a verification is then a
 *   map lookup and one `crypto.verify`.
 */
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { ClientRequest } from 'node:http';

/** How often an unknown `kid` may send the authorizer back to the JWKS endpoint. */
export const DEFAULT_REFETCH_INTERVAL_MS = 5_000;
/** Whole-request budget for one JWKS download, well inside the authorizer's 5 s timeout. */
export const DEFAULT_FETCH_TIMEOUT_MS = 3_000;
/** A JWKS is a few keys: anything this large is not one. */
export const MAX_JWKS_BYTES = 256 * 1024;
/** Longest `kid` accepted, in a token or a JWK. */
export const MAX_KID_LENGTH = 256;
/** RSA keys shorter than this are not used (NIST SP 800-131A: 2048 bits since 2014). */
export const MIN_RSA_BITS = 2048;

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

/**
 * One GET, no redirects followed (a 3xx is an error), body capped, one deadline for it all.
 * The client module is loaded on first use, and only the one the URL needs.
 */
const download = (url: string, timeoutMs: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const client = url.startsWith('https:') ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (err: Error | null, body: Buffer = Buffer.alloc(0)): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req?.destroy();
        reject(err);
      } else {
        resolve(body);
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
 * Fetches plain `http://` (loopback) and `https://` URLs and makes at most one network attempt
 * per `minIntervalMs` per URL. `attempts` counts them (for tests).
 */
export class RateLimitedJwksFetcher {
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

  async fetch(uri: string): Promise<Buffer> {
    const now = this.#now();
    const last = this.#lastAttempt.get(uri);
    if (last !== undefined && now - last < this.#minIntervalMs) throw new JwksRateLimitedError();
    this.#lastAttempt.set(uri, now);
    this.#attempts += 1;
    return download(uri, this.#timeoutMs);
  }
}

/** What a key can verify: RSA keys RS*, EC keys the ES* of their curve only. */
export type KeyFamily = 'RSA' | 'P-256' | 'P-384' | 'P-521';

/** A usable signing key of the issuer, imported once. */
export interface IssuerKey {
  readonly kid: string;
  readonly family: KeyFamily;
  /** The JWK's own `alg`, when it names one: then only that algorithm may use the key. */
  readonly alg: string | undefined;
  readonly key: KeyObject;
}

const EC_CURVES: ReadonlySet<string> = new Set(['P-256', 'P-384', 'P-521']);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** The family of a JWK (`kty` and `crv`), or undefined for any other kind of key. */
export const keyFamily = (jwk: { readonly kty?: unknown; readonly crv?: unknown }): KeyFamily | undefined => {
  if (jwk.kty === 'RSA') return 'RSA';
  if (jwk.kty === 'EC' && typeof jwk.crv === 'string' && EC_CURVES.has(jwk.crv)) return jwk.crv as KeyFamily;
  return undefined;
};

/**
 * One JWK of the document as a verification key, or undefined when it is not one this
 * authorizer uses: no `kid`, not for signatures (`use`, `key_ops`), a key type or curve it does
 * not verify with, an RSA key under {@link MIN_RSA_BITS}, or members that do not form a key. Only
 * the public members are imported.
 */
export const issuerKeyOf = (jwk: unknown): IssuerKey | undefined => {
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) return undefined;
  const { kid, use, key_ops: ops, alg, kty, crv, n, e, x, y } = jwk as Record<string, unknown>;
  if (!isText(kid) || kid.length > MAX_KID_LENGTH) return undefined;
  if (use !== undefined && use !== 'sig') return undefined;
  if (ops !== undefined && !(Array.isArray(ops) && ops.includes('verify'))) return undefined;
  if (alg !== undefined && typeof alg !== 'string') return undefined;
  const family = keyFamily({ kty, crv });
  if (family === undefined) return undefined;
  const members = family === 'RSA' ? { kty, n, e } : { kty, crv, x, y };
  if (!Object.values(members).every(isText)) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: members as JsonWebKey, format: 'jwk' });
  } catch {
    return undefined;
  }
  if (family === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) return undefined;
  return { kid, family, alg, key };
};

/**
 * The usable keys of a JWKS document by `kid` (the first of a repeated `kid` wins). Throws
 * {@link JwksFetchError} when the document is not a JWKS at all.
 */
export const parseJwks = (body: Buffer): Map<string, IssuerKey> => {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new JwksFetchError('the document is not JSON');
  }
  const keys = doc !== null && typeof doc === 'object' ? (doc as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys)) throw new JwksFetchError('the document is not a JWKS');
  const out = new Map<string, IssuerKey>();
  for (const jwk of keys) {
    const key = issuerKeyOf(jwk);
    if (key && !out.has(key.kid)) out.set(key.kid, key);
  }
  return out;
};

/** The container's keys of one issuer. */
export interface JwksSource {
  readonly fetcher: RateLimitedJwksFetcher;
  /** True once a JWKS document was downloaded and parsed: keys are cached from then on. */
  hasKeys(): boolean;
  /** The cached key of `kid`, without any network. */
  cached(kid: string): IssuerKey | undefined;
  /**
   * Downloads the JWKS again (or joins the download under way) and replaces the cached keys.
   * Rejects with {@link JwksRateLimitedError} within the interval of the last attempt and with
   * {@link JwksFetchError} when the endpoint gave no JWKS; the cached keys are then kept.
   */
  refresh(): Promise<void>;
}

/** Builds the per-container key cache of the JWKS at `url`. */
export const createJwksSource = (url: string, options: RateLimitedFetcherOptions = {}): JwksSource => {
  const fetcher = new RateLimitedJwksFetcher(options);
  let keys: Map<string, IssuerKey> | undefined;
  let inflight: Promise<void> | undefined;
  const download = async (): Promise<void> => {
    try {
      keys = parseJwks(await fetcher.fetch(url));
    } finally {
      inflight = undefined;
    }
  };
  return {
    fetcher,
    hasKeys: () => keys !== undefined,
    cached: (kid) => keys?.get(kid),
    refresh: () => (inflight ??= download()),
  };
};
