/**
 * The web console's server side: what `GET /console/config.json` answers (the sign-in settings
 * the browser needs), and the headers every console answer carries.
 */

/**
 * How the console signs in: OIDC authorization code with PKCE (S256) as a public client, against
 * the deployment's identity provider (Cognito's hosted UI by default; the local issuer locally).
 */
export interface ConsoleConfig {
  /** Where the browser is sent to sign in (`/oauth2/authorize` of Cognito's hosted UI). */
  readonly authorizationEndpoint: string;
  /** Where the code (and later the refresh token) is exchanged for tokens. */
  readonly tokenEndpoint: string;
  /** The console's client id: the `aud` of the ID tokens it sends as bearer. */
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** The claim of the ID token that lists the caller's roles (what the authorizer reads). */
  readonly rolesClaim: string;
  /** Where signing out ends the provider's session, when it has such an endpoint. */
  readonly endSessionEndpoint?: string;
}

/** The environment variables the stack sets on the console's functions. */
export const CONSOLE_ENV = {
  files: 'CONSOLE_FILES',
  authorizationEndpoint: 'CONSOLE_AUTHORIZATION_ENDPOINT',
  tokenEndpoint: 'CONSOLE_TOKEN_ENDPOINT',
  clientId: 'CONSOLE_CLIENT_ID',
  scopes: 'CONSOLE_SCOPES',
  rolesClaim: 'CONSOLE_ROLES_CLAIM',
  endSessionEndpoint: 'CONSOLE_END_SESSION_ENDPOINT',
} as const;

/** Where the built console lies in a function's bundle (relative to its root), and the default of `CONSOLE_FILES`. */
export const CONSOLE_BUNDLE_DIR = 'console';

/** The page and config.json: always revalidated, so that a deployment takes effect at the next load. */
export const NO_CACHE = 'no-cache';
/** A hashed asset: its name changes with its content, so it may be kept for a year. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The Content-Security-Policy of every console answer: the page's own scripts and styles only
 * (no inline code anywhere), API calls to its own origin and the token endpoint's, no frames,
 * no forms, no `<base>`.
 */
export const contentSecurityPolicy = (tokenEndpoint?: string): string => {
  let tokenOrigin = '';
  try {
    if (tokenEndpoint) tokenOrigin = ` ${new URL(tokenEndpoint).origin}`;
  } catch {
    // Not a URL: the config check refuses it at synth; the page then talks to its own origin only.
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${tokenOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
};

/** The headers every console answer carries, beside its own. */
export const securityHeaders = (tokenEndpoint?: string): Record<string, string> => ({
  'Content-Security-Policy': contentSecurityPolicy(tokenEndpoint),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
});

/** The API's base path as the client addressed it (the stage, e.g. `/v1`, or a custom domain's base path): the path less `/console`. */
export const basePathOf = (requestPath: string | undefined): string => {
  const trimmed = (requestPath ?? '').replace(/\/+$/, '');
  const base = trimmed.endsWith('/console') ? trimmed.slice(0, -'/console'.length) : '';
  // A stage name or a custom domain's base path: unreserved characters only; anything else is not one.
  return BASE_PATH.test(base) ? base : '';
};

/** What a base path may be: `/segment` repeated, each segment of URL-unreserved characters. */
const BASE_PATH = /^(?:\/[A-Za-z0-9._~-]+)*$/;

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe inside an HTML attribute value. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** The environment that carries a sign-in configuration to the console's functions ({@link ConsoleConfig}). */
export const consoleEnvironment = (config: ConsoleConfig): Record<string, string> => ({
  [CONSOLE_ENV.files]: CONSOLE_BUNDLE_DIR,
  [CONSOLE_ENV.authorizationEndpoint]: config.authorizationEndpoint,
  [CONSOLE_ENV.tokenEndpoint]: config.tokenEndpoint,
  [CONSOLE_ENV.clientId]: config.clientId,
  [CONSOLE_ENV.scopes]: config.scopes.join(' '),
  [CONSOLE_ENV.rolesClaim]: config.rolesClaim,
  ...(config.endSessionEndpoint ? { [CONSOLE_ENV.endSessionEndpoint]: config.endSessionEndpoint } : {}),
});
