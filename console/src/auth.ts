/**
 * Sign-in with the configured identity provider: OIDC authorization code with PKCE (S256) as a
 * public client. Tokens live in this module only (memory): a reload signs in again, which the
 * provider's session makes a redirect without a prompt. During the redirect, sessionStorage holds
 * the state, the PKCE verifier and the page to come back to, and nothing else; they are removed
 * on return, and the code and state are taken out of the address bar at once.
 */
import {
  apiBaseOf,
  authorizeUrl,
  callbackCode,
  codeChallenge,
  displayName,
  jwtPayload,
  type PendingSignIn,
  randomToken,
  redirectUriOf,
  refreshDelay,
  rolesOf,
} from './pkce.js';
import type { ConsoleConfig } from '../../functions/console/model.js';

/** Who is signed in, as the ID token says. */
export interface Session {
  readonly name: string;
  readonly roles: readonly string[];
}

interface Tokens {
  readonly idToken: string;
  readonly refreshToken?: string;
}

const PENDING_KEY = 'console.signin';

let config: ConsoleConfig | undefined;
let tokens: Tokens | undefined;
let session: Session | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<() => void>();

/** The API's base path, e.g. `/v1`: the console page's path without `/console`. */
export const apiBase = (): string => apiBaseOf(location.pathname);

/** The signed-in user, or undefined when signed out. */
export const currentSession = (): Session | undefined => session;

/** The bearer token for API calls: the ID token (its `aud` is the console's client id). */
export const bearerToken = (): string | undefined => tokens?.idToken;

/** Calls `listener` whenever the sign-in state changes; answers the unsubscribe function. */
export const onSessionChange = (listener: () => void): (() => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

const loadConfig = async (): Promise<ConsoleConfig> => {
  if (config) return config;
  const response = await fetch(`${apiBase()}/console/config.json`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`The console's sign-in settings could not be read (HTTP ${response.status}).`);
  config = (await response.json()) as ConsoleConfig;
  return config;
};

/** Sends the browser to the identity provider's sign-in page. */
export const signIn = async (): Promise<void> => {
  const settings = await loadConfig();
  const state = randomToken();
  const verifier = randomToken();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ state, verifier, hash: location.hash }));
  location.assign(authorizeUrl(settings, { redirectUri: redirectUriOf(location), state, challenge: await codeChallenge(verifier) }));
};

const tokenRequest = async (body: Record<string, string>): Promise<Tokens> => {
  const settings = await loadConfig();
  const response = await fetch(settings.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ ...body, client_id: settings.clientId }).toString(),
  });
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof answer['id_token'] !== 'string') {
    const reason = typeof answer['error_description'] === 'string' ? answer['error_description'] : answer['error'];
    throw new Error(`The identity provider refused the sign-in${typeof reason === 'string' ? `: ${reason}` : ''}.`);
  }
  const refreshToken = typeof answer['refresh_token'] === 'string' ? answer['refresh_token'] : body['refresh_token'];
  return { idToken: answer['id_token'], ...(refreshToken ? { refreshToken } : {}) };
};

const adopt = (next: Tokens): void => {
  const settings = config as ConsoleConfig;
  const payload = jwtPayload(next.idToken) ?? {};
  tokens = next;
  session = { name: displayName(payload), roles: rolesOf(payload[settings.rolesClaim]) };
  clearTimeout(refreshTimer);
  const exp = payload['exp'];
  if (typeof exp === 'number') {
    const iat = typeof payload['iat'] === 'number' ? payload['iat'] : undefined;
    refreshTimer = setTimeout(() => void refresh(), refreshDelay(exp, iat, Date.now()));
  }
  for (const listener of listeners) listener();
};

/** Exchanges the refresh token for fresh tokens shortly before the ID token expires; signs in again if that fails. */
const refresh = async (): Promise<void> => {
  const refreshToken = tokens?.refreshToken;
  try {
    if (!refreshToken) throw new Error('no refresh token');
    adopt(await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }));
  } catch {
    await signIn();
  }
};

/**
 * Completes a sign-in when the page is the provider's redirect (`?code=…&state=…`): checks the
 * state against the one stored before the redirect, redeems the code with the PKCE verifier and
 * removes code and state from the address. Answers whether someone is signed in afterwards.
 */
export const completeSignIn = async (): Promise<boolean> => {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return session !== undefined;
  const kept = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const pending = kept ? (JSON.parse(kept) as PendingSignIn) : undefined;
  // The code and state leave the address bar (and the history) before anything else happens.
  history.replaceState(null, '', `${location.pathname}${pending?.hash ?? location.hash}`);
  await loadConfig();
  const { code, verifier } = callbackCode(params, pending);
  adopt(await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: redirectUriOf(location), code_verifier: verifier }));
  return true;
};

/** Forgets the tokens, and ends the provider's session too when it has an end-session endpoint. */
export const signOut = async (): Promise<void> => {
  tokens = undefined;
  session = undefined;
  clearTimeout(refreshTimer);
  for (const listener of listeners) listener();
  const settings = await loadConfig();
  if (!settings.endSessionEndpoint) return;
  const url = new URL(settings.endSessionEndpoint);
  const back = redirectUriOf(location);
  // Cognito's /logout reads client_id and logout_uri; OIDC RP-initiated logout client_id and
  // post_logout_redirect_uri. Never the ID token (`id_token_hint`): in an address it would be
  // kept in history and logs, and it stays valid until it expires.
  url.search = new URLSearchParams({
    client_id: settings.clientId,
    logout_uri: back,
    post_logout_redirect_uri: back,
  }).toString();
  location.assign(url.toString());
};

/** The API refused the token (401): forget it and sign in again. */
export const tokenRejected = async (): Promise<void> => {
  tokens = undefined;
  session = undefined;
  await signIn();
};
