import { afterEach, describe, expect, it } from 'vitest';
import { backendFromEnv, cacheTtlFromEnv } from '../../functions/outbound/secrets/environment.js';

const KEYS = [
  'SECRETS_BACKEND',
  'SECRETS_FILE',
  'SECRETS_ACCESS',
  'VAULT_ADDR',
  'VAULT_MOUNT',
  'VAULT_AUTH_METHOD',
  'VAULT_ROLE_ID',
  'VAULT_CREDENTIALS_SECRET_ARN',
  'SECRETS_CACHE_TTL_SECONDS',
];
const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
const setEnv = (env: Record<string, string>) => {
  for (const k of KEYS) delete process.env[k];
  Object.assign(process.env, env);
};

afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('secrets configuration from the environment', () => {
  it('requires SECRETS_BACKEND and accepts only vault or local', () => {
    setEnv({});
    expect(() => backendFromEnv()).toThrow(/SECRETS_BACKEND is required/);
    setEnv({ SECRETS_BACKEND: 'env' });
    expect(() => backendFromEnv()).toThrow(/SECRETS_BACKEND must be one of vault, local/);
  });

  it('builds the local store from SECRETS_FILE, read-only unless SECRETS_ACCESS=write', async () => {
    setEnv({ SECRETS_BACKEND: 'local' });
    expect(() => backendFromEnv()).toThrow(/SECRETS_FILE/);
    setEnv({ SECRETS_BACKEND: 'local', SECRETS_FILE: '/nonexistent/dir/secrets.json' });
    const backend = backendFromEnv();
    expect(backend.kind).toBe('local');
    await expect(backend.write('a', { password: 'x' })).rejects.toThrow(/read-only/);
  });

  it('builds Vault with the credential from Secrets Manager, never from a plain variable', () => {
    setEnv({ SECRETS_BACKEND: 'vault', VAULT_ADDR: 'https://vault.example.net:8200' });
    expect(() => backendFromEnv()).toThrow(/VAULT_CREDENTIALS_SECRET_ARN/);
    setEnv({ SECRETS_BACKEND: 'vault', VAULT_ADDR: 'https://vault.example.net:8200', VAULT_CREDENTIALS_SECRET_ARN: 'arn:x', VAULT_AUTH_METHOD: 'approle' });
    expect(() => backendFromEnv()).toThrow(/VAULT_ROLE_ID/);
    setEnv({ SECRETS_BACKEND: 'vault', VAULT_ADDR: 'https://vault.example.net:8200', VAULT_CREDENTIALS_SECRET_ARN: 'arn:x', VAULT_AUTH_METHOD: 'kerberos' });
    expect(() => backendFromEnv()).toThrow(/VAULT_AUTH_METHOD must be one of token, approle/);
    setEnv({ SECRETS_BACKEND: 'vault', VAULT_ADDR: 'https://vault.example.net:8200', VAULT_CREDENTIALS_SECRET_ARN: 'arn:x' });
    expect(backendFromEnv().kind).toBe('vault');
  });

  it('reads the cache TTL in seconds, default 60, bounded', () => {
    setEnv({});
    expect(cacheTtlFromEnv()).toBe(60_000);
    setEnv({ SECRETS_CACHE_TTL_SECONDS: '0' });
    expect(cacheTtlFromEnv()).toBe(0);
    setEnv({ SECRETS_CACHE_TTL_SECONDS: '86400' });
    expect(() => cacheTtlFromEnv()).toThrow(/SECRETS_CACHE_TTL_SECONDS/);
  });
});
