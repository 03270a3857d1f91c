/**
 * Compliance plans, free of Lambda: checking a plan, writing it and its schedule, showing it
 * (`broken`, `nextRunAt`) and running it, for a user (`POST …/run`) or for its schedule.
 *
 * Writes store the plan first, then its schedule. A plan is stored `schedulePending` whenever a
 * schedule write follows; once the Scheduler has the schedule the mark is removed. When the
 * Scheduler cannot be written the route answers 503 and the plan keeps the mark (shown), so no
 * plan is ever silently without its schedule: writing the plan again (`PUT`) writes it.
 *
 * A plan runs one batch at a time and never when it is broken: a user's run is refused (409
 * `plan-running`, `plan-broken`, `adapter-stopped`), the schedule's is skipped and the reason kept
 * in `lastRun`. `lastBatch` is the plan's running lease: a started run is recorded (`lastRun` and
 * `lastBatch`) before its batch starts, conditional on `lastBatch` being the one read and found
 * free (none; its batch ended, read with its deadline; or no record of it past the start window),
 * so of two runs only one starts a batch, also while the first is still creating its batch.
 * Skips leave the lease alone.
 */
import { randomBytes } from 'node:crypto';
import type { AdapterInfo, StartBatchInput, StartedBatch, VersionReader } from '../compliance/service.js';
import { planBatch } from '../compliance/service.js';
import { batchDeadline } from '../compliance/deadline.js';
import type { Batch } from '../compliance/model.js';
import { versionSelects } from '../trees/selectors.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { logger } from '../platform/logger.js';
import { refuseBadNames } from '../platform/names.js';
import { BadRequest, Conflict, ContentTooLarge, HttpProblem, NotFound, ServiceUnavailable } from '../platform/problem.js';
import { PLAN_ID_PATTERN, type Plan, type PlanBroken, type PlanInput, type PlanRun, type PlanSchedules } from './model.js';
import { checkSchedule, nextRun } from './schedule-expression.js';
import { type Version, walkNodes } from '../trees/config-model.js';
import { PLAN_DEVICES_BYTES } from './schemas.js';
import { PlanChanged, type PlanStore, type StoredPlan } from './store.js';

export interface PlanDeps {
  readonly store: Pick<PlanStore, 'get' | 'list' | 'create' | 'replace' | 'delete' | 'recordRun' | 'markSchedule'>;
  readonly versions: VersionReader;
  readonly adapters: { get(name: string): Promise<AdapterInfo | undefined> };
  readonly schedules: PlanSchedules;
  /**
   * A batch as it stands (to tell whether a plan's last batch still runs): undefined when there is
   * no record of it. One running past its deadline is taken as ended whatever this answers.
   */
  readonly batch: (batchId: string) => Promise<Pick<Batch, 'status' | 'started'> | undefined>;
  /** Starts a compliance batch with this id (compliance's startBatch). */
  readonly startBatch: (input: StartBatchInput, batchId: string) => Promise<StartedBatch>;
  readonly now: () => Date;
  readonly newId?: () => string;
}

/** Who asks: a user (their token subject) or the plan's schedule. */
export type Trigger = { readonly trigger: 'user'; readonly by: string } | { readonly trigger: 'schedule' };
/** The `by` of what a schedule does (changelog entries). */
export const SCHEDULE_ACTOR = 'schedule';

const PLAN_ID = new RegExp(PLAN_ID_PATTERN);
export const PLAN_PAGE = { default: 50, max: 100 } as const;
const newPlanId = (): string => randomBytes(12).toString('hex');

/**
 * How long after a run is recorded its batch may still have no record: the run's function
 * creates it within its own timeout (30 s), so a lease older than this whose batch has no record
 * was left by a run that died before creating it.
 */
export const RUN_START_WINDOW_MS = 5 * 60_000;

const badField = (field: 'schedule' | 'timezone', message: string, detail = `The request is invalid: ${field}: ${message}.`) =>
  new BadRequest(detail, [{ in: 'body', field, message }]);

/**
 * The name under the rule of every stored name, and the schedule and time zone checked as the
 * Scheduler reads them (a 400 naming the field); the input with its canonical schedule and zone,
 * so what is stored and sent is what was checked.
 */
const checkInput = (input: PlanInput): PlanInput => {
  refuseBadNames('body', { name: input.name });
  if (input.schedule === undefined && input.timezone === undefined) return input;
  const check = checkSchedule(input.schedule ?? 'rate(1 day)', input.timezone);
  if (!check.ok) throw badField(check.message.startsWith('timezone') ? 'timezone' : 'schedule', check.message);
  return {
    ...input,
    ...(input.schedule !== undefined ? { schedule: check.schedule.expression } : {}),
    ...(input.timezone !== undefined ? { timezone: check.timezone } : {}),
  };
};

/** The plan's devices fit in its item: 413 naming `devices`. */
const checkSize = (input: PlanInput): void => {
  const bytes = Buffer.byteLength(JSON.stringify(input.devices ?? []), 'utf8');
  if (bytes <= PLAN_DEVICES_BYTES) return;
  throw new ContentTooLarge(
    `The plan names ${bytes} bytes of devices, more than the ${PLAN_DEVICES_BYTES} a plan keeps; name none to check every device of the version.`,
    [{ in: 'body', field: 'devices', message: `is ${bytes} bytes of JSON, more than ${PLAN_DEVICES_BYTES}` }],
  );
};

/** What the plan names exists, and its devices are the version's (listed ones; selected ones when it runs): 404 and 400 as starting a batch answers. */
const checkTargets = async (input: PlanInput, deps: PlanDeps): Promise<void> => {
  const [found, adapter] = await Promise.all([deps.versions(input.treeId, input.version), deps.adapters.get(input.adapterId)]);
  if (!found.tree) throw new NotFound(`No tree has the id '${input.treeId}'.`);
  if (!found.version) throw new NotFound(`Tree '${input.treeId}' has no version '${input.version}'.`);
  if (!adapter) throw new NotFound(`No adapter is named '${input.adapterId}'.`);
  // Selected devices are known only when a batch starts, which checks the plan's devices then.
  if (!versionSelects(found.version.root)) planBatch(found.version, input.devices);
};

/** How many of `devices` no node of `version` assigns. */
const unassigned = (version: Version, devices: readonly string[]): number => {
  const assigned = new Set<string>();
  for (const { node } of walkNodes(version.root)) for (const device of node.devices) assigned.add(device);
  return new Set(devices.filter((d) => !assigned.has(d))).size;
};

/** Why a plan cannot run now that what it names is gone; undefined when it can. */
const brokenOf = async (plan: PlanInput, deps: Pick<PlanDeps, 'versions' | 'adapters'>): Promise<PlanBroken | undefined> => {
  const [found, adapter] = await Promise.all([deps.versions(plan.treeId, plan.version), deps.adapters.get(plan.adapterId)]);
  if (!found.tree) return { reason: 'tree-missing', detail: `Tree '${plan.treeId}' no longer exists.` };
  if (!found.version) return { reason: 'version-missing', detail: `Tree '${plan.treeId}' no longer has version '${plan.version}'.` };
  if (!adapter) return { reason: 'adapter-missing', detail: `Adapter '${plan.adapterId}' no longer exists.` };
  const missing = plan.devices ? unassigned(found.version, plan.devices) : 0;
  if (missing) {
    return {
      reason: 'devices-missing',
      detail: `${missing} of the plan's ${new Set(plan.devices).size} device(s) are no longer assigned to a node of version '${plan.version}'; write the plan's devices again.`,
    };
  }
  return undefined;
};

/** A plan as the routes show it: its stored fields, whether it is broken and when its schedule fires next. */
export const showPlan = async (plan: StoredPlan, deps: Pick<PlanDeps, 'versions' | 'adapters' | 'now'>): Promise<Plan> => {
  const { revision: _revision, scheduleSince, ...shown } = plan;
  const broken = await brokenOf(plan, deps);
  const check = plan.enabled && plan.schedule ? checkSchedule(plan.schedule, plan.timezone) : undefined;
  const next =
    check?.ok && !plan.schedulePending
      ? nextRun(check.schedule, plan.timezone ?? 'UTC', deps.now(), scheduleSince ? new Date(scheduleSince) : undefined)
      : undefined;
  // A date past what Date holds (a stored value no check foresaw) shows no next run rather than failing every read.
  const nextRunAt = next && Number.isFinite(next.getTime()) ? next.toISOString() : undefined;
  return { ...shown, ...(broken ? { broken } : {}), ...(nextRunAt ? { nextRunAt } : {}) };
};

/** Reads of one list share what they read of trees and adapters. */
const memoized = (deps: PlanDeps): PlanDeps => {
  const versions = new Map<string, ReturnType<VersionReader>>();
  const adapters = new Map<string, Promise<AdapterInfo | undefined>>();
  return {
    ...deps,
    versions: (treeId, label) => {
      const key = `${treeId}\u0000${label}`;
      if (!versions.has(key)) versions.set(key, deps.versions(treeId, label));
      return versions.get(key)!;
    },
    adapters: {
      get: (name) => {
        if (!adapters.has(name)) adapters.set(name, deps.adapters.get(name));
        return adapters.get(name)!;
      },
    },
  };
};

const stored = async (planId: string, deps: PlanDeps): Promise<StoredPlan> => {
  const plan = await deps.store.get(planId);
  if (!plan) throw new NotFound(`No compliance plan has the id '${planId}'.`);
  return plan;
};

/**
 * The Scheduler's refusal of what it was sent (ValidationException, HTTP 400): it refuses the same
 * again whatever the retries, so it is the client's 400 naming the field (`timezone` when the
 * Scheduler names the zone, else `schedule`). Other failures (throttling, quota, access) are not
 * the request's fault: undefined, and the route answers 503.
 */
const schedulerRefusal = (error: unknown, outcome: string): BadRequest | undefined => {
  const failure = error as { name?: unknown; message?: unknown; $metadata?: { httpStatusCode?: unknown } } | undefined;
  if (failure?.name !== 'ValidationException' && failure?.$metadata?.httpStatusCode !== 400) return undefined;
  const said = typeof failure.message === 'string' && failure.message ? failure.message.trim() : 'no reason given';
  const field = /time ?zone/i.test(said) ? 'timezone' : 'schedule';
  const message = `was refused by EventBridge Scheduler: ${said}`;
  return badField(field, message, `The request is invalid: ${field} ${message}. ${outcome}`);
};

/**
 * Writes the plan's schedule after the plan: a 503 (the plan stays `schedulePending`) when the
 * Scheduler cannot be written, a 400 ({@link schedulerRefusal}, its detail ending with
 * `refusedOutcome`) when it refuses the schedule.
 */
const writeSchedule = async (plan: StoredPlan, deps: PlanDeps, refusedOutcome: string): Promise<StoredPlan> => {
  try {
    await deps.schedules.put(plan);
  } catch (error) {
    logger.warn('the schedule of a compliance plan could not be written', { planId: plan.planId, error });
    throw Object.assign(
      schedulerRefusal(error, refusedOutcome) ??
        new ServiceUnavailable('The compliance plan was saved, but its schedule could not be written; write the plan again (PUT) to write its schedule.'),
      { cause: error },
    );
  }
  const since = plan.schedule ? deps.now().toISOString() : undefined;
  try {
    await deps.store.markSchedule(plan.planId, plan.revision, false, since);
  } catch (error) {
    if (!(error instanceof PlanChanged)) throw error;
    // A later write of the plan owns its schedule (and its mark) now; but a delete since leaves
    // the schedule just written without a plan: remove it again.
    if (!(await deps.store.get(plan.planId))) {
      await deps.schedules.remove(plan.planId);
      throw new NotFound(`No compliance plan has the id '${plan.planId}': it was deleted while this request was handled.`);
    }
  }
  const { schedulePending: _pending, ...written } = plan;
  return { ...written, ...(since ? { scheduleSince: since } : {}) };
};

const fieldsOf = (input: PlanInput): PlanInput => ({
  name: input.name,
  treeId: input.treeId,
  version: input.version,
  adapterId: input.adapterId,
  ...(input.devices ? { devices: input.devices } : {}),
  ...(input.sync ? { sync: input.sync } : {}),
  ...(input.schedule ? { schedule: input.schedule } : {}),
  ...(input.timezone ? { timezone: input.timezone } : {}),
  enabled: input.enabled,
});

/**
 * `POST …/compliance_plans`: checks, stores, then schedules a new plan. A schedule the Scheduler
 * refuses takes the plan back out (a 400 leaves nothing, so the same name can be sent again).
 */
export const createPlan = async (sent: PlanInput, by: string, deps: PlanDeps): Promise<Plan> => {
  const input = checkInput(sent);
  checkSize(input);
  await checkTargets(input, deps);
  const at = deps.now().toISOString();
  const plan: StoredPlan = {
    planId: (deps.newId ?? newPlanId)(),
    ...fieldsOf(input),
    createdAt: at,
    createdBy: by,
    updatedAt: at,
    updatedBy: by,
    revision: 1,
    ...(input.schedule ? { schedulePending: true } : {}),
  };
  await deps.store.create(plan);
  if (!input.schedule) return showPlan(plan, deps);
  try {
    return showPlan(await writeSchedule(plan, deps, 'Nothing was saved.'), deps);
  } catch (error) {
    if (error instanceof BadRequest) {
      await deps.store
        .delete(plan, deps.now().toISOString(), by)
        .catch((failed: unknown) => logger.warn('a plan whose schedule was refused could not be taken back', { planId: plan.planId, error: failed }));
    }
    throw error;
  }
};

/** `PUT …/compliance_plans/{planId}`: replaces a plan's fields (its runs kept), then writes its schedule. */
export const replacePlan = async (planId: string, sent: PlanInput, by: string, deps: PlanDeps): Promise<Plan> => {
  const input = checkInput(sent);
  checkSize(input);
  const before = await stored(planId, deps);
  await checkTargets(input, deps);
  const scheduled = Boolean(input.schedule || before.schedule || before.schedulePending);
  const plan: StoredPlan = {
    planId,
    ...fieldsOf(input),
    createdAt: before.createdAt,
    createdBy: before.createdBy,
    updatedAt: deps.now().toISOString(),
    updatedBy: by,
    revision: before.revision + 1,
    // Shown as read; the store leaves what runs write as it is (a run recorded meanwhile stays).
    ...(before.lastRun ? { lastRun: before.lastRun } : {}),
    ...(before.lastBatch ? { lastBatch: before.lastBatch } : {}),
    ...(before.scheduleSince ? { scheduleSince: before.scheduleSince } : {}),
    ...(scheduled ? { schedulePending: true } : {}),
  };
  await deps.store.replace(before, plan);
  const refused = 'The plan was saved with schedulePending (the Scheduler keeps the schedule it had); write it again with a schedule it takes.';
  return showPlan(scheduled ? await writeSchedule(plan, deps, refused) : plan, deps);
};

/**
 * Writes the schedule of the plan as stored now again, after a delete that removed it failed
 * because a write of the plan came first; what cannot be written leaves the plan marked.
 */
const rewriteSchedule = async (planId: string, deps: PlanDeps): Promise<void> => {
  const now = await deps.store.get(planId);
  if (!now?.schedule) return;
  try {
    await writeSchedule(now, deps, '');
  } catch (error) {
    logger.warn('the schedule of a plan a delete removed could not be written again', { planId, error });
    await deps.store.markSchedule(planId, now.revision, true).catch(() => undefined);
  }
};

/** `DELETE …/compliance_plans/{planId}`: removes the schedule, then the plan (its history stays). */
export const deletePlan = async (planId: string, by: string, deps: PlanDeps): Promise<void> => {
  let plan = await stored(planId, deps);
  const scheduled = Boolean(plan.schedule || plan.schedulePending);
  if (scheduled) {
    // Marked first, raising the revision: should the delete then fail, the plan shows that its
    // schedule may be gone, and a write that read the plan before the mark is 409 `changed`.
    await deps.store.markSchedule(planId, plan.revision, true);
    plan = { ...plan, revision: plan.revision + 1, schedulePending: true };
    try {
      await deps.schedules.remove(planId);
    } catch (error) {
      throw Object.assign(new ServiceUnavailable('The schedule of the compliance plan could not be removed; nothing was deleted, retry later.'), {
        cause: error,
      });
    }
  }
  try {
    await deps.store.delete(plan, deps.now().toISOString(), by);
  } catch (error) {
    // A write that read the plan after the mark wrote its schedule, which the remove above took: write it again.
    if (error instanceof PlanChanged && scheduled) await rewriteSchedule(planId, deps);
    throw error;
  }
};

export const getPlan = async (planId: string, deps: PlanDeps): Promise<Plan> => showPlan(await stored(planId, deps), deps);

/** `GET …/compliance_plans`: a page of plans by id; `cursor` is the `next` of the page before. */
export const listPlans = async (query: { readonly limit?: string; readonly cursor?: string }, deps: PlanDeps): Promise<{ items: Plan[]; next?: string }> => {
  let after: string | undefined;
  if (query.cursor !== undefined) {
    const fields = decodeCursor(query.cursor, ['plan'], (f) => PLAN_ID.test(f.plan));
    if (!fields) throw invalidCursor();
    after = fields.plan;
  }
  const page = await deps.store.list(query.limit === undefined ? PLAN_PAGE.default : Number(query.limit), after);
  const shared = memoized(deps);
  const items = await Promise.all(page.items.map((plan) => showPlan(plan, shared)));
  return { items, ...(page.after ? { next: encodeCursor({ plan: page.after }) } : {}) };
};

/**
 * The plan's running lease, when held: its `lastBatch` runs (read with its deadline, so a batch
 * whose execution is gone stops holding it), or has no record yet and was recorded within the
 * start window (its run is still creating it). A sentence saying so; undefined when free.
 */
const leaseHeld = async (plan: StoredPlan, deps: PlanDeps): Promise<string | undefined> => {
  const last = plan.lastBatch;
  if (!last) return undefined;
  const batch = await deps.batch(last.batchId);
  const now = deps.now().getTime();
  if (!batch) return now - Date.parse(last.at) <= RUN_START_WINDOW_MS ? `Batch ${last.batchId} of the compliance plan is still being started.` : undefined;
  return batch.status === 'running' && now <= batchDeadline(batch.started) ? `Batch ${last.batchId} of the compliance plan is still running.` : undefined;
};

/** Why the plan does not run now (a 409's slug and sentence); undefined when it runs. */
const refusal = async (plan: StoredPlan, trigger: Trigger['trigger'], deps: PlanDeps): Promise<{ slug: string; detail: string } | undefined> => {
  const broken = await brokenOf(plan, deps);
  if (broken) return { slug: 'plan-broken', detail: `The compliance plan is broken: ${broken.detail}` };
  if (trigger === 'schedule' && !plan.enabled) return { slug: 'plan-disabled', detail: 'The compliance plan is disabled.' };
  const running = await leaseHeld(plan, deps);
  if (running) return { slug: 'plan-running', detail: running };
  const adapter = await deps.adapters.get(plan.adapterId);
  if (adapter?.state === 'STOPPED') {
    return { slug: 'adapter-stopped', detail: `Adapter '${plan.adapterId}' is stopped; start it before running compliance through it.` };
  }
  return undefined;
};

/**
 * Records a schedule's run that lost the race to another run as skipped, after the run that won
 * (read again): a skip is not retried, so should its record fail too it is only logged.
 */
const recordSkip = async (planId: string, skipped: PlanRun, deps: PlanDeps): Promise<PlanRun> => {
  try {
    const now = await deps.store.get(planId);
    if (now) await deps.store.recordRun(planId, { guard: { lastRun: now.lastRun }, lastRun: skipped, run: skipped }, SCHEDULE_ACTOR);
  } catch (error) {
    logger.warn('a skipped run of a plan was not recorded', { planId, error });
  }
  return skipped;
};

/**
 * Records a run whose batch did not start, if it is still the plan's last run: the schedule's as
 * skipped with the reason; a user's (who was answered the error) by putting back the last run
 * before it, the changelog keeping the attempt. A batch that has no record frees the lease (the
 * last batch before it is put back); one that has a record holds it as long as it runs.
 */
const recordFailedStart = async (plan: StoredPlan, run: PlanRun, failed: PlanRun, by: string, deps: PlanDeps): Promise<void> => {
  try {
    const recorded = await deps.batch(run.batchId!);
    await deps.store.recordRun(
      plan.planId,
      {
        guard: { lastRun: run },
        lastRun: run.trigger === 'schedule' ? failed : (plan.lastRun ?? null),
        ...(recorded ? {} : { lastBatch: plan.lastBatch ?? null }),
        run: failed,
      },
      by,
    );
  } catch (error) {
    logger.warn('a failed run of a plan was not recorded', { planId: plan.planId, error });
  }
};

/** What a run did (as `lastRun` shows it: started a batch, or, only for the schedule, skipped and why) and the batch it started. */
export interface RunOutcome {
  readonly run: PlanRun;
  readonly batch?: StartedBatch;
}

/**
 * Runs a plan: takes its lease with the run's record, then starts its batch (with `planId`). A
 * user's run that cannot start is a 409 (`plan-broken`, `plan-running`, `adapter-stopped`); the
 * schedule's is skipped, recorded in `lastRun` with the reason, and never an error (Lambda would
 * retry it).
 */
export const runPlan = async (planId: string, who: Trigger, deps: PlanDeps): Promise<RunOutcome> => {
  const plan = await stored(planId, deps);
  const by = who.trigger === 'user' ? who.by : SCHEDULE_ACTOR;
  const at = deps.now().toISOString();
  const refused = await refusal(plan, who.trigger, deps);
  if (refused && who.trigger === 'user') throw new Conflict(refused.detail, refused.slug);
  if (refused) {
    const skipped: PlanRun = { at, trigger: who.trigger, outcome: 'skipped', reason: refused.detail };
    await deps.store.recordRun(planId, { guard: { lastRun: plan.lastRun }, lastRun: skipped, run: skipped }, by);
    return { run: skipped };
  }
  const batchId = (deps.newId ?? newPlanId)();
  const run: PlanRun = { at, trigger: who.trigger, outcome: 'started', batchId };
  try {
    await deps.store.recordRun(planId, { guard: { lastBatch: plan.lastBatch }, lastRun: run, lastBatch: { batchId, at }, run }, by);
  } catch (error) {
    if (!(error instanceof PlanChanged)) throw error;
    const detail = 'Another run of the compliance plan started at the same time.';
    if (who.trigger === 'user') throw new Conflict(detail, 'plan-running');
    return { run: await recordSkip(planId, { at, trigger: who.trigger, outcome: 'skipped', reason: detail }, deps) };
  }
  let batch: StartedBatch;
  try {
    batch = await deps.startBatch(
      {
        treeId: plan.treeId,
        version: plan.version,
        adapterId: plan.adapterId,
        ...(plan.devices ? { devices: plan.devices } : {}),
        ...(plan.sync ? { sync: plan.sync } : {}),
        planId,
      },
      batchId,
    );
  } catch (error) {
    const refusedNow = error instanceof HttpProblem && error.status < 500;
    const skipped: PlanRun = {
      at: deps.now().toISOString(),
      trigger: who.trigger,
      outcome: 'skipped',
      reason: refusedNow ? error.detail : 'The batch could not be started.',
    };
    await recordFailedStart(plan, run, skipped, by, deps);
    // What the schedule cannot change by trying again is recorded, not thrown: Lambda would retry it.
    if (refusedNow && who.trigger === 'schedule') return { run: skipped };
    throw error;
  }
  return { run, batch };
};
