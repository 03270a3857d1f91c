/**
 * A private CA, end to end over real TLS on loopback: the NSO simulator and the Vault test
 * server serve certificates signed by a CA generated for this run. The relay and the health
 * probe (through an adapter, with the handlers as API Gateway invokes them) and the Vault
 * backend trust that CA only when `NETCONFIG_CA_BUNDLE` names it; each configuration is a
 * fresh container (the modules loaded anew), as the bundle is read once per container.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTestCa } from '../support/relay-tls.js';
import { createTables } from '../../tools/local/table-copies.js';
import { startVaultSimulator, type VaultSimulator } from '../../tools/simulators/vault-simulator.js';

type Handler = Parameters<typeof invoke>[0];

const PASSWORD = 'nso-Pa55-word';
const CONFIG = '/restconf/data/tailf-ncs:devices/device=ce0/config';
const privateCa = createTestCa('netconfig private CA');
const otherCa = createTestCa('some other CA');

let nso: NsoSimulator;
let vault: VaultSimulator;
/** Stands in for the function's code directory (`LAMBDA_TASK_ROOT`), with the bundles in it. */
let taskRoot: string;
let secretsFile: string;

/** The environment of a fresh container: the bundle (relative to the task root) or none. */
const container = (bundle: string | undefined): void => {
  vi.unstubAllEnvs();
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('LAMBDA_TASK_ROOT', taskRoot);
  vi.stubEnv('HEALTH_PROBE_CACHE_SECONDS', '0');
  if (bundle) vi.stubEnv('NETCONFIG_CA_BUNDLE', bundle);
  vi.resetModules();
};

const handlerOf = async (module: string, bundle: string | undefined): Promise<Handler> => {
  container(bundle);
  return ((await import(module)) as { handler: Handler }).handler;
};
const relayHandler = (bundle: string | undefined) => handlerOf('../../functions/relay/handlers/rest-action.js', bundle);

const relayGet = (handler: Handler) =>
  invoke(
    handler,
    apiEvent({
      method: 'POST',
      resource: '/orch_manager/restAction/{adapterId}',
      pathParameters: { adapterId: 'private-nso' },
      body: { params: { method: 'GET', path: CONFIG, accept: 'application/yang-data+json' }, body: {} },
    }),
  );

beforeAll(async () => {
  const tables = await createTables();
  taskRoot = await mkdtemp(path.join(tmpdir(), 'ca-trust-'));
  await mkdir(path.join(taskRoot, 'certs'));
  await writeFile(path.join(taskRoot, 'certs', 'private-ca.pem'), privateCa.cert);
  await writeFile(path.join(taskRoot, 'certs', 'other-ca.pem'), otherCa.cert);
  await writeFile(path.join(taskRoot, 'certs', 'not-pem.txt'), 'not a certificate\n');

  nso = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, tls: privateCa.issue() });
  vault = await startVaultSimulator({ tls: privateCa.issue() });
  vault.put('netconfig/adapters/private-nso', { password: PASSWORD });

  secretsFile = path.join(taskRoot, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/private-nso', { password: PASSWORD });
  await createAdapterStore(documentClient, tables['adapters']).put(
    {
      name: 'private-nso',
      type: 'nso',
      baseUrl: nso.url,
      auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/private-nso#password' },
    },
    new Date().toISOString(),
  );
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([nso?.close(), vault?.close()]);
  if (taskRoot) await rm(taskRoot, { recursive: true, force: true });
});

afterEach(() => {
  nso.requests.length = 0;
  vault.requests.length = 0;
});

describe('the relay to an orchestrator whose certificate a private CA signed', () => {
  it('is refused with a TLS problem, and nothing is sent, when no CA bundle is configured', async () => {
    expect(nso.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await relayGet(await relayHandler(undefined));
    expect(res.status).toBe(502);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.detail).toMatch(/TLS handshake .* failed \(the certificate is not trusted/);
    expect(nso.requests).toHaveLength(0);
  });

  it('is refused when the bundle holds another CA only: the bundle adds exactly its own CAs', async () => {
    const res = await relayGet(await relayHandler('certs/other-ca.pem'));
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/TLS handshake/);
    expect(nso.requests).toHaveLength(0);
  });

  it('succeeds when NETCONFIG_CA_BUNDLE names that CA (a path relative to the task root)', async () => {
    const res = await relayGet(await relayHandler('certs/private-ca.pem'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ result: '200', data: { 'tailf-ncs:config': expect.objectContaining({ 'tailf-ned-cisco-ios:hostname': 'ce0' }) } }]);
    expect(nso.requests).toHaveLength(1);
    expect(nso.requests[0]).toMatchObject({ method: 'GET', path: CONFIG, user: 'admin' });
  });

  it('succeeds with an absolute path too', async () => {
    const res = await relayGet(await relayHandler(path.join(taskRoot, 'certs', 'private-ca.pem')));
    expect(res.status).toBe(200);
  });

  it('never loads with a bundle that is not PEM: the error names the variable and the file', async () => {
    await expect(relayHandler('certs/not-pem.txt')).rejects.toThrow(
      `configuration error: NETCONFIG_CA_BUNDLE names ${path.join(taskRoot, 'certs', 'not-pem.txt')}, which holds no PEM certificate`,
    );
    await expect(relayHandler('certs/absent.pem')).rejects.toThrow(
      `configuration error: NETCONFIG_CA_BUNDLE names ${path.join(taskRoot, 'certs', 'absent.pem')}, which cannot be read (ENOENT)`,
    );
  });
});

describe('the health probe of that orchestrator', () => {
  const probe = async (bundle: string | undefined) =>
    invoke(
      await handlerOf('../../functions/health/handlers/adapter.js', bundle),
      apiEvent({ method: 'GET', resource: '/health/adapters/{name}', pathParameters: { name: 'private-nso' } }),
    );

  it('reports the adapter down for TLS when no CA bundle is configured', async () => {
    const res = await probe(undefined);
    expect(res.status).toBe(503);
    expect(res.body.adapter).toMatchObject({ name: 'private-nso', status: 'down', reason: 'tls' });
  });

  it('reports it up when NETCONFIG_CA_BUNDLE names the CA', async () => {
    const res = await probe('certs/private-ca.pem');
    expect(res.status).toBe(200);
    expect(res.body.adapter).toMatchObject({ name: 'private-nso', status: 'up' });
    expect(nso.requests.length).toBeGreaterThan(0);
  });
});

describe('Vault over TLS with a private CA', () => {
  const vaultRead = async (bundle: string | undefined) => {
    container(bundle);
    const { createVaultBackend } = await import('../../functions/outbound/secrets/vault.js');
    const { staticCredential } = await import('../../functions/outbound/secrets/credentials.js');
    const backend = createVaultBackend({ address: vault.url, mount: 'secret', auth: { method: 'token', token: staticCredential(vault.rootToken) } });
    return backend.read('netconfig/adapters/private-nso');
  };

  it('is unavailable, and no request reaches Vault, when no CA bundle is configured', async () => {
    expect(vault.url).toMatch(/^https:\/\//);
    await expect(vaultRead(undefined)).rejects.toMatchObject({ name: 'SecretsUnavailable', status: 503 });
    expect(vault.requests).toHaveLength(0);
  });

  it('reads the secret when NETCONFIG_CA_BUNDLE names the CA', async () => {
    await expect(vaultRead('certs/private-ca.pem')).resolves.toEqual({ password: PASSWORD });
    expect(vault.requests).toEqual([expect.objectContaining({ method: 'GET', path: 'secret/data/netconfig/adapters/private-nso', status: 200 })]);
  });
});
