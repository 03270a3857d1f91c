/**
 * Bearer token verification: from the request headers to a verified caller (subject and
 * roles), or a rejection with a reason that is logged and never shown to the caller.
 *
 * A token is a JWS in compact form (RFC 7515) carrying JWT claims (RFC 7519). The signature and
 * the standard claims are checked by `aws-jwt-verify` (AWS's own verifier, widely reviewed);
 * this module adds what the service requires beyond it, cheapest first, so that junk costs no
 * key lookup and no signature check:
 * 1. shape: `Bearer`, size, three base64url parts, header and payload JSON objects, no `crit`,
 *    claims of the types RFC 7519 gives them;
 * 2. `alg` one of {@link ALGORITHM_FAMILIES} (no `none`, no HMAC, no EdDSA), `kid` present,
 *    `iss` the configured issuer (an attacker's issuer never reaches the JWKS cache);
 * 3. the library: the key of `kid` from the issuer's JWKS (see `jwks.ts`, which also binds
 *    `alg` to the key's type and curve), the signature, `exp`/`nbf` with
 *    {@link CLOCK_SKEW_SECONDS} of grace, `iss`, `aud`;
 * 4. `customJwtCheck`: `exp` required and refused from exactly `exp` + skew on (RFC 7519:
 *    "on or after"), `nbf` refused until `nbf` − skew, the lifetime cap
 *    {@link MAX_TOKEN_LIFETIME_SECONDS}, `sub`, the roles.
 * Header `kid`/`jku`/`x5u`/`jwk` members can never make the verifier fetch anything but the
 * configured JWKS URL.
 *
 * Time: the checks of step 4 read the verifier's clock (`now`, default `Date.now()`), once per
 * token. `aws-jwt-verify` takes no clock (it reads `Date.now()` itself, with `graceSeconds`
 * its only time option), so its `exp`/`nbf` checks of step 3 stay as a second line on the
 * system clock: with the default clock both agree, and step 4 is the stricter of the two.
 */
import { JwtVerifier } from 'aws-jwt-verify/jwt-verifier';
import {
  FetchError,
  JwksValidationError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtParseError,
  JwtWithoutValidKidError,
  JwkInvalidKtyError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import { parseJson } from '../platform/bounded-json.js';
import type { Role } from '../platform/route.js';
import type { AuthorizerConfig } from './environment.js';
import {
  ALGORITHM_FAMILIES,
  IssuerJwksCache,
  JwkFamilyMismatch,
  SignatureLengthMismatch,
  JwksFetchError,
  JwksRateLimitedError,
  MAX_KID_LENGTH,
  type RateLimitedFetcherOptions,
} from './jwks.js';
import { rolesFromClaim } from './policy.js';

export { algorithmFitsKey } from './jwks.js';

/**
 * Clock skew tolerated on `exp` and `nbf`, in seconds: a token is accepted until 30 s after
 * its `exp` (refused from exactly `exp + 30` on) and from 30 s before its `nbf`, for clocks of
 * issuer and Lambda that disagree.
 */
export const CLOCK_SKEW_SECONDS = 30;
/**
 * Longest accepted token lifetime, in seconds: 24 h, Cognito's own maximum for ID and access
 * tokens. A token is refused when its `exp` is more than this after its `iat`, or (with or
 * without `iat`) more than this plus {@link CLOCK_SKEW_SECONDS} after now: a token minted with
 * `exp: 1e308` must not be a key for life.
 */
export const MAX_TOKEN_LIFETIME_SECONDS = 24 * 3600;
/**
 * Longest accepted token, in characters. Cognito ID tokens with a handful of groups are 1–2 KB;
 * API Gateway caps all request headers at 10 KB anyway. Longer tokens are rejected before any
 * decoding.
 */
export const MAX_TOKEN_LENGTH = 8192;
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
  | 'lifetime'
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
  /** The client id claim (a non-empty string), when one was asked for and the token has it. */
  readonly clientId?: string;
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
  const repeated = Object.entries(multiValueHeaders ?? {}).some(([name, list]) => name.toLowerCase() === 'authorization' && (list?.length ?? 0) > 1);
  // Mutation: `values.length === 0` → `false` is equivalent: without a header `values[0]` is `undefined`, refused as
  // `missing` just the same.
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
    value = parseJson(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new TokenRejected('malformed');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TokenRejected('malformed');
  return value as Record<string, unknown>;
};

// Mutation: `typeof value === 'number'` → `true` is equivalent: `Number.isFinite` is false for every non-number.
const isNumericDate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
// Mutation: either `typeof … === 'string'` → `true` is equivalent: aws-jwt-verify refuses the same values as
// malformed before the key lookup (see precheck).
const isAudience = (aud: unknown): boolean => typeof aud === 'string' || (Array.isArray(aud) && aud.every((a) => typeof a === 'string'));

/**
 * Everything decided without a key: shape, header, issuer, and the types of the claims (a time
 * claim of another type makes the token unreadable, not merely expired). Throws {@link TokenRejected}.
 */
const precheck = (token: string, issuer: string): void => {
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenRejected('too-large');
  if (!COMPACT_JWS.test(token)) throw new TokenRejected('malformed');
  const first = token.indexOf('.');
  const header = decodePart(token.slice(0, first));
  // RFC 7515 §4.1.11: a token that marks extensions critical must be refused by a verifier
  // that does not implement them, and this one implements none.
  if ('crit' in header) throw new TokenRejected('malformed');
  const alg = header['alg'];
  if (typeof alg !== 'string' || !Object.hasOwn(ALGORITHM_FAMILIES, alg)) throw new TokenRejected('algorithm');
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) throw new TokenRejected('unknown-key');
  const payload = decodePart(token.slice(first + 1, token.indexOf('.', first + 1)));
  if (payload['iss'] !== issuer) throw new TokenRejected('issuer');
  const { exp, nbf, iat, aud, sub } = payload;
  // Mutation: the type checks of exp/nbf/iat and aud (here and next line: → `false`, `some` → `every`, list emptied,
  // predicate altered) are equivalent: aws-jwt-verify parses the payload before the key lookup and refuses the same
  // values with a JwtParseError, which `reasonOf` names `malformed` too.
  if ([exp, nbf, iat].some((t) => t !== undefined && !isNumericDate(t))) throw new TokenRejected('malformed');
  if (aud !== undefined && !isAudience(aud)) throw new TokenRejected('malformed');
  // Mutation: `sub !== undefined` → `true` is equivalent: a token without `sub` is refused as `claims` either way
  // (here or by `callerOf`); only whether the key is looked up first differs.
  if (sub !== undefined && typeof sub !== 'string') throw new TokenRejected('claims');
};

/**
 * The checks `aws-jwt-verify` leaves to its `customJwtCheck`, run after the signature and its
 * own claim checks: `exp` required, the exact expiry instant, the lifetime cap, `sub`. Returns
 * the caller. Throws {@link TokenRejected}.
 */
export const callerOf = (payload: Readonly<Record<string, unknown>>, rolesClaim: string, nowSeconds: number, clientIdClaim?: string): VerifiedCaller => {
  const { exp, nbf, iat, sub } = payload;
  // Without `exp` a token would never expire.
  if (!isNumericDate(exp)) throw new TokenRejected('claims');
  // The library accepts up to and including `exp + grace`; RFC 7519 refuses "on or after".
  if (exp + CLOCK_SKEW_SECONDS <= nowSeconds) throw new TokenRejected('expired');
  // RFC 7519: accepted "on or after" `nbf`, here from `nbf − skew` on (as the library does).
  if (isNumericDate(nbf) && nbf - CLOCK_SKEW_SECONDS > nowSeconds) throw new TokenRejected('not-yet-valid');
  if (exp - nowSeconds > MAX_TOKEN_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) throw new TokenRejected('lifetime');
  if (isNumericDate(iat) && exp - iat > MAX_TOKEN_LIFETIME_SECONDS) throw new TokenRejected('lifetime');
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > MAX_SUB_LENGTH) throw new TokenRejected('claims');
  const clientId = clientIdClaim === undefined ? undefined : payload[clientIdClaim];
  return { sub, roles: rolesFromClaim(payload[rolesClaim]), ...(typeof clientId === 'string' && clientId ? { clientId } : {}) };
};

/** The reason for a refusal raised inside `aws-jwt-verify`; undefined for errors that are not about the token. */
const reasonOf = (err: unknown): RejectReason | undefined => {
  if (err instanceof JwtInvalidSignatureError || err instanceof SignatureLengthMismatch) return 'signature';
  if (err instanceof JwtInvalidSignatureAlgorithmError || err instanceof JwkInvalidKtyError || err instanceof JwkFamilyMismatch) return 'algorithm';
  if (err instanceof JwtExpiredError) return 'expired';
  if (err instanceof JwtNotBeforeError) return 'not-yet-valid';
  // Mutation: → `false` is equivalent: `precheck` compares `iss` with the same issuer first, so the library never
  // raises it.
  if (err instanceof JwtInvalidIssuerError) return 'issuer';
  if (err instanceof JwtInvalidAudienceError) return 'audience';
  if (err instanceof JwtParseError) return 'malformed';
  if (err instanceof KidNotFoundInJwksError || err instanceof JwtWithoutValidKidError) return 'unknown-key';
  return undefined;
};

/** The JWKS could not be (re)fetched: rate-limited, network, status, size, or not a JWKS. */
const isJwksUnavailable = (err: unknown): boolean =>
  err instanceof JwksRateLimitedError ||
  err instanceof JwksFetchError ||
  err instanceof FetchError ||
  err instanceof JwksValidationError ||
  err instanceof WaitPeriodNotYetEndedJwkError;

export interface TokenVerifier {
  /** Verifies a bearer token; throws {@link TokenRejected} or {@link IssuerKeysUnavailable}. */
  verify(token: string): Promise<VerifiedCaller>;
  /** The container's JWKS cache and fetcher. */
  readonly jwks: IssuerJwksCache;
}

/**
 * One verifier per container: it owns the JWKS cache, so create it at module scope. `now` is
 * the clock of the token's time checks, epoch milliseconds (tests pin it; see the module comment).
 */
export const createTokenVerifier = (
  config: AuthorizerConfig,
  jwksOptions: RateLimitedFetcherOptions = {},
  now: () => number = () => Date.now(),
): TokenVerifier => {
  const jwks = new IssuerJwksCache({ ...jwksOptions, ...(config.pinnedJwks ? { pinned: config.pinnedJwks } : {}) });
  const verifier = JwtVerifier.create(
    { issuer: config.issuer, audience: [...config.audience], jwksUri: config.jwksUrl, graceSeconds: CLOCK_SKEW_SECONDS },
    { jwksCache: jwks },
  );
  return {
    jwks,
    async verify(token) {
      precheck(token, config.issuer);
      let caller: VerifiedCaller | undefined;
      try {
        await verifier.verify(token, {
          customJwtCheck: ({ payload }) => {
            // Read once, after the key was fetched: every check of step 4 sees the same instant.
            caller = callerOf(payload, config.rolesClaim, now() / 1000, config.usage?.claim);
          },
        });
      } catch (err) {
        // Mutation: → `false` is equivalent: such an error is neither a JWKS failure nor one `reasonOf` names, so the
        // final `throw err` throws the same object.
        if (err instanceof TokenRejected) throw err;
        if (isJwksUnavailable(err)) {
          // With no keys ever fetched, nothing can be verified at all: the service is at fault.
          if (!jwks.hasKeys()) throw new IssuerKeysUnavailable();
          throw new TokenRejected('unknown-key');
        }
        const reason = reasonOf(err);
        if (reason === undefined) throw err;
        throw new TokenRejected(reason);
      }
      // customJwtCheck ran: the library calls it last, after every check passed.
      return caller!;
    },
  };
};
