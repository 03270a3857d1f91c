/**
 * The secrets backend going down under the relay: Vault (the simulator) behind a loopback
 * forwarder that can be closed (connections refused) and opened again on the same port, its
 * token in a Secrets Manager stand-in. Calls that need a secret they have not cached answer a
 * clear 503; secrets already cached keep working until they expire; calls that need no
 * secret do not notice.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import { CONFIG_PATH, NSO_PASSWORD, RELAY_RESOURCE, headerOf, startRelayWorld, type RelayWorld } from '../support/robustness.js';
import { startSecretsManagerSimulator, type SecretsManagerSimulator } from '../../tools/simulators/secrets-manager-simulator.js';
import { startVaultSimulator, type VaultSimulator } from '../../tools/simulators/vault-simulator.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A TCP forwarder on a fixed loopback port: `down()` refuses connections, `up()` serves again. */
interface Forwarder {
  readonly port: number;
  down(): Promise<void>;
  up(): Promise<void>;
}

const startForwarder = async (port: number, targetPort: number): Promise<Forwarder> => {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  const up = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = createConnection(targetPort, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  await up();
  return { port, up, down };
};

const ADAPTER_REF = '$VAULT_netconfig/adapters/lab#password';
/** Short, so that the test can see a cached secret expire. */
const CACHE_TTL_SECONDS = 3;
let world: RelayWorld;
let vault: VaultSimulator;
let sm: SecretsManagerSimulator;
let forwarder: Forwarder;
let relay: Handler;
let putAdapter: Handler;
let getAdapter: Handler;
let getTree: Handler;
let treeId: string;

const relayCall = (adapterId = 'lab') =>
  relay(
    apiEvent({
      method: 'POST',
      resource: RELAY_RESOURCE,
      pathParameters: { adapterId },
      body: { params: { method: 'GET', path: CONFIG_PATH, accept: 'application/yang-data+json' }, body: {} },
    }),
    lambdaContext(10_000),
  );
const vaultReads = () => vault.requests.filter((r) => r.method === 'GET' && r.path === 'secret/data/netconfig/adapters/lab').length;

beforeAll(async () => {
  world = await startRelayWorld();
  vault = await startVaultSimulator();
  sm = await startSecretsManagerSimulator();
  forwarder = await startForwarder(await freePort(), Number(new URL(vault.url).port));
  vault.put('netconfig/adapters/lab', { password: NSO_PASSWORD });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.url,
    SECRETS_BACKEND: 'vault',
    VAULT_ADDR: `http://127.0.0.1:${forwarder.port}`,
    VAULT_MOUNT: 'secret',
    VAULT_AUTH_METHOD: 'token',
    VAULT_CREDENTIALS_SECRET_ARN: sm.set('netconfig/vault-token', vault.rootToken),
    VAULT_TIMEOUT_MS: '1000',
    SECRETS_ACCESS: 'write',
    SECRETS_CACHE_TTL_SECONDS: String(CACHE_TTL_SECONDS),
  });
  relay = (await import('../../functions/relay/handlers/rest-action.js')).handler as Handler;
  putAdapter = (await import('../../functions/adapters/handlers/put.js')).handler as Handler;
  getAdapter = (await import('../../functions/adapters/handlers/get.js')).handler as Handler;
  getTree = (await import('../../functions/trees/handlers/get.js')).handler as Handler;
  const create = (await import('../../functions/trees/handlers/create.js')).handler as Handler;
  const tree = await create(
    apiEvent({ method: 'POST', resource: '/configuration_manager/configs', body: { name: 'secrets-fault', deviceType: 'x' } }),
    lambdaContext(),
  );
  treeId = (JSON.parse(tree.body) as { id: string }).id;
});

afterAll(async () => {
  await forwarder?.down();
  await vault?.close();
  await sm?.close();
  await world?.close();
});

afterEach(async () => {
  await forwarder.down();
  await forwarder.up();
});

const expectSecretsUnavailable = (res: APIGatewayProxyResult) => {
  expect(res.statusCode, res.body.slice(0, 200)).toBe(503);
  expect(headerOf(res, 'Content-Type')).toBe('application/problem+json');
  expect(headerOf(res, 'Retry-After')).toMatch(/^[1-9][0-9]*$/);
  const problem = JSON.parse(res.body) as { detail: string };
  expect(problem.detail).toMatch(/secrets store/i);
  expect(res.body).not.toContain(String(forwarder.port));
  expect(res.body).not.toContain(NSO_PASSWORD);
};

describe('the secrets store down', () => {
  it('keeps a cached secret working until it expires, then answers 503 without calling the orchestrator, and recovers', async () => {
    // The cache reads the time through Date: it is held still, then moved past the expiry, so
    // that neither "still cached" nor "expired" depends on how long the calls take.
    const cachedAt = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: cachedAt });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    expect((await relayCall()).statusCode).toBe(200);
    const readsBefore = vaultReads();
    expect(readsBefore).toBeGreaterThanOrEqual(1);

    await forwarder.down();
    const cached = await relayCall();
    expect(cached.statusCode).toBe(200);
    expect(vaultReads()).toBe(readsBefore);

    // Once SECRETS_CACHE_TTL_SECONDS have passed, the value must be read again.
    vi.setSystemTime(cachedAt + CACHE_TTL_SECONDS * 1000 + 1);
    const sent = world.nso.requests.length;
    const expired = await relayCall();
    expectSecretsUnavailable(expired);
    expect(world.nso.requests.length).toBe(sent);

    await forwarder.up();
    expect((await relayCall()).statusCode).toBe(200);
    expect(vaultReads()).toBe(readsBefore + 1);
  });

  it('does not disturb calls that need no secret', async () => {
    await forwarder.down();
    expect(
      (await getTree(apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId } }), lambdaContext())).statusCode,
    ).toBe(200);
    const adapter = await getAdapter(apiEvent({ method: 'GET', resource: '/adapters/{name}', pathParameters: { name: 'lab' } }), lambdaContext());
    expect(adapter.statusCode).toBe(200);
    expect(adapter.body).toContain(ADAPTER_REF);
  });

  it('answers 503 to an adapter whose password must be stored, and stores no adapter', async () => {
    await forwarder.down();
    const event = (name: string) =>
      apiEvent({
        method: 'PUT',
        resource: '/adapters/{name}',
        pathParameters: { name },
        body: { type: 'nso', baseUrl: world.nso.url, auth: { type: 'basic', username: 'admin', password: 'a-plain-Pa55word' } },
      });
    expectSecretsUnavailable(await putAdapter(event('while-down'), lambdaContext()));
    const missing = await getAdapter(apiEvent({ method: 'GET', resource: '/adapters/{name}', pathParameters: { name: 'while-down' } }), lambdaContext());
    expect(missing.statusCode).toBe(404);

    await forwarder.up();
    expect((await putAdapter(event('while-down'), lambdaContext())).statusCode).toBe(201);
  });

  it('answers 503 when the store answers errors rather than refusing connections (sealed)', async () => {
    vault.put('netconfig/adapters/sealed', { password: NSO_PASSWORD });
    await world.adapters.put(
      {
        name: 'lab-sealed',
        type: 'nso',
        baseUrl: world.nso.url,
        auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/sealed#password' },
      },
      new Date().toISOString(),
    );
    vault.sealed = true;
    try {
      expectSecretsUnavailable(await relayCall('lab-sealed'));
    } finally {
      vault.sealed = false;
    }
    expect((await relayCall('lab-sealed')).statusCode).toBe(200);
  });
});
