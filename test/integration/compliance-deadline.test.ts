/**
 * A batch whose durable execution ended without it ends `failed`, once, against DynamoDB Local
 * with injected clocks: a read past the batch's deadline ends it; the scheduled housekeeping
 * ends it from the execution's status (timed out, failed, stopped) and prunes the versions no
 * execution can use, through a fake of the Lambda API behind the code's own interface; and that
 * interface over the SDK reads every page and deletes a version by qualifier.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { batchDeadline, BATCH_EXECUTION_TIMEOUT_SECONDS, endedReason, PAST_DEADLINE_REASON } from '../../functions/compliance/deadline.js';
import {
  type DurableExecution,
  endBatchOfExecution,
  runHousekeeping,
  SUPERSEDED_GRACE_MS,
  type SweptFunction,
  sweepFunction,
} from '../../functions/compliance/housekeeping.js';
import { lambdaDurableFunctionApi } from '../../functions/compliance/lambda-api.js';
import { readBatch } from '../../functions/compliance/read.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { metrics } from '../../functions/platform/metrics.js';
import { createTables } from '../../tools/local/table-copies.js';
import { executionArn, FakeDurableFunction } from '../support/durable-function.js';

let store: ComplianceStore;
const STARTED = '2026-11-25T10:00:00.000Z';
const HOUR = 3_600_000;
let seq = 0x5000;

const newBatch = async (started = STARTED): Promise<string> => {
  const batchId = (++seq).toString(16).padStart(24, '0');
  await store.create(
    {
      batchId,
      treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
      version: 'v1',
      adapterId: 'lab-nso',
      total: 1,
      started,
      chunks: 1,
      concurrency: 10,
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    },
    { variables: {}, rulesByNode: {}, nodes: ['base'] },
    [[{ device: 'd0', node: 'base' }]],
  );
  return batchId;
};

/** The `ComplianceBatches` values recorded with `Status=failed`. */
const failedMetrics = () => {
  const add = vi.spyOn(metrics, 'add');
  return () => add.mock.calls.filter(([name, , , dims]) => name === 'ComplianceBatches' && dims?.['Status'] === 'failed').length;
};

beforeAll(async () => {
  store = new ComplianceStore(documentClient, (await createTables())['compliance']);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('a batch read past its deadline', () => {
  it('stays running up to its deadline and is ended failed, once, by the first read after it', async () => {
    const batchId = await newBatch();
    const failed = failedMetrics();
    const deadline = batchDeadline(STARTED);
    expect(deadline - Date.parse(STARTED)).toBeGreaterThan(BATCH_EXECUTION_TIMEOUT_SECONDS * 1000);

    expect((await readBatch(store, batchId, new Date(deadline))).status).toBe('running');
    const after = new Date(deadline + 1);
    const [first, second] = await Promise.all([readBatch(store, batchId, after), readBatch(store, batchId, after)]);
    for (const b of [first, second]) expect(b).toMatchObject({ status: 'failed', reason: PAST_DEADLINE_REASON, finished: after.toISOString() });
    expect(failed()).toBe(1);
    // Persisted: a plain read now sees it, and a later read changes nothing.
    expect(await store.getBatch(batchId)).toMatchObject({ status: 'failed', finished: after.toISOString() });
    expect(await readBatch(store, batchId, new Date(deadline + 10 * HOUR))).toMatchObject({ finished: after.toISOString() });
    expect(failed()).toBe(1);
  });

  it('leaves a batch that ended by itself as it ended', async () => {
    const batchId = await newBatch();
    await store.finish(batchId, 'completed', '2026-11-25T10:05:00.000Z');
    const failed = failedMetrics();
    expect(await readBatch(store, batchId, new Date(batchDeadline(STARTED) + HOUR))).toMatchObject({
      status: 'completed',
      finished: '2026-11-25T10:05:00.000Z',
    });
    expect(failed()).toBe(0);
  });
});

const arnOn = (version: string, name: string) => executionArn('svc-ComplianceBatch', version, name);

/** The batch function as the housekeeping sweeps it, over `lambda` and the store. */
const batchFunction = (lambda: FakeDurableFunction): SweptFunction => ({ name: 'ComplianceBatch', lambda, endWork: endBatchOfExecution(store) });

describe('the scheduled housekeeping', () => {
  it('ends the batches of timed-out, failed and stopped executions once, with the reason of each, and no other', async () => {
    const [timedOut, failedRun, stopped, succeeded, running, alreadyFailed] = await Promise.all(Array.from({ length: 6 }, () => newBatch()));
    await store.finish(alreadyFailed!, 'failed', '2026-11-25T12:00:00.000Z', undefined, 'a chunk failed');
    const now = new Date('2026-11-26T11:00:00.000Z');
    const started = new Date(STARTED);
    const ended = new Date('2026-11-26T10:00:01.000Z');
    const probe = new FakeDurableFunction([], [], []);
    const exec = (batchId: string, status: DurableExecution['status']): DurableExecution => probe.execution('3', `batch-${batchId}`, status, started, ended);
    const lambda = new FakeDurableFunction(
      [{ version: '3', published: new Date('2026-11-20T00:00:00.000Z') }],
      ['3'],
      [
        exec(timedOut!, 'TIMED_OUT'),
        exec(failedRun!, 'FAILED'),
        exec(stopped!, 'STOPPED'),
        exec(succeeded!, 'SUCCEEDED'),
        exec(running!, 'RUNNING'),
        exec(alreadyFailed!, 'FAILED'),
        { ...exec(timedOut!, 'TIMED_OUT'), name: 'not-a-batch' },
      ],
    );
    const failed = failedMetrics();
    const outcome = await sweepFunction(batchFunction(lambda), now);
    expect([...outcome.ended].sort()).toEqual([timedOut, failedRun, stopped].sort());
    expect(failed()).toBe(3);
    expect(await store.getBatch(timedOut!)).toMatchObject({ status: 'failed', reason: endedReason('TIMED_OUT'), finished: ended.toISOString() });
    expect(await store.getBatch(failedRun!)).toMatchObject({ status: 'failed', reason: endedReason('FAILED') });
    expect(await store.getBatch(stopped!)).toMatchObject({ status: 'failed', reason: endedReason('STOPPED') });
    expect(await store.getBatch(succeeded!)).toMatchObject({ status: 'running' });
    expect(await store.getBatch(running!)).toMatchObject({ status: 'running' });
    expect(await store.getBatch(alreadyFailed!)).toMatchObject({ status: 'failed', reason: 'a chunk failed' });
    // Only ended executions of the look-back window are asked for.
    expect(lambda.asked[0]).toMatchObject({ version: '3', statuses: ['TIMED_OUT', 'FAILED', 'STOPPED'] });
    expect(now.getTime() - lambda.asked[0]!.startedAfter!.getTime()).toBeGreaterThan(SUPERSEDED_GRACE_MS);

    // The next run finds nothing more to end.
    expect((await sweepFunction(batchFunction(lambda), now)).ended).toEqual([]);
    expect(failed()).toBe(3);
  });

  it('deletes the versions no execution can use and keeps the alias target, the ones in use and the recently superseded', async () => {
    const now = new Date('2026-11-27T12:00:00.000Z');
    const long = (days: number) => new Date(now.getTime() - days * 24 * HOUR);
    const lambda = new FakeDurableFunction(
      [
        { version: '1', published: long(30) },
        { version: '2', published: long(20) },
        { version: '3', published: long(10) },
        { version: '4', published: long(5) },
        { version: '5', published: new Date(now.getTime() - 2 * HOUR) },
      ],
      ['5'],
      [],
    );
    lambda.executions.push(lambda.execution('2', 'batch-00000000000000000000abcd', 'RUNNING', long(0.5)));
    const outcome = await sweepFunction(batchFunction(lambda), now);
    expect(outcome.deleted).toEqual(['1', '3']);
    expect(lambda.deleted).toEqual(['1', '3']);
    expect(Object.fromEntries(outcome.kept.map((k) => [k.version, k.reason]))).toEqual({
      2: 'running-executions',
      4: 'recently-superseded',
      5: 'alias-target',
    });
  });

  it('deletes nothing when the running executions cannot be listed', async () => {
    const lambda = new FakeDurableFunction(
      [
        { version: '1', published: new Date(0) },
        { version: '2', published: new Date(1) },
      ],
      ['2'],
      [],
    );
    lambda.listExecutions = async (_version, statuses) => {
      if (statuses.includes('RUNNING')) throw new Error('TooManyRequestsException');
      return [];
    };
    await expect(sweepFunction(batchFunction(lambda), new Date())).rejects.toThrow('TooManyRequestsException');
    expect(lambda.deleted).toEqual([]);
  });

  it('sweeps every function whatever the others do, then reports the first failure', async () => {
    const now = new Date('2026-11-27T12:00:00.000Z');
    const old = [
      { version: '1', published: new Date(0) },
      { version: '2', published: new Date(1) },
    ];
    const refusing = new FakeDurableFunction(old, ['2'], []);
    refusing.listVersions = async () => {
      throw new Error('AccessDeniedException');
    };
    const other = new FakeDurableFunction(old, ['2'], [], 'svc-RemediationRun');
    const swept = [batchFunction(refusing), { name: 'RemediationRun', lambda: other, endWork: async () => [] }];
    await expect(runHousekeeping(swept, now)).rejects.toThrow('AccessDeniedException');
    expect(other.deleted).toEqual(['1']);
    const both = await runHousekeeping([batchFunction(new FakeDurableFunction(old, ['2'], [])), swept[1]!], now);
    expect(Object.keys(both)).toEqual(['ComplianceBatch', 'RemediationRun']);
    expect(both['ComplianceBatch']!.deleted).toEqual(['1']);
  });
});

describe('the housekeeping API over the Lambda SDK', () => {
  it('reads every page of versions, aliases and executions, and deletes a version by qualifier', async () => {
    const sent: { name: string; input: Record<string, unknown> }[] = [];
    const answers: Record<string, (input: Record<string, unknown>) => unknown> = {
      ListVersionsByFunctionCommand: (input) =>
        input['Marker'] === undefined
          ? {
              Versions: [
                { Version: '$LATEST', LastModified: '2026-11-27T06:00:00.000+0000' },
                { Version: '1', LastModified: '2026-11-01T06:00:00.000+0000' },
              ],
              NextMarker: 'm',
            }
          : { Versions: [{ Version: '2', LastModified: '2026-11-02T06:00:00.000+0000' }] },
      ListAliasesCommand: () => ({ Aliases: [{ Name: 'live', FunctionVersion: '2', RoutingConfig: { AdditionalVersionWeights: { '1': 0.1 } } }] }),
      ListDurableExecutionsByFunctionCommand: (input) =>
        input['Marker'] === undefined
          ? {
              DurableExecutions: [
                {
                  DurableExecutionName: 'batch-a',
                  DurableExecutionArn: arnOn('1', 'batch-a'),
                  Status: 'TIMED_OUT',
                  StartTimestamp: new Date(0),
                  EndTimestamp: new Date(5),
                },
              ],
              NextMarker: 'n',
            }
          : {
              DurableExecutions: [
                { DurableExecutionName: 'batch-b', DurableExecutionArn: arnOn('2', 'batch-b'), Status: 'FAILED', StartTimestamp: new Date(1) },
              ],
            },
      DeleteFunctionCommand: () => ({}),
    };
    // A real client (the paginators check its class) whose requests never leave the process.
    const client = new LambdaClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    vi.spyOn(client, 'send').mockImplementation((async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      sent.push({ name: command.constructor.name, input: { ...command.input } });
      return answers[command.constructor.name]!(command.input);
    }) as unknown as LambdaClient['send']);
    const api = lambdaDurableFunctionApi(client, 'svc-ComplianceBatch');
    expect(await api.listVersions()).toEqual([
      { version: '1', published: new Date('2026-11-01T06:00:00.000Z') },
      { version: '2', published: new Date('2026-11-02T06:00:00.000Z') },
    ]);
    expect((await api.aliasTargets()).sort()).toEqual(['1', '2']);
    const after = new Date('2026-11-20T00:00:00.000Z');
    expect(await api.listExecutions('2', ['TIMED_OUT', 'FAILED'], after)).toEqual([
      { name: 'batch-a', arn: arnOn('1', 'batch-a'), status: 'TIMED_OUT', started: new Date(0), ended: new Date(5) },
      { name: 'batch-b', arn: arnOn('2', 'batch-b'), status: 'FAILED', started: new Date(1) },
    ]);
    await api.deleteVersion('1');
    expect(sent.filter((s) => s.name === 'ListDurableExecutionsByFunctionCommand').map((s) => s.input)).toEqual([
      { FunctionName: 'svc-ComplianceBatch', Qualifier: '2', Statuses: ['TIMED_OUT', 'FAILED'], StartedAfter: after, MaxItems: 1000 },
      { FunctionName: 'svc-ComplianceBatch', Qualifier: '2', Statuses: ['TIMED_OUT', 'FAILED'], StartedAfter: after, MaxItems: 1000, Marker: 'n' },
    ]);
    expect(sent.at(-1)).toEqual({ name: 'DeleteFunctionCommand', input: { FunctionName: 'svc-ComplianceBatch', Qualifier: '1' } });
  });
});
