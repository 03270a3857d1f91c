/**
 * The local sign-in (local mode only): Cognito's hosted-UI paths on the local gateway, so that
 * the web console signs in locally exactly as it does against Cognito. OIDC authorization code
 * with PKCE (S256) for one public client, the local audience:
 *
 * - `GET /oauth2/authorize` answers a page "Sign in (local)" with one button per sample user
 *   (a form, no script);
 * - `POST /oauth2/authorize` redirects to the console with a code;
 * - `POST /oauth2/token` exchanges a code (with its verifier) or a refresh token for tokens
 *   signed by the local issuer (`issuer.ts`), which the local authorizer accepts.
 *
 * A code is single-use, lives a minute and is bound to the client, the redirect URI and the
 * challenge. The only redirect URI is the console's own URL: never an open redirect.
 */
import { createHash, randomBytes } from 'node:crypto';
import { escapeHtml } from '../../functions/console/model.js';
import type { ExtraAnswer, ExtraRequest } from '../local/gateway.js';
import { DEFAULT_TTL_SECONDS, mintToken } from './issuer.js';

/** The sample users and their roles. */
export const SIGN_IN_USERS: Readonly<Record<string, { readonly roles: readonly string[]; readonly name: string }>> = {
  admin: { roles: ['admin'], name: 'Local admin' },
  apiread: { roles: ['apiread'], name: 'Local reader' },
};
/** How long a code may wait for its exchange. */
export const CODE_TTL_MS = 60_000;

export interface SignInOptions {
  /** The console's URL, the only redirect URI, e.g. `http://127.0.0.1:3000/v1/console`. */
  readonly consoleUrl: string;
  /** The console's client id (the local audience). */
  readonly clientId: string;
  /** The issuer's key directory. */
  readonly issuerDir: string;
  /** Lifetime of the ID and access tokens, seconds; default an hour. */
  readonly ttlSeconds?: number;
  readonly now?: () => number;
}

interface Grant {
  readonly user: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly challenge: string;
  readonly scope: string;
  readonly expiresAt: number;
}

const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};
const page = (status: number, title: string, body: string): ExtraAnswer => ({
  statusCode: status,
  headers: PAGE_HEADERS,
  body: `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>\n`,
});
/** An RFC 6749 §5.2 error. */
const oauthError = (error: string, description: string, status = 400): ExtraAnswer => ({
  statusCode: status,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
  body: JSON.stringify({ error, error_description: description }),
});
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** The local sign-in's three endpoints, with their codes and refresh tokens in memory. */
export const localSignIn = (options: SignInOptions) => {
  const now = options.now ?? Date.now;
  const codes = new Map<string, Grant>();
  const refreshTokens = new Map<string, { user: string; clientId: string }>();
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;

  /** The authorization request's parameters, or why it is refused (never redirected: the client or its redirect URI may be foreign). */
  const authorizationRequest = (params: URLSearchParams): { fields: Record<string, string> } | { refused: string } => {
    const get = (name: string) => params.get(name) ?? '';
    if (get('client_id') !== options.clientId) return { refused: 'Unknown client_id.' };
    if (get('redirect_uri') !== options.consoleUrl) return { refused: `redirect_uri must be the console's URL, ${options.consoleUrl}.` };
    if (get('response_type') !== 'code') return { refused: 'response_type must be "code".' };
    if (get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(get('code_challenge')))
      return { refused: 'A code_challenge with code_challenge_method S256 is required.' };
    if (!get('scope').split(' ').includes('openid')) return { refused: 'scope must include "openid".' };
    const fields = Object.fromEntries(
      ['client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'scope', 'response_type'].map((k) => [k, get(k)]),
    );
    return { fields };
  };

  const tokens = (user: string, refreshToken: string): ExtraAnswer => {
    const profile = SIGN_IN_USERS[user]!;
    const token = mintToken({
      roles: profile.roles,
      sub: user,
      ttlSeconds,
      dir: options.issuerDir,
      claims: { name: profile.name, email: `${user}@netconfig.local` },
    });
    return {
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache' },
      body: JSON.stringify({ id_token: token, access_token: token, refresh_token: refreshToken, token_type: 'Bearer', expires_in: ttlSeconds }),
    };
  };

  const showPage = (request: ExtraRequest): ExtraAnswer => {
    const checked = authorizationRequest(request.query);
    if ('refused' in checked) return page(400, 'Sign-in refused', `<p>${escapeHtml(checked.refused)}</p>`);
    const hidden = Object.entries(checked.fields)
      .map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v)}">`)
      .join('');
    const buttons = Object.keys(SIGN_IN_USERS)
      .map((user) => `<p><button type="submit" name="user" value="${user}">Sign in as ${user}</button></p>`)
      .join('');
    return page(200, 'Sign in (local)', `<p>The local stack's sample users.</p><form method="post" action="/oauth2/authorize">${hidden}${buttons}</form>`);
  };

  const grantCode = (request: ExtraRequest): ExtraAnswer => {
    const form = new URLSearchParams(request.body.toString('utf8'));
    const checked = authorizationRequest(form);
    if ('refused' in checked) return page(400, 'Sign-in refused', `<p>${escapeHtml(checked.refused)}</p>`);
    const user = form.get('user') ?? '';
    if (!Object.hasOwn(SIGN_IN_USERS, user)) return page(400, 'Sign-in refused', '<p>Unknown user.</p>');
    const code = randomBytes(24).toString('base64url');
    const f = checked.fields;
    codes.set(code, {
      user,
      clientId: f['client_id']!,
      redirectUri: f['redirect_uri']!,
      challenge: f['code_challenge']!,
      scope: f['scope']!,
      expiresAt: now() + CODE_TTL_MS,
    });
    const target = new URL(f['redirect_uri']!);
    target.searchParams.set('code', code);
    if (f['state']) target.searchParams.set('state', f['state']);
    return { statusCode: 302, headers: { Location: target.href, 'Cache-Control': 'no-store' }, body: '' };
  };

  const exchange = (request: ExtraRequest): ExtraAnswer => {
    const type = String(request.headers['content-type'] ?? '');
    if (!type.startsWith('application/x-www-form-urlencoded')) return oauthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
    const form = new URLSearchParams(request.body.toString('utf8'));
    if (form.get('client_id') !== options.clientId) return oauthError('invalid_client', 'Unknown client_id.', 401);
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const grant = codes.get(code);
      // Single-use: gone after this attempt, whatever its outcome.
      codes.delete(code);
      if (!grant || grant.expiresAt <= now()) return oauthError('invalid_grant', 'The code is unknown, used or expired.');
      if (grant.clientId !== options.clientId || form.get('redirect_uri') !== grant.redirectUri)
        return oauthError('invalid_grant', 'The code was issued to another client or redirect_uri.');
      const verifier = form.get('code_verifier') ?? '';
      if (!PKCE_VALUE.test(verifier) || s256(verifier) !== grant.challenge)
        return oauthError('invalid_grant', 'The code_verifier does not match the code_challenge.');
      const refreshToken = randomBytes(32).toString('base64url');
      refreshTokens.set(refreshToken, { user: grant.user, clientId: grant.clientId });
      return tokens(grant.user, refreshToken);
    }
    if (grantType === 'refresh_token') {
      const refreshToken = form.get('refresh_token') ?? '';
      const held = refreshTokens.get(refreshToken);
      if (!held || held.clientId !== options.clientId) return oauthError('invalid_grant', 'The refresh token is unknown.');
      return tokens(held.user, refreshToken);
    }
    return oauthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  };

  return {
    /** The routes the local gateway serves beside the API. */
    routes: [
      { method: 'GET', path: '/oauth2/authorize', handle: showPage },
      { method: 'POST', path: '/oauth2/authorize', handle: grantCode },
      { method: 'POST', path: '/oauth2/token', handle: exchange },
    ],
  };
};
