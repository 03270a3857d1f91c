/**
 * Every route that writes both a secret and an adapter record, with DynamoDB frozen in the middle
 * of the record write: a proxy on loopback in front of DynamoDB Local either forwards the write and
 * withholds the answer (it landed, the client times out), withholds it before forwarding (it did
 * not land), or also withholds the read-back (nobody can tell). After each case the secrets store
 * is compared with the records: every secret the service manages is named by a record or listed
 * as pending, and a later write, once no request can still be in flight, leaves only named ones.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RegistryDeps } from '../../functions/adapters/service.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import type { RelayWorld } from '../support/robustness.js';
import { forwardTo } from '../support/withholding-proxy.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type Mode = 'pass' | 'landed' | 'not-landed' | 'unknown';

const caller = { principalId: 'faults', principal: 'faults', roles: 'admin' };
const WRITE = 'DynamoDB_20120810.TransactWriteItems';
const READ = 'DynamoDB_20120810.GetItem';

let world: RelayWorld;
let proxy: Server;
let mode: Mode = 'pass';
const held: ServerResponse[] = [];
const handlers: Record<'create' | 'put' | 'delete' | 'stop' | 'loglevel', Handler> = {} as never;
let service: typeof import('../../functions/adapters/service.js');
let deps: RegistryDeps;

/** Forwards to DynamoDB Local; in a frozen mode, withholds the answer to the writes (and reads). */
const relay = (upstream: URL) => (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const frozenWrite = target === WRITE && mode !== 'pass';
    const frozenRead = target === READ && mode === 'unknown' && writesSeen > 0;
    if (target === WRITE && mode !== 'pass') writesSeen++;
    if ((frozenWrite && mode === 'not-landed') || frozenRead) {
      held.push(res);
      return;
    }
    // A frozen write lands: DynamoDB applies it, the client never hears so.
    forwardTo(upstream, req, Buffer.concat(chunks), res, frozenWrite ? () => held.push(res) : undefined);
  });
};
let writesSeen = 0;

const freeze = (next: Mode) => {
  mode = next;
  writesSeen = 0;
};

const body = (password: string) => ({ type: 'nso', baseUrl: world.nso.url, auth: { type: 'basic', username: 'admin', password } });
const create = (name: string, password: string) =>
  handlers.create(apiEvent({ method: 'POST', resource: '/adapters', body: { name, ...body(password) }, authorizer: caller }), lambdaContext(10_000));
const put = (name: string, password: string) =>
  handlers.put(
    apiEvent({ method: 'PUT', resource: '/adapters/{name}', pathParameters: { name }, body: body(password), authorizer: caller }),
    lambdaContext(10_000),
  );
const remove = (name: string) =>
  handlers.delete(apiEvent({ method: 'DELETE', resource: '/adapters/{name}', pathParameters: { name }, authorizer: caller }), lambdaContext(10_000));

/** Managed secrets in the store, the ones records name, and the ones listed pending. */
const inventory = async () => {
  const stored = Object.keys((JSON.parse(readFileSync(world.secretsFile, 'utf8')) as { secrets: Record<string, unknown> }).secrets).filter(
    (p) => p.startsWith('netconfig/adapters/') && p !== 'netconfig/adapters/lab',
  );
  const items = await world.items('adapters');
  const named = items
    .flatMap((i) => {
      const password = (i['auth'] as { password?: string } | undefined)?.password ?? '';
      return password.startsWith('$VAULT_netconfig/adapters/') ? [password.slice('$VAULT_'.length).replace(/#.*$/, '')] : [];
    })
    .filter((p) => p !== 'netconfig/adapters/lab');
  const pending = items.flatMap((i) => [...((i['pending'] as Set<string> | undefined) ?? [])].map((e) => e.slice(e.indexOf(' ') + 1)));
  return { stored: stored.sort(), named: named.sort(), pending };
};

const passwordOf = async (name: string) =>
  (await world.items('adapters')).find((i) => i['pk'] === `ADAPTER#${name}`)?.['auth'] as { password: string } | undefined;

/** No secret without a record naming it, or without being listed for a sweep. */
const expectNoLostSecret = async () => {
  const { stored, named, pending } = await inventory();
  for (const path of stored) expect([...named, ...pending], path).toContain(path);
  for (const path of named) expect(stored, `named ${path}`).toContain(path);
};

/** A later write, once no request of the cases can still run, settles every pending secret. */
const expectSweptClean = async (name: string) => {
  const later = () => new Date(Date.now() + service.PENDING_SECRET_GRACE_MS + 60_000);
  await service.putAdapter({ ...deps, now: later }, name, {
    type: 'nso',
    baseUrl: world.nso.url,
    auth: { type: 'basic', username: 'admin', password: 'after-sweep' },
  });
  await service.deleteAdapter({ ...deps, now: later }, name);
  const { stored, named } = await inventory();
  expect(stored).toEqual(named);
};

const statusAndDetail = (result: APIGatewayProxyResult) => [result.statusCode, (JSON.parse(result.body) as { detail?: string }).detail ?? ''] as const;

beforeAll(async () => {
  const upstream = new URL(process.env['AWS_ENDPOINT_URL_DYNAMODB']!);
  proxy = createServer(relay(upstream));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  vi.resetModules();
  const support = await import('../support/robustness.js');
  world = await support.startRelayWorld();
  // From here on everything talks to DynamoDB through the proxy (the SDK reads the endpoint at
  // its first call); the test's own reads run while it passes everything through.
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  process.env['SECRETS_ACCESS'] = 'write';
  vi.resetModules();
  handlers.create = (await import('../../functions/adapters/handlers/create.js')).handler as Handler;
  handlers.put = (await import('../../functions/adapters/handlers/put.js')).handler as Handler;
  handlers.delete = (await import('../../functions/adapters/handlers/delete.js')).handler as Handler;
  handlers.stop = (await import('../../functions/adapters/handlers/stop.js')).handler as Handler;
  handlers.loglevel = (await import('../../functions/adapters/handlers/loglevel.js')).handler as Handler;
  service = await import('../../functions/adapters/service.js');
  const { createAdapterStore } = await import('../../functions/adapters/store.js');
  const { createLocalBackend } = await import('../../functions/outbound/secrets/local.js');
  deps = { store: createAdapterStore(undefined, world.tables.adapters), secrets: createLocalBackend({ file: world.secretsFile }), localMode: true };
}, 120_000);

afterAll(async () => {
  for (const res of held) res.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
  await world?.close();
});

describe.each<['POST /adapters' | 'PUT /adapters/{name}', boolean]>([
  ['POST /adapters', false],
  ['PUT /adapters/{name}', true],
])('%s with DynamoDB frozen mid-write', (_route, replaces) => {
  const write = (name: string, password: string) => (replaces ? put(name, password) : create(name, password));
  const setUp = async (name: string) => {
    freeze('pass');
    if (replaces) expect((await put(name, 'first-Pa55')).statusCode).toBe(201);
    return (await passwordOf(name))?.password;
  };

  it('answers success when the write landed, and the record names a secret that exists', async () => {
    const name = `landed-${replaces ? 'put' : 'post'}`;
    const before = await setUp(name);
    freeze('landed');
    const result = await write(name, 'landed-Pa55');
    freeze('pass');
    expect(result.statusCode, result.body).toBe(replaces ? 200 : 201);
    const after = await passwordOf(name);
    expect(after?.password).not.toBe(before);
    expect(JSON.parse(result.body)).toMatchObject({ auth: { password: after!.password } });
    await expectNoLostSecret();
    const { stored } = await inventory();
    // The replaced version is gone at once.
    if (before) expect(stored).not.toContain(before.slice('$VAULT_'.length).replace(/#.*$/, ''));
    await expectSweptClean(name);
  }, 60_000);

  it('answers 503 when it did not land, deletes the secret written for it, and leaves the old record as it was', async () => {
    const name = `lost-${replaces ? 'put' : 'post'}`;
    const before = await setUp(name);
    freeze('not-landed');
    const [status, detail] = statusAndDetail(await write(name, 'lost-Pa55'));
    freeze('pass');
    expect(status).toBe(503);
    expect(detail).not.toMatch(/could not be checked/);
    expect((await passwordOf(name))?.password).toBe(before);
    const { stored, named } = await inventory();
    expect(stored).toEqual(named);
    await expectSweptClean(name);
  }, 60_000);

  it('answers a 503 that says the outcome is unknown when it cannot be read back, and deletes nothing a record may name', async () => {
    const name = `unknown-${replaces ? 'put' : 'post'}`;
    await setUp(name);
    freeze('unknown');
    const [status, detail] = statusAndDetail(await write(name, 'unknown-Pa55'));
    freeze('pass');
    expect(status).toBe(503);
    expect(detail).toMatch(/could not be checked/);
    // It landed: the record names the new version, which exists.
    await expectNoLostSecret();
    await expectSweptClean(name);
  }, 60_000);
});

describe('DELETE /adapters/{name} with DynamoDB frozen mid-write', () => {
  it.each<[Mode, number]>([
    ['landed', 204],
    ['not-landed', 503],
    ['unknown', 503],
  ])(
    'when the delete is %s: answers %i and leaves no secret that no record names, once swept',
    async (frozen, expected) => {
      const name = `delete-${frozen}`;
      freeze('pass');
      expect((await put(name, 'delete-Pa55')).statusCode).toBe(201);
      freeze(frozen);
      const result = await remove(name);
      freeze('pass');
      expect(result.statusCode, result.body).toBe(expected);
      await expectNoLostSecret();
      if (frozen === 'landed') expect((await inventory()).stored.filter((p) => p.includes(name))).toEqual([]);
      await expectSweptClean(name);
    },
    60_000,
  );
});

describe.each<['stop' | 'loglevel', Record<string, unknown>]>([
  ['stop', { state: 'STOPPED' }],
  ['loglevel', { logLevel: 'trace' }],
])('PUT /adapters/{name}/%s with DynamoDB frozen mid-write', (route, changed) => {
  const send = (name: string) =>
    handlers[route](
      apiEvent({
        method: 'PUT',
        resource: `/adapters/{name}/${route}`,
        pathParameters: { name },
        ...(route === 'loglevel' ? { body: { level: 'trace' } } : {}),
        authorizer: caller,
      }),
      lambdaContext(10_000),
    );
  const recordOf = async (name: string) => (await world.items('adapters')).find((i) => i['pk'] === `ADAPTER#${name}`);

  it.each<[Mode, number, boolean]>([
    ['landed', 200, true],
    ['not-landed', 503, false],
    ['unknown', 503, true],
  ])(
    'when the write is %s: answers %i, and a 503 says "nothing changed" only when nothing did',
    async (frozen, expected, lands) => {
      const name = `${route}-${frozen}`;
      freeze('pass');
      expect((await put(name, 'state-Pa55')).statusCode).toBe(201);
      freeze(frozen);
      const result = await send(name);
      freeze('pass');
      const [status, detail] = statusAndDetail(result);
      expect(status, result.body).toBe(expected);
      expect(await recordOf(name)).toMatchObject(lands ? changed : { state: 'RUNNING' });
      if (status === 503) expect(detail.includes('could not be checked')).toBe(lands);
      if (status === 200) expect(JSON.parse(result.body)).toMatchObject(changed);
    },
    60_000,
  );
});
