/**
 * HashiCorp Vault KV v2 over HTTP.
 *
 * - Read: `GET /v1/<mount>/data/<path>` → `data.data`; 404 (never written, or the latest
 *   version deleted or destroyed) is "no secret".
 * - Write: `POST /v1/<mount>/data/<path>` with `{ "data": {...} }` (a new version).
 * - Delete: `DELETE /v1/<mount>/data/<path>` (soft delete of the latest version; an operator
 *   can `vault kv undelete` it).
 * - Auth: `X-Vault-Token`, either a token, or one obtained by AppRole login
 *   (`POST /v1/auth/approle/login`). The token is kept for the container's life (or until its
 *   lease nearly ends); when Vault answers 403 the token is renewed once (AppRole: a new
 *   login; token: a fresh read of the credential, which may have been rotated) and the call
 *   is retried once.
 */
import { JsonTooDeep, parseJson } from '../../platform/bounded-json.js';
import { createHttpClient, OutboundError, type HttpClient, type OutboundResponse } from '../http-client.js';
import { logger } from '../../platform/logger.js';
import type { SecretData, SecretsBackend } from './backend.js';
import type { CredentialSource } from './credentials.js';
import { SecretsUnavailable } from './errors.js';

export type VaultAuth =
  | { readonly method: 'token'; readonly token: CredentialSource }
  | { readonly method: 'approle'; readonly roleId: string; readonly secretId: CredentialSource /** default `approle` */; readonly mount?: string };

export interface VaultOptions {
  /** Vault's address, e.g. `https://vault.example.net:8200` (a path prefix is kept). */
  readonly address: string;
  /** The KV v2 mount, e.g. `secret` (may be nested: `kv/netconfig`). */
  readonly mount: string;
  /** Vault Enterprise / HCP namespace, sent as `X-Vault-Namespace`. */
  readonly namespace?: string;
  readonly auth: VaultAuth;
  /** Per-request time limit; default 3000 ms. */
  readonly timeoutMs?: number;
  /**
   * The HTTP client; default one of its own (keep-alive, loopback allowed: a Vault agent
   * or Lambda extension on localhost is a normal deployment), trusting the public roots and
   * the private CAs of `NETCONFIG_CA_BUNDLE`.
   */
  readonly client?: HttpClient;
  /** Clock for token lease expiry. */
  readonly now?: () => number;
}

/** Encodes each segment of a slash-separated path for a URL (spaces and the like). */
const encodePath = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

/** A token is renewed this long before its lease ends, so that no call races the expiry. */
const LEASE_MARGIN_MS = 30_000;
/** Vault's answers here are small JSON documents; anything past this is not one. */
const MAX_ANSWER_BYTES = 1024 * 1024;

interface Token {
  readonly value: string;
  /** Epoch ms; Infinity for a token without a lease. */
  readonly expiresAt: number;
}

/** Checks and normalizes a Vault address: http(s), no credentials, no query; trailing `/` dropped. */
export const vaultAddress = (raw: string): string => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('configuration error: VAULT_ADDR is not a URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.search || url.hash) {
    throw new Error('configuration error: VAULT_ADDR must be an http(s) URL without credentials, query or fragment');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
};

/**
 * The backend's methods over one configuration.
 *
 * Longer than 80 lines on purpose: a factory whose short methods share its client, table and
 * caches through the closure; each method is its own unit (and is tested as one).
 */
export const createVaultBackend = (options: VaultOptions): SecretsBackend => {
  const base = new URL(vaultAddress(options.address));
  // Mutation: `/\/+$/` → `/\/$/` is equivalent: `vaultAddress` already removed trailing slashes.
  const prefix = base.pathname.replace(/\/+$/, '');
  const mount = encodePath(options.mount.replace(/^\/+|\/+$/g, ''));
  const timeoutMs = options.timeoutMs ?? 3_000;
  let client = options.client;
  const now = options.now ?? Date.now;
  const auth = options.auth;
  let token: Promise<Token> | undefined;

  const send = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, vaultToken?: string): Promise<OutboundResponse> => {
    const headers: Record<string, string> = { 'X-Vault-Request': 'true' };
    if (vaultToken) headers['X-Vault-Token'] = vaultToken;
    if (options.namespace) headers['X-Vault-Namespace'] = options.namespace;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    client ??= createHttpClient({ allowLoopback: true });
    try {
      return await client.send({
        target: { origin: base, path: `${prefix}/v1/${path}` },
        method,
        headers,
        // Mutation: → `true` is equivalent: `{ body: undefined }` is no body to the HTTP client.
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        timeoutMs,
        maxBodyBytes: MAX_ANSWER_BYTES,
      });
    } catch (error) {
      const reason = error instanceof OutboundError ? (error.code ?? error.failure) : 'network error';
      logger.warn('the secrets store did not answer', { backend: 'vault', method, reason });
      throw new SecretsUnavailable();
    }
  };

  /** Reads a JSON object answer; undefined when the body is not one (the caller treats the store as unavailable). */
  const jsonOf = (response: OutboundResponse): Record<string, unknown> | undefined => {
    try {
      const value = parseJson(response.body.toString('utf8'));
      // Mutation: each check → `true` or joined by `||`, and the `catch` emptied, are equivalent: callers read fields
      // with `?.[…]` and treat a missing one like a missing document; an emptied catch returns `undefined` too.
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    } catch (error) {
      if (error instanceof JsonTooDeep) logger.warn('the secrets store answered with JSON nested too deep', { backend: 'vault', maxDepth: error.maxDepth });
      return undefined;
    }
  };

  const login = async (refreshCredential: boolean): Promise<Token> => {
    if (auth.method === 'token') {
      return { value: await auth.token({ refresh: refreshCredential }), expiresAt: Infinity };
    }
    const attempt = async (refresh: boolean): Promise<OutboundResponse> =>
      send('POST', `auth/${encodePath(auth.mount ?? 'approle')}/login`, { role_id: auth.roleId, secret_id: await auth.secretId({ refresh }) });
    let response = await attempt(refreshCredential);
    // A refused login may mean the secret id was rotated in Secrets Manager: read it again once.
    if ((response.status === 400 || response.status === 403) && !refreshCredential) {
      response = await attempt(true);
    }
    if (response.status !== 200) {
      logger.error('the AppRole login failed', { backend: 'vault', status: response.status });
      throw new SecretsUnavailable();
    }
    const out = jsonOf(response);
    const authBlock = out?.['auth'] as { client_token?: unknown; lease_duration?: unknown } | undefined;
    if (typeof authBlock?.client_token !== 'string' || authBlock.client_token === '') {
      logger.error('the AppRole login answer holds no token', { backend: 'vault' });
      throw new SecretsUnavailable();
    }
    const lease = typeof authBlock.lease_duration === 'number' && authBlock.lease_duration > 0 ? authBlock.lease_duration * 1000 : Infinity;
    logger.info('logged in to the secrets store', { backend: 'vault', method: 'approle' });
    return { value: authBlock.client_token, expiresAt: now() + lease - Math.min(LEASE_MARGIN_MS, lease / 2) };
  };

  /** Starts a login; concurrent callers share it, and a failed one is forgotten. */
  const obtain = (refreshCredential: boolean): Promise<Token> => {
    const next = login(refreshCredential);
    token = next;
    next.catch(() => {
      // Mutation: → `true` is equivalent: every path here first awaits the current token, so a second caller always
      // finds the first one's login and waits for it.
      if (token === next) token = undefined;
    });
    return next;
  };

  /** The token in use, logging in first when there is none or its lease is ending. */
  const validToken = async (): Promise<Token> => {
    const cached = token;
    if (!cached) return obtain(false);
    const current = await cached;
    if (current.expiresAt > now()) return current;
    return token === cached ? obtain(false) : validToken();
  };

  /** A token other than the one Vault just refused (another caller may have renewed it already). */
  const renewedToken = async (refused: Token): Promise<Token> => {
    const cached = token;
    const current = cached ? await cached.catch(() => undefined) : undefined;
    // Mutation: `expiresAt > now()` → `true` or `>=` is equivalent: the other caller's token was obtained moments
    // before, with half its lease ahead or more.
    if (current && current.value !== refused.value && current.expiresAt > now()) return current;
    return obtain(true);
  };

  /** One authenticated call; on 403 renews the token once and retries. */
  const call = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<OutboundResponse> => {
    const first = await validToken();
    let response = await send(method, path, body, first.value);
    if (response.status === 403) {
      logger.info('the secrets store refused the token; renewing it', { backend: 'vault' });
      const second = await renewedToken(first);
      response = await send(method, path, body, second.value);
      if (response.status === 403) {
        logger.error('the secrets store refused the renewed token (check the Vault policy)', { backend: 'vault', method });
        throw new SecretsUnavailable();
      }
    }
    return response;
  };

  const unexpected = (response: OutboundResponse, operation: string): never => {
    logger.warn('the secrets store answered with an unexpected status', { backend: 'vault', operation, status: response.status });
    throw new SecretsUnavailable();
  };

  const dataPath = (path: string): string => `${mount}/data/${encodePath(path)}`;

  return {
    kind: 'vault',

    async read(path: string): Promise<SecretData | undefined> {
      const response = await call('GET', dataPath(path));
      if (response.status === 404) {
        return undefined;
      }
      if (response.status !== 200) return unexpected(response, 'read');
      const out = jsonOf(response);
      const envelope = out?.['data'];
      if (envelope === null || typeof envelope !== 'object' || !('data' in envelope)) {
        logger.warn('the secrets store answered a read with a body that is not KV v2', { backend: 'vault' });
        throw new SecretsUnavailable();
      }
      const data = (envelope as { data: unknown }).data;
      // KV v2 answers `data: null` for a deleted or destroyed version in some versions.
      return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as SecretData) : undefined;
    },

    async write(path: string, data: Readonly<Record<string, string>>): Promise<void> {
      const response = await call('POST', dataPath(path), { data });
      if (response.status !== 200 && response.status !== 204) return unexpected(response, 'write');
    },

    async delete(path: string): Promise<void> {
      const response = await call('DELETE', dataPath(path));
      if (response.status !== 204 && response.status !== 200 && response.status !== 404) return unexpected(response, 'delete');
    },

    async health(): Promise<void> {
      // 200 active, 429 standby, 472/473 DR / performance standby: all serve reads.
      const response = await send('GET', 'sys/health');
      if (![200, 429, 472, 473].includes(response.status)) {
        logger.warn('the secrets store is not healthy', { backend: 'vault', status: response.status });
        throw new SecretsUnavailable();
      }
      await validToken();
    },
  };
};
