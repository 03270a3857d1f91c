/**
 * Starting runs and rollbacks through the real handlers and the DynamoDB remediation store
 * (DynamoDB Local): the adapter lease (one apply run or rollback commits through an adapter at
 * a time), rollbacks of failed runs and after a failed start, the bounds of `listKeys` against
 * the run item's size, and the device list's cursor after the longest device names.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { GetCommand, PutCommand, QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { emptyCounts, type Report, type ReportIssue } from '../../functions/compliance/model.js';
import { ComplianceStore, type DeviceReport } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { routeRolesValue } from '../../functions/platform/route-authorization.js';
import { LIST_KEY_LIMITS, MAX_RULE_IDS } from '../../functions/remediation/service.js';
import { leaseExpiry, type DynamoRemediationStore } from '../../functions/remediation/store.js';
import { CONFIG_LIMITS } from '../../functions/trees/config-checks.js';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';

const runs = vi.hoisted(() => ({ store: undefined as unknown }));
vi.mock('../../functions/remediation/wiring.js', () => ({ remediationStore: () => runs.store }));

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type Body = Record<string, unknown> & { remediationId: string; detail: string; type: string; next?: string };
const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-RemediationRun:live';
const TREE = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const BATCHES = '/configuration_manager/compliance_reports/batches/{batchId}/remediations';
const RUN = '/configuration_manager/remediations/{remediationId}';
const ADMIN = { principalId: 'ops', roles: 'admin' };
/** The longest device names: 253 code points, 759 UTF-8 bytes each. */
const LONGEST = ['設'.repeat(CONFIG_LIMITS.deviceName), '備'.repeat(CONFIG_LIMITS.deviceName)];
/** Rule ids as long as a rule id may be, as many as a start may name. */
const LONG_RULES = Array.from({ length: MAX_RULE_IDS }, (_, i) => `${String(i).padStart(4, '0')}${'r'.repeat(CONFIG_LIMITS.ruleId - 4)}`);

let tables: Record<string, string>;
let lambda: LambdaInvokeEndpoint;
let Store: typeof DynamoRemediationStore;
let store: DynamoRemediationStore;
/** The store's clock (epoch ms): the lease's expiry is compared with it. */
const clock = { now: Date.now() };
const faults = { batchWrite: false };
const handlers: Record<string, Handler> = {};
/** The executions the routes started: their names and events. */
const executions: { name: string; payload: Record<string, unknown> }[] = [];
let batches = 0;

const issue = (ruleId: string): ReportIssue => ({ ruleId, node: 'base', path: '/ntp', severity: 'error', mode: 'required', message: `${ruleId} fails` });
const report = (batchId: string, device: string, issues: ReportIssue[]): DeviceReport => ({
  batchId,
  device,
  treeId: TREE,
  version: 'v1',
  node: 'base',
  grade: 'fail' as Report['grade'],
  score: 40,
  totals: { errors: issues.length, warnings: 0, infos: 0, passes: 1 },
  issues,
  checkedAt: '2026-11-23T10:00:00.000Z',
});

/** A completed batch of `adapterId` whose devices fail rule `ntp` (and the first long rule). */
const seed = async (adapterId: string, devices: readonly string[]): Promise<string> => {
  const batchId = `fedcba0123456789abcd${String(++batches).padStart(4, '0')}`;
  const compliance = new ComplianceStore(documentClient, tables['compliance']!);
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  const reports = devices.map((d) => report(batchId, d, [issue('ntp'), issue(LONG_RULES[0]!)]));
  const rules = ['ntp', ...LONG_RULES].map((id) => ({ id, node: 'base', path: '/ntp', mode: 'required' as const, severity: 'error' as const, value: 1 }));
  await compliance.create(
    { batchId, treeId: TREE, version: 'v1', adapterId, total: reports.length, started: new Date().toISOString(), chunks: 1, concurrency: 10, expiresAt },
    { variables: {}, rulesByNode: { base: rules }, nodes: ['base'] },
    [reports.map(({ device }) => ({ device, node: 'base' }))],
  );
  await compliance.putReports(
    batchId,
    { chunk: 0, attempt: 1 },
    reports.map((r, position) => ({ position, report: r })),
    expiresAt,
  );
  await compliance.finish(batchId, 'completed', new Date().toISOString(), { ...emptyCounts(), devices: reports.length });
  return batchId;
};

const call = (operationId: string, input: Parameters<typeof apiEvent>[0]) => {
  const route = liveRoutes.find((r) => r.operationId === operationId)!;
  vi.stubEnv('ROUTE_ROLES', routeRolesValue(route.roles));
  return invoke(handlers[operationId]!, apiEvent(input), lambdaContext(10_000)) as Promise<{ status: number; body: Body }>;
};
const start = (batchId: string, body: unknown) =>
  call('startRemediation', { method: 'POST', resource: BATCHES, pathParameters: { batchId }, body, authorizer: ADMIN });
const devices = (remediationId: string, query: Record<string, string>) =>
  call('listRemediationDevices', { method: 'GET', resource: `${RUN}/devices`, pathParameters: { remediationId }, query, authorizer: ADMIN });
const rollback = (remediationId: string) =>
  call('startRemediationRollback', { method: 'POST', resource: `${RUN}/rollback`, pathParameters: { remediationId }, authorizer: ADMIN });

/** An apply run on a new batch of `adapterId` whose device `d1` committed (rollback id 7), ended `status`. */
const appliedRun = async (adapterId: string, status: 'completed' | 'failed'): Promise<string> => {
  const res = await start(await seed(adapterId, ['d1', 'd2']), { mode: 'apply' });
  expect(res.status).toBe(202);
  const { remediationId } = res.body;
  await store.putDevice(remediationId, { device: 'd1', state: 'fixed', rollbackId: 7, rules: [], updatedAt: new Date().toISOString() });
  await store.finish(remediationId, status, new Date().toISOString(), status === 'failed' ? 'a part failed' : undefined);
  return remediationId;
};
const lease = async (adapterId: string) =>
  (await documentClient.send(new GetCommand({ TableName: tables['compliance']!, Key: { pk: `ML#${adapterId}`, sk: 'LEASE' } }))).Item;
const partition = async (remediationId: string) =>
  (
    await documentClient.send(
      new QueryCommand({ TableName: tables['compliance']!, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `M#${remediationId}` } }),
    )
  ).Items ?? [];

beforeAll(async () => {
  tables = await createTables();
  const adapters = createAdapterStore(documentClient, tables['adapters']);
  for (const name of ['lab-a', 'lab-b', 'lab-c', 'lab-d', 'lab-e', 'lab-f', 'lab-g', 'lab-h']) {
    await adapters.put(
      { name, type: 'nso', baseUrl: 'https://nso.example.net', auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/nso#password' } },
      new Date().toISOString(),
    );
  }
  lambda = await startLambdaInvokeEndpoint({
    functions: new Map([['netconfig-RemediationRun', async (payload: string, name: string) => void executions.push({ name, payload: JSON.parse(payload) })]]),
    log: () => undefined,
  });
  vi.stubEnv('LOG_LEVEL', 'error');
  vi.stubEnv('COMPLIANCE_TABLE', tables['compliance']!);
  vi.stubEnv('ADAPTERS_TABLE', tables['adapters']!);
  vi.stubEnv('IDEMPOTENCY_TABLE', tables['idempotency']!);
  vi.stubEnv('CHANGELOG_TABLE', tables['changelog']!);
  vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.url);
  vi.stubEnv('REMEDIATION_FUNCTION', FUNCTION_ARN);
  vi.resetModules();
  // The store of the handlers' own modules: its 409s are the problems they answer.
  ({ DynamoRemediationStore: Store } = await import('../../functions/remediation/store.js'));
  // DynamoDB Local, with writes of devices refused while `faults.batchWrite` is set.
  const client = {
    send: (command: object) =>
      faults.batchWrite && command.constructor.name === 'BatchWriteCommand'
        ? Promise.reject(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException' }))
        : documentClient.send(command as never),
  } as unknown as DynamoDBDocumentClient;
  store = new Store(
    client,
    tables['compliance']!,
    async () => undefined,
    () => clock.now,
  );
  runs.store = store;
  handlers['startRemediation'] = (await import('../../functions/remediation/handlers/start.js')).handler as Handler;
  handlers['listRemediationDevices'] = (await import('../../functions/remediation/handlers/list-devices.js')).handler as Handler;
  handlers['startRemediationRollback'] = (await import('../../functions/remediation/handlers/rollback.js')).handler as Handler;
}, 120_000);

afterAll(async () => {
  await lambda?.close();
  vi.unstubAllEnvs();
});

describe('the adapter lease', () => {
  it('lets one apply run commit through an adapter at a time; a dry-run is never held back', async () => {
    const batchId = await seed('lab-a', ['d1', 'd2']);
    const first = await start(batchId, { mode: 'apply' });
    expect(first.status).toBe(202);
    const second = await start(batchId, { mode: 'apply' });
    expect(second.status).toBe(409);
    expect(second.body.type).toBe('urn:netconfig:problem:remediation-running');
    expect(second.body.detail).toContain(`run '${first.body.remediationId}'`);
    expect((await start(batchId, { mode: 'dry-run' })).status).toBe(202);
    expect(await lease('lab-a')).toMatchObject({ remediationId: first.body.remediationId, action: 'run' });

    await store.finish(first.body.remediationId, 'completed', new Date().toISOString());
    expect(await lease('lab-a')).toBeUndefined();
    const third = await start(batchId, { mode: 'apply' });
    expect(third.status).toBe(202);
    // A run of another adapter is not held back.
    expect((await start(await seed('lab-b', ['d1']), { mode: 'apply' })).status).toBe(202);
    // Ending a run that holds no lease (the refused one's id, a dry-run) leaves the holder's.
    expect(await lease('lab-a')).toMatchObject({ remediationId: third.body.remediationId });
  });

  it('refuses a rollback while another run commits through the adapter, and a run while a rollback does', async () => {
    const done = await appliedRun('lab-c', 'completed');
    const running = await start(await seed('lab-c', ['d1']), { mode: 'apply' });
    expect(running.status).toBe(202);
    const refused = await rollback(done);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toBe('urn:netconfig:problem:remediation-running');
    expect(refused.body.detail).toContain(running.body.remediationId);
    // Refused by the lease, the rollback did not start: it can be started once the run ends.
    expect((await store.get(done))?.rollback).toBeUndefined();

    await store.finish(running.body.remediationId, 'completed', new Date().toISOString());
    expect((await rollback(done)).status).toBe(202);
    const during = await start(await seed('lab-c', ['d1']), { mode: 'apply' });
    expect(during.status).toBe(409);
    expect(during.body.detail).toContain(`the rollback of run '${done}'`);
    await store.finishRollback(done, 'completed', new Date().toISOString());
    expect(await lease('lab-c')).toBeUndefined();
  });

  it('lapses on its own when its run can no longer be running', async () => {
    const batchId = await seed('lab-d', ['d1']);
    const first = await start(batchId, { mode: 'apply' });
    const held = await lease('lab-d');
    expect(held?.['expiresAt']).toBe(leaseExpiry((await store.get(first.body.remediationId))!.started));
    try {
      clock.now = Number(held?.['expiresAt']) * 1000 - 1000;
      expect((await start(batchId, { mode: 'apply' })).status).toBe(409);
      clock.now = (Number(held?.['expiresAt']) + 1) * 1000;
      const next = await start(batchId, { mode: 'apply' });
      expect(next.status).toBe(202);
      // The lapsed holder's end does not release its successor's lease.
      await store.finish(first.body.remediationId, 'failed', new Date().toISOString(), 'timed out');
      expect(await lease('lab-d')).toMatchObject({ remediationId: next.body.remediationId });
    } finally {
      clock.now = Date.now();
    }
  });
});

describe('rollbacks', () => {
  it('roll back a failed apply run, never a dry-run or a running run (each 409 says which)', async () => {
    const failed = await appliedRun('lab-e', 'failed');
    expect((await rollback(failed)).status).toBe(202);
    await store.finishRollback(failed, 'completed', new Date().toISOString());

    const batchId = await seed('lab-e', ['d1']);
    const dry = await start(batchId, { mode: 'dry-run' });
    await store.finish(dry.body.remediationId, 'completed', new Date().toISOString());
    const ofDry = await rollback(dry.body.remediationId);
    expect(ofDry.status).toBe(409);
    expect(ofDry.body.detail).toContain('is a dry-run');
    const running = await start(batchId, { mode: 'apply' });
    const ofRunning = await rollback(running.body.remediationId);
    expect(ofRunning.status).toBe(409);
    expect(ofRunning.body.type).toBe('urn:netconfig:problem:rollback-refused');
    expect(ofRunning.body.detail).toContain('is still running');
    await store.finish(running.body.remediationId, 'completed', new Date().toISOString());
  });

  it('can be started again after one that could not be started (503), or left a device to roll back; each attempt is an execution of its own', async () => {
    const remediationId = await appliedRun('lab-f', 'completed');
    vi.stubEnv('REMEDIATION_FUNCTION', 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-Missing:live');
    const first = await rollback(remediationId);
    vi.stubEnv('REMEDIATION_FUNCTION', FUNCTION_ARN);
    expect(first.status).toBe(503);
    expect((await store.get(remediationId))?.rollback?.status).toBe('failed');
    expect(await lease('lab-f')).toBeUndefined();

    const again = await rollback(remediationId);
    expect(again.status).toBe(202);
    expect((await store.get(remediationId))?.rollback).toMatchObject({ status: 'running', attempt: 2 });
    expect((await rollback(remediationId)).status).toBe(409);
    // Lambda keeps an execution's name for days: the second attempt runs under a name of its own.
    await lambda.idle();
    expect(executions.filter((e) => e.payload['remediationId'] === remediationId && e.payload['action'] === 'rollback')).toEqual([
      { name: `${remediationId}-rollback-2`, payload: { remediationId, action: 'rollback', attempt: 2 } },
    ]);

    // NSO refused d1's rollback file: the rollback completed, and d1 is still to roll back.
    const refused = { device: 'd1', state: 'fixed' as const, rollbackId: 7, rules: [], updatedAt: new Date().toISOString() };
    await store.putDevice(remediationId, {
      ...refused,
      rollback: { state: 'failed', at: new Date().toISOString(), error: { kind: 'refused', reason: 'NSO said no' } },
    });
    await store.finishRollback(remediationId, 'completed', new Date().toISOString());
    expect((await rollback(remediationId)).status).toBe(202);
    expect((await store.get(remediationId))?.rollback).toMatchObject({ status: 'running', attempt: 3 });

    // This attempt reached d1 (`applying`), then failed: d1's file is never applied again, and
    // no device is left, so no attempt starts.
    await store.putDevice(remediationId, { ...refused, rollback: { state: 'applying', at: new Date().toISOString() } });
    await store.finishRollback(remediationId, 'failed', new Date().toISOString());
    const after = await rollback(remediationId);
    expect(after.status).toBe(409);
    expect(after.body.detail).toContain('no device left to roll back');
  });

  it('takes over the lease of a run that has ended when its release was lost', async () => {
    const remediationId = await appliedRun('lab-h', 'completed');
    // The run ended, but its lease is still there (the delete that releases it failed).
    await documentClient.send(
      new PutCommand({
        TableName: tables['compliance']!,
        Item: {
          pk: 'ML#lab-h',
          sk: 'LEASE',
          holder: `${remediationId}/run`,
          remediationId,
          action: 'run',
          started: new Date().toISOString(),
          expiresAt: Math.floor(clock.now / 1000) + 86_400,
        },
      }),
    );
    const next = await start(await seed('lab-h', ['d3']), { mode: 'apply' });
    expect(next.status).toBe(202);
    expect(await lease('lab-h')).toMatchObject({ remediationId: next.body.remediationId, action: 'run' });
  });

  it('reads only the rollback ids of the devices not rolled back yet, newest commit first', async () => {
    const remediationId = await appliedRun('lab-g', 'completed');
    await store.putDevice(remediationId, { device: 'd2', state: 'fixed', rollbackId: 9, rules: [], updatedAt: new Date().toISOString() });
    const sent: Record<string, unknown>[] = [];
    const spy: DynamoDBDocumentClient = {
      send: (command: { input: Record<string, unknown> }) => {
        sent.push(command.input);
        return documentClient.send(command as never);
      },
    } as never;
    expect(await new Store(spy, tables['compliance']!).rollbackIds(remediationId)).toEqual([9, 7]);
    expect(sent.map((input) => input['ProjectionExpression'])).toEqual(['rollbackId']);
  });
});

describe('the run item', () => {
  it('holds the largest listKeys and ruleIds a start may send (inside 400 KB); a larger listKeys is a 400', async () => {
    const name = (i: number, length: number) => `n${String(i).padStart(4, '0')}${'n'.repeat(length - 5)}`;
    const segment = Math.floor(LIST_KEY_LIMITS.pathLength / 4);
    const path = (i: number) => [0, 1, 2, 3].map((s) => name(i, s < 3 ? segment - 1 : LIST_KEY_LIMITS.pathLength - 3 * segment)).join('/');
    const listKeys = Object.fromEntries(
      Array.from({ length: LIST_KEY_LIMITS.paths }, (_, i) => [
        path(i),
        Array.from({ length: LIST_KEY_LIMITS.keys }, (_, k) => name(k, LIST_KEY_LIMITS.keyLength)),
      ]),
    );
    expect(Object.keys(listKeys).every((p) => p.length === LIST_KEY_LIMITS.pathLength)).toBe(true);
    const res = await start(await seed('lab-b', ['d1']), { mode: 'dry-run', ruleIds: LONG_RULES, listKeys });
    expect(res.status, res.body.detail?.slice(0, 300)).toBe(202);
    const meta = (await partition(res.body.remediationId)).find((item) => item['sk'] === 'META')!;
    expect(JSON.parse(meta['listKeys'] as string)).toEqual(listKeys);
    expect(meta['ruleIds']).toHaveLength(MAX_RULE_IDS);

    for (const over of [
      { ...listKeys, extra: ['name'] },
      { [`${path(0)}x`]: ['name'] },
      { 'a/b': ['k'.repeat(LIST_KEY_LIMITS.keyLength + 1)] },
      { 'a/b': Array.from({ length: LIST_KEY_LIMITS.keys + 1 }, (_, k) => `k${k}`) },
      { 'a//b': ['name'] },
      { インターフェース: ['name'] },
    ]) {
      expect((await start(await seed('lab-b', ['d1']), { mode: 'dry-run', listKeys: over })).status).toBe(400);
    }
  });

  it('is written before the devices: a failure writing them ends the run failed, never devices without their run', async () => {
    faults.batchWrite = true;
    try {
      const res = await start(await seed('lab-e', ['d1', 'd2']), { mode: 'apply' });
      expect(res.status).toBe(503);
    } finally {
      faults.batchWrite = false;
    }
    const items: Record<string, unknown>[] = [];
    let from: Record<string, unknown> | undefined;
    do {
      const out = await documentClient.send(
        new ScanCommand({
          TableName: tables['compliance']!,
          FilterExpression: 'begins_with(pk, :m)',
          ProjectionExpression: 'pk, sk, adapterId, #status, #mode, reason',
          ExpressionAttributeNames: { '#status': 'status', '#mode': 'mode' },
          ExpressionAttributeValues: { ':m': 'M#' },
          ...(from ? { ExclusiveStartKey: from } : {}),
        }),
      );
      items.push(...(out.Items ?? []));
      from = out.LastEvaluatedKey;
    } while (from);
    const metas = items.filter((item) => item['sk'] === 'META');
    expect(items.filter((item) => !metas.some((meta) => meta['pk'] === item['pk']))).toEqual([]);
    expect(metas.filter((meta) => String(meta['reason']).startsWith("The run's devices could not be recorded"))).toEqual([
      expect.objectContaining({ adapterId: 'lab-e', status: 'failed', mode: 'apply' }),
    ]);
    expect(await lease('lab-e')).toBeUndefined();
  });
});

describe('the device list', () => {
  it("pages past the longest device names: the next page's cursor is accepted", async () => {
    const res = await start(await seed('lab-b', [...LONGEST, 'zz']), { mode: 'dry-run' });
    const first = await devices(res.body.remediationId, { limit: '2' });
    expect(first.status).toBe(200);
    expect(first.body.next!.length).toBeGreaterThan(1024);
    const second = await devices(res.body.remediationId, { limit: '2', cursor: first.body.next! });
    expect(second.status).toBe(200);
    expect((second.body['items'] as { device: string }[]).map((d) => d.device)).toEqual([LONGEST[0]]);
  });
});
