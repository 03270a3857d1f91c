/**
 * The Vault KV v2 backend against a Vault-compatible server on loopback, with its credential
 * read from a Secrets Manager stand-in through the real AWS SDK.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { secretsManagerCredential, staticCredential } from '../../functions/secrets/credentials.js';
import { SecretMissing, SecretsUnavailable } from '../../functions/secrets/errors.js';
import { readReference } from '../../functions/secrets/resolve.js';
import { createVaultBackend } from '../../functions/secrets/vault.js';
import { startSecretsManagerSimulator, type SecretsManagerSimulator } from '../support/secrets-manager-simulator.js';
import { startVaultSimulator, type VaultSimulator } from '../support/vault-simulator.js';

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
    const error = await tokenBackend().read('denied').catch((e: unknown) => e);
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
    expect(() => createVaultBackend({ address: 'https://u:p@vault', mount: 'secret', auth: { method: 'token', token: staticCredential('t') } })).toThrow(/VAULT_ADDR/);
    expect(() => createVaultBackend({ address: 'vault:8200', mount: 'secret', auth: { method: 'token', token: staticCredential('t') } })).toThrow(/VAULT_ADDR/);
  });
});

describe('Vault KV v2 with AppRole', () => {
  it('logs in once with the role id and the secret id from Secrets Manager, then reuses the token', async () => {
    vault.addAppRole('role-a', 'secret-id-a');
    const arn = sm.set('approle-a', 'secret-id-a\n');
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'role-a', secretId: secretsManagerCredential(arn) } });
    vault.put('approle/x', { password: 'y' });
    await expect(readReference(backend, '$VAULT_approle/x')).resolves.toBe('y');
    await expect(readReference(backend, '$VAULT_approle/x')).resolves.toBe('y');
    expect(vault.requests.filter((r) => r.path === 'auth/approle/login')).toHaveLength(1);
    expect(sm.reads.get('approle-a')).toBe(1);
  });

  it('shares one login among concurrent first calls', async () => {
    vault.addAppRole('role-c', 'sid-c');
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'role-c', secretId: staticCredential('sid-c') } });
    vault.put('c', { password: 'z' });
    await Promise.all(Array.from({ length: 5 }, () => backend.read('c')));
    expect(vault.requests.filter((r) => r.path === 'auth/approle/login')).toHaveLength(1);
  });

  it('logs in again once when Vault refuses the token (403), and retries the call', async () => {
    vault.addAppRole('role-b', 'sid-b');
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'role-b', secretId: staticCredential('sid-b') } });
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
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'role-r', secretId: secretsManagerCredential(arn) } });
    vault.put('r', { password: 'p' });
    await backend.read('r');
    vault.addAppRole('role-r', 'new-sid');
    sm.set('approle-r', 'new-sid');
    vault.revokeAllTokens();
    await expect(backend.read('r')).resolves.toEqual({ password: 'p' });
    expect(sm.reads.get('approle-r')).toBe(2);
  });

  it('answers 503 when the AppRole login is refused', async () => {
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'nobody', secretId: staticCredential('wrong') } });
    await expect(backend.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
  });

  it('answers 503 when Secrets Manager cannot give the credential', async () => {
    const missing = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'r', secretId: secretsManagerCredential('no-such-secret') } });
    await expect(missing.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    const arn = sm.set('flaky', 'sid');
    vault.addAppRole('flaky-role', 'sid');
    sm.failNext(5);
    const flaky = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'approle', roleId: 'flaky-role', secretId: secretsManagerCredential(arn) } });
    await expect(flaky.read('x')).rejects.toBeInstanceOf(SecretsUnavailable);
    sm.failNext(0);
    // The failure was not cached: the next call reads the credential again and succeeds.
    await expect(flaky.read('x')).resolves.toBeUndefined();
  });
});
