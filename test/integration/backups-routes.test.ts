/**
 * POST /configuration_manager/backups through its real handler: the adapter and its secret in
 * DynamoDB Local and the local secrets store, the device list read from the NSO simulator's
 * fleet through the relay, the batch's durable execution started with Lambda Invoke against the
 * local Invoke endpoint, which runs the engine under the official local runner with a recording
 * `ConfigArchive`. Then the batch as the compliance status and report routes show it, and every
 * refusal with its status and problem.
 */
import { withDurableExecution } from '@aws/durable-execution-sdk-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import type { BatchEvent } from '../../functions/compliance/engine.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { loadDurableTesting, type DurableTesting } from '../../tools/local/durable.js';
import { startLambdaInvokeEndpoint, type LambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { RecordingArchive } from '../support/config-archive.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const PASSWORD = 'backups-Pa55-word';
const FLEET = 40;
/** The fleet and the simulator's own two devices. */
const KNOWN = FLEET + 2;
const COLLECTION = '/configuration_manager/backups';
const BATCHES = '/configuration_manager/compliance_reports/batches';
const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-ComplianceBatch:live';

let sim: NsoSimulator;
let dir: string;
let lambda: LambdaInvokeEndpoint;
let start: Handler;
let getBatch: Handler;
let listReports: Handler;
let testing: DurableTesting;
const archive = new RecordingArchive();
const executions: string[] = [];

const post = (body: unknown, headers: Record<string, string> = {}) =>
  invoke(start, apiEvent({ method: 'POST', resource: COLLECTION, body, headers, authorizer: { principalId: 'ops', roles: 'admin' } }), lambdaContext(20_000));
const batch = (batchId: string) =>
  invoke(getBatch, apiEvent({ method: 'GET', resource: `${BATCHES}/{batchId}`, pathParameters: { batchId } }), lambdaContext(10_000));
const reports = (batchId: string, grade: string) =>
  invoke(
    listReports,
    apiEvent({ method: 'GET', resource: `${BATCHES}/{batchId}/reports`, pathParameters: { batchId }, query: { grade, limit: '200' } }),
    lambdaContext(10_000),
  );

beforeAll(async () => {
  const tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'backups-routes-'));
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: FLEET } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/fleet', { password: PASSWORD });
  const adapters = createAdapterStore(documentClient, tables['adapters']);
  const adapter = { type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/fleet#password' } } as const;
  await adapters.put({ name: 'fleet-nso', ...adapter }, new Date().toISOString());
  await adapters.put({ name: 'stopped-nso', ...adapter }, new Date().toISOString());
  await adapters.setState('stopped-nso', 'STOPPED', new Date().toISOString());

  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('LOG_LEVEL', 'error');
  vi.stubEnv('COMPLIANCE_TABLE', tables['compliance']);
  vi.stubEnv('ADAPTERS_TABLE', tables['adapters']);
  vi.stubEnv('IDEMPOTENCY_TABLE', tables['idempotency']);
  vi.resetModules();
  testing = await loadDurableTesting();
  await testing.LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
  const { engineDeps } = await import('../../functions/compliance/handlers/batch.js');
  const { runBatch } = await import('../../functions/compliance/engine.js');
  const batchHandler = withDurableExecution(async (event: BatchEvent, context) => runBatch(event, context, { ...engineDeps, archive }));
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
  vi.stubEnv('COMPLIANCE_FUNCTION', FUNCTION_ARN);
  start = (await import('../../functions/compliance/handlers/start-backup.js')).handler as Handler;
  getBatch = (await import('../../functions/compliance/handlers/get-batch.js')).handler as Handler;
  listReports = (await import('../../functions/compliance/handlers/list-reports.js')).handler as Handler;
}, 120_000);

afterAll(async () => {
  await lambda?.close();
  await testing?.LocalDurableTestRunner.teardownTestEnvironment();
  vi.unstubAllEnvs();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  sim.setKnobs({});
});

describe('POST /configuration_manager/backups', () => {
  it("answers 202 with the batch's path; the batch keeps every device of the NSO and shows as kind backup", async () => {
    const res = await post({ adapterId: 'fleet-nso' });
    expect(res.status).toBe(202);
    const { batchId } = res.body as { batchId: string };
    expect(res.body).toEqual({ batchId: expect.stringMatching(/^[0-9a-f]{24}$/), status: 'running', total: KNOWN });
    expect(res.headers['Location']).toBe(`/v1${BATCHES}/${batchId}`);
    await lambda.idle();
    const done = await batch(batchId);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ batchId, kind: 'backup', adapterId: 'fleet-nso', status: 'completed', total: KNOWN, done: KNOWN });
    expect((done.body as { grades: unknown }).grades).toEqual({ pass: 0, review: 0, fail: 0, error: 0, 'out-of-sync': 0, kept: KNOWN });
    expect(done.body).not.toHaveProperty('treeId');
    const kept = await reports(batchId, 'kept');
    expect(kept.status).toBe(200);
    expect((kept.body as { items: { device: string; configId: string }[] }).items.map((r) => r.device).sort()).toEqual(
      ['ce0', 'pe0', ...Array.from({ length: FLEET }, (_, i) => fleetName(i))].sort(),
    );
    expect(archive.calls.filter((t) => t.source.batchId === batchId)).toHaveLength(KNOWN);
  });

  it('replays the first answer for a repeated Idempotency-Key and starts one batch', async () => {
    const before = executions.length;
    const headers = { 'Idempotency-Key': 'backup-once-1' };
    const first = await post({ adapterId: 'fleet-nso', devices: [fleetName(2)] }, headers);
    const second = await post({ adapterId: 'fleet-nso', devices: [fleetName(2)] }, headers);
    expect(first.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(second.headers['Idempotent-Replayed']).toBe('true');
    expect(executions.length).toBe(before + 1);
    await lambda.idle();
  });

  it.each([
    ['no adapterId', { devices: [fleetName(1)] }],
    ['an empty device list', { adapterId: 'fleet-nso', devices: [] }],
    ['an empty device name', { adapterId: 'fleet-nso', devices: [''] }],
    ['a device that is not a string', { adapterId: 'fleet-nso', devices: [7] }],
    ['an unknown member', { adapterId: 'fleet-nso', treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6' }],
  ])('answers 400 for %s and starts nothing', async (_, body) => {
    const before = executions.length;
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status: 400, type: 'urn:netconfig:problem:validation' });
    expect(executions.length).toBe(before);
  });

  it('answers 404 for an unknown adapter and 409 adapter-stopped for a stopped one, starting nothing', async () => {
    const before = executions.length;
    const unknown = await post({ adapterId: 'no-such-nso' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'urn:netconfig:problem:not-found', detail: "No adapter is named 'no-such-nso'." });
    const stopped = await post({ adapterId: 'stopped-nso' });
    expect(stopped.status).toBe(409);
    expect(stopped.body).toMatchObject({
      type: 'urn:netconfig:problem:adapter-stopped',
      detail: expect.stringMatching(/stopped; start it before running backups/),
    });
    expect(executions.length).toBe(before);
  });

  it('answers 502 naming the page when NSO answers a page of its device list with an error, and 422 when it knows no device', async () => {
    const before = executions.length;
    sim.setKnobs({ answer: { match: (p) => p.includes('fields=name&offset=0&'), status: 503, body: '{}' } });
    const failed = await post({ adapterId: 'fleet-nso' });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({
      type: 'urn:netconfig:problem:bad-gateway',
      detail: expect.stringMatching(/answered 503 to page 1 of its device list/),
    });
    sim.setKnobs({ answer: { match: (p) => p.includes('fields=name&offset=0&'), status: 200, body: '{"tailf-ncs:device":[]}' } });
    const none = await post({ adapterId: 'fleet-nso' });
    expect(none.status).toBe(422);
    expect(none.body).toMatchObject({ type: 'urn:netconfig:problem:no-devices' });
    expect(executions.length).toBe(before);
  });

  it('says in its 202 answer how many devices NSO knows that it leaves out, and why; none that can be kept is a 422', async () => {
    const names = ['ok-1', 'a/b', 'x'.repeat(300)];
    const body = JSON.stringify({ 'tailf-ncs:device': names.map((name) => ({ name })) });
    sim.setKnobs({ answer: { match: (p) => p.includes('fields=name&offset=0&'), status: 200, body } });
    const res = await post({ adapterId: 'fleet-nso' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ total: 1, skipped: { count: 2, reason: expect.any(String), examples: ['a/b', `${'x'.repeat(64)}…`] } });
    await lambda.idle();
    sim.setKnobs({
      answer: { match: (p) => p.includes('fields=name&offset=0&'), status: 200, body: JSON.stringify({ 'tailf-ncs:device': [{ name: 'a/b' }] }) },
    });
    const none = await post({ adapterId: 'fleet-nso' });
    expect(none.status).toBe(422);
    expect(none.body).toMatchObject({ type: 'urn:netconfig:problem:no-devices', detail: expect.stringContaining('1 left out') });
  });

  it('answers 503 when Lambda refuses to start the execution', async () => {
    vi.stubEnv('COMPLIANCE_FUNCTION', 'no-such-function');
    try {
      const res = await post({ adapterId: 'fleet-nso', devices: [fleetName(6)] });
      expect(res.status).toBe(503);
      expect(res.contentType).toBe('application/problem+json');
      expect(res.headers['Retry-After']).toBeDefined();
      expect(res.body).toMatchObject({ detail: 'The compliance engine could not be started; retry later.' });
    } finally {
      vi.stubEnv('COMPLIANCE_FUNCTION', FUNCTION_ARN);
    }
  });
});
