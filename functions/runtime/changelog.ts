/**
 * The audit trail (changelog) of adapters, applications, compliance plans and trees: who changed what, when, and how,
 * field by field. Table key `changelog` (env `CHANGELOG_TABLE`).
 *
 * Item: `pk = "<kind>#<name>"` (`adapter#lab`, `application#orch_manager`, `plan#<planId>`, `tree#<treeId>`), `sk = "<at>#<seq>"`
 * (ISO time, then a per-container sequence and a random tail: entries of one subject sort by
 * time, those of one container in the order they were made), and `kind`, `name`, `at`, `by`,
 * `action`, `changes`.
 *
 * - An entry is written in the same DynamoDB transaction as the change it records
 *   ({@link changelogPut} gives the transaction's `Put`): both happen, or neither.
 * - Entries are keyed by the subject's name, not by its record: they outlive a deleted adapter
 *   and stay readable by name. Nothing expires them.
 * - Secrets appear only as their `$VAULT_` reference: the records hold nothing else, and
 *   {@link diffFields} writes any other value of a field named like a secret as `[redacted]`.
 */
import { randomBytes } from 'node:crypto';
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { requiredEnv } from '../platform/env.js';
import { REDACTED, isSecretField } from '../platform/redaction.js';
import { canonicalJson } from '../platform/canonical-json.js';
import { VAULT_PREFIX } from '../outbound/secrets/reference.js';

export const SUBJECT_KINDS = ['adapter', 'application', 'plan', 'tree'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/**
 * What an entry records. The `remediation-*` and `rollback-*` actions are remediation runs made
 * through an adapter (functions/remediation/audit.ts): their `changes` are the run's facts.
 * `run-started` and `run-skipped` are compliance plans' runs (functions/plans/store.ts): the run as
 * the plan's `lastRun` shows it. The `exemption-*` actions are a tree's exemptions
 * (functions/exemptions/store.ts): each change's field is `<exemptionId>.<field>`.
 */
export const CHANGE_ACTIONS = [
  'created',
  'replaced',
  'deleted',
  'started',
  'stopped',
  'restarted',
  'loglevel',
  'remediation-started',
  'remediation-ended',
  'rollback-started',
  'rollback-ended',
  'run-started',
  'run-skipped',
  'exemption-created',
  'exemption-replaced',
  'exemption-deleted',
] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

/** One changed field: a dotted path (`auth.password`); `from` absent when the field is new, `to` when it is gone. */
export interface FieldChange {
  readonly field: string;
  readonly from?: unknown;
  readonly to?: unknown;
}

export interface ChangelogEntry {
  readonly kind: SubjectKind;
  readonly name: string;
  /** ISO time of the change. */
  readonly at: string;
  /** The caller's token subject (`system` for a change the service made itself). */
  readonly by: string;
  readonly action: ChangeAction;
  readonly changes: readonly FieldChange[];
}

/** The `by` of a change no caller made (a seed, a migration). */
export const SYSTEM_ACTOR = 'system';

/** Default and largest page size of the changelog routes. */
export const CHANGELOG_PAGE = { default: 50, max: 100 } as const;

export const changelogKey = (kind: SubjectKind, name: string): string => `${kind}#${name}`;

/** The table name, read when first needed: functions that never write or read entries need not have it. */
export const changelogTable = (): string => requiredEnv('CHANGELOG_TABLE');

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Leaves of an object as dotted paths; arrays, scalars and members named like secrets (whatever they hold) are leaves. */
const flatten = (value: Record<string, unknown>, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> => {
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (isPlainObject(v) && Object.keys(v).length > 0 && !isSecretField(key)) flatten(v, path, out);
    else out.set(path, v);
  }
  return out;
};

/** A value as the trail may show it: a secret field holds its `$VAULT_` reference or `[redacted]`. */
const shown = (field: string, value: unknown): unknown => {
  const last = field.slice(field.lastIndexOf('.') + 1);
  if (!isSecretField(last)) return value;
  return typeof value === 'string' && value.startsWith(VAULT_PREFIX) ? value : REDACTED;
};

/**
 * The field-level difference from `before` to `after` (either may be absent: a creation or a
 * deletion), sorted by field. Nested objects are compared member by member (`auth.username`),
 * arrays as whole values. A field named like a secret shows its `$VAULT_` reference, never
 * anything else (`[redacted]`).
 */
export const diffFields = (before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): FieldChange[] => {
  const from = flatten(before ?? {});
  const to = flatten(after ?? {});
  const fields = [...new Set([...from.keys(), ...to.keys()])].sort();
  const changes: FieldChange[] = [];
  for (const field of fields) {
    const a = from.get(field);
    const b = to.get(field);
    if (from.has(field) && to.has(field) && canonicalJson(a) === canonicalJson(b)) continue;
    changes.push({ field, ...(from.has(field) ? { from: shown(field, a) } : {}), ...(to.has(field) ? { to: shown(field, b) } : {}) });
  }
  return changes;
};

let sequence = 0;

/** The sort key of a new entry: its time, then this container's sequence, then a random tail. */
const sortKey = (at: string): string => `${at}#${(sequence++).toString(36).padStart(8, '0')}${randomBytes(4).toString('hex')}`;

const ISO_TIME_SOURCE = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
const ISO_TIME = new RegExp(`^${ISO_TIME_SOURCE}$`);
const SORT_KEY = new RegExp(`^${ISO_TIME_SOURCE}#[0-9a-z]{8,}[0-9a-f]{8}$`);

/**
 * The `Put` of one entry, for the `TransactItems` of the write it records (lib-dynamodb's
 * `TransactWriteCommand`). It never overwrites an entry. `at` is `Date#toISOString()` (entries
 * sort by it); anything else is a programming error and throws.
 */
export const changelogPut = (
  entry: Omit<ChangelogEntry, 'changes'> & { readonly changes?: readonly FieldChange[] },
  tableName: string = changelogTable(),
): { Put: { TableName: string; Item: Record<string, unknown>; ConditionExpression: string } } => {
  if (!ISO_TIME.test(entry.at)) throw new Error(`changelog entry time must be an ISO time (Date#toISOString), got ${entry.at}`);
  return {
    Put: {
      TableName: tableName,
      Item: {
        pk: changelogKey(entry.kind, entry.name),
        sk: sortKey(entry.at),
        kind: entry.kind,
        name: entry.name,
        at: entry.at,
        by: entry.by,
        action: entry.action,
        changes: (entry.changes ?? []).map((c) => ({ ...c })),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
};

export interface ChangelogPage {
  /** Newest first. */
  readonly items: readonly ChangelogEntry[];
  /** The cursor of the next page; absent on the last. */
  readonly next?: string;
}

const toEntry = (item: Record<string, unknown>): ChangelogEntry => ({
  kind: item['kind'] as SubjectKind,
  name: String(item['name']),
  at: String(item['at']),
  by: String(item['by']),
  action: item['action'] as ChangeAction,
  changes: Array.isArray(item['changes']) ? (item['changes'] as FieldChange[]) : [],
});

/**
 * One page of a subject's entries, newest first. `limit` and `cursor` are the route's query
 * (already schema-checked: `limit` digits from 1 to {@link CHANGELOG_PAGE}.max); a cursor issued
 * for another subject, or not by this service, is a 400.
 */
export const listChangelog = async (
  client: Pick<DynamoDBDocumentClient, 'send'>,
  subject: { readonly kind: SubjectKind; readonly name: string },
  query: { readonly limit?: string | undefined; readonly cursor?: string | undefined },
  tableName: string = changelogTable(),
): Promise<ChangelogPage> => {
  const pk = changelogKey(subject.kind, subject.name);
  const limit = query.limit === undefined ? CHANGELOG_PAGE.default : Number(query.limit);
  let before: string | undefined;
  if (query.cursor !== undefined) {
    const fields = decodeCursor(query.cursor, ['s', 'before'], (f) => f.s === pk && SORT_KEY.test(f.before));
    if (!fields) throw invalidCursor();
    before = fields.before;
  }
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  // One more than asked tells whether another page exists; the loop only continues when
  // DynamoDB stopped early at its 1 MB page size.
  do {
    const out = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: before === undefined ? '#pk = :pk' : '#pk = :pk AND #sk < :before',
        ExpressionAttributeNames: { '#pk': 'pk', ...(before === undefined ? {} : { '#sk': 'sk' }) },
        ExpressionAttributeValues: { ':pk': pk, ...(before === undefined ? {} : { ':before': before }) },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit + 1 - items.length,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length <= limit);
  const page = items.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(toEntry),
    ...(items.length > limit && last ? { next: encodeCursor({ s: pk, before: String(last['sk']) }) } : {}),
  };
};
