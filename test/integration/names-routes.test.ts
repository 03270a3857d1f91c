/**
 * The rule for every stored name (functions/platform/names.ts) at each route that stores one,
 * through the real handlers against DynamoDB Local: a bad name is a 400 problem naming its
 * field, and an identifier that differs from a stored one only by case is a 409.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { startRelayWorld, type RelayWorld } from '../support/robustness.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
const h: Record<string, Handler> = {};
let world: RelayWorld;

const HANDLERS = {
  createTree: 'trees/handlers/create',
  createVersion: 'trees/handlers/version-create',
  putNode: 'trees/handlers/node-put',
  importTree: 'trees/handlers/import',
  createAdapter: 'adapters/handlers/create',
  putAdapter: 'adapters/handlers/put',
  createProfile: 'profiles/handlers/create',
  deleteAdapter: 'adapters/handlers/delete',
  deleteProfile: 'profiles/handlers/delete',
};

const call = (name: keyof typeof HANDLERS, method: string, resource: string, pathParameters: Record<string, string> | undefined, body: unknown) =>
  invoke(
    h[name]!,
    apiEvent({
      method,
      resource,
      ...(pathParameters ? { pathParameters } : {}),
      body,
      authorizer: { principalId: 'alice', principal: 'alice', roles: 'admin' },
    }),
    lambdaContext(20_000),
  );

/** Names that break the rule, each one way: blank, edge spaces, invisible, bidirectional, not NFC. */
const BAD = { blank: '   ', edgeSpace: ' core', zeroWidth: 'core\u200b', bidi: 'core\u202eX', notNfc: 'cafe\u0301' };
const ADAPTER = { type: 'nso', baseUrl: 'http://127.0.0.1:1', auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/lab#password' } };

const expectRefused = (res: { status: number; body: { type?: string; errors?: { in: string; field: string }[] } }, where: string, field: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.type).toBe('urn:netconfig:problem:validation');
  expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ in: where, field })]));
};

let treeId: string;

beforeAll(async () => {
  world = await startRelayWorld();
  // The adapter routes store plain passwords (as the deployed write functions may).
  process.env['SECRETS_ACCESS'] = 'write';
  for (const [name, file] of Object.entries(HANDLERS)) {
    h[name] = ((await import(/* @vite-ignore */ pathToFileURL(path.join(PROJECT_ROOT, 'functions', `${file}.ts`)).href)) as { handler: Handler }).handler;
  }
  const created = await call('createTree', 'POST', '/configuration_manager/configs', undefined, { name: 'names-tree', deviceType: 'cisco-ios' });
  treeId = created.body.id as string;
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe.each(Object.entries(BAD))('a %s name', (_, bad) => {
  it('is refused as a tree name and a device type', async () => {
    expectRefused(await call('createTree', 'POST', '/configuration_manager/configs', undefined, { name: bad, deviceType: 'x' }), 'body', 'name');
    expectRefused(await call('createTree', 'POST', '/configuration_manager/configs', undefined, { name: 'ok', deviceType: bad }), 'body', 'deviceType');
  });

  it('is refused as a version label, a new node name and a device name', async () => {
    expectRefused(await call('createVersion', 'POST', '/configuration_manager/configs/{treeId}', { treeId }, { name: bad, base: 'initial' }), 'body', 'name');
    expectRefused(
      await call(
        'putNode',
        'PUT',
        '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}',
        { treeId, version: 'initial', nodePath: `base/${encodeURIComponent(bad)}` },
        {},
      ),
      'path',
      'nodePath',
    );
    expectRefused(
      await call(
        'putNode',
        'PUT',
        '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}',
        { treeId, version: 'initial', nodePath: 'base' },
        { devices: ['pe1', bad] },
      ),
      'body',
      'devices.1',
    );
  });

  it('is refused in an import: tree name, label, node and device names', async () => {
    const doc = (over: Record<string, unknown>, root: Record<string, unknown> = { name: 'base' }) => ({
      name: 'names-import',
      deviceType: 'x',
      versions: [{ name: 'v', root }],
      ...over,
    });
    expectRefused(await call('importTree', 'POST', '/configuration_manager/imports', undefined, doc({ name: bad })), 'body', 'name');
    expectRefused(
      await call('importTree', 'POST', '/configuration_manager/imports', undefined, doc({ versions: [{ name: bad, root: { name: 'base' } }] })),
      'body',
      'versions.0.name',
    );
    expectRefused(
      await call('importTree', 'POST', '/configuration_manager/imports', undefined, doc({}, { name: 'base', children: [{ name: bad }] })),
      'body',
      'versions.0.root.children.0.name',
    );
    expectRefused(
      await call('importTree', 'POST', '/configuration_manager/imports', undefined, doc({}, { name: 'base', devices: [bad] })),
      'body',
      'versions.0.root.devices.0',
    );
  });

  it('is refused as an adapter name and a profile id', async () => {
    expectRefused(await call('createAdapter', 'POST', '/adapters', undefined, { name: bad, ...ADAPTER }), 'body', 'name');
    expectRefused(await call('putAdapter', 'PUT', '/adapters/{name}', { name: encodeURIComponent(bad) }, ADAPTER), 'path', 'name');
    expectRefused(await call('createProfile', 'POST', '/profiles', undefined, { id: bad }), 'body', 'id');
  });
});

describe('identifiers unique without regard to case', () => {
  it('refuses an adapter name that differs from a stored one only by case (409), by POST and by PUT', async () => {
    for (const res of [
      await call('createAdapter', 'POST', '/adapters', undefined, { name: 'LAB', ...ADAPTER }),
      await call('putAdapter', 'PUT', '/adapters/{name}', { name: 'Lab' }, ADAPTER),
    ]) {
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-exists', detail: expect.stringContaining('"lab"') });
    }
    expect(await world.adapters.get('LAB')).toBeUndefined();
  });

  it('refuses a profile id that differs from a stored one only by case (409), and takes a new one', async () => {
    const res = await call('createProfile', 'POST', '/profiles', undefined, { id: 'DEFAULT' });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:profile-exists', detail: expect.stringContaining('default') });
    expect((await call('createProfile', 'POST', '/profiles', undefined, { id: 'Staging' })).status).toBe(201);
    expect((await call('createProfile', 'POST', '/profiles', undefined, { id: 'staging' })).status).toBe(409);
  });

  it.each([
    [
      'adapters',
      (name: string) => call('createAdapter', 'POST', '/adapters', undefined, { name, ...ADAPTER, auth: { ...ADAPTER.auth, password: 'plain-Pa55' } }),
      (name: string) => call('deleteAdapter', 'DELETE', '/adapters/{name}', { name }, undefined),
      'adapter-exists',
    ],
    [
      'profiles',
      (id: string) => call('createProfile', 'POST', '/profiles', undefined, { id }),
      (id: string) => call('deleteProfile', 'DELETE', '/profiles/{id}', { id }, undefined),
      'profile-exists',
    ],
  ] as const)(
    '%s: of two concurrent creates of case twins exactly one lands and the other is 409; a delete frees the name',
    async (_kind, create, remove, conflict) => {
      for (const round of [1, 2, 3]) {
        const [upper, lower] = [`RACE${round}`, `race${round}`];
        const answers = await Promise.all([create(upper), create(lower)]);
        expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).toEqual([201, 409]);
        const loser = answers.find((a) => a.status === 409)!;
        const winner = answers[0]!.status === 201 ? upper : lower;
        expect(loser.body).toMatchObject({ type: `urn:netconfig:problem:${conflict}`, detail: expect.stringContaining(winner) });
        // Deleting the winner frees the name for the other spelling, and then for none else.
        expect((await remove(winner)).status).toBe(204);
        const other = winner === upper ? lower : upper;
        expect((await create(other)).status).toBe(201);
        expect((await create(winner)).status).toBe(409);
      }
    },
  );
});
