/**
 * Bearer token verification: from the request headers to a verified caller (subject and
 * roles), or a rejection with a reason that is logged and never shown to the caller.
 *
 * Signatures, `iss`, `aud`, `exp` and `nbf` are checked by `aws-jwt-verify`; this module adds
 * what it leaves open: cheap shape checks before any key lookup, a pinned algorithm list
 * bound to the key type, `exp` and `sub` made mandatory, and the roles claim.
 */
import { JwtVerifier } from 'aws-jwt-verify';
import {
  FailedAssertionError,
  FetchError,
  JwkValidationError,
  JwksValidationError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
} from 'aws-jwt-verify/error';
import type { Jwk } from 'aws-jwt-verify/jwk';
import type { JwtHeader, JwtPayload } from 'aws-jwt-verify/jwt-model';
import type { Role } from '../shared/routes.js';
import type { AuthorizerConfig } from './config.js';
import { createJwksSource, JwksFetchError, JwksRateLimitedError, type JwksSource, type RateLimitedFetcherOptions } from './jwks.js';
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
/**
 * Signature algorithms accepted, pinned: asymmetric only (`none` and the HMAC family, which
 * would let anyone holding the public key sign, are never accepted), and each only with a key
 * of its own type and curve (see {@link algorithmFitsKey}).
 */
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'] as const;
const MAX_KID_LENGTH = 256;
const MAX_SUB_LENGTH = 256;

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

const isAllowedAlgorithm = (alg: unknown): alg is (typeof ALLOWED_ALGORITHMS)[number] =>
  typeof alg === 'string' && (ALLOWED_ALGORITHMS as readonly string[]).includes(alg);

/**
 * Checks made on the still unverified token, before any key lookup, so that junk costs no
 * JWKS fetch. The `iss` check is repeated after the signature by the library; doing it here
 * too keeps attacker-chosen issuers out of the library's key cache, which is keyed by `iss`.
 */
const precheck = (token: string, issuer: string): void => {
  const [headerPart = '', payloadPart = ''] = token.split('.');
  const header = decodePart(headerPart);
  // RFC 7515 §4.1.11: a token that marks extensions critical must be refused by a verifier
  // that does not implement them, and this one implements none.
  if ('crit' in header) throw new TokenRejected('malformed');
  if (!isAllowedAlgorithm(header['alg'])) throw new TokenRejected('algorithm');
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) throw new TokenRejected('unknown-key');
  const payload = decodePart(payloadPart);
  if (payload['iss'] !== issuer) throw new TokenRejected('issuer');
};

const EC_ALGORITHM: Readonly<Record<string, string>> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

/** An algorithm is used only with a key of its own family (RSA → RS*, EC curve → its ES*). */
export const algorithmFitsKey = (alg: string | undefined, jwk: Jwk): boolean => {
  if (!isAllowedAlgorithm(alg)) return false;
  if (jwk.kty === 'RSA') return alg.startsWith('RS');
  if (jwk.kty === 'EC') return jwk.crv !== undefined && EC_ALGORITHM[jwk.crv] === alg;
  return false;
};

class ClaimsError extends Error {}

/** Runs after the library verified signature, iss, aud, exp (when present) and nbf. */
const requireClaims = ({ header, payload, jwk }: { header: JwtHeader; payload: JwtPayload; jwk: Jwk }): void => {
  if (!algorithmFitsKey(header.alg, jwk)) throw new JwtInvalidSignatureAlgorithmError('algorithm does not fit the key', header.alg ?? '', ALLOWED_ALGORITHMS.slice());
  // The library checks `exp` only when present: a token without one would never expire.
  if (typeof payload.exp !== 'number') throw new ClaimsError('exp is required');
  if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > MAX_SUB_LENGTH) {
    throw new ClaimsError('sub is required');
  }
};

/** Maps the library's errors to a reason; fetch problems are decided by the caller. */
const reasonOf = (err: unknown): RejectReason => {
  if (err instanceof TokenRejected) return err.reason;
  if (err instanceof JwtExpiredError) return 'expired';
  if (err instanceof JwtNotBeforeError) return 'not-yet-valid';
  if (err instanceof JwtInvalidIssuerError) return 'issuer';
  if (err instanceof JwtInvalidAudienceError) return 'audience';
  if (err instanceof JwtInvalidSignatureAlgorithmError) return 'algorithm';
  if (err instanceof JwtInvalidSignatureError) return 'signature';
  if (err instanceof KidNotFoundInJwksError || err instanceof JwtWithoutValidKidError || err instanceof JwkValidationError) return 'unknown-key';
  if (err instanceof FailedAssertionError) return 'unknown-key'; // JWK `use`/`kty` unfit for signatures
  if (err instanceof ClaimsError) return 'claims';
  // JwtParseError (claims of the wrong type, bad JSON) and anything unexpected: fail closed.
  return 'malformed';
};

const isFetchProblem = (err: unknown): boolean =>
  err instanceof JwksRateLimitedError || err instanceof JwksFetchError || err instanceof FetchError || err instanceof JwksValidationError;

export interface TokenVerifier {
  /** Verifies a bearer token; throws {@link TokenRejected} or {@link IssuerKeysUnavailable}. */
  verify(token: string): Promise<VerifiedCaller>;
  /** The container's JWKS cache and fetcher. */
  readonly jwks: JwksSource;
}

/** One verifier per container: it owns the JWKS cache, so create it at module scope. */
export const createTokenVerifier = (config: AuthorizerConfig, jwksOptions: RateLimitedFetcherOptions = {}): TokenVerifier => {
  const jwks = createJwksSource(jwksOptions);
  const verifier = JwtVerifier.create(
    {
      issuer: config.issuer,
      audience: config.audience,
      jwksUri: config.jwksUrl,
      graceSeconds: CLOCK_SKEW_SECONDS,
      customJwtCheck: requireClaims,
    },
    { jwksCache: jwks.cache },
  );
  return {
    jwks,
    async verify(token) {
      let payload: JwtPayload;
      try {
        precheck(token, config.issuer);
        payload = await verifier.verify(token);
      } catch (err) {
        if (isFetchProblem(err)) {
          // With keys cached, a kid that is still unknown after the (rate-limited) refetch is
          // the token's problem. With no keys ever fetched, nothing can be verified at all.
          if (!jwks.hasKeys()) throw new IssuerKeysUnavailable();
          throw new TokenRejected('unknown-key');
        }
        throw new TokenRejected(reasonOf(err));
      }
      return { sub: payload.sub as string, roles: rolesFromClaim(payload[config.rolesClaim]) };
    },
  };
};
