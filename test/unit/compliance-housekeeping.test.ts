/**
 * The batch function's version pruning, a pure function of the listings: each reason a
 * version is kept, and the only one it is deleted for; and the batch an execution runs, from its name.
 */
import { describe, expect, it } from 'vitest';
import { executionBatchId, type FunctionVersion, planPruning, SUPERSEDED_GRACE_MS } from '../../functions/compliance/housekeeping.js';

const HOUR = 3_600_000;
const now = new Date('2026-11-27T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

/** Versions 1..n, version i published (n - i + 1) × `spacing` ago. */
const versions = (n: number, spacing: number): FunctionVersion[] =>
  Array.from({ length: n }, (_, i) => ({ version: String(i + 1), published: ago((n - i) * spacing) }));

const reasons = (plan: ReturnType<typeof planPruning>) => Object.fromEntries([...plan.keep, ...plan.delete].map((d) => [d.version, d.reason]));

describe('planPruning', () => {
  it('deletes a version superseded longer than the grace ago with no running execution, and keeps the newest', () => {
    const plan = planPruning({ versions: versions(3, 2 * SUPERSEDED_GRACE_MS), aliasTargets: [], running: [], now });
    expect(reasons(plan)).toEqual({ 1: 'unused', 2: 'unused', 3: 'newest' });
    expect(plan.delete.map((d) => d.version)).toEqual(['1', '2']);
  });

  it('keeps the alias target even when a newer version exists and the target was superseded long ago', () => {
    const plan = planPruning({ versions: versions(3, 2 * SUPERSEDED_GRACE_MS), aliasTargets: ['1'], running: [], now });
    expect(reasons(plan)).toEqual({ 1: 'alias-target', 2: 'unused', 3: 'newest' });
  });

  it('keeps a version that a running execution is on, however old', () => {
    const plan = planPruning({ versions: versions(4, 10 * SUPERSEDED_GRACE_MS), aliasTargets: ['4'], running: ['2'], now });
    expect(reasons(plan)).toEqual({ 1: 'unused', 2: 'running-executions', 3: 'unused', 4: 'alias-target' });
  });

  it('keeps a version whose successor was published less than the grace ago, deletes it just after', () => {
    const vs: FunctionVersion[] = [
      { version: '7', published: ago(SUPERSEDED_GRACE_MS + 10 * HOUR) },
      { version: '8', published: ago(SUPERSEDED_GRACE_MS - 1) },
      { version: '9', published: ago(HOUR) },
    ];
    expect(reasons(planPruning({ versions: vs, aliasTargets: ['9'], running: [], now }))).toEqual({
      7: 'recently-superseded',
      8: 'recently-superseded',
      9: 'alias-target',
    });
    const later = new Date(now.getTime() + 2);
    expect(reasons(planPruning({ versions: vs, aliasTargets: ['9'], running: [], now: later }))).toEqual({
      7: 'unused',
      8: 'recently-superseded',
      9: 'alias-target',
    });
  });

  it('orders versions by number, not as text', () => {
    const vs: FunctionVersion[] = [
      { version: '10', published: ago(HOUR) },
      { version: '9', published: ago(10 * SUPERSEDED_GRACE_MS) },
    ];
    expect(reasons(planPruning({ versions: vs, aliasTargets: [], running: [], now }))).toEqual({ 9: 'recently-superseded', 10: 'newest' });
  });
});

describe('execution names', () => {
  it('reads the batch of an execution from its name, and no batch from any other name', () => {
    expect(executionBatchId('batch-0123456789abcdef01234567')).toBe('0123456789abcdef01234567');
    expect(executionBatchId('batch-0123')).toBeUndefined();
    expect(executionBatchId('other-0123456789abcdef01234567')).toBeUndefined();
  });
});
