/**
 * The relay's adapter cache through the real handler: adapters in DynamoDB Local (changed
 * through the adapter store, as `PUT /adapters/{name}` changes them), passwords in the local
 * secrets store, two NSO simulators over loopback. The clock the handler reads (`Date.now`)
 * stands still unless a test advances it, so "within the TTL" and "after the TTL" never depend
 * on how fast the machine is.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { createAdapterStore, type AdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'cache-Pa55-word';
const RIGHT = '$VAULT_netconfig/adapters/lab#password';
const WRONG = '$VAULT_netconfig/adapters/wrong#password';
const CONFIG = '/restconf/data/tailf-ncs:devices/device=ce0/config';
const TTL_SECONDS = 30;

let first: NsoSimulator;
let second: NsoSimulator;
let dir: string;
let closedPort: number;
let store: AdapterStore;
let handler: Handler;
let clock: MockInstance<() => number>;
let offset = 0;

const advance = (ms: number): void => {
  offset += ms;
};
// A fresh record each time: the store refuses to move a kept secret to another origin.
const put = async (name: string, baseUrl: string, password = RIGHT) => {
  await store.delete(name);
  return store.put({ name, type: 'nso', baseUrl, auth: { type: 'basic', username: 'admin', password } }, new Date().toISOString());
};
const relay = (adapterId: string) =>
  invoke(
    handler,
    apiEvent({
      method: 'POST',
      resource: '/orch_manager/restAction/{adapterId}',
      pathParameters: { adapterId },
      body: { params: { method: 'GET', path: CONFIG, accept: 'application/yang-data+json' }, body: {} },
    }),
    lambdaContext(10_000),
  );

beforeAll(async () => {
  const tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'relay-cache-'));
  const credentials = { username: 'admin', password: PASSWORD };
  first = await startNsoSimulator({ credentials });
  second = await startNsoSimulator({ credentials });
  closedPort = await freePort();
  const secretsFile = path.join(dir, 'secrets.json');
  const secrets = createLocalBackend({ file: secretsFile });
  await secrets.write('netconfig/adapters/lab', { password: PASSWORD });
  await secrets.write('netconfig/adapters/wrong', { password: 'not-the-password' });
  store = createAdapterStore(documentClient, tables['adapters']);

  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('ADAPTER_CACHE_TTL_SECONDS', String(TTL_SECONDS));
  // Stands still between advances: how long a call takes never moves an entry past its TTL.
  const start = Date.now();
  clock = vi.spyOn(Date, 'now').mockImplementation(() => start + offset);
  vi.resetModules();
  handler = (await import('../../functions/relay/handlers/rest-action.js')).handler as Handler;
});

afterAll(async () => {
  clock?.mockRestore();
  vi.unstubAllEnvs();
  await Promise.all([first?.close(), second?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  first.requests.length = 0;
  second.requests.length = 0;
});

describe('the relay’s adapter cache', () => {
  it('keeps sending to where the adapter pointed until the TTL has passed, then follows the change', async () => {
    await put('moving', first.url);
    expect((await relay('moving')).body).toEqual([expect.objectContaining({ result: '200' })]);
    await put('moving', second.url);

    advance(TTL_SECONDS * 1000 - 1);
    expect((await relay('moving')).body[0].result).toBe('200');
    expect(first.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(0);

    advance(1);
    expect((await relay('moving')).body[0].result).toBe('200');
    expect(first.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(1);
  });

  it('finds an adapter created just after a call that did not find it (a miss is never cached)', async () => {
    expect((await relay('newcomer')).status).toBe(404);
    await put('newcomer', first.url);
    expect((await relay('newcomer')).body[0].result).toBe('200');
    expect(first.requests).toHaveLength(1);
  });

  it('serves an adapter started just after a refusal from the next call; a stop is seen within the TTL', async () => {
    await put('toggled', first.url);
    expect((await relay('toggled')).body[0].result).toBe('200');
    await store.setState('toggled', 'STOPPED', new Date().toISOString());
    // The documented bound of a stop: the running adapter read a moment ago serves until the TTL has passed.
    advance(TTL_SECONDS * 1000 - 1);
    expect((await relay('toggled')).body[0].result).toBe('200');
    advance(1);
    const refused = await relay('toggled');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-stopped' });
    await store.setState('toggled', 'RUNNING', new Date().toISOString());
    // No time passes: the very next call is served.
    expect((await relay('toggled')).body[0].result).toBe('200');
    expect(first.requests).toHaveLength(3);
  });

  it('reads the adapter afresh as soon as its orchestrator answered 401, then caches it again', async () => {
    await put('rotated', first.url, WRONG);
    expect((await relay('rotated')).body[0].result).toBe('401');
    // Fixed by an administrator: the very next call uses the fixed adapter, no TTL to wait out.
    await put('rotated', first.url, RIGHT);
    expect((await relay('rotated')).body[0].result).toBe('200');
    // Nothing failed this time: a further change waits for the TTL again.
    await put('rotated', second.url, RIGHT);
    expect((await relay('rotated')).body[0].result).toBe('200');
    expect(second.requests).toHaveLength(0);
    expect(first.requests).toHaveLength(3);
  });

  it('reads the adapter afresh as soon as its orchestrator could not be reached', async () => {
    await put('moved', `http://127.0.0.1:${closedPort}`);
    const failed = await relay('moved');
    expect(failed.status).toBe(502);
    expect(failed.body.detail).toContain("'moved'");
    await put('moved', second.url);
    expect((await relay('moved')).body[0].result).toBe('200');
    expect(second.requests).toHaveLength(1);
  });

  it('keeps the adapter when the orchestrator answered, whatever the status', async () => {
    await put('steady', first.url);
    first.setKnobs({ status: 503 });
    try {
      expect((await relay('steady')).body[0].result).toBe('503');
    } finally {
      first.setKnobs({});
    }
    await put('steady', second.url);
    expect((await relay('steady')).body[0].result).toBe('200');
    expect(first.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(0);
  });
});
