/**
 * The compliance routes as they run on a stack, for integration tests: the tree import, batch
 * start and batch read handlers against DynamoDB Local, an adapter whose password is in the
 * local secrets store, the NSO simulator with a synthetic fleet, and a local Lambda Invoke
 * endpoint that runs the production batch handler under the official local durable runner.
 * Call from `beforeAll` (it stubs the environment and resets modules); `close` in `afterAll`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { loadDurableTesting } from '../../tools/local/durable.js';
import { startLambdaInvokeEndpoint } from '../../tools/local/lambda-invoke.js';
import { startNsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type Answer = Awaited<ReturnType<typeof invoke>>;

const COLLECTION = '/configuration_manager/compliance_reports';
const ADMIN = { principalId: 'ops', roles: 'admin' };
const PASSWORD = 'stack-Pa55-word';

export interface ComplianceStack {
  /** The adapter every batch runs through. */
  readonly adapterId: string;
  readonly tables: Record<string, string>;
  /** `POST /configuration_manager/imports` with `body`. */
  importTree(body: unknown): Promise<Answer>;
  /** `POST /configuration_manager/compliance_reports` with `body`. */
  start(body: unknown): Promise<Answer>;
  /** `GET …/batches/{batchId}`. */
  batch(batchId: string): Promise<Answer>;
  /** Resolves when every execution started so far has ended. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the stack with a fleet of `devices` devices NSO knows (`edge-00000` …). */
export const startComplianceStack = async (devices: number): Promise<ComplianceStack> => {
  const tables = await createTables();
  const dir = await mkdtemp(path.join(tmpdir(), 'compliance-stack-'));
  const sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices } });
  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/fleet', { password: PASSWORD });
  const adapterId = 'fleet-nso';
  await createAdapterStore(documentClient, tables['adapters']).put(
    { name: adapterId, type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/fleet#password' } },
    new Date().toISOString(),
  );
  vi.stubEnv('SECRETS_BACKEND', 'local');
  vi.stubEnv('SECRETS_FILE', secretsFile);
  vi.stubEnv('LOCAL_MODE', 'true');
  vi.stubEnv('LOG_LEVEL', 'warn');
  vi.resetModules();
  const testing = await loadDurableTesting();
  await testing.LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
  const { handler: batchHandler } = await import('../../functions/compliance/handlers/batch.js');
  const lambda = await startLambdaInvokeEndpoint({
    functions: new Map([
      [
        'netconfig-ComplianceBatch',
        async (payload) => {
          const execution = await new testing.LocalDurableTestRunner({ handlerFunction: batchHandler }).run({ payload: JSON.parse(payload) as unknown });
          if (execution.getStatus() !== 'SUCCEEDED') throw new Error(`execution ${execution.getStatus()}`);
        },
      ],
    ]),
    log: () => undefined,
  });
  vi.stubEnv('AWS_ENDPOINT_URL_LAMBDA', lambda.url);
  vi.stubEnv('COMPLIANCE_FUNCTION', 'arn:aws:lambda:us-east-1:000000000000:function:netconfig-ComplianceBatch:live');
  const importHandler = (await import('../../functions/trees/handlers/import.js')).handler as Handler;
  const startHandler = (await import('../../functions/compliance/handlers/start.js')).handler as Handler;
  const getBatch = (await import('../../functions/compliance/handlers/get-batch.js')).handler as Handler;
  return {
    adapterId,
    tables,
    importTree: (body) =>
      invoke(importHandler, apiEvent({ method: 'POST', resource: '/configuration_manager/imports', body, authorizer: ADMIN }), lambdaContext(30_000)),
    start: (body) => invoke(startHandler, apiEvent({ method: 'POST', resource: COLLECTION, body, authorizer: ADMIN }), lambdaContext(30_000)),
    batch: (batchId) =>
      invoke(getBatch, apiEvent({ method: 'GET', resource: `${COLLECTION}/batches/{batchId}`, pathParameters: { batchId } }), lambdaContext(10_000)),
    idle: () => lambda.idle(),
    close: async () => {
      await lambda.close();
      await testing.LocalDurableTestRunner.teardownTestEnvironment();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};
