/**
 * The whole secrets path as the relay meets it: adapters written through the handlers, their
 * references resolved by the configured `secretResolver` (AppRole login, credential from a
 * Secrets Manager stand-in, Vault-compatible server on loopback), token renewal on 403, a
 * missing secret, `$ENC` at run time, and no secret in any log line of the whole flow.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CachingSecretResolver } from '../../functions/outbound/secrets/resolve.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { startSecretsManagerSimulator, type SecretsManagerSimulator } from '../../tools/simulators/secrets-manager-simulator.js';
import { createTables } from '../../tools/local/table-copies.js';
import { startVaultSimulator, type VaultSimulator } from '../../tools/simulators/vault-simulator.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
let put: Handler, get: Handler, list: Handler, del: Handler;
let resolver: CachingSecretResolver;
let errors: typeof import('../../functions/outbound/secrets/errors.js');
let vault: VaultSimulator;
let sm: SecretsManagerSimulator;

const SECRET_ID = 'approle-secret-id-7f3e9a';
const PASSWORDS = ['Pl41n-Passw0rd-one', 'Pl41n-Passw0rd-two', 'Pl41n-Passw0rd-sealed', 'Pl41n-Passw0rd-badurl'];
const ENC_VALUE = '$ENC(c2VjcmV0LWVuY3J5cHRlZA==)';
const output: string[] = [];

beforeAll(async () => {
  await createTables();
  vault = await startVaultSimulator();
  sm = await startSecretsManagerSimulator();
  vault.addAppRole('relay-role', SECRET_ID);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.url,
    SECRETS_BACKEND: 'vault',
    VAULT_ADDR: vault.url,
    VAULT_MOUNT: 'secret',
    VAULT_AUTH_METHOD: 'approle',
    VAULT_ROLE_ID: 'relay-role',
    VAULT_CREDENTIALS_SECRET_ARN: sm.set('netconfig/vault-approle', SECRET_ID),
    SECRETS_ACCESS: 'write',
    SECRETS_CACHE_TTL_SECONDS: '60',
    LOG_LEVEL: 'debug',
  });
  // Every line any logger writes during the flow, from here on.
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  put = (await import('../../functions/adapters/handlers/put.js')).handler as unknown as Handler;
  get = (await import('../../functions/adapters/handlers/get.js')).handler as unknown as Handler;
  list = (await import('../../functions/adapters/handlers/list.js')).handler as unknown as Handler;
  del = (await import('../../functions/adapters/handlers/delete.js')).handler as unknown as Handler;
  resolver = (await import('../../functions/outbound/secrets/resolver.js')).secretResolver;
  errors = await import('../../functions/outbound/secrets/errors.js');
});

afterAll(async () => {
  vi.restoreAllMocks();
  await vault.close();
  await sm.close();
});

const adapter = (password: string, baseUrl = 'https://nso.example.net:8888') => ({
  type: 'nso',
  baseUrl,
  auth: { type: 'basic', username: 'relay', password },
});
const putAdapter = (name: string, payload: unknown) =>
  invoke(put, apiEvent({ method: 'PUT', resource: '/adapters/{name}', pathParameters: { name: encodeURIComponent(name) }, body: payload }));
const reads = (path: string) => vault.requests.filter((r) => r.method === 'GET' && r.path === `secret/data/${path}`).length;

describe('resolving adapter secrets at call time', () => {
  // The reference of the version the service stored; set by the first test.
  let REF = '';
  let PATH = '';

  it('resolves the reference of a stored adapter, logging in with AppRole once', async () => {
    expect((await putAdapter('edge nso', adapter(PASSWORDS[0]!))).status).toBe(201);
    const stored = await invoke(get, apiEvent({ method: 'GET', resource: '/adapters/{name}', pathParameters: { name: 'edge%20nso' } }));
    REF = (stored.body as { auth: { password: string } }).auth.password;
    expect(REF).toMatch(/^\$VAULT_netconfig\/adapters\/edge nso\/v[0-9a-z-]+#password$/);
    PATH = REF.slice('$VAULT_'.length, -'#password'.length);
    await expect(resolver.resolve(REF)).resolves.toBe(PASSWORDS[0]);
    expect(vault.requests.filter((r) => r.path === 'auth/approle/login')).toHaveLength(1);
  });

  it('caches the value briefly: a second resolve does not read Vault', async () => {
    const before = reads(PATH);
    await expect(resolver.resolve(REF)).resolves.toBe(PASSWORDS[0]);
    expect(reads(PATH)).toBe(before);
  });

  it('renews the token when Vault answers 403 and still resolves', async () => {
    vault.revokeAllTokens();
    resolver.forget();
    await expect(resolver.resolve(REF)).resolves.toBe(PASSWORDS[0]);
    const tail = vault.requests.slice(-3).map((r) => `${r.path} ${r.status}`);
    expect(tail).toEqual([`secret/data/${PATH} 403`, 'auth/approle/login 200', `secret/data/${PATH} 200`]);
  });

  it('resolves the new password after a replacement: a new reference, which no cache holds', async () => {
    const replaced = await putAdapter('edge nso', adapter(PASSWORDS[1]!));
    expect(replaced.status).toBe(200);
    const next = (replaced.body as { auth: { password: string } }).auth.password;
    expect(next).not.toBe(REF);
    await expect(resolver.resolve(next)).resolves.toBe(PASSWORDS[1]);
    REF = next;
  });

  it('fails with secret-missing (500), never an empty password, once the secret is gone', async () => {
    expect((await invoke(del, apiEvent({ method: 'DELETE', resource: '/adapters/{name}', pathParameters: { name: 'edge%20nso' } }))).status).toBe(204);
    resolver.forget();
    const error = await resolver.resolve(REF).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.SecretMissing);
    expect((error as InstanceType<typeof errors.SecretMissing>).status).toBe(500);
  });

  it('fails clearly for a $ENC value met at run time', async () => {
    const error = await resolver.resolve(ENC_VALUE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.SecretReferenceInvalid);
    expect((error as Error).message).toContain('$ENC was removed in 2021.2');
  });

  it('fails with 503 while Vault is sealed', async () => {
    vault.put('team/sealed', { password: 'x' });
    vault.sealed = true;
    try {
      await expect(resolver.resolve('$VAULT_team/sealed')).rejects.toBeInstanceOf(errors.SecretsUnavailable);
    } finally {
      vault.sealed = false;
    }
  });

  it('writes no secret to any log line during the whole flow, failures included', async () => {
    // More of the flow: rejected and failed writes, listing, a debug-level logger.
    expect((await putAdapter('enc', adapter(ENC_VALUE))).status).toBe(400);
    vault.sealed = true;
    expect((await putAdapter('sealed', adapter(PASSWORDS[2]!))).status).toBe(503);
    vault.sealed = false;
    expect((await putAdapter('bad url', adapter(PASSWORDS[3]!, 'http://169.254.169.254'))).status).toBe(400);
    expect((await invoke(list, apiEvent({ method: 'GET', resource: '/adapters' }))).status).toBe(200);

    const logs = output.join('');
    // The capture works: the flow's own lines are there.
    expect(logs).toContain('adapter stored');
    expect(logs).toContain('renewing it');
    const tokens = [...new Set(vault.requests.map((r) => r.token).filter((t): t is string => !!t))];
    expect(tokens.length).toBeGreaterThan(1);
    for (const secret of [...PASSWORDS, ENC_VALUE, 'c2VjcmV0LWVuY3J5cHRlZA', SECRET_ID, ...tokens]) {
      expect(logs.includes(secret), `a log line holds ${secret.slice(0, 6)}…`).toBe(false);
    }
    for (const line of logs.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });
});
