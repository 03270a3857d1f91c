/**
 * Targeting through the start route: a tree whose nodes select devices by NSO device group
 * (nested), name pattern and platform, imported into DynamoDB Local; selections resolved from
 * the NSO simulator's inventory (paged) when the batch starts, frozen in it, and the selected
 * devices graded by the production batch handler under the official local runner. Exemptions
 * frozen per device, with an in-memory exemption source behind the start's interface.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { inventoryReader } from '../../functions/compliance/inventory.js';
import type { Report } from '../../functions/compliance/model.js';
import { listBatchReports } from '../../functions/compliance/read.js';
import { startBatch } from '../../functions/compliance/service.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import type { Exemption, ExemptionSource } from '../../functions/exemptions/model.js';
import { readVersion } from '../../functions/trees/version-service.js';
import { createVersionStore } from '../../functions/trees/version-store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { expectedGrade, FLEET_RULES, FLEET_VARIABLES, fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'target-Pa55-word';
const DEVICES = 12;
const COLLECTION = '/configuration_manager/compliance_reports';

let sim: NsoSimulator;
let dir: string;
let lambda: LambdaInvokeEndpoint;
let start: Handler;
let getBatch: Handler;
let treeId: string;
let complianceTable: string;
let treesTable: string;
let testing: DurableTesting;
const executions: string[] = [];
/** What a started execution waits for before it runs: a test changes NSO in between. */
let hold: Promise<void> = Promise.resolve();

const post = (body: unknown, headers: Record<string, string> = {}) =>
  invoke(start, apiEvent({ method: 'POST', resource: COLLECTION, body, headers, authorizer: { principalId: 'ops', roles: 'admin' } }), lambdaContext(10_000));
const batch = (batchId: string) =>
  invoke(getBatch, apiEvent({ method: 'GET', resource: `${COLLECTION}/batches/{batchId}`, pathParameters: { batchId } }), lambdaContext(10_000));

beforeAll(async () => {
  const tables = await createTables();
  complianceTable = tables['compliance'];
  treesTable = tables['trees'];
  dir = await mkdtemp(path.join(tmpdir(), 'compliance-targeting-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: DEVICES } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/fleet', { password: PASSWORD });
  const adapters = createAdapterStore(documentClient, tables['adapters']);
  const now = new Date().toISOString();
  const adapter = { type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/fleet#password' } } as const;
  await adapters.put({ name: 'fleet-nso', ...adapter }, now);

  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('LOG_LEVEL', 'warn');
  // Long enough that a state the batch function cached would still be served when it is next asked.
  vi.stubEnv('ADAPTER_CACHE_TTL_SECONDS', '300');
  vi.resetModules();
  testing = await loadDurableTesting();
  await testing.LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
  const { handler: batchHandler } = await import('../../functions/compliance/handlers/batch.js');
  lambda = await startLambdaInvokeEndpoint({
    functions: new Map([
      [
        'netconfig-ComplianceBatch',
        async (payload, name) => {
          executions.push(name);
          await hold;
          const execution = await new testing.LocalDurableTestRunner({ handlerFunction: batchHandler }).run({ payload: JSON.parse(payload) as unknown });
          if (execution.getStatus() !== 'SUCCEEDED') throw new Error(`execution ${execution.getStatus()}`);
        },
      ],
    ]),
    log: () => undefined,
  });
  vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.url);
  vi.stubEnv('COMPLIANCE_FUNCTION', 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-ComplianceBatch:live');

  const { handler: importTree } = await import('../../functions/trees/handlers/import.js');
  const imported = await invoke(
    importTree as Handler,
    apiEvent({
      method: 'POST',
      resource: '/configuration_manager/import/configs',
      body: {
        name: 'fleet golden',
        deviceType: 'cisco-ios',
        versions: [
          {
            name: 'v1',
            variables: FLEET_VARIABLES,
            root: {
              name: 'base',
              rules: FLEET_RULES.map((r) => ({ ...r })),
              children: [
                { name: 'even', select: [{ group: 'edge-shard-0' }, { group: 'edge-shard-2' }] },
                { name: 'odd', devices: [fleetName(1)], select: [{ group: 'edge-fleet', namePattern: '[13579]$', platform: 'IOS' }] },
              ],
            },
          },
          {
            name: 'clash',
            variables: FLEET_VARIABLES,
            root: {
              name: 'base',
              rules: FLEET_RULES.map((r) => ({ ...r })),
              children: [
                { name: 'shard1', select: [{ group: 'edge-shard-1' }] },
                { name: 'ones', select: [{ namePattern: '1$', ned: 'cisco-ios-cli-6.100' }] },
              ],
            },
          },
        ],
      },
      authorizer: { principalId: 'ops', roles: 'admin' },
    }),
    lambdaContext(10_000),
  );
  expect(imported.status).toBe(201);
  treeId = (imported.body as { id: string }).id;
  start = (await import('../../functions/compliance/handlers/start.js')).handler as Handler;
  getBatch = (await import('../../functions/compliance/handlers/get-batch.js')).handler as Handler;
}, 120_000);

afterAll(async () => {
  await lambda?.close();
  await testing?.LocalDurableTestRunner.teardownTestEnvironment();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await lambda?.close();
  await testing?.LocalDurableTestRunner.teardownTestEnvironment();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sim.resetData();
  sim.setKnobs({});
  sim.requests.length = 0;
  hold = Promise.resolve();
});

const EVEN = [0, 2, 4, 6, 8, 10].map((i) => fleetName(i));
const ODD = [1, 3, 5, 7, 9, 11].map((i) => fleetName(i));

/** Every report of a batch, by device. */
const reportsOf = async (batchId: string): Promise<Map<string, Report>> => {
  const store = new ComplianceStore(documentClient, complianceTable);
  const out = new Map<string, Report>();
  let cursor: string | undefined;
  do {
    const page = await listBatchReports(store, batchId, { limit: 50, ...(cursor ? { cursor } : {}) });
    for (const r of page.items) out.set(r.device, r);
    cursor = page.next;
  } while (cursor);
  return out;
};

const inventoryRequests = () => sim.requests.filter((r) => r.method === 'GET' && /tailf-ncs:devices\/device(-group)?\?/.test(r.path)).map((r) => r.path);

describe('node selectors resolved when a batch starts', () => {
  it('grades the devices selected by nested group, pattern and platform, and shows the frozen selections', async () => {
    const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso' });
    expect(res.status).toBe(202);
    const { batchId, total } = res.body as { batchId: string; total: number };
    expect(total).toBe(DEVICES);
    expect(inventoryRequests()).toEqual([
      '/restconf/data/tailf-ncs:devices/device?fields=name;platform/name&offset=0&limit=1000',
      '/restconf/data/tailf-ncs:devices/device-group?fields=name;device-name;device-group;member&offset=0&limit=50',
    ]);
    await lambda.idle();
    const shown = (await batch(batchId)).body as Record<string, unknown>;
    expect(shown).toMatchObject({ status: 'completed', done: DEVICES });
    expect(shown['selections']).toEqual([
      { node: 'base/even', select: [{ group: 'edge-shard-0' }, { group: 'edge-shard-2' }], devices: 6 },
      // edge-00001 is listed on the node: not counted as selected.
      { node: 'base/odd', select: [{ group: 'edge-fleet', namePattern: '[13579]$', platform: 'IOS' }], devices: 5 },
    ]);
    const reports = await reportsOf(batchId);
    for (const d of EVEN) expect(reports.get(d)).toMatchObject({ node: 'base/even', grade: expectedGrade(Number(d.slice(-5))) });
    for (const d of ODD) expect(reports.get(d)).toMatchObject({ node: 'base/odd', grade: expectedGrade(Number(d.slice(-5))) });
    // ce0 and pe0 are in no selected group and match no pattern.
    expect(reports.size).toBe(DEVICES);
  });

  it('takes a selected device in the start’s devices filter', async () => {
    const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(4)] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ total: 1 });
    await lambda.idle();
    expect([...(await reportsOf((res.body as { batchId: string }).batchId)).keys()]).toEqual([fleetName(4)]);
  });

  it('still checks a device removed from its group after the batch started', async () => {
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso' });
    expect(res.status).toBe(202);
    sim.setDeviceGroup('edge-shard-0', undefined);
    sim.setDeviceType(fleetName(3), { platform: 'ios-xr' });
    release();
    await lambda.idle();
    const reports = await reportsOf((res.body as { batchId: string }).batchId);
    expect(reports.get(fleetName(0))).toMatchObject({ node: 'base/even', grade: 'pass' });
    expect(reports.get(fleetName(3))).toMatchObject({ node: 'base/odd' });
    expect(reports.size).toBe(DEVICES);
    // The next batch reads NSO again.
    const next = await post({ treeId, version: 'v1', adapterId: 'fleet-nso' });
    expect(next.body).toMatchObject({ total: DEVICES - 4 });
    await lambda.idle();
  });

  it('refuses with 409 a device chosen by two nodes, naming it and both, and starts nothing', async () => {
    const before = executions.length;
    const res = await post({ treeId, version: 'clash', adapterId: 'fleet-nso' });
    expect(res.status).toBe(409);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body).toMatchObject({
      type: 'urn:netconfig:problem:device-on-two-nodes',
      detail: expect.stringMatching(/"edge-00001" is selected by node base\/shard1 and selected by node base\/ones/),
    });
    expect(executions.length).toBe(before);
  });

  it('answers 502 naming the page when NSO fails its device-group list, and starts nothing', async () => {
    const before = executions.length;
    sim.setKnobs({ answer: { match: (p) => p.includes('device-group?'), status: 500, body: '{"ietf-restconf:errors":{"error":[]}}' } });
    const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso' });
    expect(res.status).toBe(502);
    expect(res.contentType).toBe('application/problem+json');
    expect((res.body as { detail: string }).detail).toMatch(/answered 500 to page 1 of its device-group list .*no batch was started/);
    expect(executions.length).toBe(before);
  });

  it('keeps selectors through a node write, and refuses a name pattern that is not RE2 naming the field', async () => {
    const { handler: putNode } = await import('../../functions/trees/handlers/node-put.js');
    const put = (select: unknown) =>
      invoke(
        putNode as Handler,
        apiEvent({
          method: 'PUT',
          resource: '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath+}',
          pathParameters: { treeId, version: 'clash', nodePath: 'base/ones' },
          body: { select },
          authorizer: { principalId: 'ops', roles: 'admin' },
        }),
        lambdaContext(10_000),
      );
    const bad = await put([{ namePattern: '(?=x)' }]);
    expect(bad.status).toBe(400);
    expect((bad.body as { errors: { field: string }[] }).errors.map((e) => e.field)).toContain('select.0.namePattern');
    const empty = await put([{}]);
    expect(empty.status).toBe(400);
    const ok = await put([{ namePattern: '^ce', ned: 'cisco-ios-cli-6.100' }]);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ select: [{ namePattern: '^ce', ned: 'cisco-ios-cli-6.100' }] });
    const res = await post({ treeId, version: 'clash', adapterId: 'fleet-nso' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ total: 4 });
    await lambda.idle();
  });
});

describe('exemptions frozen when a batch starts', () => {
  it('keeps the active exemptions that apply in the plan and names each device’s in its chunk entry', async () => {
    const trees = createVersionStore(documentClient, treesTable);
    const exemption = (id: string, more: Partial<Exemption>): Exemption => ({
      exemptionId: id.repeat(24),
      treeId,
      ruleId: 'motd-banner',
      until: '2099-01-01T00:00:00Z',
      reason: `reason ${id}`,
      createdAt: '2026-01-01T00:00:00Z',
      createdBy: 'alice',
      updatedAt: '2026-01-01T00:00:00Z',
      updatedBy: 'alice',
      ...more,
    });
    const asked: Date[] = [];
    const exemptions: ExemptionSource = {
      active: async (id, at) => {
        asked.push(at);
        return id === treeId
          ? [
              exemption('a', { devices: [fleetName(3)] }),
              exemption('b', { selector: { group: 'edge-shard-2' } }),
              exemption('c', { ruleId: 'nope', devices: [fleetName(3)] }),
            ]
          : [];
      },
    };
    const store = new ComplianceStore(documentClient, complianceTable);
    const now = new Date('2026-06-01T00:00:00Z');
    const { batchRelayGet } = await import('../../functions/compliance/batch-relay.js');
    const { batchId } = await startBatch(
      { treeId, version: 'v1', adapterId: 'fleet-nso' },
      {
        versions: (tree, label) => readVersion(trees, tree, label),
        adapters: { get: async (name) => ({ name }) },
        store,
        startExecution: async () => undefined,
        now: () => now,
        retentionDays: 1,
        concurrency: 2,
        inventory: inventoryReader(batchRelayGet('test')(() => 10_000)),
        exemptions,
      },
    );
    expect(asked).toEqual([now]);
    const plan = await store.getPlan(batchId);
    expect(plan.exemptions?.map((e) => e.exemptionId)).toEqual(['a'.repeat(24), 'b'.repeat(24)]);
    expect(plan.exemptions?.[1]).toEqual({
      exemptionId: 'b'.repeat(24),
      ruleId: 'motd-banner',
      until: '2099-01-01T00:00:00Z',
      reason: 'reason b',
      by: 'alice',
    });
    const chunk = await store.getChunk(batchId, 0, plan);
    const of = new Map(chunk.map((d) => [d.device, d.exemptions ?? []]));
    expect(of.get(fleetName(3))).toEqual([0]);
    expect(of.get(fleetName(2))).toEqual([1]);
    expect(of.get(fleetName(6))).toEqual([1]);
    expect(of.get(fleetName(0))).toEqual([]);
  });
});
