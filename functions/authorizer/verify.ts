/**
 * Bearer token verification: from the request headers to a verified caller (subject and
 * roles), or a rejection with a reason that is logged and never shown to the caller.
 *
 * A token is a JWS in compact form (RFC 7515) carrying JWT claims (RFC 7519), checked in this
 * order, cheapest first, so that junk costs no key lookup and no signature check:
 * 1. shape: `Bearer`, size, three base64url parts, header and payload JSON objects, no `crit`;
 * 2. `alg` one of {@link ALGORITHMS}, `kid` present, `iss` the configured issuer (an
 *    attacker's issuer never reaches the JWKS cache);
 * 3. the key of `kid` from the issuer's JWKS (see `jwks.ts`), and `alg` bound to that key's
 *    type and curve (and to the JWK's own `alg` when it names one);
 * 4. the signature, by `crypto.verify`;
 * 5. the claims: `exp` (required), `nbf` with {@link CLOCK_SKEW_SECONDS}, `aud`, `sub`, and
 *    the roles claim.
 * Only the key lookup and the signature need the JWKS; header and `kid`/`jku`/`x5u`/`jwk`
 * members can never make the verifier fetch anything but the configured JWKS URL.
 */
import { verify as verifySignature } from 'node:crypto';
import type { Role } from '../shared/routes.js';
import type { AuthorizerConfig } from './config.js';
import {
  createJwksSource,
  JwksFetchError,
  JwksRateLimitedError,
  keyFamily,
  MAX_KID_LENGTH,
  type IssuerKey,
  type JwksSource,
  type KeyFamily,
  type RateLimitedFetcherOptions,
} from './jwks.js';
import { rolesFromClaim } from './policy.js';

/**
 * Clock skew tolerated on `exp` and `nbf`, in seconds: a token is accepted up to 30 s after
 * its `exp` and from 30 s before its `nbf`, for clocks of issuer and Lambda that disagree.
 */
export const CLOCK_SKEW_SECONDS = 30;
/**
 * Longest accepted token, in characters. Cognito ID tokens with a handful of groups are 1–2 KB;
 * API Gateway caps all request headers at 10 KB anyway. Longer tokens are rejected before any
 * decoding.
 */
export const MAX_TOKEN_LENGTH = 8192;
const MAX_SUB_LENGTH = 256;

/**
 * The signature algorithms accepted, pinned: asymmetric only (`none` and the HMAC family,
 * which would let anyone holding the public key sign, are never accepted), each bound to the
 * one key family it may be used with, its hash, and for ECDSA the exact length of its raw
 * (`r || s`, RFC 7518 §3.4) signature.
 */
const ALGORITHMS: Readonly<Record<string, { readonly family: KeyFamily; readonly hash: string; readonly signatureBytes?: number }>> = {
  RS256: { family: 'RSA', hash: 'sha256' },
  RS384: { family: 'RSA', hash: 'sha384' },
  RS512: { family: 'RSA', hash: 'sha512' },
  ES256: { family: 'P-256', hash: 'sha256', signatureBytes: 64 },
  ES384: { family: 'P-384', hash: 'sha384', signatureBytes: 96 },
  ES512: { family: 'P-521', hash: 'sha512', signatureBytes: 132 },
};

/** Why a token was refused: logged (info) for operators, never sent to the caller. */
export type RejectReason =
  | 'missing'
  | 'malformed'
  | 'too-large'
  | 'algorithm'
  | 'unknown-key'
  | 'signature'
  | 'expired'
  | 'not-yet-valid'
  | 'issuer'
  | 'audience'
  | 'claims';

/** The request carries no acceptable token. The caller gets 401, whatever the reason. */
export class TokenRejected extends Error {
  constructor(readonly reason: RejectReason) {
    super(`token rejected: ${reason}`);
    this.name = 'TokenRejected';
  }
}

/**
 * The issuer's keys could not be obtained even once since the container started: no token can
 * be verified. This is the service's fault, not the caller's (the gateway answers 500).
 */
export class IssuerKeysUnavailable extends Error {
  constructor() {
    super('the issuer keys could not be fetched');
    this.name = 'IssuerKeysUnavailable';
  }
}

/** A caller whose token passed every check. */
export interface VerifiedCaller {
  readonly sub: string;
  /** The known roles the token holds (possibly none). */
  readonly roles: readonly Role[];
}

type Headers = Readonly<Record<string, string | undefined>> | null | undefined;
type MultiHeaders = Readonly<Record<string, readonly string[] | undefined>> | null | undefined;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
/** JWS compact serialization: three base64url parts, no padding, none empty. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The token of the `Authorization: Bearer <token>` header. Header names may arrive in any
 * case; two Authorization headers (in any spelling) are refused rather than guessed between.
 */
export const bearerToken = (headers: Headers, multiValueHeaders?: MultiHeaders): string => {
  const values = Object.entries(headers ?? {})
    .filter(([name]) => name.toLowerCase() === 'authorization')
    .map(([, value]) => value);
  const repeated = Object.entries(multiValueHeaders ?? {}).some(
    ([name, list]) => name.toLowerCase() === 'authorization' && (list?.length ?? 0) > 1,
  );
  if (values.length === 0 || values[0] === undefined || values[0] === '') throw new TokenRejected('missing');
  if (values.length > 1 || repeated) throw new TokenRejected('malformed');
  const value = values[0];
  if (value.length > MAX_TOKEN_LENGTH + 32) throw new TokenRejected('too-large');
  const token = BEARER.exec(value)?.[1];
  if (token === undefined) throw new TokenRejected('malformed');
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenRejected('too-large');
  if (!COMPACT_JWS.test(token)) throw new TokenRejected('malformed');
  return token;
};

const decodePart = (part: string): Record<string, unknown> => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new TokenRejected('malformed');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TokenRejected('malformed');
  return value as Record<string, unknown>;
};

const algorithmOf = (alg: unknown) => (typeof alg === 'string' && Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined);

/** An algorithm is used only with a key of its own family (RSA → RS*, EC curve → its ES*). */
export const algorithmFitsKey = (alg: string | undefined, jwk: { readonly kty?: unknown; readonly crv?: unknown }): boolean => {
  const family = keyFamily(jwk);
  return family !== undefined && algorithmOf(alg)?.family === family;
};

const isNumericDate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** The claims after the signature: times, audience, subject. Throws {@link TokenRejected}. */
const checkClaims = (payload: Record<string, unknown>, audience: string, nowSeconds: number): string => {
  const { exp, nbf, iat, aud, sub } = payload;
  // Present time claims of another type make the token unreadable, not merely expired.
  if ((exp !== undefined && !isNumericDate(exp)) || (nbf !== undefined && !isNumericDate(nbf)) || (iat !== undefined && !isNumericDate(iat))) {
    throw new TokenRejected('malformed');
  }
  // Without `exp` a token would never expire.
  if (exp === undefined) throw new TokenRejected('claims');
  if (exp + CLOCK_SKEW_SECONDS <= nowSeconds) throw new TokenRejected('expired');
  if (nbf !== undefined && nbf - CLOCK_SKEW_SECONDS > nowSeconds) throw new TokenRejected('not-yet-valid');
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) && aud.every((a) => typeof a === 'string') ? (aud as string[]) : undefined;
  if (aud !== undefined && audiences === undefined) throw new TokenRejected('malformed');
  if (!audiences?.includes(audience)) throw new TokenRejected('audience');
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > MAX_SUB_LENGTH) throw new TokenRejected('claims');
  return sub;
};

export interface TokenVerifier {
  /** Verifies a bearer token; throws {@link TokenRejected} or {@link IssuerKeysUnavailable}. */
  verify(token: string): Promise<VerifiedCaller>;
  /** The container's JWKS cache and fetcher. */
  readonly jwks: JwksSource;
}

/** One verifier per container: it owns the JWKS cache, so create it at module scope. */
export const createTokenVerifier = (config: AuthorizerConfig, jwksOptions: RateLimitedFetcherOptions = {}): TokenVerifier => {
  const jwks = createJwksSource(config.jwksUrl, jwksOptions);

  /** The key of `kid`: cached, or after one (rate-limited) refetch of the JWKS. */
  const keyFor = async (kid: string): Promise<IssuerKey> => {
    const cached = jwks.cached(kid);
    if (cached) return cached;
    try {
      await jwks.refresh();
    } catch (err) {
      if (!(err instanceof JwksRateLimitedError || err instanceof JwksFetchError)) throw err;
      // With no keys ever fetched, nothing can be verified at all: the service is at fault.
      if (!jwks.hasKeys()) throw new IssuerKeysUnavailable();
    }
    const key = jwks.cached(kid);
    if (!key) throw new TokenRejected('unknown-key');
    return key;
  };

  return {
    jwks,
    async verify(token) {
      if (token.length > MAX_TOKEN_LENGTH) throw new TokenRejected('too-large');
      if (!COMPACT_JWS.test(token)) throw new TokenRejected('malformed');
      const first = token.indexOf('.');
      const second = token.indexOf('.', first + 1);
      const header = decodePart(token.slice(0, first));
      // RFC 7515 §4.1.11: a token that marks extensions critical must be refused by a verifier
      // that does not implement them, and this one implements none.
      if ('crit' in header) throw new TokenRejected('malformed');
      const algorithm = algorithmOf(header['alg']);
      if (!algorithm) throw new TokenRejected('algorithm');
      const kid = header['kid'];
      if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) throw new TokenRejected('unknown-key');
      const payload = decodePart(token.slice(first + 1, second));
      if (payload['iss'] !== config.issuer) throw new TokenRejected('issuer');

      const key = await keyFor(kid);
      if (key.family !== algorithm.family || (key.alg !== undefined && key.alg !== header['alg'])) throw new TokenRejected('algorithm');
      const signature = Buffer.from(token.slice(second + 1), 'base64url');
      if (algorithm.signatureBytes !== undefined && signature.length !== algorithm.signatureBytes) throw new TokenRejected('signature');
      const signed = Buffer.from(token.slice(0, second), 'latin1');
      const valid = verifySignature(
        algorithm.hash,
        signed,
        algorithm.signatureBytes === undefined ? key.key : { key: key.key, dsaEncoding: 'ieee-p1363' },
        signature,
      );
      if (!valid) throw new TokenRejected('signature');

      const sub = checkClaims(payload, config.audience, Math.floor(Date.now() / 1000));
      return { sub, roles: rolesFromClaim(payload[config.rolesClaim]) };
    },
  };
};
