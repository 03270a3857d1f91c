/**
 * The local EventBridge Scheduler against the real SDK client over loopback: create, update,
 * get, list and delete as the SDK sends them, the errors as AWS answers them (typed exceptions
 * with their status), and the store surviving a restart. The plans' schedules client
 * (functions/plans/schedules.ts) creates, replaces, disables and removes a plan's schedule on it.
 */
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  UpdateScheduleCommand,
  type CreateScheduleInput,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchedulerClient, SCHEDULE_RETRY, schedulerPlanSchedules } from '../../functions/plans/schedules.js';
import { startSchedulerSimulator, type SchedulerSimulator } from '../../tools/simulators/scheduler-simulator.js';

const GROUP = 'netconfig-plans';
const TARGET = { Arn: 'arn:aws:lambda:us-east-1:000000000000:function:run', RoleArn: 'arn:aws:iam::000000000000:role/scheduler' };
const T0 = new Date('2026-03-01T10:00:00.000Z');

let dir: string;
let sim: SchedulerSimulator;
let client: SchedulerClient;
let clock = T0;

const start = async () => {
  sim = await startSchedulerSimulator({ file: path.join(dir, 'schedules.json'), groups: [GROUP], now: () => clock });
  client = createSchedulerClient(sim.url);
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'scheduler-sim-'));
  await start();
});
afterAll(async () => {
  client.destroy();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const input = (name: string, over: Partial<CreateScheduleInput> = {}): CreateScheduleInput => ({
  Name: name,
  GroupName: GROUP,
  ScheduleExpression: 'cron(0 2 * * ? *)',
  ScheduleExpressionTimezone: 'Europe/Paris',
  FlexibleTimeWindow: { Mode: 'OFF' },
  Target: { ...TARGET, Input: JSON.stringify({ planId: name }) },
  ...over,
});

const errorOf = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (error: { name: string; message: string; $metadata: { httpStatusCode?: number } }) => ({
      name: error.name,
      status: error.$metadata.httpStatusCode,
      message: error.message,
    }),
  );

describe('the scheduler simulator, through the SDK', () => {
  it('creates, gets, updates, lists and deletes a schedule', async () => {
    const created = await client.send(new CreateScheduleCommand(input('a1')));
    expect(created.ScheduleArn).toBe(`arn:aws:scheduler:us-east-1:000000000000:schedule/${GROUP}/a1`);
    const got = await client.send(new GetScheduleCommand({ Name: 'a1', GroupName: GROUP }));
    expect(got).toMatchObject({
      Name: 'a1',
      GroupName: GROUP,
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      State: 'ENABLED',
      Target: { ...TARGET, Input: '{"planId":"a1"}' },
    });
    expect(got.CreationDate).toEqual(T0);
    clock = new Date(T0.getTime() + 60_000);
    await client.send(new UpdateScheduleCommand(input('a1', { ScheduleExpression: 'rate(1 hour)', State: 'DISABLED' })));
    const updated = await client.send(new GetScheduleCommand({ Name: 'a1', GroupName: GROUP }));
    expect(updated).toMatchObject({ ScheduleExpression: 'rate(1 hour)', State: 'DISABLED', CreationDate: T0, LastModificationDate: clock });

    await client.send(new CreateScheduleCommand(input('a2')));
    await client.send(new CreateScheduleCommand(input('b1')));
    const page1 = await client.send(new ListSchedulesCommand({ GroupName: GROUP, NamePrefix: 'a', MaxResults: 1 }));
    expect(page1.Schedules?.map((s) => s.Name)).toEqual(['a1']);
    expect(page1.Schedules?.[0]).toMatchObject({ GroupName: GROUP, State: 'DISABLED', Target: { Arn: TARGET.Arn } });
    const page2 = await client.send(new ListSchedulesCommand({ GroupName: GROUP, NamePrefix: 'a', MaxResults: 1, NextToken: page1.NextToken! }));
    expect(page2.Schedules?.map((s) => s.Name)).toEqual(['a2']);
    expect(page2.NextToken).toBeUndefined();
    const enabled = await client.send(new ListSchedulesCommand({ GroupName: GROUP, State: 'ENABLED' }));
    expect(enabled.Schedules?.map((s) => s.Name)).toEqual(['a2', 'b1']);

    await client.send(new DeleteScheduleCommand({ Name: 'a2', GroupName: GROUP }));
    expect((await errorOf(client.send(new GetScheduleCommand({ Name: 'a2', GroupName: GROUP }))))?.name).toBe('ResourceNotFoundException');
  });

  it('answers the errors AWS answers', async () => {
    await client.send(new CreateScheduleCommand(input('dup')));
    expect(await errorOf(client.send(new CreateScheduleCommand(input('dup'))))).toMatchObject({ name: 'ConflictException', status: 409 });
    expect(await errorOf(client.send(new UpdateScheduleCommand(input('nope'))))).toMatchObject({ name: 'ResourceNotFoundException', status: 404 });
    expect(await errorOf(client.send(new DeleteScheduleCommand({ Name: 'nope', GroupName: GROUP })))).toMatchObject({
      name: 'ResourceNotFoundException',
      status: 404,
    });
    expect(await errorOf(client.send(new GetScheduleCommand({ Name: 'dup', GroupName: 'other-group' })))).toMatchObject({
      name: 'ResourceNotFoundException',
      status: 404,
    });
    expect(await errorOf(client.send(new CreateScheduleCommand(input('bad', { ScheduleExpression: 'cron(0 2 * * * *)' }))))).toMatchObject({
      name: 'ValidationException',
      status: 400,
    });
    expect(await errorOf(client.send(new CreateScheduleCommand(input('bad', { ScheduleExpressionTimezone: 'Mars/Olympus' }))))).toMatchObject({
      name: 'ValidationException',
      status: 400,
    });
    expect(await errorOf(client.send(new CreateScheduleCommand(input('bad', { Target: { Arn: TARGET.Arn } as never }))))).toMatchObject({
      name: 'ValidationException',
      status: 400,
    });
    expect((await errorOf(client.send(new GetScheduleCommand({ Name: 'bad', GroupName: GROUP }))))?.name).toBe('ResourceNotFoundException');
  });

  it('keeps the schedules across a restart', async () => {
    await client.send(new CreateScheduleCommand(input('kept')));
    client.destroy();
    await sim.close();
    await start();
    const got = await client.send(new GetScheduleCommand({ Name: 'kept', GroupName: GROUP }));
    expect(got).toMatchObject({ Name: 'kept', ScheduleExpression: 'cron(0 2 * * ? *)', State: 'ENABLED' });
  });
});

describe('plan schedules on the simulator', () => {
  const target = {
    group: GROUP,
    functionArn: TARGET.Arn,
    roleArn: TARGET.RoleArn,
    deadLetterArn: 'arn:aws:sqs:us-east-1:000000000000:dead-letters',
  };
  const planId = '0123456789abcdef01234567';
  const get = () => client.send(new GetScheduleCommand({ Name: planId, GroupName: GROUP }));

  it('creates the plan’s schedule, replaces it, disables it and removes it', async () => {
    const schedules = schedulerPlanSchedules(client, target);
    await schedules.put({ planId, schedule: 'cron(30 6 ? * MON-FRI *)', timezone: 'America/New_York', enabled: true });
    expect(await get()).toMatchObject({
      Name: planId,
      ScheduleExpression: 'cron(30 6 ? * MON-FRI *)',
      ScheduleExpressionTimezone: 'America/New_York',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: target.functionArn,
        RoleArn: target.roleArn,
        Input: JSON.stringify({ planId }),
        RetryPolicy: SCHEDULE_RETRY,
        DeadLetterConfig: { Arn: target.deadLetterArn },
      },
    });
    await schedules.put({ planId, schedule: 'rate(6 hours)', enabled: false });
    expect(await get()).toMatchObject({ ScheduleExpression: 'rate(6 hours)', ScheduleExpressionTimezone: 'UTC', State: 'DISABLED' });
    await schedules.put({ planId, enabled: true });
    expect((await errorOf(get()))?.name).toBe('ResourceNotFoundException');
    await schedules.remove(planId);
    await schedules.put({ planId, schedule: 'rate(1 day)', enabled: true });
    await schedules.remove(planId);
    expect((await errorOf(get()))?.name).toBe('ResourceNotFoundException');
  });

  it('passes on what Scheduler refuses: a missing group, an invalid expression', async () => {
    const schedules = schedulerPlanSchedules(client, { ...target, group: 'no-such-group' });
    expect((await errorOf(schedules.put({ planId, schedule: 'rate(1 day)', enabled: true })))?.name).toBe('ResourceNotFoundException');
    const invalid = schedulerPlanSchedules(client, target);
    expect((await errorOf(invalid.put({ planId, schedule: 'rate(0 days)', enabled: true })))?.name).toBe('ValidationException');
  });
});
