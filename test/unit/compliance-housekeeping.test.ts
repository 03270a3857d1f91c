/**
 * The batch function's version pruning, a pure function of the listings: each reason a
 * version is kept, and the only one it is deleted for; and reading versions and batches out of
 * the executions' ARNs and names.
 */
import { describe, expect, it } from 'vitest';
import {
  type DurableExecution,
  executionBatchId,
  executionVersion,
  type FunctionVersion,
  planPruning,
  SUPERSEDED_GRACE_MS,
} from '../../functions/compliance/housekeeping.js';

const HOUR = 3_600_000;
const now = new Date('2026-11-27T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const arn = (version: string, name = 'batch-0123456789abcdef01234567') =>
  `arn:aws:lambda:eu-west-1:123456789012:function:svc-ComplianceBatch:${version}/durable-execution/${name}/3f2c9a`;
const running = (version: string): DurableExecution => ({ name: 'batch-0123456789abcdef01234567', arn: arn(version), status: 'RUNNING', started: ago(HOUR) });

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
    const plan = planPruning({ versions: versions(4, 10 * SUPERSEDED_GRACE_MS), aliasTargets: ['4'], running: [running('2')], now });
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

  it('keeps every version when a running execution names no version it can read', () => {
    const odd: DurableExecution = { ...running('1'), arn: 'arn:aws:lambda:eu-west-1:123456789012:function:svc-ComplianceBatch/durable-execution/x/y' };
    const plan = planPruning({ versions: versions(3, 2 * SUPERSEDED_GRACE_MS), aliasTargets: ['3'], running: [odd], now });
    expect(plan.delete).toEqual([]);
    expect(reasons(plan)).toEqual({ 1: 'executions-unknown', 2: 'executions-unknown', 3: 'alias-target' });
  });

  it('orders versions by number, not as text', () => {
    const vs: FunctionVersion[] = [
      { version: '10', published: ago(HOUR) },
      { version: '9', published: ago(10 * SUPERSEDED_GRACE_MS) },
    ];
    expect(reasons(planPruning({ versions: vs, aliasTargets: [], running: [], now }))).toEqual({ 9: 'recently-superseded', 10: 'newest' });
  });
});

describe('execution names and ARNs', () => {
  it('reads the version an execution runs on from its ARN', () => {
    expect(executionVersion(arn('12'))).toBe('12');
    expect(executionVersion(arn('$LATEST'))).toBe('$LATEST');
    expect(executionVersion('arn:aws:lambda:eu-west-1:123456789012:function:f/durable-execution/a/b')).toBeUndefined();
  });

  it('reads the batch of an execution from its name, and no batch from any other name', () => {
    expect(executionBatchId('batch-0123456789abcdef01234567')).toBe('0123456789abcdef01234567');
    expect(executionBatchId('batch-0123')).toBeUndefined();
    expect(executionBatchId('other-0123456789abcdef01234567')).toBeUndefined();
  });
});
