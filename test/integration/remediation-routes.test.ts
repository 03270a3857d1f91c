/**
 * The remediation routes through their real handlers: compliance batches and their reports in
 * DynamoDB Local (written by the store the engine uses), adapters and the changelog there too,
 * the run's durable execution started with Lambda Invoke against the local Invoke endpoint
 * (which records what was started), and runs kept by an in-memory store behind the
 * `RemediationStore` contract. Every status of each route, the roles, `Location`, pagination,
 * masking and the audit entries.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { liveRoutes } from '../../functions/api/routes.js';
import type { BatchKind, Report, ReportIssue } from '../../functions/compliance/model.js';
import { ComplianceStore, type DeviceReport } from '../../functions/compliance/store.js';
import { emptyCounts } from '../../functions/compliance/model.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { routeRolesValue } from '../../functions/platform/route-authorization.js';
import { AUDIT_LIST_MAX, changelogAudit, recordRemediationEnd } from '../../functions/remediation/audit.js';
import type { RemediationDevice } from '../../functions/remediation/model.js';
import { shownOutput } from '../../functions/remediation/nso.js';
import { listChangelog, type ChangelogEntry } from '../../functions/runtime/changelog.js';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { createTables } from '../../tools/local/table-copies.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { MemoryRemediationStore } from '../support/remediation-store.js';

const runs = vi.hoisted(() => ({ store: undefined as unknown as MemoryRemediationStore }));
vi.mock('../../functions/remediation/wiring.js', () => ({ remediationStore: () => runs.store }));

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-RemediationRun:live';
const TREE = 'a1b2c3d4e5f6a1b2c3d4e5f6';
const DONE = 'abcdef0123456789abcdef01';
const RUNNING = 'abcdef0123456789abcdef02';
const BACKUP = 'abcdef0123456789abcdef03';
const STOPPED = 'abcdef0123456789abcdef04';
const CLEAN = 'abcdef0123456789abcdef05';
const BATCHES = '/configuration_manager/compliance_reports/batches/{batchId}/remediations';
const RUN = '/configuration_manager/remediations/{remediationId}';
const ADMIN = { principalId: 'ops', roles: 'admin' };
const READER = { principalId: 'viewer', roles: 'apiread' };

let tables: Record<string, string>;
let lambda: LambdaInvokeEndpoint;
const started: { name: string; payload: unknown }[] = [];
const handlers: Record<string, Handler> = {};

const issue = (ruleId: string, severity: ReportIssue['severity'] = 'error'): ReportIssue => ({
  ruleId,
  node: 'base',
  path: '/ntp',
  severity,
  mode: 'required',
  message: `${ruleId} fails`,
});

const report = (batchId: string, device: string, grade: Report['grade'], issues: ReportIssue[] = []): DeviceReport => ({
  batchId,
  device,
  treeId: TREE,
  version: 'v1',
  node: 'base',
  grade,
  ...(grade === 'error' || grade === 'out-of-sync' ? {} : { score: grade === 'pass' ? 100 : grade === 'review' ? 85 : 40 }),
  totals: {
    errors: issues.filter((i) => i.severity === 'error').length,
    warnings: issues.filter((i) => i.severity === 'warning').length,
    infos: 0,
    passes: 1,
  },
  issues,
  checkedAt: '2026-11-23T10:00:00.000Z',
});

/** A batch and its reports, ended (or still running), as the compliance engine leaves them. */
const seedBatch = async (
  batchId: string,
  options: { adapterId?: string; kind?: BatchKind; running?: boolean; reports: (batchId: string) => DeviceReport[] },
): Promise<void> => {
  const store = new ComplianceStore(documentClient, tables['compliance']!);
  const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
  const reports = options.reports(batchId);
  const backup = options.kind === 'backup';
  await store.create(
    {
      batchId,
      ...(backup ? { kind: 'backup' as const } : { treeId: TREE, version: 'v1' }),
      adapterId: options.adapterId ?? 'lab-nso',
      total: reports.length,
      started: new Date(Date.now() - 60_000).toISOString(),
      chunks: 1,
      concurrency: 10,
      expiresAt,
    },
    backup
      ? undefined
      : {
          variables: {},
          rulesByNode: {
            base: ['ntp', 'snmp', 'banner'].map((id) => ({
              id,
              node: 'base',
              path: `/${id}`,
              mode: 'required' as const,
              severity: 'error' as const,
              value: 1,
            })),
          },
          nodes: ['base'],
        },
    [reports.map(({ device }) => (backup ? { device } : { device, node: 'base' }))],
  );
  await store.putReports(
    batchId,
    { chunk: 0, attempt: 1 },
    reports.map((r, position) => ({ position, report: r })),
    expiresAt,
  );
  if (!options.running) await store.finish(batchId, 'completed', new Date().toISOString(), { ...emptyCounts(), devices: reports.length });
};

const call = (operationId: string, input: Parameters<typeof apiEvent>[0]) => {
  const route = liveRoutes.find((r) => r.operationId === operationId)!;
  // The function's own roles, as the stack sets them: the role check is the function's.
  vi.stubEnv('ROUTE_ROLES', routeRolesValue(route.roles));
  return invoke(handlers[operationId]!, apiEvent(input), lambdaContext(10_000));
};
const start = (batchId: string, body: unknown, authorizer = ADMIN, headers: Record<string, string> = {}) =>
  call('startRemediation', { method: 'POST', resource: BATCHES, pathParameters: { batchId }, body, authorizer, headers });
const get = (remediationId: string, authorizer = READER) =>
  call('getRemediation', { method: 'GET', resource: RUN, pathParameters: { remediationId }, authorizer });
const devices = (remediationId: string, query: Record<string, string> = {}, authorizer = READER) =>
  call('listRemediationDevices', { method: 'GET', resource: `${RUN}/devices`, pathParameters: { remediationId }, query, authorizer });
const rollback = (remediationId: string, authorizer = ADMIN) =>
  call('startRemediationRollback', { method: 'POST', resource: `${RUN}/rollback`, pathParameters: { remediationId }, authorizer });

const trail = async (): Promise<ChangelogEntry[]> =>
  (await listChangelog(documentClient, { kind: 'adapter', name: 'lab-nso' }, { limit: '100' }, tables['changelog'])).items.filter((e) =>
    e.action.includes('-'),
  );
const fields = (entry: ChangelogEntry): Record<string, unknown> => Object.fromEntries(entry.changes.map((c) => [c.field, c.to]));

beforeAll(async () => {
  tables = await createTables();
  const adapters = createAdapterStore(documentClient, tables['adapters']);
  const adapter = {
    type: 'nso',
    baseUrl: 'https://nso.example.net',
    auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/nso#password' },
  } as const;
  await adapters.put({ name: 'lab-nso', ...adapter }, new Date().toISOString());
  await adapters.put({ name: 'stopped-nso', ...adapter }, new Date().toISOString());
  await adapters.setState('stopped-nso', 'STOPPED', new Date().toISOString());
  await seedBatch(DONE, {
    reports: (b) => [
      report(b, 'd1', 'fail', [issue('ntp'), issue('snmp')]),
      report(b, 'd2', 'fail', [issue('snmp')]),
      report(b, 'd3', 'pass'),
      report(b, 'd4', 'review', [issue('ntp', 'warning')]),
      report(b, 'd5', 'error'),
      report(b, 'd6', 'fail', [issue('banner')]),
    ],
  });
  await seedBatch(RUNNING, { running: true, reports: (b) => [report(b, 'd1', 'fail', [issue('ntp')])] });
  await seedBatch(BACKUP, {
    kind: 'backup',
    reports: (b) => [{ ...report(b, 'd1', 'kept'), treeId: undefined, version: undefined, node: undefined } as never],
  });
  await seedBatch(STOPPED, { adapterId: 'stopped-nso', reports: (b) => [report(b, 'd1', 'fail', [issue('ntp')])] });
  await seedBatch(CLEAN, { reports: (b) => [report(b, 'd1', 'pass'), report(b, 'd2', 'review', [issue('ntp', 'warning')])] });

  lambda = await startLambdaInvokeEndpoint({
    functions: new Map([
      [
        'netconfig-RemediationRun',
        async (payload, name) => {
          started.push({ name, payload: JSON.parse(payload) as unknown });
        },
      ],
    ]),
    log: () => undefined,
  });
  vi.stubEnv('LOG_LEVEL', 'error');
  vi.stubEnv('COMPLIANCE_TABLE', tables['compliance']!);
  vi.stubEnv('ADAPTERS_TABLE', tables['adapters']!);
  vi.stubEnv('IDEMPOTENCY_TABLE', tables['idempotency']!);
  vi.stubEnv('CHANGELOG_TABLE', tables['changelog']!);
  vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.url);
  vi.stubEnv('REMEDIATION_FUNCTION', FUNCTION_ARN);
  runs.store = new MemoryRemediationStore();
  vi.resetModules();
  handlers['startRemediation'] = (await import('../../functions/remediation/handlers/start.js')).handler as Handler;
  handlers['getRemediation'] = (await import('../../functions/remediation/handlers/get.js')).handler as Handler;
  handlers['listRemediationDevices'] = (await import('../../functions/remediation/handlers/list-devices.js')).handler as Handler;
  handlers['startRemediationRollback'] = (await import('../../functions/remediation/handlers/rollback.js')).handler as Handler;
}, 60_000);

afterAll(async () => {
  await lambda?.close();
  vi.unstubAllEnvs();
});

beforeEach(() => {
  // The handlers keep the store they were given: one store, emptied before each test.
  runs.store.runs.clear();
  started.length = 0;
});

describe('POST …/batches/{batchId}/remediations', () => {
  it("answers 202 with the run's path; the run takes the batch's fail devices, is audited and started once under its id", async () => {
    const res = await start(DONE, { mode: 'dry-run', listKeys: { 'ios:interface/GigabitEthernet': ['name'] } });
    expect(res.status).toBe(202);
    const { remediationId } = res.body as { remediationId: string };
    expect(res.body).toEqual({ remediationId: expect.stringMatching(/^[0-9a-f]{24}$/), status: 'running', devices: 3 });
    expect(res.headers['Location']).toBe(`/v1/configuration_manager/remediations/${remediationId}`);

    const work = await runs.store.getWork(remediationId);
    expect(work?.devices).toEqual([
      { device: 'd1', node: 'base' },
      { device: 'd2', node: 'base' },
      { device: 'd6', node: 'base' },
    ]);
    expect(work?.listKeys).toEqual({ 'ios:interface/GigabitEthernet': ['name'] });
    expect(work?.run).toMatchObject({ batchId: DONE, adapterId: 'lab-nso', treeId: TREE, version: 'v1', mode: 'dry-run', commitQueue: false });
    expect(work?.run.startedBy).toEqual({ subject: 'ops', roles: ['admin'] });

    await lambda.idle();
    expect(started).toEqual([{ name: remediationId, payload: { remediationId, action: 'run' } }]);

    const [entry] = (await trail()).filter((e) => fields(e)['remediationId'] === remediationId);
    expect(entry).toMatchObject({ kind: 'adapter', name: 'lab-nso', by: 'ops', action: 'remediation-started', at: work?.run.started });
    expect(fields(entry!)).toEqual({
      remediationId,
      batchId: DONE,
      mode: 'dry-run',
      commitQueue: false,
      roles: ['admin'],
      devices: ['d1', 'd2', 'd6'],
      devicesCount: 3,
    });
  });

  it('takes named devices with failing rules of any grade, and only the runs whose rules are asked for', async () => {
    const named = await start(DONE, { mode: 'apply', devices: ['d4', 'd1'], commitQueue: true });
    expect(named.status).toBe(202);
    const run = await runs.store.getWork(named.body.remediationId);
    expect(run?.devices.map((d) => d.device)).toEqual(['d4', 'd1']);
    expect(run?.run.commitQueue).toBe(true);

    const ntp = await start(DONE, { mode: 'dry-run', ruleIds: ['ntp'] });
    expect(ntp.status).toBe(202);
    expect((await runs.store.getWork(ntp.body.remediationId))?.devices.map((d) => d.device)).toEqual(['d1']);
    expect((await runs.store.get(ntp.body.remediationId))?.ruleIds).toEqual(['ntp']);
  });

  it('answers 400 naming the devices not in the batch, without failing rules, or rule ids not in the plan', async () => {
    const absent = await start(DONE, { mode: 'dry-run', devices: ['d1', 'ghost-1', 'ghost-2'] });
    expect(absent.status).toBe(400);
    expect(absent.contentType).toBe('application/problem+json');
    expect(absent.body.detail).toContain('2 device(s) are not in the batch ("ghost-1", "ghost-2")');

    const clean = await start(DONE, { mode: 'dry-run', devices: ['d3', 'd5', 'd2'] });
    expect(clean.status).toBe(400);
    expect(clean.body.detail).toContain('2 device(s) have no failing rule in their report ("d3", "d5")');

    const many = await start(DONE, { mode: 'dry-run', devices: Array.from({ length: 8 }, (_, i) => `x${i}`) });
    expect(many.body.detail).toContain('"x0", "x1", "x2", "x3", "x4" and 3 more');

    const offRule = await start(DONE, { mode: 'dry-run', devices: ['d2'], ruleIds: ['ntp'] });
    expect(offRule.status).toBe(400);
    expect(offRule.body.detail).toContain('no failing rule among those asked for');

    const rules = await start(DONE, { mode: 'dry-run', ruleIds: ['ntp', 'nope', 'gone'] });
    expect(rules.status).toBe(400);
    expect(rules.body.detail).toContain('2 rule id(s) are not in the batch\'s plan ("nope", "gone")');
    expect(rules.body.errors).toEqual([expect.objectContaining({ in: 'body', field: 'ruleIds' })]);

    for (const body of [{ mode: 'fix' }, { mode: 'apply', devices: ['d1', 'd1'] }, { mode: 'apply', devices: [] }, { mode: 'apply', extra: 1 }, {}]) {
      expect((await start(DONE, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(runs.store.runs.size).toBe(0);
    expect(started).toEqual([]);
  });

  it('answers 404 for an unknown batch and 409 with its own type for each batch that cannot be remediated', async () => {
    expect((await start('f'.repeat(24), { mode: 'dry-run' })).status).toBe(404);
    const refusals: [string, string][] = [
      [RUNNING, 'batch-not-completed'],
      [BACKUP, 'backup-batch'],
      [STOPPED, 'adapter-stopped'],
      [CLEAN, 'nothing-to-remediate'],
    ];
    for (const [batchId, type] of refusals) {
      const res = await start(batchId, { mode: 'apply' });
      expect(res.status, type).toBe(409);
      expect(res.contentType).toBe('application/problem+json');
      expect(res.body.type).toBe(`urn:netconfig:problem:${type}`);
    }
    expect(runs.store.runs.size).toBe(0);
  });

  it('refuses apiread (403) and replays a repeated Idempotency-Key without starting twice', async () => {
    expect((await start(DONE, { mode: 'dry-run' }, READER)).status).toBe(403);
    const headers = { 'Idempotency-Key': `remediate-once-${Date.now()}` };
    const first = await start(DONE, { mode: 'dry-run' }, ADMIN, headers);
    const again = await start(DONE, { mode: 'dry-run' }, ADMIN, headers);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers['Idempotent-Replayed']).toBe('true');
    expect(runs.store.runs.size).toBe(1);
    await lambda.idle();
    expect(started).toHaveLength(1);
  });

  it('answers 503 and ends the run failed when its execution cannot be started', async () => {
    vi.stubEnv('REMEDIATION_FUNCTION', 'no-such-function');
    try {
      const res = await start(DONE, { mode: 'dry-run' });
      expect(res.status).toBe(503);
      const [run] = [...runs.store.runs.values()].map((k) => k.run);
      expect(run).toMatchObject({ status: 'failed', reason: 'The run could not be started.' });
    } finally {
      vi.stubEnv('REMEDIATION_FUNCTION', FUNCTION_ARN);
    }
  });
});

describe('GET /configuration_manager/remediations/{remediationId}[/devices]', () => {
  const SECRET = 'hunter2-Secret';
  const record = (device: string, extra: Partial<RemediationDevice> = {}): RemediationDevice => ({
    device,
    state: 'dry-run',
    rules: [{ ruleId: 'ntp', node: 'base', edits: ['ntp-1'] }],
    patch: {
      'ietf-yang-patch:yang-patch': {
        'patch-id': `remediation-${device}`,
        edit: [
          {
            'edit-id': 'ntp-1',
            operation: 'merge',
            target: `/tailf-ncs:devices/device=${device}/config/ios:ntp`,
            value: { 'ios:ntp': { server: '10.0.0.1', 'auth-key': SECRET } },
          },
          {
            'edit-id': 'c-1',
            operation: 'merge',
            target: `/tailf-ncs:devices/device=${device}/config/ios:snmp-server/community=${SECRET}`,
            value: { community: { name: SECRET } },
          },
        ],
      },
    },
    // As the NSO client answers it: masked where it came in.
    dryRun: shownOutput(`+ntp server 10.0.0.1\n+snmp-server community ${SECRET} RO\n+username admin password ${SECRET}`).output,
    ...extra,
    updatedAt: '2026-11-23T11:00:00.000Z',
  });

  it('shows the run to apiread, and pages its devices by name with secrets masked', async () => {
    const res = await start(DONE, { mode: 'dry-run', devices: ['d1', 'd2', 'd4', 'd6'] });
    const { remediationId } = res.body as { remediationId: string };
    for (const device of ['d1', 'd2', 'd4', 'd6']) await runs.store.putDevice(remediationId, record(device));
    await runs.store.putDevice(remediationId, record('d2', { state: 'failed', error: { kind: 'nso-error', reason: `commit refused: password=${SECRET}` } }));

    const run = await get(remediationId);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ remediationId, batchId: DONE, status: 'running', mode: 'dry-run', devices: 4, totals: { dryRun: 4, failed: 1 } });
    expect(run.body.startedBy).toEqual({ subject: 'ops', roles: ['admin'] });

    const page1 = await devices(remediationId, { limit: '3' });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((d: RemediationDevice) => d.device)).toEqual(['d1', 'd2', 'd4']);
    const page2 = await devices(remediationId, { limit: '3', cursor: page1.body.next });
    expect(page2.body.items.map((d: RemediationDevice) => d.device)).toEqual(['d6']);
    expect(page2.body.next).toBeUndefined();

    const shown = JSON.stringify([...page1.body.items, ...page2.body.items]);
    expect(shown).not.toContain(SECRET);
    const d1 = page1.body.items[0] as RemediationDevice;
    const [ntp, community] = d1.patch!['ietf-yang-patch:yang-patch'].edit;
    expect(ntp!.value).toEqual({ 'ios:ntp': { server: '10.0.0.1', 'auth-key': '[redacted]' } });
    expect(community!.target).toBe('/tailf-ncs:devices/device=d1/config/ios:snmp-server/community=[redacted]');
    expect(community!.value).toEqual({ community: '[redacted]' });
    expect(d1.dryRun).toContain('+ntp server 10.0.0.1');
    expect((page1.body.items[1] as RemediationDevice).error).toEqual({ kind: 'nso-error', reason: expect.stringContaining('commit refused') });

    // A cursor of another run, or not one of ours.
    const other = await start(DONE, { mode: 'dry-run', devices: ['d1', 'd2'] });
    expect((await devices(other.body.remediationId, { cursor: page1.body.next })).status).toBe(400);
    expect((await devices(remediationId, { cursor: 'bm90LWEtY3Vyc29y' })).status).toBe(400);
    expect((await devices(remediationId, { limit: '201' })).status).toBe(400);
  });

  it('answers 404 for an unknown run and 400 for a malformed id', async () => {
    expect((await get('f'.repeat(24))).status).toBe(404);
    expect((await devices('f'.repeat(24))).status).toBe(404);
    expect((await get('not-an-id')).status).toBe(400);
  });
});

describe('POST /configuration_manager/remediations/{remediationId}/rollback', () => {
  it('starts once for a completed apply run, audited with its rollback ids newest first; refuses the rest with 409', async () => {
    const dry = await start(DONE, { mode: 'dry-run' });
    const applied = await start(DONE, { mode: 'apply' });
    const { remediationId } = applied.body as { remediationId: string };

    // Running: not yet.
    const early = await rollback(remediationId);
    expect(early.status).toBe(409);
    expect(early.body.type).toBe('urn:netconfig:problem:rollback-refused');

    for (const [device, rollbackId] of [
      ['d1', 41],
      ['d2', 43],
      ['d6', 42],
    ] as const) {
      await runs.store.putDevice(remediationId, { device, state: 'fixed', rules: [], rollbackId, updatedAt: '2026-11-23T11:00:00.000Z' });
    }
    await runs.store.finish(remediationId, 'completed', '2026-11-23T11:05:00.000Z');
    await runs.store.finish(dry.body.remediationId, 'completed', '2026-11-23T11:05:00.000Z');
    started.length = 0;

    expect((await rollback(remediationId, READER)).status).toBe(403);
    const res = await rollback(remediationId);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ remediationId, status: 'running', devices: 3 });
    expect(res.headers['Location']).toBe(`/v1/configuration_manager/remediations/${remediationId}`);
    await lambda.idle();
    expect(started).toEqual([{ name: `${remediationId}-rollback`, payload: { remediationId, action: 'rollback' } }]);
    expect((await get(remediationId)).body.rollback).toMatchObject({ status: 'running', startedBy: { subject: 'ops', roles: ['admin'] } });

    const entry = (await trail()).find((e) => e.action === 'rollback-started' && fields(e)['remediationId'] === remediationId);
    expect(fields(entry!)).toMatchObject({ batchId: DONE, mode: 'apply', roles: ['admin'], rollbackIds: [43, 42, 41], rollbackIdsCount: 3 });

    const twice = await rollback(remediationId);
    expect(twice.status).toBe(409);
    expect(twice.body.detail).toContain('already has a rollback');
    const ofDryRun = await rollback(dry.body.remediationId);
    expect(ofDryRun.status).toBe(409);
    expect(ofDryRun.body.detail).toContain('is a dry-run');
    expect((await rollback('f'.repeat(24))).status).toBe(404);
  });
});

describe('recordRemediationEnd', () => {
  it("writes the run's end under its adapter: status, totals, the devices and rollback ids (bounded, counted)", async () => {
    const res = await start(DONE, { mode: 'apply' });
    const run = (await runs.store.get(res.body.remediationId))!;
    const names = Array.from({ length: AUDIT_LIST_MAX + 5 }, (_, i) => `dev-${String(i).padStart(3, '0')}`);
    await recordRemediationEnd(changelogAudit(documentClient, tables['changelog']), {
      run,
      action: 'run',
      status: 'completed',
      at: '2026-11-23T12:00:00.000Z',
      devices: names,
      rollbackIds: [7, 8],
    });
    const entry = (await trail()).find((e) => e.action === 'remediation-ended' && fields(e)['remediationId'] === run.remediationId);
    expect(entry).toMatchObject({ by: 'ops', at: '2026-11-23T12:00:00.000Z', kind: 'adapter', name: 'lab-nso' });
    expect(fields(entry!)).toMatchObject({
      status: 'completed',
      totals: run.totals,
      devices: names.slice(0, AUDIT_LIST_MAX),
      devicesCount: AUDIT_LIST_MAX + 5,
      rollbackIds: [7, 8],
      rollbackIdsCount: 2,
    });
  });
});
