/**
 * The secrets backend described by the environment (set by the stack's `Secrets` construct):
 *
 * | Variable | Meaning |
 * |---|---|
 * | `SECRETS_BACKEND` | `vault` or `local` (required) |
 * | `SECRETS_FILE` | local: the store file (required for `local`) |
 * | `VAULT_ADDR` | vault: address, e.g. `https://vault.example.net:8200` |
 * | `VAULT_MOUNT` | vault: KV v2 mount, default `secret` |
 * | `VAULT_AUTH_METHOD` | vault: `token` (default) or `approle` |
 * | `VAULT_ROLE_ID` | vault, approle: the role id (not a secret) |
 * | `VAULT_CREDENTIALS_SECRET_ARN` | vault: Secrets Manager secret holding the token or the AppRole secret id |
 * | `VAULT_NAMESPACE` | vault: optional Enterprise/HCP namespace |
 * | `VAULT_TIMEOUT_MS` | vault: per-request limit, default 3000 |
 * | `SECRETS_ACCESS` | `read` (default) or `write` |
 * | `SECRETS_CACHE_TTL_SECONDS` | how long a resolved value is reused, default 60, 0 disables |
 */
import { integerEnv, optionalEnv, requiredEnv } from '../../platform/env.js';
import { withAccess, type SecretsAccess, type SecretsBackend } from './backend.js';
import { secretsManagerCredential } from './credentials.js';
import { createLocalBackend } from './local.js';
import { createVaultBackend } from './vault.js';

const oneOf = <T extends string>(name: string, value: string, allowed: readonly T[]): T => {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`configuration error: ${name} must be one of ${allowed.join(', ')}, got ${value}`);
};

/** Builds the backend from the environment; throws a clear configuration error when it is incomplete. */
export const backendFromEnv = (): SecretsBackend => {
  const kind = oneOf('SECRETS_BACKEND', requiredEnv('SECRETS_BACKEND'), ['vault', 'local'] as const);
  const access = oneOf<SecretsAccess>('SECRETS_ACCESS', optionalEnv('SECRETS_ACCESS', 'read'), ['read', 'write']);
  if (kind === 'local') return withAccess(createLocalBackend({ file: requiredEnv('SECRETS_FILE') }), access);

  const method = oneOf('VAULT_AUTH_METHOD', optionalEnv('VAULT_AUTH_METHOD', 'token'), ['token', 'approle'] as const);
  const credential = secretsManagerCredential(requiredEnv('VAULT_CREDENTIALS_SECRET_ARN'));
  const namespace = optionalEnv('VAULT_NAMESPACE', '');
  return withAccess(
    createVaultBackend({
      address: requiredEnv('VAULT_ADDR'),
      mount: optionalEnv('VAULT_MOUNT', 'secret'),
      ...(namespace ? { namespace } : {}),
      timeoutMs: integerEnv('VAULT_TIMEOUT_MS', 3_000, 100, 10_000),
      auth: method === 'token' ? { method, token: credential } : { method, roleId: requiredEnv('VAULT_ROLE_ID'), secretId: credential },
    }),
    access,
  );
};

/** How long a resolved value is reused in a warm container, in ms. */
export const cacheTtlFromEnv = (): number => integerEnv('SECRETS_CACHE_TTL_SECONDS', 60, 0, 3_600) * 1000;
