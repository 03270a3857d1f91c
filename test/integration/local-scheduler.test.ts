/**
 * The local stack's scheduler: schedules written through the SDK to the local EventBridge
 * Scheduler fire on an injected clock (no real minutes pass), invoking the target function in a
 * local Lambda pool with the schedule's input. Disabled schedules do not fire; a cron in a time
 * zone fires at its wall time across a daylight-saving change; a rate schedule fires when created
 * and every interval after; a fire missed while the stack was stopped fires once at the next
 * start, and nothing fires at the very first start.
 */
import { CreateScheduleCommand, UpdateScheduleCommand, type CreateScheduleInput, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchedulerClient } from '../../functions/plans/schedules.js';
import { FunctionPool } from '../../tools/local/lambda-pool.js';
import { poolInvoker, SchedulerFiring } from '../../tools/local/scheduler-firing.js';
import { startSchedulerSimulator, type SchedulerSimulator } from '../../tools/simulators/scheduler-simulator.js';

const GROUP = 'netconfig-plans';
const ARN = 'arn:aws:lambda:us-east-1:000000000000:function:scheduled-run';

let dir: string;
let received: string;
let clock: Date;
let sim: SchedulerSimulator;
let client: SchedulerClient;
let pool: FunctionPool;
const lines: string[] = [];

/** The plans' scheduled-run stand-in: a real module in a pool worker, appending each event it gets to a file. */
const writeFunction = (codeDir: string) => {
  mkdirSync(codeDir, { recursive: true });
  writeFileSync(
    path.join(codeDir, 'index.mjs'),
    `import { appendFileSync } from 'node:fs';\nexport const handler = async (event) => { appendFileSync(process.env.RECEIVED, JSON.stringify(event) + '\\n'); return { ok: true }; };\n`,
  );
};
const events = (): unknown[] =>
  existsSync(received)
    ? readFileSync(received, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown)
    : [];

const firing = () =>
  new SchedulerFiring({
    schedules: () => sim.schedules(),
    invoke: poolInvoker([pool]),
    stateFile: path.join(dir, 'firing.json'),
    log: (line) => lines.push(line),
  });

const schedule = (name: string, over: Partial<CreateScheduleInput> = {}): CreateScheduleInput => ({
  Name: name,
  GroupName: GROUP,
  ScheduleExpression: 'cron(0 2 * * ? *)',
  FlexibleTimeWindow: { Mode: 'OFF' },
  Target: { Arn: ARN, RoleArn: 'arn:aws:iam::000000000000:role/scheduler', Input: JSON.stringify({ planId: name }) },
  ...over,
});

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'local-scheduler-'));
  received = path.join(dir, 'received.jsonl');
  writeFunction(path.join(dir, 'code'));
  clock = new Date('2026-03-07T12:00:00.000Z');
  sim = await startSchedulerSimulator({ file: path.join(dir, 'schedules.json'), groups: [GROUP], now: () => clock });
  client = createSchedulerClient(sim.url);
  pool = new FunctionPool(
    {
      name: 'scheduled-run',
      label: 'PlanScheduledRun',
      arn: ARN,
      codeDir: path.join(dir, 'code'),
      handler: 'index.handler',
      memoryMb: 128,
      timeoutSeconds: 10,
      environment: { RECEIVED: received, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    },
    { log: () => undefined },
  );
});
afterAll(async () => {
  client.destroy();
  await sim.close();
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the local scheduler', () => {
  it('fires due schedules on the injected clock with their input, never disabled ones, at wall time across DST', async () => {
    const loop = firing();
    // The very first start: no window before it, nothing fires.
    expect(await loop.tick(clock)).toEqual([]);
    await client.send(new CreateScheduleCommand(schedule('utc02')));
    await client.send(new CreateScheduleCommand(schedule('off', { State: 'DISABLED' })));
    // 02:30 in New York, every day: on 8 March 2026 clocks jump from 02:00 to 03:00, so that day it does not fire.
    await client.send(new CreateScheduleCommand(schedule('ny', { ScheduleExpression: 'cron(30 2 * * ? *)', ScheduleExpressionTimezone: 'America/New_York' })));
    await client.send(new CreateScheduleCommand(schedule('ny9', { ScheduleExpression: 'cron(0 9 * * ? *)', ScheduleExpressionTimezone: 'America/New_York' })));

    // 09:00 EST (UTC-5) on 7 March is 14:00Z.
    const first = await loop.tick(new Date('2026-03-08T01:59:00.000Z'));
    expect(first.map((f) => [f.schedule, f.due.toISOString()])).toEqual([['ny9', '2026-03-07T14:00:00.000Z']]);
    const at2 = await loop.tick(new Date('2026-03-08T02:00:30.000Z'));
    expect(at2.map((f) => [f.schedule, f.due.toISOString()])).toEqual([['utc02', '2026-03-08T02:00:00.000Z']]);
    expect(events()).toEqual([{ planId: 'ny9' }, { planId: 'utc02' }]);
    expect(lines.at(-1)).toContain(`schedule ${GROUP}/utc02 fired (due 2026-03-08T02:00:00.000Z): {"planId":"utc02"}`);
    // 02:30 EST of 7 March was 07:30Z, already behind; 8 March has no 02:30 in New York.
    expect(await loop.tick(new Date('2026-03-08T08:00:00.000Z'))).toEqual([]);
    // 09:00 EDT (UTC-4 since the change) is 13:00Z, not 14:00Z.
    const at13 = await loop.tick(new Date('2026-03-08T13:00:00.000Z'));
    expect(at13.map((f) => f.schedule)).toEqual(['ny9']);
    // The next day: 02:30 EDT is 06:30Z.
    const day2 = await loop.tick(new Date('2026-03-09T06:30:00.000Z'));
    expect(day2.map((f) => [f.schedule, f.due.toISOString()]).sort()).toEqual([
      ['ny', '2026-03-09T06:30:00.000Z'],
      ['utc02', '2026-03-09T02:00:00.000Z'],
    ]);
    expect(events()).toHaveLength(5);
    expect(events()).not.toContainEqual({ planId: 'off' });
    await loop.stop();
  });

  it('fires a rate schedule when created and every interval after, and follows a change of state', async () => {
    const loop = firing();
    clock = new Date('2026-03-09T07:00:00.000Z');
    await client.send(new CreateScheduleCommand(schedule('hourly', { ScheduleExpression: 'rate(1 hour)' })));
    expect((await loop.tick(new Date('2026-03-09T07:00:10.000Z'))).map((f) => f.schedule)).toEqual(['hourly']);
    expect(await loop.tick(new Date('2026-03-09T07:59:59.000Z'))).toEqual([]);
    expect((await loop.tick(new Date('2026-03-09T08:00:00.000Z'))).map((f) => f.schedule)).toEqual(['hourly']);
    clock = new Date('2026-03-09T08:10:00.000Z');
    await client.send(new UpdateScheduleCommand(schedule('hourly', { ScheduleExpression: 'rate(1 hour)', State: 'DISABLED' })));
    expect(await loop.tick(new Date('2026-03-09T10:00:00.000Z'))).toEqual([]);
    await loop.stop();
  });

  it('fires once at start what was due while the stack was stopped', async () => {
    // The previous loop ended its last window at 10:00Z on 9 March; this one starts a day and a half later.
    const loop = firing();
    const before = events().length;
    const fired = await loop.tick(new Date('2026-03-10T22:00:00.000Z'));
    // utc02 was due on 10 March at 02:00Z, ny at 06:30Z, ny9 at 13:00Z: each fires once; the disabled ones do not.
    expect(fired.map((f) => f.schedule).sort()).toEqual(['ny', 'ny9', 'utc02']);
    expect(events()).toHaveLength(before + 3);
    await loop.stop();
  });
});
