/**
 * The pure parts of the sign-in: PKCE values (RFC 7636, S256) and reading a JWT's payload.
 * Kept free of the DOM so they run under Node in the unit tests; `crypto` is the Web Crypto
 * global both the browser and Node provide.
 */

/** Base64url without padding (RFC 4648 §5) of some bytes. */
export const base64Url = (bytes: Uint8Array): string => {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

/** A random URL-safe string of `bytes` random bytes (the PKCE verifier is 32 bytes: 43 characters). */
export const randomToken = (bytes = 32): string => base64Url(crypto.getRandomValues(new Uint8Array(bytes)));

/** The S256 code challenge of a verifier: base64url(SHA-256(ASCII(verifier))). */
export const codeChallenge = async (verifier: string): Promise<string> =>
  base64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));

/**
 * The payload of a compact JWT, decoded without checking the signature: the console reads it
 * only to show who is signed in, hide actions the role cannot take and time the refresh; the API
 * verifies every token it is sent. Answers undefined for anything that is not a JWT.
 */
export const jwtPayload = (token: string): Record<string, unknown> | undefined => {
  const part = token.split('.')[1];
  if (!part || token.split('.').length !== 3) return undefined;
  try {
    const padded = part
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(part.length / 4) * 4, '=');
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** The role names in a claim: a list of strings (Cognito groups), or one space or comma separated string. */
export const rolesOf = (claim: unknown): string[] => {
  if (Array.isArray(claim)) return claim.filter((v): v is string => typeof v === 'string');
  if (typeof claim === 'string') return claim.split(/[\s,]+/).filter(Boolean);
  return [];
};

/** Who a token names, for the header: `name`, then `cognito:username`, `email`, `preferred_username`, `sub`. */
export const displayName = (payload: Record<string, unknown>): string => {
  for (const key of ['name', 'cognito:username', 'preferred_username', 'email', 'sub']) {
    const value = payload[key];
    if (typeof value === 'string' && value) return value;
  }
  return 'unknown user';
};

/**
 * Milliseconds from `nowMs` until a token expiring at `exp` (seconds) should be refreshed:
 * `marginSeconds` before it expires (or halfway, for a token shorter-lived than twice the margin),
 * never negative.
 */
export const refreshDelay = (exp: number, iat: number | undefined, nowMs: number, marginSeconds = 60): number => {
  const lifetime = iat !== undefined ? exp - iat : Number.POSITIVE_INFINITY;
  const margin = Math.min(marginSeconds, lifetime / 2);
  return Math.max(0, Math.floor((exp - margin) * 1000 - nowMs));
};

/** The redirect URI of a console page: its origin and path, without query or fragment. */
export const redirectUriOf = (location: { readonly origin: string; readonly pathname: string }): string => `${location.origin}${location.pathname}`;

/** The API base of a console page: its path without the trailing `/console` (e.g. `/v1`). */
export const apiBaseOf = (pathname: string): string => pathname.replace(/\/console\/?$/, '');

/** The parts of the sign-in settings the authorization request needs. */
export interface AuthorizeSettings {
  readonly authorizationEndpoint: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
}

/** The authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4.3) the browser is sent to. */
export const authorizeUrl = (settings: AuthorizeSettings, request: { redirectUri: string; state: string; challenge: string }): string => {
  const url = new URL(settings.authorizationEndpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: request.redirectUri,
    scope: settings.scopes.join(' '),
    state: request.state,
    code_challenge: request.challenge,
    code_challenge_method: 'S256',
  }).toString();
  return url.toString();
};

/** What was kept in sessionStorage across the redirect. */
export interface PendingSignIn {
  readonly state: string;
  readonly verifier: string;
  readonly hash: string;
}

/**
 * The authorization code of a redirect back from the provider and the PKCE verifier to redeem it
 * with, once its `state` matches the one this tab stored before leaving (so a code injected from
 * elsewhere is refused); throws a sentence for people on a provider error or a mismatch.
 */
export const callbackCode = (params: URLSearchParams, pending: PendingSignIn | undefined): { code: string; verifier: string } => {
  const error = params.get('error');
  // Only the error code, and only when it looks like one: the address is anyone's to write, and
  // free text shown on the console's own page would read as the console speaking.
  if (error) throw new Error(`The identity provider refused the sign-in${/^[a-z_]{1,64}$/.test(error) ? ` (${error})` : ''}. Sign in again.`);
  const code = params.get('code');
  const state = params.get('state');
  if (!code || !pending || !state || state !== pending.state) {
    throw new Error('The sign-in answer does not belong to this browser tab (its state does not match). Sign in again.');
  }
  return { code, verifier: pending.verifier };
};
