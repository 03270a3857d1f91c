/**
 * The exemption routes and the tree's changelog through their real handlers, against DynamoDB
 * Local: the tree imported by its own route, exemptions and their entries in the compliance and
 * changelog tables, every answer checked against openapi.json at the end.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { liveRoutes } from '../../functions/api/routes.js';
import type { Exemption } from '../../functions/exemptions/model.js';
import { replaceExemption, type ExemptionDeps } from '../../functions/exemptions/service.js';
import { ExemptionStore, exemptionsPk } from '../../functions/exemptions/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { routeRolesValue } from '../../functions/platform/route-authorization.js';
import type { ChangelogEntry } from '../../functions/runtime/changelog.js';
import { createTreeStore } from '../../functions/trees/store.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { conformanceRecorder } from '../support/conformance-recorder.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const COLLECTION = '/configuration_manager/configs/{treeId}/exemptions';
const ONE = `${COLLECTION}/{exemptionId}`;
const CHANGELOGS = '/configuration_manager/configs/{treeId}/changelogs';
const ADMIN = { principalId: 'ops', roles: 'admin' };
const READER = { principalId: 'viewer', roles: 'apiread' };
const MISSING_TREE = 'ffffffffffffffffffffffff';
const MISSING = '0123456789abcdef01234567';
const HANDLERS: Record<string, () => Promise<{ handler: unknown }>> = {
  createExemption: () => import('../../functions/exemptions/handlers/create.js'),
  listExemptions: () => import('../../functions/exemptions/handlers/list.js'),
  getExemption: () => import('../../functions/exemptions/handlers/get.js'),
  putExemption: () => import('../../functions/exemptions/handlers/put.js'),
  deleteExemption: () => import('../../functions/exemptions/handlers/delete.js'),
  listTreeChangelogs: () => import('../../functions/exemptions/handlers/changelogs.js'),
};

let tables: Record<string, string>;
let treeId: string;
let otherTree: string;
const handlers: Record<string, Handler> = {};
const answers = conformanceRecorder();

const call = (operationId: string, input: Parameters<typeof apiEvent>[0]) => {
  const route = liveRoutes.find((r) => r.operationId === operationId)!;
  vi.stubEnv('ROUTE_ROLES', routeRolesValue(route.roles));
  const recorded: Handler = async (event, context) => {
    const result = await handlers[operationId]!(event, context);
    answers.record(event, result);
    return result;
  };
  return invoke(recorded, apiEvent(input), lambdaContext(10_000));
};
const create = (body: unknown, authorizer = ADMIN, tree = treeId) =>
  call('createExemption', { method: 'POST', resource: COLLECTION, pathParameters: { treeId: tree }, body, authorizer });
const list = (query: Record<string, string> = {}, authorizer = READER, tree = treeId) =>
  call('listExemptions', { method: 'GET', resource: COLLECTION, pathParameters: { treeId: tree }, query, authorizer });
const get = (exemptionId: string, authorizer = READER, tree = treeId) =>
  call('getExemption', { method: 'GET', resource: ONE, pathParameters: { treeId: tree, exemptionId }, authorizer });
const put = (exemptionId: string, body: unknown, authorizer = ADMIN, tree = treeId) =>
  call('putExemption', { method: 'PUT', resource: ONE, pathParameters: { treeId: tree, exemptionId }, body, authorizer });
const remove = (exemptionId: string, authorizer = ADMIN, tree = treeId) =>
  call('deleteExemption', { method: 'DELETE', resource: ONE, pathParameters: { treeId: tree, exemptionId }, authorizer });
const changelog = (query: Record<string, string> = {}, authorizer = READER, tree = treeId) =>
  call('listTreeChangelogs', { method: 'GET', resource: CHANGELOGS, pathParameters: { treeId: tree }, query, authorizer });

const inDays = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString();
const body = (overrides: Record<string, unknown> = {}) => ({
  ruleId: 'ntp-servers',
  devices: ['r1', 'r2'],
  until: inDays(30),
  reason: 'NTP migration, change CHG-1234',
  ...overrides,
});
const created = async (overrides: Record<string, unknown> = {}, tree = treeId): Promise<Exemption> => {
  const res = await create(body(overrides), ADMIN, tree);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Exemption;
};
const problem = (res: { body: unknown }) => res.body as { type: string; detail: string; errors?: { field: string; message: string }[] };
const store = () => new ExemptionStore(documentClient, tables['compliance']!, tables['trees']!, () => tables['changelog']!);

const importTree = async (name: string): Promise<string> => {
  const { handler } = await import('../../functions/trees/handlers/import.js');
  const imported = await invoke(
    handler as Handler,
    apiEvent({
      method: 'POST',
      resource: '/configuration_manager/import/configs',
      body: { name, deviceType: 'cisco-ios', versions: [{ name: 'v1', variables: {}, root: { name: 'base', devices: ['r1', 'r2'], rules: [] } }] },
      authorizer: ADMIN,
    }),
    lambdaContext(10_000),
  );
  expect(imported.status).toBe(201);
  return (imported.body as { id: string }).id;
};

beforeAll(async () => {
  tables = await createTables();
  vi.stubEnv('LOG_LEVEL', 'error');
  vi.stubEnv('COMPLIANCE_TABLE', tables['compliance']!);
  vi.stubEnv('TREES_TABLE', tables['trees']!);
  vi.stubEnv('CHANGELOG_TABLE', tables['changelog']!);
  vi.resetModules();
  treeId = await importTree('exemptions golden');
  otherTree = await importTree('exemptions other');
  for (const [operationId, load] of Object.entries(HANDLERS)) handlers[operationId] = (await load()).handler as Handler;
}, 60_000);

afterAll(() => {
  vi.unstubAllEnvs();
});

describe('POST …/configs/{treeId}/exemptions', () => {
  it('answers 201 with the exemption and its path, recording who made it', async () => {
    const until = inDays(10);
    const res = await create(body({ until }));
    expect(res.status).toBe(201);
    const exemption = res.body as Exemption;
    expect(exemption).toEqual({
      exemptionId: expect.stringMatching(/^[0-9a-f]{24}$/),
      treeId,
      ruleId: 'ntp-servers',
      devices: ['r1', 'r2'],
      until,
      reason: 'NTP migration, change CHG-1234',
      createdAt: expect.any(String),
      createdBy: 'ops',
      updatedAt: exemption.createdAt,
      updatedBy: 'ops',
    });
    expect(res.headers['Location']).toBe(`/v1/configuration_manager/configs/${treeId}/exemptions/${exemption.exemptionId}`);
    expect((await get(exemption.exemptionId)).body).toEqual(exemption);
  });

  it('takes a selector instead of devices, its pattern compiled by RE2', async () => {
    const exemption = await created({ devices: undefined, selector: { group: 'edge', namePattern: '^edge-(lon|par)-\\d+$' } });
    expect(exemption.selector).toEqual({ group: 'edge', namePattern: '^edge-(lon|par)-\\d+$' });
    expect(exemption).not.toHaveProperty('devices');
  });

  it('accepts until with an offset, and keeps it as written', async () => {
    const at = new Date(Date.now() + 86_400_000);
    const until = `${at.toISOString().slice(0, 19)}+05:30`;
    expect((await created({ until })).until).toBe(until);
  });

  it.each([
    ['both devices and a selector', { selector: { group: 'edge' } }, 'selector', /not be given with devices/],
    ['neither devices nor a selector', { devices: undefined }, 'devices', /or selector must be given/],
    ['a device named twice', { devices: ['r1', 'r1'] }, 'devices', /duplicate items/],
    ['no device', { devices: [] }, 'devices', /fewer than 1/],
    ['more than 1,000 devices', { devices: Array.from({ length: 1001 }, (_, i) => `d${i}`) }, 'devices', /more than 1000/],
    ['a device name with a slash', { devices: ['a/b'] }, 'devices.0', /pattern/],
    ['a device name with a zero-width space', { devices: ['r\u200b1'] }, 'devices.0', /./],
    ['an empty selector', { devices: undefined, selector: {} }, 'selector', /fewer than 1/],
    ['a selector member it does not know', { devices: undefined, selector: { site: 'lon' } }, 'selector.site', /not allowed/],
    ['a name pattern RE2 cannot compile', { devices: undefined, selector: { namePattern: '(a' } }, 'selector.namePattern', /RE2/],
    ['a lookahead (no RE2)', { devices: undefined, selector: { namePattern: '(?=a)' } }, 'selector.namePattern', /RE2/],
    ['until without an offset', { until: '2030-01-01T00:00:00' }, 'until', /pattern/],
    ['until as a date only', { until: '2030-01-01' }, 'until', /pattern/],
    ['until on a day that does not exist', { until: '2027-02-30T00:00:00Z' }, 'until', /real date/],
    ['until at hour 24', { until: '2027-02-10T24:00:00Z' }, 'until', /real date/],
    ['until in the past', { until: '2020-01-01T00:00:00Z' }, 'until', /in the future/],
    ['until more than five years ahead', { until: inDays(5 * 366 + 2) }, 'until', /5 years/],
    ['an empty reason', { reason: '' }, 'reason', /fewer than 1/],
    ['a reason of spaces', { reason: '   ' }, 'reason', /pattern/],
    ['a reason over 1,024 characters', { reason: 'x'.repeat(1025) }, 'reason', /more than 1024/],
    ['a rule id with a space', { ruleId: 'ntp servers' }, 'ruleId', /pattern/],
    ['no rule id', { ruleId: undefined }, 'ruleId', /required/],
    ['a member it does not know', { owner: 'alice' }, 'owner', /not allowed/],
  ])('answers 400 for %s, naming the field', async (_what, overrides, field, message) => {
    const res = await create(body(overrides));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    const errors = problem(res).errors ?? [];
    expect(
      errors.some((e) => e.field === field && message.test(e.message)),
      JSON.stringify(errors),
    ).toBe(true);
  });

  it('answers 404 for a tree that does not exist, and stores nothing', async () => {
    const res = await create(body(), ADMIN, MISSING_TREE);
    expect(res.status).toBe(404);
    expect(problem(res).detail).toContain(MISSING_TREE);
    expect((await store().list(MISSING_TREE, 10)).items).toEqual([]);
  });

  it('refuses a reader (403)', async () => {
    expect((await create(body(), READER)).status).toBe(403);
  });

  it(`answers 413 past the tree's limit, counted atomically, and takes one again after a delete`, async () => {
    const tree = await importTree('exemptions at the limit');
    const first = await created({}, tree);
    // One below the limit, as 499 creates would leave it.
    await documentClient.send(
      new UpdateCommand({
        TableName: tables['compliance'],
        Key: { pk: exemptionsPk(tree), sk: 'COUNT' },
        UpdateExpression: 'SET #c = :c',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':c': 499 },
      }),
    );
    await created({ ruleId: 'last' }, tree);
    const over = await create(body({ ruleId: 'one-too-many' }), ADMIN, tree);
    expect(over.status).toBe(413);
    expect(problem(over).detail).toMatch(/500 exemptions/);
    expect((await list({}, READER, tree)).body.items.map((e: Exemption) => e.ruleId)).not.toContain('one-too-many');
    expect((await remove(first.exemptionId, ADMIN, tree)).status).toBe(204);
    expect((await create(body({ ruleId: 'after-delete' }), ADMIN, tree)).status).toBe(201);
  });
});

describe('GET …/configs/{treeId}/exemptions', () => {
  it('lists newest first, in pages whose cursor continues the same tree only', async () => {
    const tree = await importTree('exemptions paged');
    const made: Exemption[] = [];
    for (let i = 0; i < 5; i++) made.push(await created({ ruleId: `rule-${i}` }, tree));
    const first = await list({ limit: '2' }, READER, tree);
    expect(first.status).toBe(200);
    expect(first.body.items.map((e: Exemption) => e.ruleId)).toEqual(['rule-4', 'rule-3']);
    const second = await list({ limit: '2', cursor: first.body.next }, ADMIN, tree);
    expect(second.body.items.map((e: Exemption) => e.ruleId)).toEqual(['rule-2', 'rule-1']);
    const last = await list({ limit: '2', cursor: second.body.next }, READER, tree);
    expect(last.body.items.map((e: Exemption) => e.ruleId)).toEqual(['rule-0']);
    expect(last.body).not.toHaveProperty('next');
    const all = await list({}, READER, tree);
    expect(all.body.items).toEqual([...made].reverse());
    expect(all.body).not.toHaveProperty('next');
    // A cursor of another tree, or not issued by the service, is a 400.
    expect((await list({ cursor: first.body.next }, READER, otherTree)).status).toBe(400);
    expect((await list({ cursor: 'bm90LWEtY3Vyc29y' }, READER, tree)).status).toBe(400);
    expect((await list({ limit: '101' }, READER, tree)).status).toBe(400);
  });

  it('answers a page exactly the size of what is left without next', async () => {
    const tree = await importTree('exemptions exact page');
    for (let i = 0; i < 3; i++) await created({ ruleId: `rule-${i}` }, tree);
    const page = await list({ limit: '3' }, READER, tree);
    expect(page.body.items).toHaveLength(3);
    expect(page.body).not.toHaveProperty('next');
  });

  it('answers an empty list for a tree without exemptions, and 404 for no tree', async () => {
    expect((await list({}, READER, otherTree)).body).toEqual({ items: [] });
    expect((await list({}, READER, MISSING_TREE)).status).toBe(404);
  });
});

describe('GET, PUT and DELETE …/exemptions/{exemptionId}', () => {
  it('replaces every field but who made it and when, and shows who replaced it', async () => {
    const before = await created();
    const until = inDays(60);
    const res = await put(before.exemptionId, body({ devices: undefined, selector: { platform: 'ios-xr' }, until, reason: 'extended' }), {
      principalId: 'lead',
      roles: 'admin',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      exemptionId: before.exemptionId,
      treeId,
      ruleId: 'ntp-servers',
      selector: { platform: 'ios-xr' },
      until,
      reason: 'extended',
      createdAt: before.createdAt,
      createdBy: 'ops',
      updatedAt: expect.any(String),
      updatedBy: 'lead',
    });
    expect((await get(before.exemptionId)).body).toEqual(res.body);
  });

  it('answers 204 to a delete, then 404', async () => {
    const exemption = await created();
    expect((await remove(exemption.exemptionId)).status).toBe(204);
    expect((await get(exemption.exemptionId)).status).toBe(404);
    expect((await remove(exemption.exemptionId)).status).toBe(404);
    expect((await put(exemption.exemptionId, body())).status).toBe(404);
  });

  it('answers 404 for an unknown exemption, an exemption of another tree, or an unknown tree', async () => {
    const exemption = await created();
    for (const res of [
      await get(MISSING),
      await get(exemption.exemptionId, READER, otherTree),
      await get(exemption.exemptionId, READER, MISSING_TREE),
      await put(exemption.exemptionId, body(), ADMIN, otherTree),
      await remove(exemption.exemptionId, ADMIN, MISSING_TREE),
    ]) {
      expect(res.status).toBe(404);
      expect(res.contentType).toBe('application/problem+json');
    }
    expect((await get(exemption.exemptionId)).status).toBe(200);
  });

  it('answers 400 for an id that is not 24 hex digits, and for a body that is invalid', async () => {
    expect((await get('XYZ')).status).toBe(400);
    const exemption = await created();
    expect((await put(exemption.exemptionId, body({ until: '2020-01-01T00:00:00Z' }))).status).toBe(400);
  });

  it('lets readers read and refuses them writes (403)', async () => {
    const exemption = await created();
    expect((await get(exemption.exemptionId, READER)).status).toBe(200);
    expect((await put(exemption.exemptionId, body(), READER)).status).toBe(403);
    expect((await remove(exemption.exemptionId, READER)).status).toBe(403);
    expect((await get(exemption.exemptionId, { principalId: 'nobody', roles: '' })).status).toBe(403);
  });

  it('answers 409 changed to a replace or delete of an exemption another write changed since it was read', async () => {
    const exemption = await created();
    const real = store();
    // A replace that reads the exemption, then loses the race to another PUT.
    const racing: ExemptionDeps = {
      store: {
        ...real,
        get: async (tree, id) => {
          const read = await real.get(tree, id);
          expect((await put(id, body({ reason: 'the other write' }))).status).toBe(200);
          return read;
        },
        list: real.list.bind(real),
        create: real.create.bind(real),
        replace: real.replace.bind(real),
        delete: real.delete.bind(real),
      },
      trees: createTreeStore(documentClient, tables['trees']),
      now: () => new Date(),
    };
    await expect(replaceExemption(treeId, exemption.exemptionId, body({ reason: 'mine' }), 'ops', racing)).rejects.toMatchObject({
      status: 409,
      slug: 'changed',
    });
    expect(((await get(exemption.exemptionId)).body as Exemption).reason).toBe('the other write');
    const stale = (await real.get(treeId, exemption.exemptionId))!;
    expect((await put(exemption.exemptionId, body({ reason: 'newer' }))).status).toBe(200);
    await expect(real.delete(stale, new Date().toISOString(), 'ops')).rejects.toMatchObject({ status: 409, slug: 'changed' });
    expect((await get(exemption.exemptionId)).status).toBe(200);
  });
});

describe('GET …/configs/{treeId}/changelogs', () => {
  it('records each create, replace and delete field by field under the exemption id, with who made it, newest first', async () => {
    const tree = await importTree('exemptions audited');
    const exemption = await created({ until: '2030-01-01T00:00:00Z' }, tree);
    const id = exemption.exemptionId;
    expect((await put(id, body({ devices: ['r1'], until: '2030-06-01T00:00:00+02:00' }), { principalId: 'lead', roles: 'admin' }, tree)).status).toBe(200);
    expect((await remove(id, ADMIN, tree)).status).toBe(204);
    const res = await changelog({}, READER, tree);
    expect(res.status).toBe(200);
    const entries = res.body.items as ChangelogEntry[];
    expect(entries.map((e) => [e.kind, e.name, e.action, e.by])).toEqual([
      ['tree', tree, 'exemption-deleted', 'ops'],
      ['tree', tree, 'exemption-replaced', 'lead'],
      ['tree', tree, 'exemption-created', 'ops'],
    ]);
    const [deleted, replaced, made] = entries as [ChangelogEntry, ChangelogEntry, ChangelogEntry];
    const sha = expect.stringMatching(/^[0-9a-f]{64}$/);
    expect(made.changes).toEqual([
      { field: `${id}.devices.count`, to: 2 },
      { field: `${id}.devices.sha256`, to: sha },
      { field: `${id}.reason`, to: 'NTP migration, change CHG-1234' },
      { field: `${id}.ruleId`, to: 'ntp-servers' },
      { field: `${id}.until`, to: '2030-01-01T00:00:00Z' },
    ]);
    expect(replaced.changes).toEqual([
      { field: `${id}.devices.count`, from: 2, to: 1 },
      { field: `${id}.devices.sha256`, from: sha, to: sha },
      { field: `${id}.until`, from: '2030-01-01T00:00:00Z', to: '2030-06-01T00:00:00+02:00' },
    ]);
    expect(deleted.changes.map((c) => c.field)).toEqual([`${id}.devices.count`, `${id}.devices.sha256`, `${id}.reason`, `${id}.ruleId`, `${id}.until`]);
    expect(deleted.changes.every((c) => c.to === undefined && c.from !== undefined)).toBe(true);
    // Paged by its cursor.
    const first = await changelog({ limit: '2' }, ADMIN, tree);
    expect(first.body.items).toHaveLength(2);
    const rest = await changelog({ limit: '2', cursor: first.body.next }, READER, tree);
    expect(rest.body.items.map((e: ChangelogEntry) => e.action)).toEqual(['exemption-created']);
    expect(rest.body).not.toHaveProperty('next');
  });

  it('answers an empty trail for a tree without changes, 404 for no tree, 403 without a role', async () => {
    const tree = await importTree('exemptions untouched');
    expect((await changelog({}, READER, tree)).body).toEqual({ items: [] });
    expect((await changelog({}, READER, MISSING_TREE)).status).toBe(404);
    expect((await changelog({}, { principalId: 'nobody', roles: '' }, tree)).status).toBe(403);
  });

  it('writes nothing to the trail when a write is refused', async () => {
    const tree = await importTree('exemptions refused');
    expect((await create(body({ until: '2020-01-01T00:00:00Z' }), ADMIN, tree)).status).toBe(400);
    expect((await create(body(), READER, tree)).status).toBe(403);
    expect((await changelog({}, READER, tree)).body).toEqual({ items: [] });
  });
});

describe('ExemptionStore.active', () => {
  it('gives the exemptions whose until is after the time asked, offsets compared as times', async () => {
    const tree = await importTree('exemptions active');
    const s = store();
    const at = new Date(Date.now() + 10 * 86_400_000);
    // An hour before `at` as a time, two hours after it as text.
    const hour = (offsetHours: number) => new Date(at.getTime() + offsetHours * 3_600_000);
    const withOffset = `${hour(2).toISOString().slice(0, 19)}+03:00`; // at - 1 h
    const ends = await created({ ruleId: 'ends-before', until: withOffset }, tree);
    const holds = await created({ ruleId: 'holds', until: hour(1).toISOString() }, tree);
    const exact = await created({ ruleId: 'ends-at', until: at.toISOString() }, tree);
    const active = await s.active(tree, at);
    expect(active.map((e) => e.ruleId)).toEqual(['holds']);
    expect(active[0]).toEqual((await get(holds.exemptionId, READER, tree)).body);
    expect((await s.active(tree, new Date(at.getTime() - 1))).map((e) => e.ruleId).sort()).toEqual(['ends-at', 'holds']);
    expect((await s.active(tree, new Date())).map((e) => e.exemptionId).sort()).toEqual([ends.exemptionId, holds.exemptionId, exact.exemptionId].sort());
    expect(await s.active(MISSING_TREE, new Date())).toEqual([]);
  });
});

describe('openapi.json', () => {
  it('documents every answer of the exemption routes above: status, content type, Location, bodies', () => {
    const { problems, checked } = answers.check();
    expect(checked).toBeGreaterThan(40);
    expect(problems).toEqual([]);
  });
});
