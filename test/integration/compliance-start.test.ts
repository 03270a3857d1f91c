/**
 * POST /configuration_manager/compliance_reports through its real handler: the tree imported
 * into DynamoDB Local, the adapter and its secret stored, the batch's durable execution started
 * with the AWS SDK's Lambda Invoke call against the local Invoke endpoint, which runs the
 * production batch handler under the official local runner against the NSO simulator's fleet.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { configPath } from '../../functions/compliance/check.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { expectedGrade, FLEET_RULES, FLEET_VARIABLES, fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'start-Pa55-word';
const DEVICES = 12;
const COLLECTION = '/configuration_manager/compliance_reports';

let sim: NsoSimulator;
let dir: string;
let lambda: LambdaInvokeEndpoint;
let start: Handler;
let getBatch: Handler;
let treeId: string;
let complianceTable: string;
let adaptersTable: string;
let testing: DurableTesting;
const executions: string[] = [];

const post = (body: unknown, headers: Record<string, string> = {}) =>
  invoke(start, apiEvent({ method: 'POST', resource: COLLECTION, body, headers, authorizer: { principalId: 'ops', roles: 'admin' } }), lambdaContext(10_000));
const batch = (batchId: string) =>
  invoke(getBatch, apiEvent({ method: 'GET', resource: `${COLLECTION}/batches/{batchId}`, pathParameters: { batchId } }), lambdaContext(10_000));

beforeAll(async () => {
  const tables = await createTables();
  complianceTable = tables['compliance'];
  adaptersTable = tables['adapters'];
  dir = await mkdtemp(path.join(tmpdir(), 'compliance-start-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: DEVICES } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/fleet', { password: PASSWORD });
  const adapters = createAdapterStore(documentClient, tables['adapters']);
  const now = new Date().toISOString();
  const adapter = { type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/fleet#password' } } as const;
  await adapters.put({ name: 'fleet-nso', ...adapter }, now);
  await adapters.put({ name: 'capped-nso', ...adapter, complianceConcurrency: 3 }, now);

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
            root: { name: 'base', devices: Array.from({ length: DEVICES }, (_, i) => fleetName(i)), rules: FLEET_RULES.map((r) => ({ ...r })) },
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

describe('POST /configuration_manager/compliance_reports', () => {
  it('answers 202 with the batch and its Location, and the batch completes with every device graded', async () => {
    const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso' });
    expect(res.status).toBe(202);
    const body = res.body as { batchId: string; status: string; total: number };
    expect(body).toEqual({ batchId: expect.stringMatching(/^[0-9a-f]{24}$/), status: 'running', total: DEVICES });
    expect(res.headers['Location']).toBe(`/v1${COLLECTION}/batches/${body.batchId}`);
    expect(executions).toContain(`batch-${body.batchId}`);
    await lambda.idle();
    const done = await batch(body.batchId);
    expect(done.body).toMatchObject({ status: 'completed', total: DEVICES, done: DEVICES });
    const grades = { pass: 0, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: 0 };
    for (let i = 0; i < DEVICES; i++) grades[expectedGrade(i)]++;
    expect(done.body).toMatchObject({ kind: 'compliance', treeId });
    expect((done.body as { grades: unknown }).grades).toEqual(grades);
  });

  it('checks only the devices named', async () => {
    const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(0), fleetName(1)] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ total: 2 });
    await lambda.idle();
    expect((await batch((res.body as { batchId: string }).batchId)).body).toMatchObject({ status: 'completed', done: 2 });
  });

  it('replays the first answer for a repeated Idempotency-Key and starts one batch', async () => {
    const before = executions.length;
    const headers = { 'Idempotency-Key': 'start-once-1' };
    const first = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(2)] }, headers);
    const second = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(2)] }, headers);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(second.headers['Idempotent-Replayed']).toBe('true');
    expect(executions.length).toBe(before + 1);
    const other = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(3)] }, headers);
    expect(other.status).toBe(422);
    await lambda.idle();
  });

  it.each([
    [{ treeId: 'f'.repeat(24), version: 'v1', adapterId: 'fleet-nso' }, 404, /tree/],
    [{ version: 'nope', adapterId: 'fleet-nso' }, 404, /version/],
    [{ version: 'v1', adapterId: 'nobody' }, 404, /adapter/],
  ])('answers 404 for an unknown tree, version or adapter and starts nothing (%#)', async (input, status, detail) => {
    const before = executions.length;
    const res = await post({ treeId, ...input });
    expect(res.status).toBe(status);
    expect(res.contentType).toBe('application/problem+json');
    expect((res.body as { detail: string }).detail).toMatch(detail);
    expect(executions.length).toBe(before);
  });

  it.each([
    [{ treeId: 'not-a-tree-id', version: 'v1', adapterId: 'fleet-nso' }, 'body:treeId'],
    [{ version: 'v1', adapterId: 'fleet-nso', extra: 1 }, 'body:extra'],
    [{ version: 'v1', adapterId: 'fleet-nso', devices: [] }, 'body:devices'],
    [{ version: 'v1', adapterId: '../x' }, 'body:adapterId'],
    [{ version: 'v1', adapterId: 'fleet-nso', devices: ['not-in-the-tree'] }, 'body:devices'],
  ])('answers 400 naming the field and starts nothing (%#)', async (input, field) => {
    const before = executions.length;
    const res = await post({ treeId, ...input });
    expect(res.status).toBe(400);
    expect((res.body as { errors: { in: string; field: string }[] }).errors.map((e) => `${e.in}:${e.field}`)).toContain(field);
    expect(executions.length).toBe(before);
  });

  it('answers 409 adapter-stopped for a stopped adapter and starts nothing', async () => {
    const adapters = createAdapterStore(documentClient, adaptersTable);
    await adapters.setState('capped-nso', 'STOPPED', new Date().toISOString());
    const before = executions.length;
    try {
      const res = await post({ treeId, version: 'v1', adapterId: 'capped-nso' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:adapter-stopped' });
      expect(executions.length).toBe(before);
    } finally {
      await adapters.setState('capped-nso', 'RUNNING', new Date().toISOString());
    }
  });

  it('runs a batch through an adapter started just after the batch function found it stopped (its warm cache)', async () => {
    const adapters = createAdapterStore(documentClient, adaptersTable);
    const stored = await adapters.get('fleet-nso');
    await adapters.put({ ...stored!, name: 'toggle-nso' }, new Date().toISOString());
    await adapters.setState('toggle-nso', 'STOPPED', new Date().toISOString());
    // The batch function's own module: the adapter cache its batches fetch through.
    const { engineDeps } = await import('../../functions/compliance/handlers/batch.js');
    const fetch = () => engineDeps.relayGet(() => 10_000)('toggle-nso', configPath(fleetName(7))!);
    await expect(fetch()).rejects.toMatchObject({ status: 409, slug: 'adapter-stopped' });
    await adapters.setState('toggle-nso', 'RUNNING', new Date().toISOString());
    expect((await fetch())[0]).toMatchObject({ result: '200' });
    const devices = [fleetName(7), fleetName(8)];
    const res = await post({ treeId, version: 'v1', adapterId: 'toggle-nso', devices });
    expect(res.status).toBe(202);
    await lambda.idle();
    const done = await batch((res.body as { batchId: string }).batchId);
    const grades = { pass: 0, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: 0 };
    for (const i of [7, 8]) grades[expectedGrade(i)]++;
    expect(done.body).toMatchObject({ status: 'completed', done: 2, grades });
  });

  it("fixes the fetch cap on the batch: the adapter's own, else the default 10", async () => {
    const store = new ComplianceStore(documentClient, complianceTable);
    const capped = await post({ treeId, version: 'v1', adapterId: 'capped-nso', devices: [fleetName(4)] });
    const plain = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(5)] });
    expect((await store.getWork((capped.body as { batchId: string }).batchId)).concurrency).toBe(3);
    expect((await store.getWork((plain.body as { batchId: string }).batchId)).concurrency).toBe(10);
    await lambda.idle();
  });

  it('answers 503 when Lambda refuses to start the execution (nothing runs)', async () => {
    vi.stubEnv('COMPLIANCE_FUNCTION', 'no-such-function');
    try {
      const res = await post({ treeId, version: 'v1', adapterId: 'fleet-nso', devices: [fleetName(6)] });
      expect(res.status).toBe(503);
      expect(res.contentType).toBe('application/problem+json');
      expect(res.headers['Retry-After']).toBeDefined();
    } finally {
      vi.stubEnv('COMPLIANCE_FUNCTION', 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-ComplianceBatch:live');
    }
  });
});
