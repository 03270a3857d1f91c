/**
 * The local stack's scheduler: fires the schedules the local EventBridge Scheduler keeps
 * (tools/simulators/scheduler-simulator.ts) on a clock, by invoking each one's target function
 * with its `Input`, as EventBridge Scheduler does on AWS.
 *
 * Each tick looks at the time since the previous one: a schedule whose next time (from
 * `nextRun`, in the schedule's time zone) falls in that window fires once, however many of its
 * times the window holds. The end of the last window is kept in a file, so the first tick after a
 * restart covers the time the stack was stopped: a schedule that was due then fires once at
 * start (the runs it missed are not made up one by one). On the very first start there is no
 * window before it, so nothing fires at once. A disabled schedule never fires; a schedule fires
 * only at times after it was created or last changed (a rate schedule at once when created, as
 * on AWS: its interval counts from then).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkSchedule, nextRun } from '../../functions/plans/schedule-expression.js';
import type { StoredSchedule } from '../simulators/scheduler-simulator.js';
import type { FunctionPool } from './lambda-pool.js';

export interface Fired {
  readonly schedule: string;
  readonly group: string;
  /** The time it was due (the first of its times in the window). */
  readonly due: Date;
  readonly target: string;
  readonly input: string;
}

export interface SchedulerFiringOptions {
  /** The schedules as stored now. */
  readonly schedules: () => readonly StoredSchedule[];
  /** Invokes a target (a Lambda function ARN) with the schedule's input. */
  readonly invoke: (targetArn: string, input: string) => Promise<void>;
  /** Where the end of the last window is kept across restarts. */
  readonly stateFile: string;
  /** One line per schedule fired, and per failure. */
  readonly log: (line: string) => void;
}

/** The first time the schedule is due in `(from, to]`, if any. */
const dueIn = (s: StoredSchedule, from: Date, to: Date): Date | undefined => {
  const zone = s.ScheduleExpressionTimezone ?? 'UTC';
  const checked = checkSchedule(s.ScheduleExpression, zone);
  if (!checked.ok) return undefined;
  const anchor = new Date(s.LastModificationDate);
  // Times at or after the schedule's last change: a time before it belonged to the schedule it replaced.
  const next = nextRun(checked.schedule, zone, new Date(Math.max(from.getTime(), anchor.getTime() - 1)), anchor);
  return next && next <= to ? next : undefined;
};

export class SchedulerFiring {
  readonly #o: SchedulerFiringOptions;
  #until: Date | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<readonly Fired[]> = Promise.resolve([]);

  constructor(o: SchedulerFiringOptions) {
    this.#o = o;
    if (existsSync(o.stateFile)) {
      const { until } = JSON.parse(readFileSync(o.stateFile, 'utf8')) as { until?: string };
      if (until && !Number.isNaN(Date.parse(until))) this.#until = new Date(until);
    }
  }

  /**
   * Fires what is due up to `now` since the previous tick (or the end of the last window before
   * a restart), and waits for the invocations. Ticks run one after another.
   */
  tick(now: Date): Promise<readonly Fired[]> {
    this.#running = this.#running.then(() => this.#tick(now));
    return this.#running;
  }

  async #tick(now: Date): Promise<readonly Fired[]> {
    const from = this.#until;
    if (from && now <= from) return [];
    this.#until = now;
    this.#save(now);
    if (!from) return [];
    const fired: Fired[] = [];
    for (const s of this.#o.schedules()) {
      if (s.State !== 'ENABLED') continue;
      const due = dueIn(s, from, now);
      if (!due) continue;
      fired.push({ schedule: s.Name, group: s.GroupName, due, target: s.Target.Arn, input: s.Target.Input ?? '{}' });
    }
    await Promise.all(
      fired.map(async (run) => {
        this.#o.log(`schedule ${run.group}/${run.schedule} fired (due ${run.due.toISOString()}): ${run.input}`);
        await this.#o.invoke(run.target, run.input).catch((error: unknown) => {
          this.#o.log(`schedule ${run.group}/${run.schedule}: invoking ${run.target} failed: ${(error as Error).message}`);
        });
      }),
    );
    return fired;
  }

  #save(until: Date): void {
    mkdirSync(path.dirname(this.#o.stateFile), { recursive: true });
    const temporary = `${this.#o.stateFile}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ until: until.toISOString() })}\n`, { mode: 0o600 });
    renameSync(temporary, this.#o.stateFile);
  }

  /** Ticks on the machine's clock every `everyMs` (and once now); {@link stop} ends it. */
  start(everyMs = 10_000, clock: () => Date = () => new Date()): void {
    const step = () => {
      void this.tick(clock());
    };
    step();
    this.#timer = setInterval(step, everyMs);
    this.#timer.unref();
  }

  /** Stops ticking and waits for the tick under way. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}

/** Lambda's invocation of a pool's function by its ARN, as EventBridge Scheduler's target invocation. */
export const poolInvoker =
  (pools: Iterable<FunctionPool>) =>
  async (targetArn: string, input: string): Promise<void> => {
    const pool = [...pools].find((p) => p.fn.arn === targetArn);
    if (!pool) throw new Error(`no function ${targetArn} in this stack`);
    const outcome = await pool.invoke(input, { callerTimeoutMs: pool.fn.timeoutSeconds * 1000 + 5_000 });
    if (outcome.kind === 'function-error') throw new Error(`${outcome.errorType}: ${outcome.errorMessage}`);
    if (outcome.kind !== 'result') throw new Error(outcome.kind === 'invoke-error' ? outcome.reason : 'no answer in time');
  };
