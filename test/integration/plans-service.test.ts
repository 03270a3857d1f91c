/**
 * Compliance plans through their service on DynamoDB Local, with the clock, the Scheduler and the
 * batch starter injected: the races and failures the routes cannot stage (a run arriving while
 * the first is creating its batch, a DELETE interleaved with a PUT, a batch left without an
 * execution, the Scheduler refusing a schedule), and what a plan is after its version changed.
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PAST_DEADLINE_REASON } from '../../functions/compliance/deadline.js';
import { currentBatch } from '../../functions/compliance/read.js';
import { launchBatch } from '../../functions/compliance/service.js';
import { ComplianceStore } from '../../functions/compliance/store.js';
import type { PlanInput } from '../../functions/plans/model.js';
import { createPlan, deletePlan, getPlan, type PlanDeps, RUN_START_WINDOW_MS, replacePlan, runPlan } from '../../functions/plans/service.js';
import { PLANS_PK, PlanStore } from '../../functions/plans/store.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { HttpProblem } from '../../functions/platform/problem.js';
import { createTables } from '../../tools/local/table-copies.js';

let tables: Record<string, string>;
let plans: PlanStore;
let compliance: ComplianceStore;
let clock: Date;
/** What the Scheduler holds, and how it answers the next put. */
let held: Map<string, { schedule?: string; timezone?: string }>;
let schedulerFails: Error | undefined;
let duringRemove: (() => Promise<void>) | undefined;
let assigned: string[];
let executions: string[];
let names = 0;

const problem = (error: unknown) => (error instanceof HttpProblem ? error.toBody() : error);

/** The batch starter the handlers use, minus NSO: records the batch and "starts" its execution. */
const deps = (over: Partial<PlanDeps> = {}): PlanDeps => ({
  store: plans,
  versions: async () => ({ tree: true, version: { name: 'v1', variables: {}, root: { name: 'base', devices: assigned, rules: [], children: [] } } }) as never,
  adapters: { get: async (name) => ({ name, state: 'RUNNING' }) },
  schedules: {
    put: async (p) => {
      if (schedulerFails) throw schedulerFails;
      if (p.schedule) held.set(p.planId, { schedule: p.schedule, ...(p.timezone ? { timezone: p.timezone } : {}) });
      else held.delete(p.planId);
    },
    remove: async (planId) => {
      const during = duringRemove;
      duringRemove = undefined;
      await during?.();
      held.delete(planId);
    },
  },
  batch: (batchId) => currentBatch(compliance, batchId, clock),
  startBatch: (input, batchId) =>
    launchBatch(
      { treeId: input.treeId, version: input.version, sync: 'check', ...(input.planId ? { planId: input.planId } : {}) },
      { name: 'lab' },
      undefined,
      [{ device: 'r1', node: 'base' }] as never,
      {
        store: compliance,
        startExecution: async (id) => void executions.push(id),
        now: () => clock,
        newId: () => batchId,
        retentionDays: 30,
        concurrency: 1,
      },
    ),
  now: () => clock,
  ...over,
});
const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  name: `plan ${++names}`,
  treeId: 'a'.repeat(24),
  version: 'v1',
  adapterId: 'lab',
  schedule: 'cron(0 2 * * ? *)',
  enabled: true,
  ...over,
});

beforeAll(async () => {
  tables = await createTables();
  plans = new PlanStore(documentClient, tables['compliance']!, () => tables['changelog']!);
  compliance = new ComplianceStore(documentClient, tables['compliance']!);
});
beforeEach(() => {
  clock = new Date('2026-01-01T00:00:00.000Z');
  held = new Map();
  schedulerFails = undefined;
  duringRemove = undefined;
  assigned = ['r1', 'r2'];
  executions = [];
});

describe('a plan runs one batch at a time', () => {
  it('refuses a run arriving while the first run is still creating its batch (409 plan-running), and starts one batch', async () => {
    const plan = await createPlan(input(), 'ops', deps());
    const base = deps();
    let second: unknown;
    const racing = deps({
      startBatch: async (batchInput, batchId) => {
        second = await runPlan(plan.planId, { trigger: 'user', by: 'ops2' }, base).catch(problem);
        return base.startBatch(batchInput, batchId);
      },
    });
    const first = await runPlan(plan.planId, { trigger: 'schedule' }, racing);
    expect(first.run.outcome).toBe('started');
    expect(second).toMatchObject({ status: 409, type: 'urn:netconfig:problem:plan-running' });
    expect(executions).toEqual([first.run.batchId]);
    // The schedule firing while the batch runs is skipped.
    const again = await runPlan(plan.planId, { trigger: 'schedule' }, base);
    expect(again.run).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/still running/) });
  });

  it('holds the lease of a batch without a record for the start window only', async () => {
    const plan = await createPlan(input(), 'ops', deps());
    // A run that recorded its lease and died before creating its batch.
    const lease = { batchId: 'b'.repeat(24), at: clock.toISOString() };
    const taken = { at: lease.at, trigger: 'schedule', outcome: 'started', batchId: lease.batchId } as const;
    await plans.recordRun(plan.planId, { guard: { lastBatch: undefined }, lastRun: taken, lastBatch: lease, run: taken }, 'schedule');
    clock = new Date(clock.getTime() + RUN_START_WINDOW_MS);
    expect(await runPlan(plan.planId, { trigger: 'user', by: 'ops' }, deps()).catch(problem)).toMatchObject({
      status: 409,
      type: 'urn:netconfig:problem:plan-running',
    });
    clock = new Date(clock.getTime() + 1);
    expect((await runPlan(plan.planId, { trigger: 'user', by: 'ops' }, deps())).run.outcome).toBe('started');
  });

  it("frees the lease of a run whose batch was never recorded, and keeps the user's last run as it was", async () => {
    const plan = await createPlan(input(), 'ops', deps());
    const down = deps({ startBatch: async () => Promise.reject(new Error('the compliance store is unavailable')) });
    await expect(runPlan(plan.planId, { trigger: 'user', by: 'ops' }, down)).rejects.toThrow(/unavailable/);
    const shown = await getPlan(plan.planId, deps());
    expect(shown.lastRun).toBeUndefined();
    expect(shown.lastBatch).toBeUndefined();
    expect((await runPlan(plan.planId, { trigger: 'user', by: 'ops' }, deps())).run.outcome).toBe('started');
  });

  it('runs again once a batch left running without an execution is past its deadline, ending it failed', async () => {
    class FinishFails extends ComplianceStore {
      override async finish(): Promise<never> {
        throw new Error('ProvisionedThroughputExceededException');
      }
    }
    const flaky = new FinishFails(documentClient, tables['compliance']!);
    const stuck = deps({
      startBatch: (batchInput, batchId) =>
        launchBatch(
          { treeId: batchInput.treeId, version: batchInput.version, sync: 'check', planId: batchInput.planId! },
          { name: 'lab' },
          undefined,
          [{ device: 'r1', node: 'base' }] as never,
          {
            store: flaky,
            startExecution: async () => Promise.reject(new Error('TooManyRequestsException')),
            now: () => clock,
            newId: () => batchId,
            retentionDays: 30,
            concurrency: 1,
          },
        ),
    });
    const plan = await createPlan(input(), 'ops', deps());
    await expect(runPlan(plan.planId, { trigger: 'schedule' }, stuck)).rejects.toMatchObject({ status: 503 });
    const { batchId } = (await getPlan(plan.planId, deps())).lastBatch!;
    expect((await compliance.getBatch(batchId))?.status).toBe('running');
    expect((await runPlan(plan.planId, { trigger: 'schedule' }, deps())).run).toMatchObject({ outcome: 'skipped' });

    clock = new Date('2026-03-01T00:00:00.000Z');
    const later = await runPlan(plan.planId, { trigger: 'schedule' }, deps());
    expect(later.run.outcome).toBe('started');
    expect(await compliance.getBatch(batchId)).toMatchObject({ status: 'failed', reason: PAST_DEADLINE_REASON });
  });
});

describe('a DELETE racing a PUT', () => {
  it('writes the schedule a PUT wrote again when the delete then fails changed', async () => {
    const plan = await createPlan(input(), 'ops', deps());
    let put: unknown;
    duringRemove = async () => {
      put = await replacePlan(plan.planId, { ...input({ name: plan.name }), schedule: 'cron(0 3 * * ? *)' }, 'ops2', deps());
    };
    const deleted = await deletePlan(plan.planId, 'ops', deps()).catch(problem);
    expect(deleted).toMatchObject({ status: 409, type: 'urn:netconfig:problem:changed' });
    expect(put).toMatchObject({ schedule: 'cron(0 3 * * ? *)' });
    expect(held.get(plan.planId)).toEqual({ schedule: 'cron(0 3 * * ? *)' });
    const shown = await getPlan(plan.planId, deps());
    expect(shown.schedulePending).toBeUndefined();
    expect(shown.nextRunAt).toBeDefined();
  });

  it('refuses a PUT that read the plan before a DELETE marked it (409 changed)', async () => {
    const plan = await createPlan(input(), 'ops', deps());
    const failingRemove = deps({ schedules: { ...deps().schedules, remove: async () => Promise.reject(new Error('InternalServerException')) } });
    const putting = deps({
      versions: async (treeId, label) => {
        // The PUT has read the plan; a DELETE marks it, then fails to remove the schedule.
        await expect(deletePlan(plan.planId, 'ops', failingRemove)).rejects.toMatchObject({ status: 503 });
        return deps().versions(treeId, label);
      },
    });
    const put = await replacePlan(plan.planId, { ...input({ name: plan.name }), schedule: 'cron(0 4 * * ? *)' }, 'ops2', putting).catch(problem);
    expect(put).toMatchObject({ status: 409, type: 'urn:netconfig:problem:changed' });
    expect(await getPlan(plan.planId, deps())).toMatchObject({ schedule: 'cron(0 2 * * ? *)', schedulePending: true });
  });
});

describe('schedules the Scheduler refuses, and the forms stored', () => {
  const refusal = (message: string) => Object.assign(new Error(message), { name: 'ValidationException', $metadata: { httpStatusCode: 400 } });

  it('answers 400 naming schedule to a create the Scheduler refuses, and keeps nothing (the name is free again)', async () => {
    schedulerFails = refusal('Invalid Schedule Expression cron(0 2 * * ? *).');
    const name = `refused ${++names}`;
    const res = await createPlan(input({ name }), 'ops', deps()).catch(problem);
    expect(res).toMatchObject({ status: 400, errors: [{ in: 'body', field: 'schedule', message: expect.stringMatching(/Invalid Schedule Expression/) }] });
    expect((await plans.list(100)).items.filter((p) => p.name === name)).toEqual([]);
    schedulerFails = undefined;
    expect((await createPlan(input({ name }), 'ops', deps())).name).toBe(name);
  });

  it('answers 400 naming timezone when the Scheduler names the zone; a PUT leaves the plan marked pending', async () => {
    const plan = await createPlan(input(), 'ops', deps());
    schedulerFails = refusal('Invalid ScheduleExpressionTimezone.');
    const res = await replacePlan(plan.planId, input({ name: plan.name, timezone: 'Asia/Tokyo' }), 'ops', deps()).catch(problem);
    expect(res).toMatchObject({ status: 400, errors: [{ field: 'timezone' }] });
    expect(await getPlan(plan.planId, deps())).toMatchObject({ timezone: 'Asia/Tokyo', schedulePending: true });
  });

  it('answers 503 to other Scheduler failures', async () => {
    schedulerFails = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 429 } });
    expect(await createPlan(input(), 'ops', deps()).catch(problem)).toMatchObject({ status: 503 });
  });

  it('stores and sends the schedule trimmed and single-spaced, and the zone as Intl spells it', async () => {
    const plan = await createPlan(input({ schedule: ' cron( 0  2\t* * ? * ) ', timezone: 'europe/berlin' }), 'ops', deps());
    expect(plan).toMatchObject({ schedule: 'cron(0 2 * * ? *)', timezone: 'Europe/Berlin' });
    expect(held.get(plan.planId)).toEqual({ schedule: 'cron(0 2 * * ? *)', timezone: 'Europe/Berlin' });
    const rate = await createPlan(input({ schedule: 'rate( 05  minutes )' }), 'ops', deps());
    expect(rate.schedule).toBe('rate(5 minutes)');
  });
});

describe('a plan whose devices the version no longer assigns', () => {
  it('is shown broken (devices-missing, how many), a user run is 409 plan-broken and not recorded, the schedule skips', async () => {
    const plan = await createPlan(input({ devices: ['r1', 'r2'] }), 'ops', deps());
    assigned = ['r1'];
    expect((await getPlan(plan.planId, deps())).broken).toEqual({
      reason: 'devices-missing',
      detail: expect.stringMatching(/^1 of the plan's 2 device\(s\) are no longer assigned/),
    });
    expect(await runPlan(plan.planId, { trigger: 'user', by: 'ops' }, deps()).catch(problem)).toMatchObject({
      status: 409,
      type: 'urn:netconfig:problem:plan-broken',
    });
    expect((await getPlan(plan.planId, deps())).lastRun).toBeUndefined();
    expect((await runPlan(plan.planId, { trigger: 'schedule' }, deps())).run).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/broken/) });
    expect(executions).toEqual([]);
  });
});

describe('plan names', () => {
  it.each([
    ['a zero-width space', 'nightly\u200b'],
    ['a bidirectional override', 'night\u202ely'],
    ['a line break', 'night\nly'],
    ['a decomposed accent (not NFC)', 'Cafe\u0301'],
    ['a space at the end', 'nightly '],
  ])('refuses a name with %s (400 naming name)', async (_what, name) => {
    expect(await createPlan(input({ name }), 'ops', deps()).catch(problem)).toMatchObject({ status: 400, errors: [{ in: 'body', field: 'name' }] });
  });

  it('holds one name without regard to case, folded (ß and SS)', async () => {
    await createPlan(input({ name: 'Straße Café' }), 'ops', deps());
    expect(await createPlan(input({ name: 'STRASSE CAFÉ' }), 'ops', deps()).catch(problem)).toMatchObject({
      status: 409,
      type: 'urn:netconfig:problem:name-taken',
    });
  });

  it('releases a claim written under the old lower-case key when the plan is deleted', async () => {
    const plan = await createPlan(input({ name: 'Maße' }), 'ops', deps());
    const key = (sk: string) => ({ TableName: tables['compliance'], Key: { pk: PLANS_PK, sk } });
    // The claim as written before names were folded.
    await documentClient.send(new DeleteCommand(key('N#masse')));
    await documentClient.send(new PutCommand({ TableName: tables['compliance'], Item: { pk: PLANS_PK, sk: 'N#maße', name: 'Maße', planId: plan.planId } }));
    await deletePlan(plan.planId, 'ops', deps());
    expect((await documentClient.send(new GetCommand(key('N#maße')))).Item).toBeUndefined();
  });
});
