/**
 * Remediation runs and rollbacks whose durable execution ended without them: the housekeeping's
 * sweep of the remediation function (a fake of the Lambda API, an in-memory store) ends each one
 * still `running` once, with the reason of its execution's status, ignores names that are not a
 * run's and work already ended, and prunes the function's versions as it does the batch
 * function's; a read past the deadline ends it too (`onTime`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { batchDeadline } from '../../functions/compliance/deadline.js';
import { type DurableExecution, runHousekeeping, type SweptFunction, sweepFunction } from '../../functions/compliance/housekeeping.js';
import {
  endRemediationOfExecution,
  onTime,
  remediationEndedReason,
  remediationExecution,
  remediationPastDeadlineReason,
} from '../../functions/remediation/ended.js';
import type { RemediationEvent } from '../../functions/remediation/model.js';
import { remediationExecutionName } from '../../functions/remediation/service.js';
import { FakeDurableFunction } from '../support/durable-function.js';
import { MemoryRemediationStore } from '../support/remediation-store.js';
import { type CapturedStdout, captureStdout } from '../support/stdout.js';

const STARTED = '2026-11-25T10:00:00.000Z';
const ENDED = new Date('2026-11-26T10:00:01.000Z');
const NOW = new Date('2026-11-26T11:00:00.000Z');
const by = { subject: 'alice', roles: ['network-admin'] };
let seq = 0x7000;
let out: CapturedStdout | undefined;

afterEach(() => {
  out?.restore();
  out = undefined;
});

/** A stored run (`running`), or one `completed` with its rollback `running`. */
const newRun = async (store: MemoryRemediationStore, withRollback = false): Promise<string> => {
  const remediationId = (++seq).toString(16).padStart(24, '0');
  await store.create({
    remediationId,
    batchId: 'b'.repeat(24),
    adapterId: 'lab-nso',
    treeId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
    version: 'v1',
    mode: 'apply',
    commitQueue: false,
    listKeys: {},
    devices: [{ device: 'd0', node: 'base' }],
    startedBy: by,
    started: STARTED,
    expiresAt: 0,
  });
  if (withRollback) {
    await store.finish(remediationId, 'completed', '2026-11-25T10:10:00.000Z');
    expect(await store.startRollback(remediationId, by, '2026-11-25T11:00:00.000Z')).toBe(true);
  }
  return remediationId;
};

/** The remediation function as the housekeeping sweeps it, recording the ends it reports to `onEnd`. */
const remediationFunction = (lambda: FakeDurableFunction, store: MemoryRemediationStore, ends: unknown[] = []): SweptFunction => ({
  name: 'RemediationRun',
  lambda,
  endWork: endRemediationOfExecution({ store, onEnd: async (end) => void ends.push(end) }),
});

const onVersion3 = (executions: DurableExecution[]) =>
  new FakeDurableFunction([{ version: '3', published: new Date('2026-11-20T00:00:00.000Z') }], ['3'], executions, 'svc-RemediationRun');

describe('remediation execution names', () => {
  it('reads the run and the action from the names the service gives executions, and nothing from other names', () => {
    const remediationId = '0123456789abcdef01234567';
    const events: RemediationEvent[] = [
      { remediationId, action: 'run' },
      { remediationId, action: 'rollback' },
      { remediationId, action: 'rollback', attempt: 2 },
    ];
    for (const event of events) expect(remediationExecution(remediationExecutionName(event))).toEqual(event);
    expect(remediationExecutionName({ remediationId, action: 'rollback', attempt: 2 })).toBe(`${remediationId}-rollback-2`);
    for (const name of [
      `batch-${remediationId}`,
      `${remediationId}-rollback-0`,
      `${remediationId}-rollback-x`,
      `${remediationId}-run`,
      remediationId.slice(1),
      `${remediationId.toUpperCase()}`,
      '',
    ]) {
      expect(remediationExecution(name), name).toBeUndefined();
    }
  });
});

describe('the sweep of the remediation function', () => {
  it('ends the runs and rollbacks of timed-out, failed and stopped executions once, each with its reason', async () => {
    const store = new MemoryRemediationStore();
    const probe = onVersion3([]);
    const exec = (name: string, status: DurableExecution['status']) => probe.execution('3', name, status, new Date(STARTED), ENDED);
    const runs = { TIMED_OUT: await newRun(store), FAILED: await newRun(store), STOPPED: await newRun(store) };
    const rollbacks = { TIMED_OUT: await newRun(store, true), FAILED: await newRun(store, true), STOPPED: await newRun(store, true) };
    const statuses = ['TIMED_OUT', 'FAILED', 'STOPPED'] as const;
    const lambda = onVersion3([
      ...statuses.map((s) => exec(runs[s], s)),
      ...statuses.map((s) => exec(`${rollbacks[s]}-rollback`, s)),
      // Not ours: a batch's execution, and a name of another shape.
      exec(`batch-${runs.TIMED_OUT}`, 'TIMED_OUT'),
      exec(`${runs.FAILED}-other`, 'FAILED'),
    ]);
    const ends: unknown[] = [];
    out = captureStdout();
    const outcome = await sweepFunction(remediationFunction(lambda, store, ends), NOW);

    expect([...outcome.ended].sort()).toEqual([...Object.values(runs), ...Object.values(rollbacks).map((id) => `${id}-rollback`)].sort());
    for (const status of statuses) {
      expect(await store.get(runs[status]), status).toMatchObject({
        status: 'failed',
        finished: ENDED.toISOString(),
        reason: remediationEndedReason('run', status),
      });
      const rolledBack = await store.get(rollbacks[status]);
      expect(rolledBack, status).toMatchObject({ status: 'completed', rollback: { status: 'failed', finished: ENDED.toISOString() } });
      expect(rolledBack?.reason).toBeUndefined();
    }
    expect(ends).toHaveLength(6);
    expect(ends).toContainEqual({ remediationId: rollbacks.STOPPED, action: 'rollback', status: 'failed' });
    expect(ends).toContainEqual({ remediationId: runs.FAILED, action: 'run', status: 'failed' });
    const lines = out.entries().filter((e) => e['message'] === 'remediation ended failed outside its execution');
    expect(lines).toHaveLength(6);
    expect(lines.map((l) => l['level'])).toEqual(Array(6).fill('error'));
    expect(lines).toContainEqual(
      expect.objectContaining({
        remediationId: rollbacks.STOPPED,
        action: 'rollback',
        foundBy: 'sweep',
        reason: remediationEndedReason('rollback', 'STOPPED'),
      }),
    );

    // The next sweep finds nothing more to end.
    expect((await sweepFunction(remediationFunction(lambda, store, ends), NOW)).ended).toEqual([]);
    expect(ends).toHaveLength(6);
  });

  it('leaves alone work that ended by itself, work still running, and executions that succeeded or still run', async () => {
    const store = new MemoryRemediationStore();
    const completed = await newRun(store);
    await store.finish(completed, 'completed', '2026-11-25T10:05:00.000Z');
    const failedByItself = await newRun(store);
    await store.finish(failedByItself, 'failed', '2026-11-25T10:06:00.000Z', 'NSO refused the commit');
    const rollbackDone = await newRun(store, true);
    await store.finishRollback(rollbackDone, 'completed', '2026-11-25T11:05:00.000Z');
    const stillRunning = await newRun(store);
    const succeeded = await newRun(store);
    const probe = onVersion3([]);
    const exec = (name: string, status: DurableExecution['status']) => probe.execution('3', name, status, new Date(STARTED), ENDED);
    const lambda = onVersion3([
      exec(completed, 'TIMED_OUT'),
      exec(failedByItself, 'FAILED'),
      exec(`${rollbackDone}-rollback`, 'STOPPED'),
      // A run whose rollback never started: its rollback execution's end changes nothing.
      exec(`${stillRunning}-rollback`, 'FAILED'),
      exec(stillRunning, 'RUNNING'),
      exec(succeeded, 'SUCCEEDED'),
      // A run the store no longer has (expired with its batch).
      exec('f'.repeat(24), 'TIMED_OUT'),
    ]);
    const before = await Promise.all([completed, failedByItself, rollbackDone, stillRunning, succeeded].map((id) => store.get(id)));
    const ends: unknown[] = [];
    const outcome = await sweepFunction(remediationFunction(lambda, store, ends), NOW);
    expect(outcome.ended).toEqual([]);
    expect(ends).toEqual([]);
    expect(await Promise.all([completed, failedByItself, rollbackDone, stillRunning, succeeded].map((id) => store.get(id)))).toEqual(before);
    // The alias target is kept.
    expect(outcome.kept).toEqual([{ version: '3', reason: 'alias-target' }]);
  });

  it('prunes the remediation function’s versions as the batch function’s, alongside it in one housekeeping run', async () => {
    const store = new MemoryRemediationStore();
    const long = (days: number) => new Date(NOW.getTime() - days * 24 * 3_600_000);
    const lambda = new FakeDurableFunction(
      [
        { version: '1', published: long(30) },
        { version: '2', published: long(20) },
        { version: '3', published: long(10) },
      ],
      ['3'],
      [],
      'svc-RemediationRun',
    );
    lambda.executions.push(lambda.execution('1', '0123456789abcdef01234567', 'RUNNING', long(0.5)));
    const batches = new FakeDurableFunction([{ version: '9', published: long(1) }], ['9'], []);
    const outcome = await runHousekeeping([{ name: 'ComplianceBatch', lambda: batches, endWork: async () => [] }, remediationFunction(lambda, store)], NOW);
    expect(outcome['RemediationRun']).toMatchObject({ ended: [], deleted: ['2'] });
    expect(lambda.deleted).toEqual(['2']);
    expect(Object.fromEntries(outcome['RemediationRun']!.kept.map((k) => [k.version, k.reason]))).toEqual({ 1: 'running-executions', 3: 'alias-target' });
    expect(outcome['ComplianceBatch']).toMatchObject({ ended: [], deleted: [] });
  });
});

describe('a run read past its deadline', () => {
  it('stays running up to its deadline and is ended failed by the first read after it, then left as ended', async () => {
    const store = new MemoryRemediationStore();
    const remediationId = await newRun(store);
    const ends: unknown[] = [];
    const deps = { store, onEnd: async (end: unknown) => void ends.push(end) };
    const deadline = batchDeadline(STARTED);
    expect((await onTime(deps, (await store.get(remediationId))!, new Date(deadline))).status).toBe('running');
    const after = new Date(deadline + 1);
    expect(await onTime(deps, (await store.get(remediationId))!, after)).toMatchObject({
      status: 'failed',
      finished: after.toISOString(),
      reason: remediationPastDeadlineReason('run'),
    });
    expect(ends).toEqual([{ remediationId, action: 'run', status: 'failed' }]);
    const later = new Date(deadline + 10 * 3_600_000);
    expect(await onTime(deps, (await store.get(remediationId))!, later)).toMatchObject({ finished: after.toISOString() });
    expect(ends).toHaveLength(1);
  });

  it('ends a rollback running past its own deadline, counted from the rollback’s start', async () => {
    const store = new MemoryRemediationStore();
    const remediationId = await newRun(store, true);
    const run = (await store.get(remediationId))!;
    const deadline = batchDeadline(run.rollback!.started);
    expect(await onTime({ store }, run, new Date(deadline))).toBe(run);
    const after = new Date(deadline + 1);
    expect(await onTime({ store }, run, after)).toMatchObject({ status: 'completed', rollback: { status: 'failed', finished: after.toISOString() } });
  });
});
