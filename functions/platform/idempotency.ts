/**
 * Idempotent retries with the `Idempotency-Key` request header (IETF
 * draft-ietf-httpapi-idempotency-key-header; behaviour as Stripe's API), for any operation
 * that opts in through `httpHandler({ …, idempotency: idempotent({ store }) })`.
 *
 * - A key is scoped to the operation and the caller (the authorizer's principal): one caller
 *   never sees another's answer, and one key may be reused across operations.
 * - "The same request" is decided by a fingerprint: HMAC-SHA-256, under the stack's own key
 *   (`fingerprint-key.ts`), of the method, the resource, the path parameters and the canonical
 *   JSON body (members sorted). Keyed, because a body may carry a password: a plain hash kept
 *   for a day could be checked against guesses by anyone who can read the table.
 * - The first request claims the key with a conditional put (`IN_PROGRESS`, locked for as long
 *   as the function may still run, so that a crashed attempt can be retried once the lock
 *   lapses), runs, and stores its answer (status, headers, body) for {@link DEFAULT_TTL_SECONDS}.
 * - A retry with the same key and the same request gets the stored answer, byte for byte,
 *   with `Idempotent-Replayed: true`; the business function does not run again.
 * - Same key, different request: 422. Same key while the first still runs: 409 with
 *   `Retry-After`. A key that is not 1 to 255 printable ASCII characters: 400.
 * - Final answers (2xx, 3xx, 4xx of the business function) are stored. Failures of ours or of
 *   a dependency (5xx) are not: the claim is released so that a retry runs again.
 *
 * Requests without the header run as if this module did not exist.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { canonicalJson } from './canonical-json.js';
import { environmentFingerprintKey, type FingerprintKeySource } from './fingerprint-key.js';
import type { HttpEvent, HttpRun, RunWrapper } from './http-core.js';
import { logger } from './logger.js';
import { BadRequest, HttpProblem, ServiceUnavailable, problemResponse } from './problem.js';
import { transientReason } from './transient.js';

/** The request header, as the header normalizer leaves it (lower case). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Set on every replayed answer. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long an answer is replayed: 24 hours, as Stripe keeps keys. */
export const DEFAULT_TTL_SECONDS = 24 * 60 * 60;
/** Longest key accepted (the draft leaves it open; Stripe allows 255). */
export const MAX_KEY_LENGTH = 255;
/** Compressed answers above this are not kept (a DynamoDB item holds at most 400 KB). */
export const MAX_STORED_RESPONSE_BYTES = 300 * 1024;
/** Added to the function's remaining time when locking a key: the lock outlives the attempt. */
const LOCK_MARGIN_MS = 2_000;
/** Retry-After of the 409 while the first request runs: most finish within a second. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/** An answer as kept for replay. `body` is gzip-compressed; absent when the answer was too large to keep. */
export interface StoredResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
}

export interface IdempotencyRecord {
  /** `<operation>#<sha256(principal)>#<key>`. */
  readonly pk: string;
  readonly status: 'IN_PROGRESS' | 'COMPLETED';
  readonly fingerprint: string;
  /** Identifies the attempt holding the claim: only it may complete or release the record. */
  readonly attempt: string;
  /** Epoch milliseconds after which an `IN_PROGRESS` claim may be taken over. */
  readonly lockedUntil: number;
  /** Epoch seconds: DynamoDB's time to live, and the end of replay. */
  readonly expiresAt: number;
  readonly response?: StoredResponse;
}

export type ClaimOutcome = { readonly kind: 'claimed' } | { readonly kind: 'taken'; readonly record: IdempotencyRecord | undefined };

/** Where keys live; the DynamoDB one is `createIdempotencyStore` (`idempotency-store.ts`). */
export interface IdempotencyStore {
  /**
   * Writes `record` unless a live record holds the key: absent, expired, or an `IN_PROGRESS`
   * claim of the same request whose lock lapsed (a crashed attempt) may be taken. `taken`
   * carries the record that holds the key (undefined when it vanished meanwhile).
   */
  claim(record: IdempotencyRecord, nowMs: number): Promise<ClaimOutcome>;
  /** Stores the answer, if `attempt` still holds the claim; false when it no longer does. */
  complete(pk: string, attempt: string, response: StoredResponse, expiresAt: number): Promise<boolean>;
  /** Deletes the claim, if `attempt` still holds it. */
  release(pk: string, attempt: string): Promise<void>;
}

/**
 * Which answers a key keeps. `final` (the default): every final answer, refusals (4xx)
 * included, as Stripe does. `effects`: only answers given after the request may have taken
 * effect somewhere (success, or a problem marked {@link HttpProblem.afterSending}): a refusal
 * that changed nothing (unknown adapter, connection refused, name not found) is not kept, so a
 * retry once the cause is fixed runs again. The relay uses `effects`.
 */
export type KeptAnswers = 'final' | 'effects';

export interface IdempotencyOptions {
  readonly store: IdempotencyStore;
  /** Default `final`; see {@link KeptAnswers}. */
  readonly keep?: KeptAnswers;
  /** How long an answer is replayed, seconds; default {@link DEFAULT_TTL_SECONDS}. */
  readonly ttlSeconds?: number;
  readonly now?: () => number;
  /** The fingerprint key; default the stack's, from the environment (see `fingerprint-key.ts`). */
  readonly fingerprintKey?: FingerprintKeySource;
}

/** The container's key source: the key is read once, at the first keyed request. */
const stackFingerprintKey = environmentFingerprintKey();

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** The content of a Structured Field string (RFC 8941 §3.3.3): only `\"` and `\\` are escapes. */
const unquote = (inner: string): string | undefined => {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '"') return undefined;
    if (c === '\\') {
      const next = inner[i + 1];
      if (next !== '"' && next !== '\\') return undefined;
      out += next;
      i++;
      continue;
    }
    out += c;
  }
  return out;
};

const invalidKey = (message: string): BadRequest =>
  new BadRequest(`The Idempotency-Key header ${message}.`, [{ in: 'header', field: 'Idempotency-Key', message }]);

/**
 * The key of a request: `undefined` without the header; the header's value, unquoted when it
 * is written as a Structured Field string (`"…"`, as the IETF draft shows it). Throws 400
 * when it is empty, longer than {@link MAX_KEY_LENGTH}, not printable ASCII, or sent twice
 * with different values.
 */
export const idempotencyKey = (event: Pick<HttpEvent, 'headers' | 'multiValueHeaders'>): string | undefined => {
  const raw = event.headers?.[IDEMPOTENCY_HEADER];
  if (raw === undefined || raw === null) return undefined;
  const all = event.multiValueHeaders?.[IDEMPOTENCY_HEADER];
  if (all && new Set(all).size > 1) throw invalidKey('must be sent once');
  let key = raw.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    const unquoted = unquote(key.slice(1, -1));
    if (unquoted === undefined) throw invalidKey('is not a valid quoted string');
    key = unquoted;
  }
  if (key.length === 0) throw invalidKey('must not be empty');
  if (key.length > MAX_KEY_LENGTH) throw invalidKey(`must be at most ${MAX_KEY_LENGTH} characters`);
  if (!PRINTABLE_ASCII.test(key)) throw invalidKey('must be printable ASCII characters only');
  return key;
};

/** Who is calling: the authorizer's principal (our authorizer sets `principal` and `principalId`). */
export const callerOf = (event: Pick<HttpEvent, 'requestContext'>): string => {
  const authorizer = (event.requestContext?.authorizer ?? {}) as Record<string, unknown>;
  const principal = authorizer['principal'] ?? authorizer['principalId'];
  return typeof principal === 'string' && principal !== '' ? principal : 'anonymous';
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

type FingerprintedEvent = Pick<HttpEvent, 'httpMethod' | 'resource' | 'path' | 'pathParameters' | 'body'>;

/** The text a fingerprint is computed over: method, resource, path parameters and the canonical body. */
const fingerprintText = (event: FingerprintedEvent): string =>
  // Mutation: `body === undefined ? null : body` → `body` is equivalent: canonical JSON writes `undefined` in an
  // array as `null`.
  canonicalJson([event.httpMethod, event.resource || event.path, event.pathParameters ?? {}, event.body === undefined ? null : event.body]);

/** The version prefix of a keyed fingerprint: a stored value without it is of the unkeyed form. */
export const FINGERPRINT_VERSION = 'h1:';

/**
 * What makes two requests "the same": method, resource, path parameters and the canonical body,
 * as an HMAC-SHA-256 under `key`, prefixed with {@link FINGERPRINT_VERSION}: without the key,
 * the stored value tells nothing about the body.
 */
export const requestFingerprint = (event: FingerprintedEvent, key: Uint8Array): string =>
  FINGERPRINT_VERSION + createHmac('sha256', key).update(fingerprintText(event)).digest('hex');

/**
 * Whether a stored fingerprint is that of this request. A record without the version prefix was
 * written before fingerprints were keyed (a plain SHA-256, kept at most one TTL after the
 * upgrade): it is compared in that form, so that a retry across the upgrade still gets its
 * replay. New records never store that form.
 */
export const sameRequest = (stored: string, fingerprint: string, event: FingerprintedEvent): boolean =>
  stored.startsWith(FINGERPRINT_VERSION) ? stored === fingerprint : stored === sha256(fingerprintText(event));

/** The record key: the key scoped to the operation and the caller (hashed: a principal may be long). */
export const recordKey = (operation: string, caller: string, key: string): string => `${operation}#${sha256(caller)}#${key}`;

const headersOf = (result: APIGatewayProxyResult): Record<string, string> =>
  Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)]));

/** The answer as kept: headers and a compressed body, or no body when even that is too large. */
export const toStored = (result: APIGatewayProxyResult): StoredResponse => {
  const body = gzipSync(Buffer.from(result.body ?? '', 'utf8'));
  const base = { statusCode: result.statusCode, headers: headersOf(result) };
  return body.length <= MAX_STORED_RESPONSE_BYTES ? { ...base, body: new Uint8Array(body) } : base;
};

const replay = (operation: string, response: StoredResponse): APIGatewayProxyResult => {
  if (response.body === undefined) {
    throw new HttpProblem(
      409,
      'idempotent-response-not-kept',
      'Conflict',
      `The request with this Idempotency-Key was already processed (status ${response.statusCode}), but its answer was too large to keep for replay, and it is not run twice. Read the outcome another way, or send a new key to run it again.`,
    );
  }
  logger.info('idempotent replay', { operation, status: response.statusCode });
  return {
    statusCode: response.statusCode,
    headers: { ...response.headers, [REPLAYED_HEADER]: 'true' },
    body: gunzipSync(response.body).toString('utf8'),
  };
};

const keyReused = (): HttpProblem =>
  new HttpProblem(
    422,
    'idempotency-key-reused',
    'Unprocessable Content',
    'This Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request.',
  );

const inProgress = (): HttpProblem =>
  new HttpProblem(
    409,
    'idempotency-request-in-progress',
    'Conflict',
    'A request with this Idempotency-Key is still being processed; retry after it has finished.',
    {},
    { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECONDS) },
  );

/** Runs a store call; an unreachable store is a 503 the client may retry. */
const storeCall = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    const reason = transientReason(error);
    if (!reason) throw error;
    logger.warn('idempotency store unavailable', { storeOperation: what, reason });
    throw new ServiceUnavailable('The idempotency key store is unavailable at the moment; retry with the same key shortly.');
  }
};

/** Best effort after the answer is decided: a failure is logged, and the lock's expiry cleans up. */
const afterwards = async (what: string, call: () => Promise<unknown>): Promise<void> => {
  try {
    await call();
  } catch (error) {
    logger.warn('idempotency record not updated', { storeOperation: what, reason: transientReason(error) ?? 'error', error });
  }
};

/** How many times a claim is tried when the record holding the key vanishes meanwhile. */
const CLAIM_ATTEMPTS = 3;

/**
 * Wraps a business function so that requests carrying `Idempotency-Key` run at most once per
 * key, caller and operation (see the module comment). Runs after validation: a request the
 * schema refuses never claims a key.
 */
export const idempotent =
  (options: IdempotencyOptions): RunWrapper =>
  <TBody>(operation: string, run: HttpRun<TBody>): HttpRun<TBody> =>
  async (event, context, opts) => {
    const key = idempotencyKey(event);
    if (key === undefined) return run(event, context, opts);
    const keep = options.keep ?? 'final';
    const now = options.now ?? Date.now;
    const ttl = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    const pk = recordKey(operation, callerOf(event), key);
    const fingerprint = requestFingerprint(event, await (options.fingerprintKey ?? stackFingerprintKey)());
    const attempt = randomUUID();

    for (let tries = 1; ; tries++) {
      const started = now();
      const claim = await storeCall('claim', () =>
        options.store.claim(
          {
            pk,
            status: 'IN_PROGRESS',
            fingerprint,
            attempt,
            // As long as this invocation may still run, and then some.
            lockedUntil: started + context.getRemainingTimeInMillis() + LOCK_MARGIN_MS,
            expiresAt: Math.ceil(started / 1000) + ttl,
          },
          started,
        ),
      );
      if (claim.kind === 'claimed') break;
      const held = claim.record;
      // Our own put, retried by the SDK after a timeout although the first one was written.
      if (held?.attempt === attempt) break;
      if (!held) {
        // Released (or expired) between the put and the read: claim again.
        if (tries < CLAIM_ATTEMPTS) continue;
        throw inProgress();
      }
      if (!sameRequest(held.fingerprint, fingerprint, event)) throw keyReused();
      if (held.status === 'COMPLETED' && held.response) return replay(operation, held.response);
      throw inProgress();
    }

    let result: APIGatewayProxyResult;
    try {
      result = await run(event, context, opts);
    } catch (error) {
      const final = error instanceof HttpProblem && (error.outcomeUnknown || (error.status < 500 && keep === 'final'));
      if (final) {
        // A final answer of the business function, or a failure after the request left the
        // service (a retry must not repeat it): rendered as the error middleware will render it.
        const rendered = problemResponse(error, event.requestContext?.requestId);
        await afterwards('complete', () => options.store.complete(pk, attempt, toStored(rendered), Math.ceil(now() / 1000) + ttl));
      } else {
        await afterwards('release', () => options.store.release(pk, attempt));
      }
      throw error;
    }
    if (result.statusCode >= 500) {
      await afterwards('release', () => options.store.release(pk, attempt));
      return result;
    }
    await afterwards('complete', async () => {
      const kept = await options.store.complete(pk, attempt, toStored(result), Math.ceil(now() / 1000) + ttl);
      // The lock lapsed and another attempt took the key: this answer is not the stored one.
      if (!kept) logger.warn('idempotency claim lost before completion', { operation });
    });
    return result;
  };
