/**
 * The compliance plan routes and the scheduled run through their real handlers: plans, batches
 * and the changelog in DynamoDB Local, the tree imported by its own route, batches' durable
 * executions started with Lambda Invoke against the local Invoke endpoint (which records them:
 * a started batch stays `running` until the test ends it), and the schedules kept by a recording
 * fake behind the `PlanSchedules` contract (the Scheduler client has its own tests).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { emptyCounts } from '../../functions/compliance/model.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import type { Plan, PlanSchedules } from '../../functions/plans/model.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { routeRolesValue } from '../../functions/platform/route-authorization.js';
import { listChangelog } from '../../functions/runtime/changelog.js';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { conformanceRecorder } from '../support/conformance-recorder.js';

/** The schedules as the Scheduler would hold them, and a switch that makes it refuse writes. */
const scheduler = vi.hoisted(() => ({
  held: new Map<string, { schedule?: string; timezone?: string; enabled: boolean }>(),
  down: false,
  /** Runs once inside the next `put`, before the schedule is held: lets a test interleave another request. */
  beforePut: undefined as (() => Promise<void>) | undefined,
}));
vi.mock('../../functions/plans/schedules.js', () => ({
  planSchedules: (): PlanSchedules => ({
    put: async (plan) => {
      const before = scheduler.beforePut;
      scheduler.beforePut = undefined;
      await before?.();
      if (scheduler.down) throw Object.assign(new Error('the Scheduler is unavailable'), { name: 'InternalServerException' });
      if (!plan.schedule) scheduler.held.delete(plan.planId);
      else scheduler.held.set(plan.planId, { schedule: plan.schedule, timezone: plan.timezone, enabled: plan.enabled });
    },
    remove: async (planId) => {
      if (scheduler.down) throw Object.assign(new Error('the Scheduler is unavailable'), { name: 'InternalServerException' });
      scheduler.held.delete(planId);
    },
  }),
}));

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const COLLECTION = '/configuration_manager/compliance_plans';
const ONE = `${COLLECTION}/{planId}`;
const ADMIN = { principalId: 'ops', roles: 'admin' };
const READER = { principalId: 'viewer', roles: 'apiread' };
const MISSING = 'ffffffffffffffffffffffff';

let tables: Record<string, string>;
let lambda: LambdaInvokeEndpoint;
let treeId: string;
const executions: string[] = [];
const handlers: Record<string, Handler> = {};
let runScheduled: typeof import('../../functions/plans/handlers/scheduled-run.js').handler;
let scheduledRun: typeof import('../../functions/plans/handlers/scheduled-run.js');
let planDeps: typeof import('../../functions/plans/handlers/deps.js').planDeps;

const answers = conformanceRecorder();
/** Calls a route's handler as API Gateway would, keeping its answer for the openapi.json check at the end. */
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
const create = (body: unknown, authorizer = ADMIN) => call('createCompliancePlan', { method: 'POST', resource: COLLECTION, body, authorizer });
const list = (query: Record<string, string> = {}, authorizer = READER) =>
  call('listCompliancePlans', { method: 'GET', resource: COLLECTION, query, authorizer });
const get = (planId: string, authorizer = READER) => call('getCompliancePlan', { method: 'GET', resource: ONE, pathParameters: { planId }, authorizer });
const put = (planId: string, body: unknown, authorizer = ADMIN) =>
  call('putCompliancePlan', { method: 'PUT', resource: ONE, pathParameters: { planId }, body, authorizer });
const remove = (planId: string, authorizer = ADMIN) =>
  call('deleteCompliancePlan', { method: 'DELETE', resource: ONE, pathParameters: { planId }, authorizer });
const run = (planId: string, authorizer = ADMIN) =>
  call('runCompliancePlan', { method: 'POST', resource: `${ONE}/run`, pathParameters: { planId }, authorizer });

let names = 0;
const planBody = (overrides: Record<string, unknown> = {}) => ({
  name: `nightly ${++names}`,
  treeId,
  version: 'v1',
  adapterId: 'lab-nso',
  schedule: 'cron(0 2 * * ? *)',
  timezone: 'Europe/Berlin',
  enabled: true,
  ...overrides,
});
const created = async (overrides: Record<string, unknown> = {}): Promise<Plan> => {
  const res = await create(planBody(overrides));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Plan;
};
const trail = async (planId: string) =>
  (await listChangelog(documentClient, { kind: 'plan', name: planId }, { limit: '100' }, tables['changelog'])).items.map((e) => ({
    action: e.action,
    by: e.by,
    fields: Object.fromEntries(e.changes.map((c) => [c.field, c.to])),
  }));
const compliance = () => new ComplianceStore(documentClient, tables['compliance']!);
const finish = (batchId: string) => compliance().finish(batchId, 'completed', new Date().toISOString(), { ...emptyCounts(), devices: 2 });

beforeAll(async () => {
  tables = await createTables();
  const adapters = createAdapterStore(documentClient, tables['adapters']);
  const adapter = {
    type: 'nso',
    baseUrl: 'https://nso.example.net',
    auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/nso#password' },
  } as const;
  for (const name of ['lab-nso', 'stopped-nso', 'doomed-nso']) await adapters.put({ name, ...adapter }, new Date().toISOString());
  await adapters.setState('stopped-nso', 'STOPPED', new Date().toISOString());
  lambda = await startLambdaInvokeEndpoint({
    functions: new Map([['netconfig-ComplianceBatch', async (_payload, name) => void executions.push(name)]]),
    log: () => undefined,
  });
  vi.stubEnv('LOG_LEVEL', 'error');
  vi.stubEnv('COMPLIANCE_TABLE', tables['compliance']!);
  vi.stubEnv('TREES_TABLE', tables['trees']!);
  vi.stubEnv('ADAPTERS_TABLE', tables['adapters']!);
  vi.stubEnv('CHANGELOG_TABLE', tables['changelog']!);
  vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.url);
  vi.stubEnv('COMPLIANCE_FUNCTION', 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-ComplianceBatch:live');
  vi.resetModules();
  const { handler: importTree } = await import('../../functions/trees/handlers/import.js');
  const imported = await invoke(
    importTree as Handler,
    apiEvent({
      method: 'POST',
      resource: '/configuration_manager/import/configs',
      body: {
        name: 'plans golden',
        deviceType: 'cisco-ios',
        versions: [
          { name: 'v1', variables: {}, root: { name: 'base', devices: ['r1', 'r2'], rules: [] } },
          { name: 'v2', variables: {}, root: { name: 'base', devices: ['r1'], rules: [] } },
        ],
      },
      authorizer: ADMIN,
    }),
    lambdaContext(10_000),
  );
  expect(imported.status).toBe(201);
  treeId = (imported.body as { id: string }).id;
  handlers['createCompliancePlan'] = (await import('../../functions/plans/handlers/create.js')).handler as Handler;
  handlers['listCompliancePlans'] = (await import('../../functions/plans/handlers/list.js')).handler as Handler;
  handlers['getCompliancePlan'] = (await import('../../functions/plans/handlers/get.js')).handler as Handler;
  handlers['putCompliancePlan'] = (await import('../../functions/plans/handlers/put.js')).handler as Handler;
  handlers['deleteCompliancePlan'] = (await import('../../functions/plans/handlers/delete.js')).handler as Handler;
  handlers['runCompliancePlan'] = (await import('../../functions/plans/handlers/run.js')).handler as Handler;
  scheduledRun = await import('../../functions/plans/handlers/scheduled-run.js');
  runScheduled = scheduledRun.handler;
  planDeps = (await import('../../functions/plans/handlers/deps.js')).planDeps;
}, 60_000);

afterAll(async () => {
  await lambda?.close();
  vi.unstubAllEnvs();
});

beforeEach(() => {
  scheduler.down = false;
  scheduler.beforePut = undefined;
  executions.length = 0;
});

describe('POST /configuration_manager/compliance_plans', () => {
  it('answers 201 with the plan and its path, writes its schedule and records who created it', async () => {
    const res = await create(planBody({ name: 'Core nightly', devices: ['r1'], sync: 'none' }));
    expect(res.status).toBe(201);
    const plan = res.body as Plan;
    expect(plan).toMatchObject({
      planId: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'Core nightly',
      treeId,
      version: 'v1',
      adapterId: 'lab-nso',
      devices: ['r1'],
      sync: 'none',
      schedule: 'cron(0 2 * * ? *)',
      timezone: 'Europe/Berlin',
      enabled: true,
      createdBy: 'ops',
      updatedBy: 'ops',
    });
    expect(plan).not.toHaveProperty('broken');
    expect(plan).not.toHaveProperty('schedulePending');
    expect(plan).not.toHaveProperty('revision');
    // 02:00 in Berlin is 00:00 or 01:00 UTC.
    expect(plan.nextRunAt).toMatch(/T0[01]:00:00\.000Z$/);
    expect(Date.parse(plan.nextRunAt!)).toBeGreaterThan(Date.now());
    expect(res.headers['Location']).toBe(`/v1${COLLECTION}/${plan.planId}`);
    expect(scheduler.held.get(plan.planId)).toEqual({ schedule: 'cron(0 2 * * ? *)', timezone: 'Europe/Berlin', enabled: true });
    expect(await trail(plan.planId)).toEqual([
      {
        action: 'created',
        by: 'ops',
        fields: expect.objectContaining({
          name: 'Core nightly',
          schedule: 'cron(0 2 * * ? *)',
          'devices.count': 1,
          'devices.sha256': expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      },
    ]);
  });

  it('keeps a plan without a schedule off the Scheduler and shows no next run', async () => {
    const { schedule: _schedule, timezone: _timezone, ...body } = planBody();
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('nextRunAt');
    expect(scheduler.held.has((res.body as Plan).planId)).toBe(false);
  });

  it.each([
    [{ schedule: 'cron(0 2 * * * *)' }, 'schedule', /one of day-of-month and day-of-week/],
    [{ schedule: 'rate(1 hours)' }, 'schedule', /singular for 1/],
    [{ schedule: 'at(2027-01-01T00:00:00)' }, 'schedule', /plan repeats/],
    [{ timezone: 'Mars/Olympus' }, 'timezone', /Mars\/Olympus/],
  ])('answers 400 naming the field for %j', async (overrides, field, message) => {
    const res = await create(planBody(overrides));
    expect(res.status).toBe(400);
    expect((res.body as { errors: unknown[] }).errors).toEqual([expect.objectContaining({ in: 'body', field, message: expect.stringMatching(message) })]);
  });

  it('answers 400 naming devices the version does not assign', async () => {
    const res = await create(planBody({ devices: ['r1', 'nowhere'] }));
    expect(res.status).toBe(400);
    expect((res.body as { errors: unknown[] }).errors).toEqual([expect.objectContaining({ field: 'devices' })]);
  });

  it.each([
    [{ treeId: MISSING }, /No tree has the id/],
    [{ version: 'v9' }, /has no version 'v9'/],
    [{ adapterId: 'no-such-nso' }, /No adapter is named/],
  ])('answers 404 as starting a batch does for %j', async (overrides, detail) => {
    const res = await create(planBody(overrides));
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toMatch(detail);
  });

  it('answers 409 name-taken for a name another plan holds, whatever its case', async () => {
    await created({ name: 'Edge weekly' });
    const res = await create(planBody({ name: 'EDGE WEEKLY' }));
    expect(res.status).toBe(409);
    expect((res.body as { type: string }).type).toBe('urn:netconfig:problem:name-taken');
  });

  it('refuses a reader', async () => {
    expect((await create(planBody(), READER)).status).toBe(403);
  });

  it('answers 503 when the Scheduler refuses, and keeps the plan marked until a PUT writes its schedule', async () => {
    scheduler.down = true;
    const body = planBody();
    const res = await create(body);
    expect(res.status).toBe(503);
    const [stored] = (await list({ limit: '100' })).body.items.filter((p: Plan) => p.name === body.name) as Plan[];
    expect(stored).toMatchObject({ schedulePending: true });
    expect(stored).not.toHaveProperty('nextRunAt');
    expect(scheduler.held.has(stored!.planId)).toBe(false);

    scheduler.down = false;
    const fixed = await put(stored!.planId, body);
    expect(fixed.status).toBe(200);
    expect(fixed.body).not.toHaveProperty('schedulePending');
    expect((await get(stored!.planId)).body).not.toHaveProperty('schedulePending');
    expect(scheduler.held.has(stored!.planId)).toBe(true);
  });
});

describe('GET /configuration_manager/compliance_plans', () => {
  it('pages through every plan with the cursor, each once', async () => {
    for (let i = 0; i < 3; i++) await created();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await list({ limit: '2', ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      const page = res.body as { items: Plan[]; next?: string };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((p) => p.planId));
      cursor = page.next;
    } while (cursor);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
  });

  it('answers 400 for a cursor it did not issue', async () => {
    const res = await list({ cursor: 'bm90LWEtY3Vyc29y' });
    expect(res.status).toBe(400);
    expect((res.body as { errors: unknown[] }).errors).toEqual([expect.objectContaining({ in: 'query', field: 'cursor' })]);
  });
});

describe('GET /configuration_manager/compliance_plans/{planId}', () => {
  it('answers 404 for an unknown plan and 400 for a malformed id', async () => {
    expect((await get(MISSING)).status).toBe(404);
    expect((await get('not-a-plan')).status).toBe(400);
  });

  it('shows a rate plan running one interval after its schedule was written', async () => {
    const before = Date.now();
    const plan = await created({ schedule: 'rate(6 hours)', timezone: undefined });
    const next = Date.parse((await get(plan.planId)).body.nextRunAt);
    expect(next).toBeGreaterThanOrEqual(before + 6 * 3_600_000);
    expect(next).toBeLessThanOrEqual(Date.now() + 6 * 3_600_000);
  });

  it('shows a disabled plan without a next run; its schedule is kept disabled', async () => {
    const plan = await created({ enabled: false });
    expect((await get(plan.planId)).body).not.toHaveProperty('nextRunAt');
    expect(scheduler.held.get(plan.planId)?.enabled).toBe(false);
  });

  it('shows a plan whose adapter is gone as broken, and refuses to run it (409 plan-broken)', async () => {
    const plan = await created({ adapterId: 'doomed-nso' });
    await createAdapterStore(documentClient, tables['adapters']).delete('doomed-nso');
    const shown = (await get(plan.planId)).body as Plan;
    expect(shown.broken).toEqual({ reason: 'adapter-missing', detail: "Adapter 'doomed-nso' no longer exists." });
    const res = await run(plan.planId);
    expect(res.status).toBe(409);
    expect((res.body as { type: string }).type).toBe('urn:netconfig:problem:plan-broken');
    expect(executions).toEqual([]);
  });
});

describe('PUT /configuration_manager/compliance_plans/{planId}', () => {
  it('replaces the fields and the schedule, frees the old name and records the difference', async () => {
    const plan = await created({ name: 'Old name' });
    const res = await put(plan.planId, planBody({ name: 'New name', version: 'v2', schedule: 'rate(1 day)', timezone: undefined }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ planId: plan.planId, name: 'New name', version: 'v2', schedule: 'rate(1 day)', createdAt: plan.createdAt });
    expect(res.body).not.toHaveProperty('timezone');
    expect(scheduler.held.get(plan.planId)).toEqual({ schedule: 'rate(1 day)', timezone: undefined, enabled: true });
    expect((await create(planBody({ name: 'old NAME' }))).status).toBe(201);
    const [replaced] = await trail(plan.planId);
    expect(replaced).toMatchObject({ action: 'replaced', by: 'ops' });
    expect(replaced!.fields).toEqual({ name: 'New name', version: 'v2', schedule: 'rate(1 day)', timezone: undefined });
  });

  it('removes the schedule of a plan that no longer has one', async () => {
    const plan = await created();
    const { schedule: _s, timezone: _t, ...body } = planBody();
    expect((await put(plan.planId, body)).status).toBe(200);
    expect(scheduler.held.has(plan.planId)).toBe(false);
  });

  it('answers 404 for an unknown plan and 409 for a name another plan holds', async () => {
    expect((await put(MISSING, planBody())).status).toBe(404);
    const other = await created();
    const plan = await created();
    const res = await put(plan.planId, planBody({ name: other.name.toUpperCase() }));
    expect(res.status).toBe(409);
    expect((res.body as { type: string }).type).toBe('urn:netconfig:problem:name-taken');
  });
});

describe('DELETE /configuration_manager/compliance_plans/{planId}', () => {
  it('removes the schedule, then the plan and its name, and records it', async () => {
    const plan = await created({ name: 'Short lived' });
    expect((await remove(plan.planId)).status).toBe(204);
    expect(scheduler.held.has(plan.planId)).toBe(false);
    expect((await get(plan.planId)).status).toBe(404);
    expect((await remove(plan.planId)).status).toBe(404);
    expect((await create(planBody({ name: 'Short lived' }))).status).toBe(201);
    expect((await trail(plan.planId)).map((e) => e.action)).toEqual(['deleted', 'created']);
  });

  it('answers 503 and deletes nothing when the schedule cannot be removed', async () => {
    const plan = await created();
    scheduler.down = true;
    expect((await remove(plan.planId)).status).toBe(503);
    scheduler.down = false;
    expect((await get(plan.planId)).body).toMatchObject({ planId: plan.planId, schedulePending: true });
    expect((await remove(plan.planId)).status).toBe(204);
  });
});

describe('POST /configuration_manager/compliance_plans/{planId}/run', () => {
  it("starts a batch of the plan (202, the batch's path), then refuses another while it runs", async () => {
    const plan = await created({ devices: ['r2'] });
    const res = await run(plan.planId);
    expect(res.status).toBe(202);
    const { batchId } = res.body as { batchId: string };
    expect(res.body).toEqual({ batchId: expect.stringMatching(/^[0-9a-f]{24}$/), status: 'running', total: 1 });
    expect(res.headers['Location']).toBe(`/v1/configuration_manager/compliance_reports/batches/${batchId}`);
    await lambda.idle();
    expect(executions).toEqual([`batch-${batchId}`]);
    expect(await compliance().getBatch(batchId)).toMatchObject({ planId: plan.planId, treeId, version: 'v1', adapterId: 'lab-nso', status: 'running' });
    expect((await get(plan.planId)).body).toMatchObject({ lastRun: { trigger: 'user', outcome: 'started', batchId } });

    const again = await run(plan.planId);
    expect(again.status).toBe(409);
    expect((again.body as { type: string }).type).toBe('urn:netconfig:problem:plan-running');

    await finish(batchId);
    expect((await run(plan.planId)).status).toBe(202);
    expect((await trail(plan.planId)).filter((e) => e.action === 'run-started')).toHaveLength(2);
  });

  it('runs a disabled plan when a user asks', async () => {
    const plan = await created({ enabled: false });
    expect((await run(plan.planId)).status).toBe(202);
  });

  it('answers 409 adapter-stopped as batches do, 404 for an unknown plan, 403 for a reader', async () => {
    const plan = await created({ adapterId: 'stopped-nso' });
    const stopped = await run(plan.planId);
    expect(stopped.status).toBe(409);
    expect((stopped.body as { type: string }).type).toBe('urn:netconfig:problem:adapter-stopped');
    expect((await run(MISSING)).status).toBe(404);
    expect((await run(plan.planId, READER)).status).toBe(403);
  });
});

describe('the scheduled run', () => {
  it('starts a batch as the caller `schedule`', async () => {
    const plan = await created();
    const result = await runScheduled({ planId: plan.planId });
    expect(result).toMatchObject({ trigger: 'schedule', outcome: 'started', batchId: expect.any(String) });
    await lambda.idle();
    expect(executions).toHaveLength(1);
    expect((await trail(plan.planId))[0]).toMatchObject({ action: 'run-started', by: 'schedule' });
  });

  it.each([
    ['disabled', { enabled: false }, /disabled/],
    ['on a stopped adapter', { adapterId: 'stopped-nso' }, /stopped/],
  ])('skips a plan that is %s, keeping the reason in lastRun', async (_what, overrides, reason) => {
    const plan = await created(overrides);
    const result = await runScheduled({ planId: plan.planId });
    expect(result).toMatchObject({ trigger: 'schedule', outcome: 'skipped', reason: expect.stringMatching(reason) });
    expect((await get(plan.planId)).body).toMatchObject({ lastRun: { outcome: 'skipped', reason: expect.stringMatching(reason) } });
    expect((await trail(plan.planId))[0]).toMatchObject({ action: 'run-skipped', by: 'schedule' });
    expect(executions).toEqual([]);
  });

  it('removes the schedule of a plan that is gone', async () => {
    scheduler.held.set(MISSING, { schedule: 'rate(1 day)', enabled: true });
    expect(await runScheduled({ planId: MISSING })).toEqual({ outcome: 'no-plan' });
    expect(scheduler.held.has(MISSING)).toBe(false);
  });

  it('ignores an event without a plan id', async () => {
    expect(await runScheduled({} as never)).toEqual({ outcome: 'bad-event' });
  });
});

describe('a plan runs one batch at a time', () => {
  it('keeps refusing a run while its batch runs, after the schedule skipped', async () => {
    const plan = await created({ devices: ['r2'] });
    const first = await run(plan.planId);
    expect(first.status).toBe(202);
    const { batchId } = first.body as { batchId: string };
    expect(await runScheduled({ planId: plan.planId })).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/still running/) });
    expect((await get(plan.planId)).body).toMatchObject({ lastRun: { outcome: 'skipped' }, lastBatch: { batchId } });

    const second = await run(plan.planId);
    expect(second.status).toBe(409);
    expect((second.body as { type: string }).type).toBe('urn:netconfig:problem:plan-running');
    expect(await runScheduled({ planId: plan.planId })).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(batchId) });
    await lambda.idle();
    expect(executions).toEqual([`batch-${batchId}`]);
  });

  it('skips every firing of the schedule while the batch it started runs', async () => {
    const plan = await created();
    const first = await runScheduled({ planId: plan.planId });
    expect(first).toMatchObject({ outcome: 'started' });
    expect(await runScheduled({ planId: plan.planId })).toMatchObject({ outcome: 'skipped' });
    expect(await runScheduled({ planId: plan.planId })).toMatchObject({ outcome: 'skipped' });
    await lambda.idle();
    expect(executions).toHaveLength(1);
    await finish((first as { batchId: string }).batchId);
    expect(await runScheduled({ planId: plan.planId })).toMatchObject({ outcome: 'started' });
  });

  it("keeps a run recorded between a replace's read and its write", async () => {
    const plan = await created({ devices: ['r2'] });
    const { createPlanStore } = await import('../../functions/plans/store.js');
    const store = createPlanStore(documentClient, tables['compliance']!);
    const before = (await store.get(plan.planId))!;
    const started = await run(plan.planId);
    expect(started.status).toBe(202);
    const { batchId } = started.body as { batchId: string };
    await store.replace(before, { ...before, name: `${before.name} renamed`, revision: before.revision + 1 });

    expect((await get(plan.planId)).body).toMatchObject({ name: `${before.name} renamed`, lastRun: { batchId }, lastBatch: { batchId } });
    expect((await run(plan.planId)).status).toBe(409);
  });

  it("records a scheduled run that lost the race to a user's run as skipped, not as an error", async () => {
    const plan = await created({ devices: ['r2'] });
    const deps = planDeps();
    let raced: Awaited<ReturnType<typeof run>> | undefined;
    const racing = {
      ...deps,
      adapters: {
        get: async (name: string) => {
          raced ??= await run(plan.planId);
          return deps.adapters.get(name);
        },
      },
    };
    const result = await scheduledRun.runScheduled({ planId: plan.planId }, racing);
    expect(raced?.status).toBe(202);
    expect(result).toMatchObject({ trigger: 'schedule', outcome: 'skipped', reason: expect.stringMatching(/same time/) });
    const shown = (await get(plan.planId)).body as Plan;
    expect(shown).toMatchObject({ lastRun: { outcome: 'skipped' }, lastBatch: { batchId: (raced!.body as { batchId: string }).batchId } });
    expect((await trail(plan.planId)).map((e) => e.action).sort()).toEqual(['created', 'run-skipped', 'run-started']);
  });
});

describe('plans the checks did not foresee', () => {
  it('refuses a rate interval over ten years (400 naming schedule) and stores nothing', async () => {
    const res = await create(planBody({ name: 'far future', schedule: 'rate(99999999999 days)' }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ errors: [{ field: 'schedule', message: expect.stringMatching(/at most 3650 days/) }] });
    expect(((await list({ limit: '100' })).body as { items: Plan[] }).items.map((p) => p.name)).not.toContain('far future');
  });

  it('shows a plan whose stored schedule start is no date without a next run, never a 500', async () => {
    const plan = await created({ schedule: 'rate(1 hour)', timezone: undefined });
    await documentClient.send(
      new UpdateCommand({
        TableName: tables['compliance']!,
        Key: { pk: 'PLANS', sk: `P#${plan.planId}` },
        UpdateExpression: 'SET scheduleSince = :bad',
        ExpressionAttributeValues: { ':bad': 'not a date' },
      }),
    );
    const shown = await get(plan.planId);
    expect(shown.status).toBe(200);
    expect(shown.body).not.toHaveProperty('nextRunAt');
    expect((await list({ limit: '100' })).status).toBe(200);
  });

  it('changes the devices of a plan naming 10,000 long names, the changelog keeping counts and digests', async () => {
    const devices = Array.from({ length: 10_000 }, (_, i) => `edge-router-${String(i).padStart(6, '0')}-xyzw`);
    const { handler: importTree } = await import('../../functions/trees/handlers/import.js');
    // A node holds 1,000 devices at most: ten children hold them.
    const children = Array.from({ length: 10 }, (_, n) => ({ name: `site-${n}`, devices: devices.slice(n * 1000, (n + 1) * 1000), rules: [] }));
    const root = { name: 'base', devices: [], rules: [], children };
    const body = { name: 'large golden', deviceType: 'cisco-ios', versions: [{ name: 'v1', variables: {}, root }] };
    const imported = await invoke(
      importTree as Handler,
      apiEvent({ method: 'POST', resource: '/configuration_manager/import/configs', body, authorizer: ADMIN }),
      lambdaContext(60_000),
    );
    expect(imported.status, JSON.stringify(imported.body).slice(0, 300)).toBe(201);
    const large = (imported.body as { id: string }).id;
    const plan = await created({ treeId: large, devices });
    const changed = devices.slice(1).reverse();
    const res = await put(plan.planId, planBody({ name: plan.name, treeId: large, devices: changed }));
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect((res.body as Plan).devices).toEqual(changed);
    const entries = await listChangelog(documentClient, { kind: 'plan', name: plan.planId }, { limit: '10' }, tables['changelog']);
    const replaced = entries.items.find((e) => e.action === 'replaced')!;
    const sha256 = expect.stringMatching(/^[0-9a-f]{64}$/);
    expect(replaced.changes).toEqual([
      { field: 'devices.count', from: 10_000, to: 9_999 },
      { field: 'devices.sha256', from: sha256, to: sha256 },
    ]);
  }, 60_000);
});

describe('a write racing a delete', () => {
  it('answers 404 to a PUT whose plan was deleted while its schedule was written, and removes the schedule again', async () => {
    const plan = await created();
    let deleted: Awaited<ReturnType<typeof remove>> | undefined;
    scheduler.beforePut = async () => {
      deleted = await remove(plan.planId);
    };
    const res = await put(plan.planId, planBody({ name: plan.name, schedule: 'rate(1 day)' }));
    expect(deleted?.status).toBe(204);
    expect(res.status).toBe(404);
    expect(scheduler.held.has(plan.planId)).toBe(false);
    expect((await get(plan.planId)).status).toBe(404);
  });
});

describe('openapi.json', () => {
  it('documents every answer of the plan routes above: status, content type, Location, bodies', () => {
    const { problems, checked } = answers.check();
    expect(checked).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });
});
