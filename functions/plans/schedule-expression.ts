/**
 * EventBridge Scheduler expressions, read as the Scheduler reads them, so a plan's schedule is
 * refused on write (a 400 naming what is wrong) rather than by the Scheduler after the plan is
 * stored, and so the routes can show when a schedule fires next.
 *
 * - `cron(minutes hours day-of-month month day-of-week year)`: six fields; `*` `,` `-` `/` in
 *   every field; `?` in day-of-month or day-of-week, one of which must be `?`; `L` (last day of
 *   the month; in day-of-week, `L` alone is Saturday and `nL` the month's last day `n`), `nW`
 *   (the weekday nearest day `n`, within the month) and `n#k` (the `k`th day `n` of the month).
 *   Months 1-12 or JAN-DEC; days of the week 1-7 (1 is Sunday) or SUN-SAT; years 1970-2199.
 * - `rate(value unit)`: a positive integer and `minute`, `hour` or `day` (singular when the
 *   value is 1, plural otherwise). A day is 24 hours, whatever the clocks do. The interval is at
 *   most {@link RATE_MAX_DAYS} days: the Scheduler documents no bound, and a longer interval is
 *   a mistake (and past what a date can hold).
 * - `at(...)` (a one-time schedule) is refused: a plan repeats.
 *
 * Cron fields are read in the schedule's IANA time zone. As the Scheduler does on a daylight
 * saving change, a wall time the clocks skip does not fire and a wall time the clocks pass twice
 * fires once (at its first occurrence).
 */

/** Which days of the month a cron expression names. */
export type DayOfMonth =
  | { readonly kind: 'any' }
  | { readonly kind: 'days'; readonly days: readonly number[] }
  | { readonly kind: 'last' }
  | { readonly kind: 'nearest-weekday'; readonly day: number };

/** Which days of the week a cron expression names (1 is Sunday). */
export type DayOfWeek =
  | { readonly kind: 'any' }
  | { readonly kind: 'days'; readonly days: readonly number[] }
  | { readonly kind: 'last-of-month'; readonly day: number }
  | { readonly kind: 'nth'; readonly day: number; readonly nth: number };

export interface CronSchedule {
  readonly kind: 'cron';
  readonly expression: string;
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly dayOfMonth: DayOfMonth;
  readonly months: readonly number[];
  readonly dayOfWeek: DayOfWeek;
  readonly years: readonly number[];
}

export interface RateSchedule {
  readonly kind: 'rate';
  readonly expression: string;
  readonly value: number;
  readonly unit: 'minute' | 'hour' | 'day';
  /** The interval between two runs. */
  readonly everyMs: number;
}

export type ParsedSchedule = CronSchedule | RateSchedule;

/**
 * A checked schedule: parsed, with its canonical expression (`schedule.expression`: trimmed,
 * fields single-spaced) and zone (as Intl spells it: `Europe/Berlin` for `europe/berlin`), the
 * forms a plan stores and the Scheduler is sent.
 */
export type ScheduleCheck =
  | { readonly ok: true; readonly schedule: ParsedSchedule; readonly timezone: string }
  | { readonly ok: false; readonly message: string };

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const UNIT_MS = { minute: MINUTE_MS, hour: 60 * MINUTE_MS, day: DAY_MS } as const;
const FIRST_YEAR = 1970;
const LAST_YEAR = 2199;
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

class ExpressionError extends Error {}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const FIELDS = {
  minutes: { name: 'minutes', min: 0, max: 59 },
  hours: { name: 'hours', min: 0, max: 23 },
  dayOfMonth: { name: 'day-of-month', min: 1, max: 31 },
  month: { name: 'month', min: 1, max: 12, names: MONTHS },
  dayOfWeek: { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS },
  year: { name: 'year', min: FIRST_YEAR, max: LAST_YEAR },
} as const satisfies Record<string, FieldSpec>;

const fail = (message: string): never => {
  throw new ExpressionError(message);
};

const fieldValue = (field: FieldSpec, text: string): number => {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + 1;
  if (!/^\d{1,4}$/.test(text)) fail(`${field.name}: '${text}' is not a number${field.names ? ' or a name' : ''}`);
  const value = Number(text);
  if (value < field.min || value > field.max) {
    fail(`${field.name}: ${value} is outside ${field.min}-${field.max}`);
  }
  return value;
};

/** One comma-separated part: `*`, `n`, `a-b`, each optionally `/step`. */
const partValues = (field: FieldSpec, part: string): number[] => {
  const [range = '', step, extra] = part.split('/');
  if (extra !== undefined || range === '') fail(`${field.name}: '${part}' is not a value, range or increment`);
  let from = field.min;
  let to = field.max;
  if (range !== '*') {
    const [start = '', end, more] = range.split('-');
    if (more !== undefined) fail(`${field.name}: '${part}' is not a range`);
    from = fieldValue(field, start);
    to = end === undefined ? (step === undefined ? from : field.max) : fieldValue(field, end);
    if (from > to) fail(`${field.name}: range '${range}' starts after it ends`);
  }
  const increment = step === undefined ? 1 : Number(step);
  if (step !== undefined && (!/^\d{1,4}$/.test(step) || increment < 1)) {
    fail(`${field.name}: increment '${step}' is not a positive integer`);
  }
  const values: number[] = [];
  for (let value = from; value <= to; value += increment) values.push(value);
  return values;
};

/** A field of values: comma-separated parts, sorted and without repeats. */
const listValues = (field: FieldSpec, text: string): number[] => {
  const values = new Set<number>();
  for (const part of text.split(',')) for (const value of partValues(field, part)) values.add(value);
  return [...values].sort((a, b) => a - b);
};

const dayOfMonthOf = (text: string): DayOfMonth => {
  if (text === '?') return { kind: 'any' };
  if (text === 'L') return { kind: 'last' };
  const weekday = /^(\d{1,2})W$/.exec(text);
  if (weekday) return { kind: 'nearest-weekday', day: fieldValue(FIELDS.dayOfMonth, weekday[1] ?? '') };
  if (/[LW#]/i.test(text)) fail(`day-of-month: '${text}' uses L or W other than as 'L' or 'nW'`);
  return { kind: 'days', days: listValues(FIELDS.dayOfMonth, text) };
};

const dayOfWeekOf = (text: string): DayOfWeek => {
  if (text === '?') return { kind: 'any' };
  if (text === 'L') return { kind: 'days', days: [7] };
  const last = /^(\w{1,3})L$/i.exec(text);
  if (last) return { kind: 'last-of-month', day: fieldValue(FIELDS.dayOfWeek, last[1] ?? '') };
  const nth = /^(\w{1,3})#(\d+)$/.exec(text);
  if (nth) {
    const which = Number(nth[2]);
    if (which < 1 || which > 5) fail(`day-of-week: '#${nth[2]}' is not 1-5`);
    return { kind: 'nth', day: fieldValue(FIELDS.dayOfWeek, nth[1] ?? ''), nth: which };
  }
  if (/#/.test(text)) fail(`day-of-week: '${text}' uses # other than as 'n#k'`);
  return { kind: 'days', days: listValues(FIELDS.dayOfWeek, text) };
};

const parseCron = (body: string): CronSchedule => {
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6) {
    fail(`a cron expression has six fields (minutes hours day-of-month month day-of-week year), not ${fields.length}`);
  }
  const [minutes = '', hours = '', dom = '', month = '', dow = '', year = ''] = fields;
  for (const [field, text] of [
    [FIELDS.minutes, minutes],
    [FIELDS.hours, hours],
    [FIELDS.month, month],
    [FIELDS.year, year],
  ] as const) {
    if (text === '?' || /[LW#]/i.test(text.replace(/[A-Z]{3}/gi, ''))) fail(`${field.name}: '${text}' allows only * , - /`);
  }
  if ((dom === '?') === (dow === '?')) {
    fail("one of day-of-month and day-of-week must be '?' and the other must not");
  }
  return {
    kind: 'cron',
    expression: `cron(${fields.join(' ')})`,
    minutes: listValues(FIELDS.minutes, minutes),
    hours: listValues(FIELDS.hours, hours),
    dayOfMonth: dayOfMonthOf(dom),
    months: listValues(FIELDS.month, month),
    dayOfWeek: dayOfWeekOf(dow),
    years: listValues(FIELDS.year, year),
  };
};

/** The longest rate interval: ten years of days. */
export const RATE_MAX_DAYS = 3650;

const parseRate = (body: string): RateSchedule => {
  const match = /^\s*(\d+)\s+(minutes?|hours?|days?)\s*$/.exec(body);
  if (!match) fail("a rate expression is 'rate(value unit)' with unit minute(s), hour(s) or day(s)");
  const value = Number(match?.[1]);
  const unitText = match?.[2] ?? '';
  if (!Number.isSafeInteger(value) || value < 1) fail('a rate value is a positive integer');
  const plural = unitText.endsWith('s');
  if (plural !== value > 1) fail(`rate(${value} ${unitText}): the unit is singular for 1 and plural otherwise`);
  const unit = (plural ? unitText.slice(0, -1) : unitText) as RateSchedule['unit'];
  const everyMs = value * UNIT_MS[unit];
  if (everyMs > RATE_MAX_DAYS * UNIT_MS.day) fail(`rate(${value} ${unitText}): the interval is at most ${RATE_MAX_DAYS} days`);
  return { kind: 'rate', expression: `rate(${value} ${unitText})`, value, unit, everyMs };
};

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one costs far more than using it). */
const formatterOf = (timezone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
};

/**
 * An IANA zone name Intl knows, as Intl spells it (zone names are read without regard to case);
 * offsets such as `+02:00` are not zone names the Scheduler takes.
 */
const canonicalZone = (timezone: string): { readonly zone: string } | { readonly problem: string } => {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(timezone)) {
    return { problem: `timezone '${timezone}' is not an IANA time zone name` };
  }
  try {
    return { zone: formatterOf(timezone).resolvedOptions().timeZone };
  } catch {
    return { problem: `timezone '${timezone}' is not a time zone this service knows` };
  }
};

/**
 * Checks an EventBridge Scheduler expression and the time zone it is read in.
 * @returns the parsed schedule, or a message naming what is wrong.
 */
export const checkSchedule = (expression: string, timezone = 'UTC'): ScheduleCheck => {
  const zone = canonicalZone(timezone);
  if ('problem' in zone) return { ok: false, message: zone.problem };
  const match = /^(cron|rate|at)\((.*)\)$/s.exec(expression.trim());
  try {
    if (match?.[1] === 'cron') return { ok: true, schedule: parseCron(match[2] ?? ''), timezone: zone.zone };
    if (match?.[1] === 'rate') return { ok: true, schedule: parseRate(match[2] ?? ''), timezone: zone.zone };
    if (match?.[1] === 'at') return { ok: false, message: 'at(...) schedules run once; a plan repeats: use cron(...) or rate(...)' };
    return { ok: false, message: "a schedule is 'cron(minutes hours day-of-month month day-of-week year)' or 'rate(value unit)'" };
  } catch (error) {
    if (error instanceof ExpressionError) return { ok: false, message: error.message };
    throw error;
  }
};

/** A wall clock reading, its fields as numbers (month 1-12). */
interface Wall {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
}

const wallAt = (instant: number, timezone: string): Wall => {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timezone).formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0, hour: parts.hour ?? 0, minute: parts.minute ?? 0 };
};

/** A wall clock reading as if it were UTC: comparable, and its zone's offset away from the instant. */
const wallMs = (wall: Wall): number => Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);

/**
 * The first instant the zone's clocks show this wall time; undefined when the clocks skip it.
 * Offsets are taken a day either side: no zone changes its offset twice within two days.
 */
const instantOf = (wall: Wall, timezone: string): number | undefined => {
  const local = wallMs(wall);
  let first: number | undefined;
  for (const probe of [local - DAY_MS, local + DAY_MS]) {
    const offset = wallMs(wallAt(probe, timezone)) - Math.floor(probe / MINUTE_MS) * MINUTE_MS;
    const instant = local - offset;
    if (wallMs(wallAt(instant, timezone)) === local && (first === undefined || instant < first)) first = instant;
  }
  return first;
};

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();
/** 1 is Sunday, as cron counts. */
const weekdayOf = (year: number, month: number, day: number): number => new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;

/** The weekday nearest `day` within its month; undefined when the month is shorter (`31W` in April). */
const nearestWeekday = (year: number, month: number, target: number): number | undefined => {
  const last = daysIn(year, month);
  if (target > last) return undefined;
  const weekday = weekdayOf(year, month, target);
  if (weekday === 7) return target === 1 ? 3 : target - 1;
  if (weekday === 1) return target === last ? target - 2 : target + 1;
  return target;
};

const dayMatches = (schedule: CronSchedule, year: number, month: number, day: number): boolean => {
  const dom = schedule.dayOfMonth;
  const dow = schedule.dayOfWeek;
  const weekday = weekdayOf(year, month, day);
  switch (dom.kind) {
    case 'days':
      return dom.days.includes(day);
    case 'last':
      return day === daysIn(year, month);
    case 'nearest-weekday':
      return day === nearestWeekday(year, month, dom.day);
    case 'any':
      break;
  }
  switch (dow.kind) {
    case 'days':
      return dow.days.includes(weekday);
    case 'last-of-month':
      return weekday === dow.day && day + 7 > daysIn(year, month);
    case 'nth':
      return weekday === dow.day && Math.ceil(day / 7) === dow.nth;
    default:
      return true;
  }
};

/** The zone's offsets differ from UTC by less than this; wall times further before `after` cannot follow it. */
const MAX_OFFSET_CHANGE_MS = 3 * 60 * MINUTE_MS;

const nextCron = (schedule: CronSchedule, timezone: string, after: number): number | undefined => {
  const floor = wallMs(wallAt(after, timezone)) - MAX_OFFSET_CHANGE_MS;
  const start = new Date(floor);
  for (const year of schedule.years) {
    if (year < start.getUTCFullYear()) continue;
    for (const month of schedule.months) {
      if (Date.UTC(year, month, 1) <= floor) continue;
      for (let day = 1; day <= daysIn(year, month); day += 1) {
        if (Date.UTC(year, month - 1, day + 1) <= floor || !dayMatches(schedule, year, month, day)) continue;
        for (const hour of schedule.hours) {
          for (const minute of schedule.minutes) {
            const wall = { year, month, day, hour, minute };
            if (wallMs(wall) < floor) continue;
            const instant = instantOf(wall, timezone);
            if (instant !== undefined && instant > after) return instant;
          }
        }
      }
    }
  }
  return undefined;
};

/**
 * The first time a schedule fires strictly after `after`.
 *
 * A cron schedule is read in `timezone` (a skipped wall time does not fire; a repeated one fires
 * once). A rate schedule fires at `anchor` and every interval after it: the Scheduler starts a
 * rate schedule when it is created, so `anchor` is when the schedule was last created or changed;
 * without one, the schedule is taken as created at `after`.
 * @returns undefined when the schedule never fires again (a cron whose years are past). The work
 * is bounded by the years a cron names (1970-2199), never by the distance to the next run.
 */
export const nextRun = (schedule: ParsedSchedule, timezone: string, after: Date, anchor: Date = after): Date | undefined => {
  if (schedule.kind === 'rate') {
    const from = anchor.getTime();
    if (from > after.getTime()) return new Date(from);
    const steps = Math.floor((after.getTime() - from) / schedule.everyMs) + 1;
    return new Date(from + steps * schedule.everyMs);
  }
  const next = nextCron(schedule, timezone, after.getTime());
  return next === undefined ? undefined : new Date(next);
};
