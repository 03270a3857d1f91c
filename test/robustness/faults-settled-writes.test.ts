/**
 * Conditional writes whose first attempt landed but whose answer never came: the SDK resends,
 * the resend meets the first attempt and its condition refuses it. Every "only if new" write of
 * the functions must take that for the success it is, and still refuse a real conflict. The
 * clients run with the platform's own limits (`DYNAMODB_CLIENT_LIMITS`) through a proxy that
 * withholds the first answer.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComplianceStore } from '../../functions/compliance/store.js';
import { profileSettings } from '../../functions/runtime/profile-model.js';
import { ProfileWriteRefused, createProfileStore } from '../../functions/runtime/profile-store.js';
import { DYNAMODB_CLIENT_LIMITS, documentClient } from '../../functions/platform/dynamo.js';
import { startWithholdingProxy, type WithholdingProxy } from '../support/withholding-proxy.js';
import { createTables } from '../../tools/local/table-copies.js';

let tables: Awaited<ReturnType<typeof createTables>>;
let proxy: WithholdingProxy;
let client: DynamoDBDocumentClient;
const change = { now: '2026-01-01T00:00:00.000Z', by: 'tester' };

beforeAll(async () => {
  tables = await createTables();
  proxy = await startWithholdingProxy(process.env['AWS_ENDPOINT_URL_DYNAMODB']!);
  const { maxAttempts, connectionTimeoutMs, requestTimeoutMs } = DYNAMODB_CLIENT_LIMITS;
  client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: proxy.endpoint,
      maxAttempts,
      requestHandler: { connectionTimeout: connectionTimeoutMs, requestTimeout: requestTimeoutMs, throwOnRequestTimeout: true },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
}, 60_000);

afterAll(async () => {
  client?.destroy();
  await proxy?.close();
});

const newBatch = (batchId: string) =>
  new ComplianceStore(client, tables.compliance).create(
    {
      batchId,
      treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
      version: 'v1',
      adapterId: 'lab',
      total: 1,
      started: '2026-11-25T10:00:00.000Z',
      chunks: 1,
      concurrency: 1,
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    },
    { variables: {}, rulesByNode: {}, nodes: ['base'] },
    [[{ device: 'd0', node: 'base' }]],
  );

/** The stored batch record, read directly. */
const batchRecord = async (batchId: string) =>
  (await documentClient.send(new GetCommand({ TableName: tables.compliance, Key: { pk: `B#${batchId}`, sk: 'META' }, ConsistentRead: true }))).Item;

describe('an "only if new" write whose first attempt landed unanswered', () => {
  it('starts a compliance batch: the resend meeting its own record is no conflict', async () => {
    const batchId = 'a'.repeat(24);
    proxy.withholdNext('PutItem');
    const before = proxy.withheld;
    // The plan and chunks go first (batch writes); the record's put is the first PutItem.
    await expect(newBatch(batchId)).resolves.toBeUndefined();
    expect(proxy.withheld).toBe(before + 1);
    expect(await batchRecord(batchId)).toMatchObject({ status: 'running', done: 0 });
  }, 60_000);

  it('still refuses a batch id that another start holds', async () => {
    const batchId = 'b'.repeat(24);
    await newBatch(batchId);
    await expect(newBatch(batchId)).rejects.toThrow(/exists already/);
  }, 60_000);

  it('creates a profile: the resent transaction meeting its own profile is not "exists"', async () => {
    const store = createProfileStore(client, tables.profiles, () => tables.changelog);
    await store.runtime();
    await store.create('warmup', profileSettings({}), change);
    proxy.withholdNext('TransactWriteItems');
    const before = proxy.withheld;
    await expect(store.create('blue', profileSettings({}), change)).resolves.toMatchObject({ id: 'blue' });
    expect(proxy.withheld).toBe(before + 1);
    await expect(store.create('blue', profileSettings({}), change)).rejects.toEqual(new ProfileWriteRefused('exists'));
  }, 60_000);
});
