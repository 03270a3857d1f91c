import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ParsedSchedule, checkSchedule, nextRun } from '../../functions/plans/schedule-expression.js';

const parsed = (expression: string, timezone = 'UTC'): ParsedSchedule => {
  const check = checkSchedule(expression, timezone);
  if (!check.ok) throw new Error(`${expression}: ${check.message}`);
  return check.schedule;
};

const next = (expression: string, after: string, timezone = 'UTC'): string | undefined =>
  nextRun(parsed(expression, timezone), timezone, new Date(after))?.toISOString();

describe('checkSchedule', () => {
  it.each([
    'cron(0 10 * * ? *)',
    'cron(15 12 * * ? *)',
    'cron(0 18 ? * MON-FRI *)',
    'cron(0 8 1 * ? *)',
    'cron(0/15 * * * ? *)',
    'cron(0/10 * ? * MON-FRI *)',
    'cron(0/5 8-17 ? * MON-FRI *)',
    'cron(0 9 ? * 2#1 *)',
    'cron(15 10 ? * 6L 2019-2022)',
    'cron(0 0 L * ? *)',
    'cron(0 0 15W * ? *)',
    'cron(0 0 ? * L *)',
    'cron(5,35 */6 1-15/2 JAN-MAR,dec ? 2026/2)',
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(12 hours)',
    'rate(1 day)',
    'rate(7 days)',
    'rate(3650 days)',
    'rate(87600 hours)',
  ])('accepts %s', (expression) => {
    expect(checkSchedule(expression)).toMatchObject({ ok: true, schedule: { expression } });
  });

  it.each([
    ['cron(0 10 * * *)', /six fields/],
    ['cron(0 10 * * ? * *)', /six fields/],
    ['cron(0 10 * * * *)', /one of day-of-month and day-of-week must be '\?'/],
    ['cron(0 10 ? * ? *)', /one of day-of-month and day-of-week/],
    ['cron(60 10 * * ? *)', /minutes: 60 is outside 0-59/],
    ['cron(0 24 * * ? *)', /hours: 24 is outside 0-23/],
    ['cron(0 0 0 * ? *)', /day-of-month: 0 is outside 1-31/],
    ['cron(0 0 * 13 ? *)', /month: 13 is outside 1-12/],
    ['cron(0 0 ? * 8 *)', /day-of-week: 8 is outside 1-7/],
    ['cron(0 0 * * ? 1969)', /year: 1969 is outside 1970-2199/],
    ['cron(0 0 * FOO ? *)', /month: 'FOO' is not a number or a name/],
    ['cron(0 0 ? * 2#6 *)', /'#6' is not 1-5/],
    ['cron(0 0 ? * 2#1,3 *)', /day-of-week/],
    ['cron(0 0 LW * ? *)', /day-of-month/],
    ['cron(? 0 * * ? *)', /minutes: '\?' allows only/],
    ['cron(L 0 * * ? *)', /minutes: 'L' allows only/],
    ['cron(0 5-2 * * ? *)', /hours: range '5-2' starts after it ends/],
    ['cron(0/0 0 * * ? *)', /minutes: increment '0' is not a positive integer/],
    ['cron(0 0 1-2-3 * ? *)', /day-of-month: '1-2-3' is not a range/],
    ['cron(0,,5 0 * * ? *)', /minutes: '' is not a value/],
    ['rate(0 minutes)', /positive integer/],
    ['rate(1 minutes)', /singular for 1 and plural otherwise/],
    ['rate(5 minute)', /singular for 1 and plural otherwise/],
    ['rate(99999999999 days)', /interval is at most 3650 days/],
    ['rate(3651 days)', /interval is at most 3650 days/],
    ['rate(5256001 minutes)', /interval is at most 3650 days/],
    ['rate(5 weeks)', /unit minute\(s\), hour\(s\) or day\(s\)/],
    ['rate(-5 minutes)', /rate\(value unit\)/],
    ['rate(1.5 hours)', /rate\(value unit\)/],
    ['at(2026-01-01T00:00:00)', /run once; a plan repeats/],
    ['every day', /a schedule is 'cron/],
    ['', /a schedule is 'cron/],
  ])('refuses %s naming what is wrong', (expression, message) => {
    const check = checkSchedule(expression);
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.message).toMatch(message);
  });

  it.each(['Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'UTC'])('accepts the time zone %s', (zone) => {
    expect(checkSchedule('rate(1 day)', zone).ok).toBe(true);
  });

  it.each(['Mars/Olympus', '+02:00', 'Europe/', '', 'Europe/Berlin; DROP'])('refuses the time zone %j', (zone) => {
    expect(checkSchedule('rate(1 day)', zone)).toEqual({ ok: false, message: expect.stringContaining('timezone') });
  });
});

describe('nextRun of cron schedules', () => {
  it('fires strictly after the given time', () => {
    expect(next('cron(0 10 * * ? *)', '2026-03-02T10:00:00Z')).toBe('2026-03-03T10:00:00.000Z');
    expect(next('cron(0 10 * * ? *)', '2026-03-02T09:59:59.999Z')).toBe('2026-03-02T10:00:00.000Z');
  });

  it('reads weekdays, names and increments', () => {
    expect(next('cron(0 18 ? * MON-FRI *)', '2026-11-27T19:00:00Z')).toBe('2026-11-30T18:00:00.000Z');
    expect(next('cron(7/20 * * * ? *)', '2026-01-01T00:48:00Z')).toBe('2026-01-01T01:07:00.000Z');
    expect(next('cron(0 0 1 JAN,JUL ? *)', '2026-02-01T00:00:00Z')).toBe('2026-07-01T00:00:00.000Z');
  });

  it('reads L, W and #', () => {
    expect(next('cron(0 12 L * ? *)', '2026-02-01T00:00:00Z')).toBe('2026-02-28T12:00:00.000Z');
    expect(next('cron(0 12 1W * ? *)', '2026-07-31T00:00:00Z')).toBe('2026-08-03T12:00:00.000Z');
    expect(next('cron(0 12 31W * ? *)', '2026-05-01T00:00:00Z')).toBe('2026-05-29T12:00:00.000Z');
    expect(next('cron(0 12 31W * ? *)', '2026-10-01T00:00:00Z')).toBe('2026-10-30T12:00:00.000Z');
    expect(next('cron(0 12 ? * 2#1 *)', '2026-12-01T00:00:00Z')).toBe('2026-12-07T12:00:00.000Z');
    expect(next('cron(0 12 ? * 6L *)', '2026-11-01T00:00:00Z')).toBe('2026-11-27T12:00:00.000Z');
    expect(next('cron(0 12 ? * L *)', '2026-11-27T00:00:00Z')).toBe('2026-11-28T12:00:00.000Z');
  });

  it('skips 31W in a month of 30 days', () => {
    expect(next('cron(0 12 31W * ? *)', '2026-04-01T00:00:00Z')).toBe('2026-05-29T12:00:00.000Z');
  });

  it('reads the fields in the time zone', () => {
    expect(next('cron(0 9 * * ? *)', '2026-01-10T00:00:00Z', 'Asia/Kolkata')).toBe('2026-01-10T03:30:00.000Z');
    expect(next('cron(0 9 * * ? *)', '2026-07-10T00:00:00Z', 'America/New_York')).toBe('2026-07-10T13:00:00.000Z');
    expect(next('cron(0 9 * * ? *)', '2026-01-10T00:00:00Z', 'America/New_York')).toBe('2026-01-10T14:00:00.000Z');
  });

  it('does not fire at a wall time the clocks skip', () => {
    // Berlin's clocks go from 02:00 to 03:00 on 29 March 2026.
    expect(next('cron(30 2 * * ? *)', '2026-03-28T12:00:00Z', 'Europe/Berlin')).toBe('2026-03-30T00:30:00.000Z');
  });

  it('fires once at a wall time the clocks pass twice', () => {
    // Berlin's clocks go from 03:00 back to 02:00 on 25 October 2026.
    const zone = 'Europe/Berlin';
    expect(next('cron(30 2 * * ? *)', '2026-10-24T12:00:00Z', zone)).toBe('2026-10-25T00:30:00.000Z');
    expect(next('cron(30 2 * * ? *)', '2026-10-25T00:30:00Z', zone)).toBe('2026-10-26T01:30:00.000Z');
  });

  it('answers undefined for a schedule that never fires again', () => {
    expect(next('cron(0 0 * * ? 2020)', '2026-01-01T00:00:00Z')).toBeUndefined();
    expect(next('cron(0 0 30 2 ? *)', '2026-01-01T00:00:00Z')).toBeUndefined();
    expect(next('cron(59 23 31 12 ? 2199)', '2199-12-31T23:59:00Z')).toBeUndefined();
  });

  it('finds a run far away', () => {
    expect(next('cron(0 0 29 2 ? 2196)', '2026-01-01T00:00:00Z')).toBe('2196-02-29T00:00:00.000Z');
  });
});

describe('nextRun of rate schedules', () => {
  const every = parsed('rate(15 minutes)');

  it('fires at the anchor and every interval after it', () => {
    const anchor = new Date('2026-01-01T00:07:00Z');
    expect(nextRun(every, 'UTC', new Date('2026-01-01T00:00:00Z'), anchor)?.toISOString()).toBe('2026-01-01T00:07:00.000Z');
    expect(nextRun(every, 'UTC', anchor, anchor)?.toISOString()).toBe('2026-01-01T00:22:00.000Z');
    expect(nextRun(every, 'UTC', new Date('2026-01-02T10:00:00Z'), anchor)?.toISOString()).toBe('2026-01-02T10:07:00.000Z');
  });

  it('counts a day as 24 hours across a clock change', () => {
    const anchor = new Date('2026-03-28T08:00:00Z');
    const daily = parsed('rate(1 day)', 'Europe/Berlin');
    expect(nextRun(daily, 'Europe/Berlin', anchor, anchor)?.toISOString()).toBe('2026-03-29T08:00:00.000Z');
  });

  it('takes the schedule as created now without an anchor', () => {
    expect(nextRun(every, 'UTC', new Date('2026-01-01T00:00:00Z'))?.toISOString()).toBe('2026-01-01T00:15:00.000Z');
  });
});

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/St_Johns'];
const MINUTE = 60_000;

const formats = new Map<string, Intl.DateTimeFormat>();
const formatOf = (timeZone: string): Intl.DateTimeFormat => {
  const known = formats.get(timeZone);
  if (known) return known;
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    weekday: 'short',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  formats.set(timeZone, format);
  return format;
};

const wallOf = (instant: number, timeZone: string) => {
  const parts = formatOf(timeZone).formatToParts(instant);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    key: `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`,
    minute: Number(part('minute')),
    hour: Number(part('hour')),
    weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(part('weekday')) + 1,
  };
};

/** Minute by minute: the first minute whose wall time matches and was not shown before (clocks set back). */
const bruteForce = (minutes: number[], hours: number[], weekdays: number[], zone: string, after: number) => {
  const start = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  for (let t = start; t < start + 8 * 1440 * MINUTE; t += MINUTE) {
    const wall = wallOf(t, zone);
    if (!minutes.includes(wall.minute) || !hours.includes(wall.hour) || !weekdays.includes(wall.weekday)) continue;
    if ([30, 60, 120].some((back) => wallOf(t - back * MINUTE, zone).key === wall.key)) continue;
    return t;
  }
  return undefined;
};

const subset = (min: number, max: number) => fc.uniqueArray(fc.integer({ min, max }), { minLength: 1, maxLength: 4 }).map((xs) => xs.sort((a, b) => a - b));
/** Around the 2026 clock changes of the zones above, and elsewhere. */
const AROUND = [
  '2026-03-08T06:00:00Z',
  '2026-03-29T00:30:00Z',
  '2026-04-05T15:00:00Z',
  '2026-10-25T00:00:00Z',
  '2026-11-01T05:30:00Z',
  '2026-10-03T15:00:00Z',
].map(Date.parse);
const instant = fc.oneof(
  fc.integer({ min: Date.parse('2024-01-01T00:00:00Z'), max: Date.parse('2028-01-01T00:00:00Z') }),
  fc.tuple(fc.constantFrom(...AROUND), fc.integer({ min: -2 * 1440, max: 2 * 1440 })).map(([t, m]) => t + m * MINUTE),
);

describe('nextRun properties', () => {
  it('matches the first minute a wall clock shows the fields', () => {
    fc.assert(
      fc.property(subset(0, 59), subset(0, 23), subset(1, 7), fc.constantFrom(...ZONES), instant, (minutes, hours, weekdays, zone, after) => {
        const expression = `cron(${minutes.join(',')} ${hours.join(',')} ? * ${weekdays.join(',')} *)`;
        expect(nextRun(parsed(expression, zone), zone, new Date(after))?.getTime(), expression).toBe(bruteForce(minutes, hours, weekdays, zone, after));
      }),
      { numRuns: 25 },
    );
  });

  it('is monotonic and finds itself again just before', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('cron(0 */3 * * ? *)', 'cron(30 2 ? * SUN *)', 'cron(0 12 L * ? *)', 'cron(15 1 ? * 2#2 *)', 'cron(0 0 1W * ? *)'),
        fc.constantFrom(...ZONES),
        instant,
        fc.integer({ min: 0, max: 40 * 1440 }),
        (expression, zone, after, later) => {
          const schedule = parsed(expression, zone);
          const first = nextRun(schedule, zone, new Date(after));
          const second = nextRun(schedule, zone, new Date(after + later * MINUTE));
          expect(first).toBeDefined();
          expect(first?.getTime()).toBeGreaterThan(after);
          expect(second?.getTime()).toBeGreaterThanOrEqual(first?.getTime() ?? Number.NaN);
          expect(nextRun(schedule, zone, new Date((first?.getTime() ?? 0) - 1))).toEqual(first);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('fires rate schedules a whole number of intervals after the anchor', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.constantFrom('minutes', 'hours', 'days'), instant, instant, (value, unit, anchor, after) => {
        const expression = value === 1 ? `rate(1 ${unit.slice(0, -1)})` : `rate(${value} ${unit})`;
        const schedule = parsed(expression);
        if (schedule.kind !== 'rate') throw new Error('not a rate');
        const fired = nextRun(schedule, 'UTC', new Date(after), new Date(anchor))?.getTime() ?? Number.NaN;
        expect(fired).toBeGreaterThan(after);
        expect((fired - anchor) % schedule.everyMs).toBe(0);
        expect(fired - schedule.everyMs <= after || fired === anchor).toBe(true);
      }),
    );
  });
});
