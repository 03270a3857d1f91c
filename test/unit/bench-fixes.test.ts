/**
 * The performance fixes the benchmark led to keep their answers: the arithmetic timestamp check
 * agrees with the `Date` round trip it replaced, and a cached authorizer policy is the policy.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { policyFor } from '../../functions/authorizer/policy.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { Metrics } from '../../functions/platform/metrics.js';
import { isIsoMillis } from '../../functions/trees/model.js';

/** The check as it was: the format, then a `Date` round trip. */
const roundTrip = (value: string): boolean =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value;

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

describe('isIsoMillis', () => {
  it('agrees with the Date round trip on every field value, in range or not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 999 }),
        (y, mo, d, h, mi, s, ms) => {
          const value = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`;
          expect(isIsoMillis(value)).toBe(roundTrip(value));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('agrees on the calendar edges: leap days of century years, month ends, midnight', () => {
    for (const value of [
      '2000-02-29T00:00:00.000Z',
      '1900-02-29T00:00:00.000Z',
      '2100-02-29T00:00:00.000Z',
      '2024-02-29T23:59:59.999Z',
      '2023-02-29T00:00:00.000Z',
      '2023-04-31T00:00:00.000Z',
      '2023-12-31T23:59:59.999Z',
      '2023-12-31T24:00:00.000Z',
      '0000-01-01T00:00:00.000Z',
      '2023-00-10T00:00:00.000Z',
      '2023-01-00T00:00:00.000Z',
    ]) {
      expect(isIsoMillis(value), value).toBe(roundTrip(value));
    }
  });

  it('rejects anything but a string in the exact format', () => {
    for (const value of [undefined, null, 0, {}, '2019-04-12T14:42:47.958+00:00', '2019-04-12T14:42:47.958Zx', '２019-04-12T14:42:47.958Z']) {
      expect(isIsoMillis(value)).toBe(false);
    }
  });
});

describe('policyFor', () => {
  const arn = (path: string, stage = 'v1') => `arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/${stage}/GET${path}`;

  it('answers a repeated call with the policy a fresh build gives', () => {
    for (const roles of [['admin'], ['apiread'], ['admin', 'apiread'], []] as const) {
      const first = policyFor(roles, arn('/configuration_manager/configs/0123456789abcdef01234567'));
      const again = policyFor(roles, arn('/status'));
      // A copy of the route table is never cached: this is the policy built from scratch.
      const fresh = policyFor(roles, arn('/status'), [...liveRoutes]);
      expect(again).toBe(first);
      expect(again).toEqual(fresh);
    }
  });

  it('keeps policies of different stages and APIs apart', () => {
    const v1 = policyFor(['admin'], arn('/status'));
    const v2 = policyFor(['admin'], arn('/status', 'v2'));
    expect(v2).not.toEqual(v1);
    expect(JSON.stringify(v2)).toContain('/v2/');
  });

  it('hands out a policy that cannot be changed by the caller who got it', () => {
    const policy = policyFor(['apiread'], arn('/status'));
    expect(() => (policy.Statement as unknown[]).push({})).toThrow(TypeError);
    expect(Object.isFrozen(policy.Statement[0])).toBe(true);
  });

  it('still refuses a malformed method ARN after a good one with the same API was cached', () => {
    policyFor(['admin'], arn('/status'));
    expect(() => policyFor(['admin'], 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5')).toThrow(/not an execute-api method ARN/);
    expect(() => policyFor(['admin'], 'arn:aws:s3:eu-west-1:123456789012:a1b2c3d4e5/v1/GET/status')).toThrow(/not an execute-api method ARN/);
  });
});

describe('Metrics.flush', () => {
  it('writes nothing when nothing was recorded, and each recorded value once', () => {
    const lines: string[] = [];
    const metrics = new Metrics(
      'Netconfig',
      'svc',
      (line) => lines.push(line),
      () => 0,
    );
    metrics.flush();
    expect(lines).toEqual([]);
    metrics.add('Calls', 'Count', 1);
    metrics.flush();
    metrics.flush();
    expect(lines).toHaveLength(1);
  });
});
