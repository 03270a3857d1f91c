/**
 * The audit trail of remediation: one changelog entry when a run starts and when it ends, and
 * when its rollback starts and ends. Entries are kept under the run's adapter (`adapter#<name>`,
 * read with `GET /adapters/{name}/changelogs`): the adapter is what the changes went through,
 * and its trail outlives the run, which expires with its batch.
 *
 * `by` is the caller who started the run (or its rollback), also on the end entry, which the
 * engine writes on their behalf; `changes` holds the facts as fields (`to` only): the run, the
 * batch, the mode, the caller's roles, the devices and rollback ids (at most
 * {@link AUDIT_LIST_MAX} of each, with their full count beside them).
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../platform/dynamo.js';
import { changelogPut, changelogTable, type ChangeAction, type FieldChange } from '../runtime/changelog.js';
import type { Actor, NewRemediation, Remediation, RemediationDevice, RemediationStatus, RemediationStore } from './model.js';

/** Devices and rollback ids an entry lists at most (the count says how many there are). */
export const AUDIT_LIST_MAX = 100;

/** One remediation entry, before it is keyed. */
export interface RemediationAuditEntry {
  readonly adapterId: string;
  readonly at: string;
  readonly by: Actor;
  readonly action: Extract<ChangeAction, 'remediation-started' | 'remediation-ended' | 'rollback-started' | 'rollback-ended'>;
  readonly changes: readonly FieldChange[];
}

/** Writes one entry (a conditional put of a new item: the changelog is append-only). */
export type AuditWrite = (entry: RemediationAuditEntry) => Promise<void>;

/** The changelog writer over DynamoDB (`CHANGELOG_TABLE`, read when the first entry is written). */
export const changelogAudit =
  (client: Pick<DynamoDBDocumentClient, 'send'> = documentClient, table?: string): AuditWrite =>
  async (entry) => {
    const { Put } = changelogPut(
      { kind: 'adapter', name: entry.adapterId, at: entry.at, by: entry.by.subject, action: entry.action, changes: entry.changes },
      table ?? changelogTable(),
    );
    await client.send(new PutCommand(Put));
  };

const field = (name: string, to: unknown): FieldChange => ({ field: name, to });

/** A bounded list and its count, as two fields. */
const listed = (name: string, values: readonly (string | number)[]): FieldChange[] => [
  field(name, values.slice(0, AUDIT_LIST_MAX)),
  field(`${name}Count`, values.length),
];

const runFields = (run: Pick<Remediation, 'remediationId' | 'batchId' | 'mode' | 'commitQueue' | 'ruleIds'>, by: Actor): FieldChange[] => [
  field('remediationId', run.remediationId),
  field('batchId', run.batchId),
  field('mode', run.mode),
  field('commitQueue', run.commitQueue),
  ...(run.ruleIds ? [field('ruleIds', run.ruleIds.slice(0, AUDIT_LIST_MAX))] : []),
  field('roles', [...by.roles]),
];

/** The entry of a run that starts: who, when, the batch, the mode, the devices. */
export const recordRemediationStart = (write: AuditWrite, run: NewRemediation): Promise<void> =>
  write({
    adapterId: run.adapterId,
    at: run.started,
    by: run.startedBy,
    action: 'remediation-started',
    changes: [
      ...runFields(run, run.startedBy),
      ...listed(
        'devices',
        run.devices.map((d) => d.device),
      ),
    ],
  });

/** The entry of a rollback that starts: who, when, the run, and the rollback ids it will apply. */
export const recordRollbackStart = (write: AuditWrite, run: Remediation, by: Actor, at: string, rollbackIds: readonly number[]): Promise<void> =>
  write({ adapterId: run.adapterId, at, by, action: 'rollback-started', changes: [...runFields(run, by), ...listed('rollbackIds', rollbackIds)] });

/** What a run (or its rollback) ended with, as the engine knows it at its end. */
export interface RemediationEnd {
  readonly run: Remediation;
  /** `run`: the run itself ended; `rollback`: its rollback ended. */
  readonly action: 'run' | 'rollback';
  readonly status: Exclude<RemediationStatus, 'running'>;
  readonly at: string;
  /** The devices the run (or rollback) changed: applied, or rolled back (for a dry-run, those NSO answered). */
  readonly devices: readonly string[];
  /** The rollback ids: recorded by the commits of a run, applied by a rollback. */
  readonly rollbackIds: readonly number[];
}

/**
 * The entry of a run's (or rollback's) end: its status, totals, the devices and rollback ids.
 * Written by the engine once the run is finished; `by` is whoever started what ended.
 */
export const recordRemediationEnd = (write: AuditWrite, end: RemediationEnd): Promise<void> => {
  const by = end.action === 'rollback' && end.run.rollback ? end.run.rollback.startedBy : end.run.startedBy;
  return write({
    adapterId: end.run.adapterId,
    at: end.at,
    by,
    action: end.action === 'run' ? 'remediation-ended' : 'rollback-ended',
    changes: [
      ...runFields(end.run, by),
      field('status', end.status),
      field('totals', end.run.totals),
      ...listed('devices', end.devices),
      ...listed('rollbackIds', end.rollbackIds),
    ],
  });
};

/** Devices a run's store is walked by, a page at a time. */
const END_WALK_PAGE = 1000;

/** Whether a device is one an end entry names: changed by the run (or answered by NSO's dry-run), or rolled back. */
const changedBy = (action: RemediationEnd['action'], device: RemediationDevice): boolean =>
  action === 'rollback'
    ? device.rollback?.state === 'rolled-back'
    : device.state !== 'pending' && device.state !== 'nothing-to-do' && device.state !== 'failed';

/**
 * Writes the end entry of a run (or its rollback) the engine has just finished, its devices and
 * rollback ids read from the store (newest commit first); nothing when the run is not stored.
 */
export const recordEndFromStore = async (
  write: AuditWrite,
  store: Pick<RemediationStore, 'get' | 'listDevices'>,
  end: { readonly remediationId: string; readonly action: RemediationEnd['action']; readonly status: RemediationEnd['status'] },
): Promise<void> => {
  const run = await store.get(end.remediationId);
  if (!run) return;
  const devices: string[] = [];
  const rollbackIds: number[] = [];
  let after: string | undefined;
  do {
    const page = await store.listDevices(end.remediationId, { limit: END_WALK_PAGE, ...(after ? { after } : {}) });
    for (const device of page.items.filter((d) => changedBy(end.action, d))) {
      devices.push(device.device);
      if (device.rollbackId !== undefined) rollbackIds.push(device.rollbackId);
    }
    after = page.next;
  } while (after);
  const at = (end.action === 'rollback' ? run.rollback?.finished : run.finished) ?? new Date().toISOString();
  await recordRemediationEnd(write, { run, action: end.action, status: end.status, at, devices, rollbackIds: rollbackIds.sort((a, b) => b - a) });
};
