/** The audit entries of remediation runs: what each says, and the bounds of its lists. */
import { describe, expect, it } from 'vitest';
import { AUDIT_LIST_MAX, recordRemediationEnd, recordRollbackStart, type RemediationAuditEntry } from '../../functions/remediation/audit.js';
import { emptyRemediationTotals, type Remediation } from '../../functions/remediation/model.js';

const run: Remediation = {
  remediationId: 'a'.repeat(24),
  batchId: 'b'.repeat(24),
  adapterId: 'lab-nso',
  treeId: 'c'.repeat(24),
  version: 'v1',
  mode: 'apply',
  commitQueue: true,
  ruleIds: ['ntp'],
  status: 'completed',
  devices: 2,
  totals: { ...emptyRemediationTotals(), planned: 2, applied: 2, fixed: 1, stillFailing: 1, rolledBack: 2 },
  startedBy: { subject: 'alice', roles: ['admin'] },
  started: '2026-11-23T10:00:00.000Z',
  finished: '2026-11-23T10:05:00.000Z',
  rollback: { status: 'completed', startedBy: { subject: 'bob', roles: ['admin', 'apiread'] }, started: '2026-11-23T11:00:00.000Z' },
};

const capture = () => {
  const entries: RemediationAuditEntry[] = [];
  return { entries, write: async (entry: RemediationAuditEntry) => void entries.push(entry) };
};
const fields = (entry: RemediationAuditEntry) => Object.fromEntries(entry.changes.map((c) => [c.field, c.to]));

describe('remediation audit entries', () => {
  it("names the rollback's starter on its end, with the rollback ids applied and the run's facts", async () => {
    const { entries, write } = capture();
    await recordRemediationEnd(write, {
      run,
      action: 'rollback',
      status: 'completed',
      at: '2026-11-23T11:02:00.000Z',
      devices: ['r2', 'r1'],
      rollbackIds: [12, 11],
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ adapterId: 'lab-nso', at: '2026-11-23T11:02:00.000Z', action: 'rollback-ended', by: { subject: 'bob' } });
    expect(fields(entries[0]!)).toEqual({
      remediationId: run.remediationId,
      batchId: run.batchId,
      mode: 'apply',
      commitQueue: true,
      ruleIds: ['ntp'],
      roles: ['admin', 'apiread'],
      status: 'completed',
      totals: run.totals,
      devices: ['r2', 'r1'],
      devicesCount: 2,
      rollbackIds: [12, 11],
      rollbackIdsCount: 2,
    });
  });

  it("names the run's starter on the run's end, and bounds every list it holds", async () => {
    const { entries, write } = capture();
    const many = Array.from({ length: AUDIT_LIST_MAX * 3 }, (_, i) => i);
    await recordRemediationEnd(write, { run, action: 'run', status: 'failed', at: run.finished!, devices: many.map(String), rollbackIds: many });
    await recordRollbackStart(write, run, { subject: 'carol', roles: ['admin'] }, '2026-11-23T12:00:00.000Z', many);
    const [end, rollback] = entries.map(fields);
    expect(entries.map((e) => [e.action, e.by.subject])).toEqual([
      ['remediation-ended', 'alice'],
      ['rollback-started', 'carol'],
    ]);
    expect(end).toMatchObject({ status: 'failed', devicesCount: many.length, rollbackIdsCount: many.length });
    expect(end!['devices']).toHaveLength(AUDIT_LIST_MAX);
    expect(end!['rollbackIds']).toEqual(many.slice(0, AUDIT_LIST_MAX));
    expect(rollback).toMatchObject({ rollbackIds: many.slice(0, AUDIT_LIST_MAX), rollbackIdsCount: many.length, roles: ['admin'] });
  });
});
