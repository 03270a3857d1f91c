/**
 * The Vault KV v2 backend against a Vault-compatible server on loopback, with its credential
 * read from a Secrets Manager stand-in through the real AWS SDK.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { secretsManagerCredential, staticCredential, UNSET_CREDENTIAL, UNSET_DETAIL } from '../../functions/outbound/secrets/credentials.js';
import { SecretMissing, SecretsUnavailable } from '../../functions/outbound/secrets/errors.js';
import { readReference } from '../../functions/outbound/secrets/resolve.js';
import { backendFromEnv } from '../../functions/outbound/secrets/environment.js';
import { createVaultBackend } from '../../functions/outbound/secrets/vault.js';
import { stdoutDuring } from '../support/stdout.js';
import { startSecretsManagerSimulator, type SecretsManagerSimulator } from '../../tools/simulators/secrets-manager-simulator.js';
import { startVaultSimulator, type VaultSimulator } from '../../tools/simulators/vault-simulator.js';

let vault: VaultSimulator;
let sm: SecretsManagerSimulator;

beforeAll(async () => {
  vault = await startVaultSimulator({ mounts: ['secret', 'kv/team'] });
  sm = await startSecretsManagerSimulator();
  process.env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] = sm.url;
});

afterAll(async () => {
  await vault.close();
  await sm.close();
});

beforeEach(() => {
  vault.requests.length = 0;
  vault.deniedPaths.clear();
  vault.sealed = false;
});

const tokenBackend = (token = vault.issueToken(), extra: Partial<Parameters<typeof createVaultBackend>[0]> = {}) =>
  createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'token', token: staticCredential(token) }, ...extra });

describe('Vault KV v2 with a token', () => {
  it('writes a new version and reads its data back', async () => {
    const backend = tokenBackend();
    await backend.write('netconfig/adapters/nso lab', { password: 'pw-1' });
    await backend.write('netconfig/adapters/nso lab', { password: 'pw-2' });
    await expect(backend.read('netconfig/adapters/nso lab')).resolves.toEqual({ password: 'pw-2' });
    expect(vault.read('netconfig/adapters/nso lab')).toEqual({ password: 'pw-2' });
    const write = vault.requests.find((r) => r.method === 'POST');
    expect(write?.path).toBe('secret/data/netconfig/adapters/nso lab');
  });

  it('reads from a nested mount', async () => {
    vault.put('nso', { password: 'nested' }, 'kv/team');
    const backend = createVaultBackend({ address: `${vault.url}/`, mount: '/kv/team/', auth: { method: 'token', token: staticCredential(vault.rootToken) } });
    await expect(readReference(backend, '$VAULT_nso')).resolves.toBe('nested');
  });

  it('treats a never-written path as missing', async () => {
    await expect(tokenBackend().read('nowhere')).resolves.toBeUndefined();
    await expect(readReference(tokenBackend(), '$VAULT_nowhere#password')).rejects.toBeInstanceOf(SecretMissing);
  });

  it('treats a deleted latest version as missing, even though older versions exist', async () => {
    vault.put('rotating', { password: 'v1' });
    vault.put('rotating', { password: 'v2' });
    vault.deleteLatest('rotating');
    await expect(readReference(tokenBackend(), '$VAULT_rotating')).rejects.toBeInstanceOf(SecretMissing);
  });

  it('treats destroyed versions as missing', async () => {
    vault.put('burnt', { password: 'v1' });
    vault.destroyAll('burnt');
    await expect(readReference(tokenBackend(), '$VAULT_burnt')).rejects.toBeInstanceOf(SecretMissing);
  });

  it('soft-deletes on delete, and deleting an absent secret is fine', async () => {
    const backend = tokenBackend();
    await backend.write('gone', { password: 'x' });
    await backend.delete('gone');
    expect(vault.read('gone')).toBeUndefined();
    await expect(backend.delete('never-there')).resolves.toBeUndefined();
  });

  it('sends the namespace header when configured', async () => {
    vault.put('ns', { password: 'x' });
    await tokenBackend(vault.rootToken, { namespace: 'admin/netconfig' }).read('ns');
    expect(vault.requests.at(-1)?.namespace).toBe('admin/netconfig');
  });

  it('answers 503 when the store is sealed, and health says so', async () => {
    const backend = tokenBackend();
    vault.sealed = true;
    await expect(backend.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    await expect(backend.health()).rejects.toBeInstanceOf(SecretsUnavailable);
    vault.sealed = false;
    await expect(backend.health()).resolves.toBeUndefined();
  });

  it('answers 503 when the store fails or is unreachable', async () => {
    const backend = tokenBackend();
    vault.failNext(500);
    await expect(backend.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    const closed = await startVaultSimulator();
    const url = closed.url;
    await closed.close();
    const unreachable = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'token', token: staticCredential('t') } });
    await expect(unreachable.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
  });

  it('re-reads a refused token from Secrets Manager once (it may have been rotated) and retries', async () => {
    const first = vault.issueToken();
    const arn = sm.set('vault-token-rotation', first);
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'token', token: secretsManagerCredential(arn) } });
    vault.put('rot', { password: 'x' });
    await expect(backend.read('rot')).resolves.toEqual({ password: 'x' });
    vault.revokeToken(first);
    sm.set('vault-token-rotation', vault.issueToken());
    await expect(backend.read('rot')).resolves.toEqual({ password: 'x' });
    expect(sm.reads.get('vault-token-rotation')).toBe(2);
    expect(vault.requests.filter((r) => r.path === 'secret/data/rot').map((r) => r.status)).toEqual([200, 403, 200]);
  });

  it('gives up with 503 when the renewed token is refused too (a policy that denies the path)', async () => {
    vault.put('denied', { password: 'x' });
    vault.deniedPaths.add('secret/data/denied');
    const error = await tokenBackend()
      .read('denied')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretsUnavailable);
    expect(vault.requests.filter((r) => r.path === 'secret/data/denied')).toHaveLength(2);
  });

  it('answers 503, not "missing", when a read answer is not KV v2 (e.g. a proxy page)', async () => {
    const proxy = createServer((_, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>login</html>'));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const address = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const backend = createVaultBackend({ address, mount: 'secret', auth: { method: 'token', token: staticCredential('t') } });
      await expect(backend.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('refuses a Vault address with credentials or a query', () => {
    expect(() => createVaultBackend({ address: 'https://u:p@vault', mount: 'secret', auth: { method: 'token', token: staticCredential('t') } })).toThrow(
      /VAULT_ADDR/,
    );
    expect(() => createVaultBackend({ address: 'vault:8200', mount: 'secret', auth: { method: 'token', token: staticCredential('t') } })).toThrow(/VAULT_ADDR/);
  });
});

describe('Vault KV v2 with AppRole', () => {
  it('logs in once with the role id and the secret id from Secrets Manager, then reuses the token', async () => {
    vault.addAppRole('role-a', 'secret-id-a');
    const arn = sm.set('approle-a', 'secret-id-a\n');
    const backend = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'role-a', secretId: secretsManagerCredential(arn) },
    });
    vault.put('approle/x', { password: 'y' });
    await expect(readReference(backend, '$VAULT_approle/x')).resolves.toBe('y');
    await expect(readReference(backend, '$VAULT_approle/x')).resolves.toBe('y');
    expect(vault.requests.filter((r) => r.path === 'auth/approle/login')).toHaveLength(1);
    expect(sm.reads.get('approle-a')).toBe(1);
  });

  it('shares one login among concurrent first calls', async () => {
    vault.addAppRole('role-c', 'sid-c');
    const backend = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'role-c', secretId: staticCredential('sid-c') },
    });
    vault.put('c', { password: 'z' });
    await Promise.all(Array.from({ length: 5 }, () => backend.read('c')));
    expect(vault.requests.filter((r) => r.path === 'auth/approle/login')).toHaveLength(1);
  });

  it('logs in again once when Vault refuses the token (403), and retries the call', async () => {
    vault.addAppRole('role-b', 'sid-b');
    const backend = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'role-b', secretId: staticCredential('sid-b') },
    });
    vault.put('renew', { password: 'p' });
    await backend.read('renew');
    vault.revokeAllTokens();
    await expect(backend.read('renew')).resolves.toEqual({ password: 'p' });
    expect(vault.requests.map((r) => `${r.path} ${r.status}`)).toEqual([
      'auth/approle/login 200',
      'secret/data/renew 200',
      'secret/data/renew 403',
      'auth/approle/login 200',
      'secret/data/renew 200',
    ]);
  });

  it('re-reads a rotated secret id from Secrets Manager when the login is refused', async () => {
    vault.addAppRole('role-r', 'old-sid');
    const arn = sm.set('approle-r', 'old-sid');
    const backend = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'role-r', secretId: secretsManagerCredential(arn) },
    });
    vault.put('r', { password: 'p' });
    await backend.read('r');
    vault.addAppRole('role-r', 'new-sid');
    sm.set('approle-r', 'new-sid');
    vault.revokeAllTokens();
    await expect(backend.read('r')).resolves.toEqual({ password: 'p' });
    expect(sm.reads.get('approle-r')).toBe(2);
  });

  it('answers 503 when the AppRole login is refused', async () => {
    const backend = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'nobody', secretId: staticCredential('wrong') },
    });
    await expect(backend.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
  });

  it('answers 503 when Secrets Manager cannot give the credential', async () => {
    const missing = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'r', secretId: secretsManagerCredential('no-such-secret') },
    });
    await expect(missing.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    const arn = sm.set('flaky', 'sid');
    vault.addAppRole('flaky-role', 'sid');
    sm.failNext(5);
    const flaky = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'flaky-role', secretId: secretsManagerCredential(arn) },
    });
    await expect(flaky.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    sm.failNext(0);
    // The failure was not cached: the next call reads the credential again and succeeds.
    await expect(flaky.read('x')).resolves.toBeUndefined();
  });
});

describe('the Vault credential in Secrets Manager', () => {
  it('is read once, trimmed, shared by concurrent callers, and read again only when asked', async () => {
    const arn = sm.set('cred-shared', '  tok-1 \n');
    const credential = secretsManagerCredential(arn);
    await expect(Promise.all([credential(), credential(), credential({})])).resolves.toEqual(['tok-1', 'tok-1', 'tok-1']);
    expect(sm.reads.get('cred-shared')).toBe(1);
    sm.set('cred-shared', 'tok-2');
    await expect(credential({ refresh: false })).resolves.toBe('tok-1');
    await expect(credential({ refresh: true })).resolves.toBe('tok-2');
    await expect(credential()).resolves.toBe('tok-2');
    expect(sm.reads.get('cred-shared')).toBe(2);
  });

  it('answers 503 for an empty value, says so in the log, and reads again next time', async () => {
    const arn = sm.set('cred-empty', ' \n');
    const credential = secretsManagerCredential(arn);
    const out = await stdoutDuring(() => expect(credential()).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'the Vault credential in Secrets Manager is empty; set its value' }),
    );
    sm.set('cred-empty', 'now-set');
    await expect(credential()).resolves.toBe('now-set');
  });

  it("logs only the HTTP status of a failed read (never the secret's ARN), and reads again next time", async () => {
    const credential = secretsManagerCredential('arn:aws:secretsmanager:eu-west-1:123456789012:secret:absent-XyZ');
    const out = await stdoutDuring(() => expect(credential()).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toEqual([
      expect.objectContaining({ level: 'error', message: 'could not read the Vault credential from Secrets Manager', status: 400 }),
    ]);
    expect(out.raw()).not.toContain('absent');
    const arn = sm.set('cred-flaky', 'tok');
    const flaky = secretsManagerCredential(arn);
    sm.failNext(5);
    await expect(stdoutDuring(() => flaky())).rejects.toBeInstanceOf(SecretsUnavailable);
    sm.failNext(0);
    await expect(flaky()).resolves.toBe('tok');
  });

  it('logs "no answer" when Secrets Manager cannot be reached', async () => {
    const closed = await startSecretsManagerSimulator();
    await closed.close();
    const unreachable = new SecretsManagerClient({ endpoint: closed.url, maxAttempts: 1 });
    const out = await stdoutDuring(() => expect(secretsManagerCredential('x', unreachable)()).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toContainEqual(expect.objectContaining({ status: 'no answer' }));
  });

  it('tries Secrets Manager twice per read, not more', async () => {
    const arn = sm.set('cred-attempts', 'tok');
    sm.failNext(2);
    await expect(stdoutDuring(() => secretsManagerCredential(arn)())).rejects.toBeInstanceOf(SecretsUnavailable);
    expect(sm.reads.get('cred-attempts')).toBeUndefined();
    sm.failNext(1);
    await expect(secretsManagerCredential(arn)()).resolves.toBe('tok');
    sm.failNext(0);
  });

  it('keeps a newer read when an older one fails after it', async () => {
    // The SDK client is replaced here only to order two reads' answers, which no server can.
    const answers: { resolve: (value: { SecretString: string }) => void; reject: (error: Error) => void }[] = [];
    const client = { send: () => new Promise((resolve, reject) => answers.push({ resolve, reject })) } as unknown as SecretsManagerClient;
    const credential = secretsManagerCredential('ordered', client);
    const older = credential();
    const newer = credential({ refresh: true });
    answers[1]!.resolve({ SecretString: 'new' });
    await expect(newer).resolves.toBe('new');
    answers[0]!.reject(new Error('throttled'));
    await expect(stdoutDuring(() => older)).rejects.toBeInstanceOf(SecretsUnavailable);
    await expect(credential()).resolves.toBe('new');
    expect(answers).toHaveLength(2);
  });

  it('a static credential gives its value', async () => {
    await expect(staticCredential('fixed')({ refresh: true })).resolves.toBe('fixed');
  });
});

describe('Vault configured from the environment', () => {
  const KEYS = [
    'SECRETS_BACKEND',
    'SECRETS_ACCESS',
    'VAULT_ADDR',
    'VAULT_MOUNT',
    'VAULT_AUTH_METHOD',
    'VAULT_ROLE_ID',
    'VAULT_CREDENTIALS_SECRET_ARN',
    'VAULT_NAMESPACE',
    'VAULT_TIMEOUT_MS',
  ];
  const withEnv = async (env: Record<string, string>, fn: () => Promise<void>) => {
    const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
    for (const k of KEYS) delete process.env[k];
    Object.assign(process.env, env);
    try {
      await fn();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  };

  it('reads the mount "secret" with the token from Secrets Manager, read-only unless SECRETS_ACCESS=write', async () => {
    const arn = sm.set('env-token', vault.issueToken());
    vault.put('env/a', { password: 'from-env' });
    await withEnv({ SECRETS_BACKEND: 'vault', VAULT_ADDR: vault.url, VAULT_CREDENTIALS_SECRET_ARN: arn }, async () => {
      const backend = backendFromEnv();
      await expect(readReference(backend, '$VAULT_env/a')).resolves.toBe('from-env');
      expect(vault.requests.at(-1)).toMatchObject({ path: 'secret/data/env/a', status: 200 });
      expect(vault.requests.at(-1)).not.toHaveProperty('namespace');
      await expect(backend.write('env/b', { password: 'x' })).rejects.toThrow(/read-only/);
    });
    await withEnv({ SECRETS_BACKEND: 'vault', SECRETS_ACCESS: 'write', VAULT_ADDR: vault.url, VAULT_CREDENTIALS_SECRET_ARN: arn }, async () => {
      await backendFromEnv().write('env/b', { password: 'x' });
      expect(vault.read('env/b')).toEqual({ password: 'x' });
    });
  });

  it('uses VAULT_MOUNT, VAULT_NAMESPACE and an AppRole login with VAULT_ROLE_ID', async () => {
    vault.addAppRole('env-role', 'env-sid');
    const arn = sm.set('env-approle', 'env-sid');
    vault.put('env/c', { password: 'team' }, 'kv/team');
    const env = {
      SECRETS_BACKEND: 'vault',
      VAULT_ADDR: vault.url,
      VAULT_CREDENTIALS_SECRET_ARN: arn,
      VAULT_MOUNT: 'kv/team',
      VAULT_NAMESPACE: 'admin/team',
      VAULT_AUTH_METHOD: 'approle',
      VAULT_ROLE_ID: 'env-role',
      VAULT_TIMEOUT_MS: '10000',
    };
    await withEnv(env, async () => {
      await expect(readReference(backendFromEnv(), '$VAULT_env/c')).resolves.toBe('team');
      expect(vault.requests.map((r) => [r.path, r.status, r.namespace])).toEqual([
        ['auth/approle/login', 200, 'admin/team'],
        ['kv/team/data/env/c', 200, 'admin/team'],
      ]);
    });
    await withEnv({ ...env, VAULT_TIMEOUT_MS: '99' }, async () => {
      expect(() => backendFromEnv()).toThrow('configuration error: VAULT_TIMEOUT_MS must be an integer from 100 to 10000, got 99');
    });
    await withEnv({ ...env, SECRETS_ACCESS: 'admin' }, async () => {
      expect(() => backendFromEnv()).toThrow('configuration error: SECRETS_ACCESS must be one of read, write, got admin');
    });
  });
});

describe('a Vault credential never set', () => {
  it('answers 503 "not set" for the placeholder the stack creates, never calls Vault with it, and reads again next time', async () => {
    const arn = sm.set('cred-placeholder', UNSET_CREDENTIAL);
    vault.addAppRole('placeholder-role', 'sid-1');
    const backend = createVaultBackend({
      address: vault.url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'placeholder-role', secretId: secretsManagerCredential(arn) },
    });
    const out = await stdoutDuring(async () => {
      const error = await backend.read('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretsUnavailable);
      expect((error as SecretsUnavailable).status).toBe(503);
      expect((error as SecretsUnavailable).detail).toBe(UNSET_DETAIL);
    });
    expect(out.entries()).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'the Vault credential in Secrets Manager is still the placeholder the stack created; set its value' }),
    );
    expect(vault.requests).toEqual([]);
    sm.set('cred-placeholder', 'sid-1');
    await expect(backend.read('x')).resolves.toBeUndefined();
  });
});
