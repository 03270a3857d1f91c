/**
 * How the authorizer obtains the issuer's keys: `aws-jwt-verify`'s JWKS cache, configured so
 * that it keeps the guarantees this service documents (docs/authentication.md):
 *
 * - One attempt per interval per URL, whatever the outcome ({@link RateLimitedJwksFetcher}): a
 *   flood of forged `kid`s or a dead endpoint costs the issuer at most one request per
 *   interval. The library's own penalty box counts only unknown-`kid` outcomes, on real-time
 *   timers, and lets a dead endpoint be asked (twice, with its retry) on every request; the
 *   fetcher replaces both.
 * - Concurrent lookups share one download (the library's cache does this).
 * - A failed refetch keeps the last good keys, so callers whose key is cached keep working
 *   while the endpoint is down; a successful one replaces them, so a key the issuer withdrew
 *   stops verifying (the library's cache does this).
 * - The document is capped in size, time-limited, never followed through a redirect, and
 *   filtered on arrival ({@link parseJwks}): only signature keys of RSA (2048 bits and more) and
 *   the NIST curves stay, so an OKP (EdDSA) key or a weak RSA key is never used, and one bad
 *   entry does not discard the others (the library's parser refuses the whole document).
 * - Keys pinned in the deployment (`identity.jwks`, {@link IssuerJwksOptions}) replace the
 *   endpoint: nothing is fetched, and a `kid` they do not hold is refused at once.
 * - An algorithm is used only with a key of its own family ({@link IssuerJwksCache}): the
 *   library binds the two only when the JWK names its `alg`.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { JsonTooDeep, parseJson } from '../platform/bounded-json.js';
import { createHttpClient, OutboundError, type HttpClient } from '../outbound/http-client.js';
import { SimpleJwksCache, type Jwk, type Jwks, type JwkWithKid, type PenaltyBox } from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import { KidNotFoundInJwksError } from 'aws-jwt-verify/error';

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

/** The service's one outbound HTTP client, created on the first download (loopback allowed: the local issuer). */
let client: HttpClient | undefined;

/** One GET through the shared client: no redirects followed (a 3xx is an error), body capped, one deadline for it all. */
const download = async (url: string, timeoutMs: number): Promise<Buffer> => {
  const parsed = new URL(url);
  client ??= createHttpClient({ allowLoopback: true, maxSockets: 2 });
  let response;
  try {
    response = await client.send({
      target: { origin: new URL(parsed.origin), path: `${parsed.pathname}${parsed.search}` },
      method: 'GET',
      headers: { accept: 'application/json' },
      timeoutMs,
      maxBodyBytes: MAX_JWKS_BYTES,
    });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    throw new JwksFetchError(error.failure === 'timeout' ? 'time-out' : error.failure === 'too-large' ? 'document too large' : (error.code ?? error.failure));
  }
  if (response.status !== 200) throw new JwksFetchError(`status ${response.status}`);
  return response.body;
};

/**
 * The library's `Fetcher`, for plain `http://` (loopback) and `https://` URLs: makes at most one
 * network attempt per `minIntervalMs` per URL, whatever its outcome, and never retries
 * (the library's `SimpleFetcher` retries once at once). `attempts` counts them (for tests).
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

  async fetch(uri: string): Promise<ArrayBuffer> {
    const now = this.#now();
    const last = this.#lastAttempt.get(uri);
    if (last !== undefined && now - last < this.#minIntervalMs) throw new JwksRateLimitedError();
    this.#lastAttempt.set(uri, now);
    this.#attempts += 1;
    const body = await download(uri, this.#timeoutMs);
    return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  }
}

/** What a key can verify: RSA keys RS*, EC keys the ES* of their curve only. */
export type KeyFamily = 'RSA' | 'P-256' | 'P-384' | 'P-521';

/**
 * The signature algorithms accepted, pinned, each bound to the one key family it may be used
 * with: asymmetric only (`none` and the HMAC family, which would let anyone holding the public
 * key sign, are never accepted), and no EdDSA (the library would accept it with an OKP key).
 */
export const ALGORITHM_FAMILIES: Readonly<Record<string, KeyFamily>> = {
  RS256: 'RSA',
  RS384: 'RSA',
  RS512: 'RSA',
  ES256: 'P-256',
  ES384: 'P-384',
  ES512: 'P-521',
};

const EC_CURVES: ReadonlySet<string> = new Set(['P-256', 'P-384', 'P-521']);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** The family of a JWK (`kty` and `crv`), or undefined for any other kind of key. */
export const keyFamily = (jwk: { readonly kty?: unknown; readonly crv?: unknown }): KeyFamily | undefined => {
  if (jwk.kty === 'RSA') return 'RSA';
  if (jwk.kty === 'EC' && typeof jwk.crv === 'string' && EC_CURVES.has(jwk.crv)) return jwk.crv as KeyFamily;
  return undefined;
};

/** An algorithm is used only with a key of its own family (RSA → RS*, EC curve → its ES*). */
export const algorithmFitsKey = (alg: unknown, jwk: { readonly kty?: unknown; readonly crv?: unknown }): boolean => {
  const family = keyFamily(jwk);
  // Mutation: `family !== undefined` → `true`, or `&&` → `||`, is equivalent: no algorithm maps to `undefined`, so
  // the last comparison is false for an unknown family.
  return family !== undefined && typeof alg === 'string' && Object.hasOwn(ALGORITHM_FAMILIES, alg) && ALGORITHM_FAMILIES[alg] === family;
};

/**
 * One JWK of the document as a verification key (its public members only), or undefined when
 * it is not one this authorizer uses: no `kid`, not for signatures (`use`, `key_ops`), a key
 * type or curve it does not verify with (OKP among them), an RSA key under
 * {@link MIN_RSA_BITS}, or members that do not form a key.
 */
export const usableJwk = (jwk: unknown): JwkWithKid | undefined => {
  // Mutation: `typeof jwk !== 'object'` → `false` is equivalent: a string, number or boolean has no `kid`, refused by
  // the next check.
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
  try {
    const key = createPublicKey({ key: members as JsonWebKey, format: 'jwk' });
    if (family === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) return undefined;
  } catch {
    return undefined;
  }
  return { ...(members as unknown as { kty: string }), kid, use: 'sig', ...(alg === undefined ? {} : { alg }) };
};

/**
 * The library's `JwksParser`: the usable keys of a JWKS document (the first of a repeated `kid`
 * wins, as the library looks keys up). Throws {@link JwksFetchError} when the document is not
 * a JWKS at all; the cached keys are then kept.
 */
export const parseJwks = (body: ArrayBuffer): Jwks => {
  let doc: unknown;
  try {
    doc = parseJson(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new JwksFetchError(error instanceof JsonTooDeep ? `the document nests deeper than ${error.maxDepth} levels` : 'the document is not JSON');
  }
  // Mutation: `typeof doc === 'object'` → `true` is equivalent: `keys` of a string, number or boolean is `undefined`,
  // refused as not a JWKS.
  const keys = doc !== null && typeof doc === 'object' ? (doc as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys)) throw new JwksFetchError('the document is not a JWKS');
  const usable: Jwk[] = [];
  for (const jwk of keys) {
    const key = usableJwk(jwk);
    if (key) usable.push(key);
  }
  return { keys: usable };
};

/**
 * The fetcher spaces every attempt on its own, whatever the outcome and however many lookups
 * wait on one download; a second limit here would only differ from it.
 */
const SPACED_BY_THE_FETCHER: PenaltyBox = {
  wait: async () => undefined,
  registerFailedAttempt: () => undefined,
  registerSuccessfulAttempt: () => undefined,
};

export interface IssuerJwksOptions extends RateLimitedFetcherOptions {
  /**
   * Keys pinned in the deployment (`identity.jwks`): the only keys verified with, and nothing is
   * ever fetched; a token of any other `kid` is refused as of an unknown key.
   */
  readonly pinned?: Jwks;
}

/** The pinned key of the token's `kid`; an unknown `kid` is refused without any fetch. */
const pinnedJwk = (pinned: Jwks, decomposedJwt: DecomposedJwt): JwkWithKid => {
  const kid = decomposedJwt.header.kid;
  const jwk = pinned.keys.find((key): key is JwkWithKid => key.kid === kid);
  if (!jwk) throw new KidNotFoundInJwksError(`JWK for kid ${String(kid)} not found in the pinned JWKS`);
  return jwk;
};

/**
 * The container's JWKS cache: `aws-jwt-verify`'s, with the rate-limited fetcher, the filtering
 * parser, and algorithm-to-key-family binding on every key it hands out.
 */
export class IssuerJwksCache extends SimpleJwksCache {
  declare readonly fetcher: RateLimitedJwksFetcher;
  #hasKeys = false;
  readonly #pinned: Jwks | undefined;

  constructor(options: IssuerJwksOptions = {}) {
    super({ fetcher: new RateLimitedJwksFetcher(options), penaltyBox: SPACED_BY_THE_FETCHER, jwksParser: parseJwks });
    this.#pinned = options.pinned;
  }

  /** True with pinned keys, or once a JWKS document was downloaded and parsed: keys are cached from then on. */
  hasKeys(): boolean {
    return this.#pinned !== undefined || this.#hasKeys;
  }

  override async getJwks(jwksUri: string): Promise<Jwks> {
    const jwks = await super.getJwks(jwksUri);
    this.#hasKeys = true;
    return jwks;
  }

  /**
   * The key of the token's `kid`, refused unless the token's `alg` is of its family, and for
   * ECDSA unless the signature has the exact raw length (`r || s`, RFC 7518 §3.4) of its curve:
   * Node's verification throws on any other length (rather than answering false), and the
   * library lets that through.
   */
  override async getJwk(jwksUri: string, decomposedJwt: DecomposedJwt): Promise<JwkWithKid> {
    const jwk = this.#pinned ? pinnedJwk(this.#pinned, decomposedJwt) : await super.getJwk(jwksUri, decomposedJwt);
    const alg = decomposedJwt.header.alg;
    if (!algorithmFitsKey(alg, jwk)) throw new JwkFamilyMismatch();
    const ecdsaBytes = alg === undefined ? undefined : ECDSA_SIGNATURE_BYTES[alg];
    if (ecdsaBytes !== undefined && Buffer.byteLength(decomposedJwt.signatureB64, 'base64url') !== ecdsaBytes) throw new SignatureLengthMismatch();
    return jwk;
  }
}

/** The exact length of a raw ECDSA signature, per algorithm. */
const ECDSA_SIGNATURE_BYTES: Readonly<Record<string, number>> = { ES256: 64, ES384: 96, ES512: 132 };

/** An ECDSA signature whose length is not its curve's. */
export class SignatureLengthMismatch extends Error {
  constructor() {
    super('the signature length does not fit the algorithm');
    this.name = 'SignatureLengthMismatch';
  }
}

/** The token's `alg` is not of the family of the key its `kid` names. */
export class JwkFamilyMismatch extends Error {
  constructor() {
    super('the token algorithm does not fit the key');
    this.name = 'JwkFamilyMismatch';
  }
}
