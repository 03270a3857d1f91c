/**
 * Adapters in DynamoDB (table key `adapters`, env `ADAPTERS_TABLE`).
 *
 * Item: `pk = "ADAPTER#<name>"`, `kind = "adapter"` (the sparse `byName` index, sort key
 * `name`, lists adapters sorted by name), and the {@link Adapter} fields. `auth.password`
 * only ever holds a `$VAULT_` reference: the service writes the value to the secrets store
 * before it writes the item.
 *
 * Every write (create, replace, delete, state, log level) is one DynamoDB transaction with
 * the changelog entry that records it (`functions/runtime/changelog.ts`): both land, or neither.
 * Each write is conditional on the revision read just before, so the entry's diff is exactly
 * what changed; a write that lost a race is read and tried again (at most
 * {@link WRITE_ATTEMPTS} times), then refused as `changed`.
 */
import { DeleteCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SYSTEM_ACTOR, changelogPut, changelogTable, diffFields, type ChangeAction } from '../runtime/changelog.js';
import { documentClient } from '../platform/dynamo.js';
import { caseTwinOf, claimDelete, claimPut, ensureClaims, indexedIdentifiers, type ClaimSpace } from '../platform/name-claims.js';
import { requiredEnv } from '../platform/env.js';
import { isLogLevel, logger } from '../platform/logger.js';
import { InternalError, ServiceUnavailable } from '../platform/problem.js';
import { WRITE_ID_ATTRIBUTE, holdsWrite, newWriteId, settleWrite } from '../platform/settled-write.js';
import { transientReason } from '../platform/transient.js';
import { SecretReferenceInvalid } from '../outbound/secrets/errors.js';
import { ENC_REMOVED, VAULT_PREFIX, isEncValue } from '../outbound/secrets/reference.js';
import { DEFAULT_ADAPTER_LOG_LEVEL, NSO_COMMIT_PARAMS, type Adapter, type AdapterLogLevel, type AdapterState, type NsoCommitParams } from './model.js';

export const ADAPTER_KIND = 'adapter';
export const BY_NAME_INDEX = 'byName';
export const adapterKey = (name: string): { pk: string } => ({ pk: `ADAPTER#${name}` });
/**
 * The one item that lists the pending secrets of every adapter (no `kind`: never in the `byName`
 * index). One item, so that any write can sweep what any other left with one read; an entry is
 * about 100 bytes and is cleared as soon as its write settles, so the item stays far below
 * DynamoDB's 400 KB (thousands of writes would have to be left unsettled at once). Deleted when
 * its list empties.
 */
export const PENDING_SECRETS_KEY = { pk: 'SECRETS' } as const;
/** Prefix of the adapters' name claims (`platform/name-claims.ts`): names are unique without regard to case. */
export const NAME_CLAIM_PREFIX = 'NAME#';

/**
 * How long a read-back waits: one attempt of DynamoDB's request timeout, so that a write that
 * used its three attempts and its read-back still end inside the shortest function timeout (10 s).
 */
const READ_BACK_MS = 2_000;

/**
 * DynamoDB did not confirm a write and the read-back could not tell whether it landed: nothing
 * may be rolled back that the record may now name. A 503 that says so (never "nothing changed").
 */
export class WriteOutcomeUnknown extends ServiceUnavailable {
  constructor() {
    super('The database did not confirm the change and it could not be checked whether it was made; read the adapter (GET /adapters/{name}) before you retry.');
  }
}

/**
 * A secret the service wrote (or is about to drop) for an adapter, listed before it is written:
 * `<ISO time> <path>` (the path names the adapter). Cleared once the record names it, or once it
 * is deleted; left (with the reason logged) when neither could be settled, so that a later write
 * of any adapter sweeps it.
 */
export type PendingSecret = string;
export const pendingSecret = (at: string, path: string): PendingSecret => `${at} ${path}`;
export const parsePendingSecret = (entry: PendingSecret): { at: string; path: string } => {
  const space = entry.indexOf(' ');
  return { at: entry.slice(0, space), path: entry.slice(space + 1) };
};

/** The fields a caller sets; the store adds `created` and `lastUpdated`. */
export type AdapterFields = Omit<Adapter, 'created' | 'lastUpdated'>;

export interface PutResult {
  /** True when no adapter had this name before. */
  readonly created: boolean;
  readonly adapter: Adapter;
  /** The password reference the replaced adapter held, if any. */
  readonly previousPassword?: string;
}

/**
 * What a write is checked against: the adapter's record as read before it (`null`: none).
 * The write only happens if the record is still that one, so no concurrent write is lost and
 * no check made on the record is outdated when it lands.
 */
export interface StoredState {
  readonly revision: number;
  readonly baseUrl?: string;
  readonly username?: string;
  readonly password?: string;
  /** The whole record as read (what the changelog's diff starts from). */
  readonly item?: Record<string, unknown>;
}

/** Reads and writes one write makes at most when other writes keep changing the record. */
export const WRITE_ATTEMPTS = 3;

/**
 * The record changed between the read and the write (`reason: 'changed'`), the write would
 * have moved the stored secret to another orchestrator or user name (`reason: 'secret-moved'`),
 * or a new name differs only by case from a stored one (`reason: 'case-twin'`).
 */
export class AdapterWriteRefused extends Error {
  constructor(
    readonly reason: 'changed' | 'secret-moved' | 'case-twin',
    /** With `case-twin`: the stored name that differs from the new one only by case. */
    readonly twin?: string,
  ) {
    super(
      reason === 'changed'
        ? 'the adapter changed since it was read'
        : reason === 'case-twin'
          ? `an adapter is named ${twin}`
          : 'the stored secret would follow the adapter to another origin or user name',
    );
    this.name = 'AdapterWriteRefused';
  }
}

/**
 * A stored adapter that cannot be used as it is: a damaged record, or one whose password is a
 * `$ENC` value (removed in 2021.2, e.g. a record migrated from an older release). Listed as
 * such, so that it does not go unnoticed; never with any of its stored values.
 */
export interface DamagedAdapter {
  readonly name: string;
  readonly status: 'damaged';
  /** `secret-reference-invalid` for a `$ENC` or otherwise unusable password, `damaged-record` for the rest. */
  readonly problem: 'secret-reference-invalid' | 'damaged-record';
  readonly detail: string;
}

// Mutation: `item.status === 'damaged'` → `true` is equivalent: an `Adapter` has no `status` and a damaged one's is
// always `damaged`.
export const isDamaged = (item: Adapter | DamagedAdapter): item is DamagedAdapter => 'status' in item && item.status === 'damaged';

export interface AdapterPage {
  /** Adapters sorted by name; a damaged one is listed as a {@link DamagedAdapter}. */
  readonly items: readonly (Adapter | DamagedAdapter)[];
  /** True when more adapters follow the last one. */
  readonly more: boolean;
}

export interface AdapterStore {
  /** One adapter by name (strongly consistent); undefined when absent. */
  get(name: string): Promise<Adapter | undefined>;
  /**
   * Reads what a write will be checked against: the record's revision, origin, user name and
   * password reference, and the record itself, whether or not it parses (a damaged record can be
   * replaced).
   */
  current(name: string): Promise<StoredState | null>;
  /**
   * Creates or replaces (changelog `created` or `replaced`, by `by`): `created` is kept,
   * `lastUpdated` set to `now`, `state` and `logLevel` kept (only their own routes change them).
   *
   * Every write of an adapter comes here, and the update is conditional, so DynamoDB itself
   * refuses (with {@link AdapterWriteRefused}) a write that keeps the stored password reference
   * while changing `baseUrl` or the user name: a stored secret never follows an adapter to
   * another orchestrator. With `expected`, the write requires the record to be unchanged since
   * that read (`null`: that it still does not exist); without, it reads the record itself.
   */
  put(fields: AdapterFields, now: string, expected?: StoredState | null, by?: string): Promise<PutResult>;
  /** Adapters sorted by name, after `after` (exclusive) when given; damaged items listed as such (and logged). */
  list(options: { readonly limit: number; readonly after?: string }): Promise<AdapterPage>;
  /** Deletes one adapter (changelog `deleted`); returns its password reference, or undefined when there was no adapter. */
  delete(name: string, by?: string): Promise<{ readonly password?: string } | undefined>;
  /**
   * Sets an existing adapter's state (a new revision and `lastUpdated`, so every cache keyed on
   * the record reads it afresh), recorded as `action` (default `stopped` or `started`);
   * undefined when there is no such adapter.
   */
  setState(
    name: string,
    state: AdapterState,
    now: string,
    by?: string,
    action?: Extract<ChangeAction, 'started' | 'stopped' | 'restarted'>,
  ): Promise<Adapter | undefined>;
  /** Sets an existing adapter's log level (changelog `loglevel`); undefined when there is no such adapter. */
  setLogLevel(name: string, level: AdapterLogLevel, now: string, by?: string): Promise<Adapter | undefined>;
  /** The stored name that differs from `name` only by case (read before a create, for an early 409); undefined when none. */
  caseTwin(name: string): Promise<string | undefined>;
  /** The pending secrets of every adapter (see {@link PendingSecret}). */
  pendingSecrets(): Promise<readonly PendingSecret[]>;
  /**
   * Lists secrets as pending (before they are written); `clear` takes them off once settled, and
   * deletes the list's item when nothing is left on it.
   */
  markPending(entries: readonly PendingSecret[], change: 'add' | 'clear'): Promise<void>;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * Maps an item to an adapter. A damaged item (missing field, wrong type, or a password that is
 * not a reference) is a 500 whose cause is logged with the adapter name only.
 */
export const toAdapter = (item: Record<string, unknown>): Adapter => {
  const auth = item['auth'] as Record<string, unknown> | undefined;
  const timeoutMs = item['timeoutMs'];
  const complianceConcurrency = item['complianceConcurrency'];
  const state = item['state'];
  const logLevel = item['logLevel'];
  const nsoCommitParams = item['nsoCommitParams'];
  const name = item['name'];
  const ok =
    isString(name) &&
    item['type'] === 'nso' &&
    isString(item['baseUrl']) &&
    auth !== null &&
    typeof auth === 'object' &&
    auth['type'] === 'basic' &&
    isString(auth['username']) &&
    isString(auth['password']) &&
    auth['password'].startsWith(VAULT_PREFIX) &&
    // Mutation: `typeof … === 'number'` → `true` (here and next line) is equivalent: `Number.isInteger` is false for
    // every non-number.
    (timeoutMs === undefined || (typeof timeoutMs === 'number' && Number.isInteger(timeoutMs))) &&
    (complianceConcurrency === undefined || (typeof complianceConcurrency === 'number' && Number.isInteger(complianceConcurrency))) &&
    (state === undefined || state === 'RUNNING' || state === 'STOPPED') &&
    (logLevel === undefined || isLogLevel(logLevel)) &&
    (nsoCommitParams === undefined || (NSO_COMMIT_PARAMS as readonly unknown[]).includes(nsoCommitParams)) &&
    isString(item['created']) &&
    isString(item['lastUpdated']);
  const password = auth !== null && typeof auth === 'object' ? auth['password'] : undefined;
  if (isString(password) && !password.startsWith(VAULT_PREFIX)) {
    // `$ENC` (removed in 2021.2) or a literal: the documented problem, never the value.
    throw new SecretReferenceInvalid(
      isEncValue(password)
        ? `The adapter '${nameOf(item)}' holds a $ENC password. ${ENC_REMOVED}.`
        : `The adapter '${nameOf(item)}' holds a password that is not a ${VAULT_PREFIX} reference; store it again (PUT /adapters/{name}).`,
    );
  }
  if (!ok || !auth) {
    throw new InternalError('damaged adapter item', { adapter: nameOf(item) });
  }
  return {
    name,
    type: 'nso',
    baseUrl: item['baseUrl'] as string,
    auth: { type: 'basic', username: auth['username'] as string, password: auth['password'] as string },
    ...(timeoutMs !== undefined ? { timeoutMs: timeoutMs as number } : {}),
    ...(complianceConcurrency !== undefined ? { complianceConcurrency: complianceConcurrency as number } : {}),
    ...(nsoCommitParams !== undefined ? { nsoCommitParams: nsoCommitParams as NsoCommitParams } : {}),
    state: state === 'STOPPED' ? 'STOPPED' : 'RUNNING',
    logLevel: isLogLevel(logLevel) ? logLevel : DEFAULT_ADAPTER_LOG_LEVEL,
    created: item['created'] as string,
    lastUpdated: item['lastUpdated'] as string,
  };
};

/** The adapter name of an item, from its key when the `name` attribute is damaged. */
const nameOf = (item: Record<string, unknown>): string =>
  // Mutation: `?? ''` (uncovered) and the regex without `^` are equivalent: the key is read only for an item without
  // a string `name`, which the `byName` index never holds, and it always starts with `ADAPTER#`.
  isString(item['name']) ? item['name'] : String(item['pk'] ?? '').replace(/^ADAPTER#/, '');

/** The fields of a record the changelog compares (`state` and `logLevel` with their defaults). */
const AUDITED = ['type', 'baseUrl', 'auth', 'timeoutMs', 'complianceConcurrency', 'nsoCommitParams'] as const;

/** What the changelog shows of a record: its settings, the password as its `$VAULT_` reference. */
export const auditView = (item: Record<string, unknown>): Record<string, unknown> => {
  const view: Record<string, unknown> = {};
  // Mutation: → `true` is equivalent: the changelog's diff (`flatten`) skips a field set to `undefined` as an absent
  // one.
  for (const field of AUDITED) if (item[field] !== undefined) view[field] = item[field];
  view['state'] = item['state'] === 'STOPPED' ? 'STOPPED' : 'RUNNING';
  view['logLevel'] = isLogLevel(item['logLevel']) ? item['logLevel'] : DEFAULT_ADAPTER_LOG_LEVEL;
  return view;
};

/** The condition that the record is still at `revision` (records written before revisions existed count as 0). */
const atRevision = (revision: number): string =>
  // Mutation: `revision === 0` → `true` is equivalent: the condition then says the same for a record that has a
  // revision, and no write removes one.
  revision === 0 ? '(attribute_not_exists(#revision) OR #revision = :revision)' : '#revision = :revision';

type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/**
 * The update of `put`: every field of the record, `created`, `revision` and `state` kept or
 * started, and the optional settings set when given, else removed (a PUT replaces the whole record).
 */
const putUpdate = (
  fields: AdapterFields,
  now: string,
  writeId: string,
): { values: Record<string, unknown>; names: Record<string, string>; expression: string } => {
  const values: Record<string, unknown> = {
    ':kind': ADAPTER_KIND,
    ':name': fields.name,
    ':type': fields.type,
    ':baseUrl': fields.baseUrl,
    ':auth': { type: fields.auth.type, username: fields.auth.username, password: fields.auth.password },
    ':now': now,
    ':one': 1,
    ':zero': 0,
    ':running': 'RUNNING',
    ':writeId': writeId,
  };
  const names: Record<string, string> = {
    '#pk': 'pk',
    '#kind': 'kind',
    '#name': 'name',
    '#type': 'type',
    '#baseUrl': 'baseUrl',
    '#auth': 'auth',
    '#lastUpdated': 'lastUpdated',
    '#created': 'created',
    '#timeoutMs': 'timeoutMs',
    '#complianceConcurrency': 'complianceConcurrency',
    '#nsoCommitParams': 'nsoCommitParams',
    '#state': 'state',
    '#revision': 'revision',
    '#writeId': WRITE_ID_ATTRIBUTE,
  };
  // `writeId` tells, on a read-back, whether this very write landed.
  let expression =
    'SET #writeId = :writeId, #kind = :kind, #name = :name, #type = :type, #baseUrl = :baseUrl, #auth = :auth, #lastUpdated = :now, #created = if_not_exists(#created, :now), #revision = if_not_exists(#revision, :zero) + :one, #state = if_not_exists(#state, :running)';
  // Optional settings: set when given, else removed (a PUT replaces the whole record).
  const removed: string[] = [];
  for (const field of ['timeoutMs', 'complianceConcurrency', 'nsoCommitParams'] as const) {
    const value = fields[field];
    if (value !== undefined) {
      expression += `, #${field} = :${field}`;
      values[`:${field}`] = value;
    } else removed.push(`#${field}`);
  }
  if (removed.length) expression += ` REMOVE ${removed.join(', ')}`;
  return { values, names, expression };
};

/**
 * An adapter store over `tableName` (default: `ADAPTERS_TABLE`); entries go to `changelogTableName` (default: `CHANGELOG_TABLE`, read at the first write).
 *
 * Longer than 80 lines on purpose: a factory whose short methods share its client, table and
 * caches through the closure; each method is its own unit (and is tested as one).
 */
export const createAdapterStore = (
  client: Pick<DynamoDBDocumentClient, 'send'> = documentClient,
  tableName: string = requiredEnv('ADAPTERS_TABLE'),
  changelogTableName?: string,
): AdapterStore => {
  const entryTable = (): string => (changelogTableName ??= changelogTable());
  const names_: ClaimSpace = { tableName, prefix: NAME_CLAIM_PREFIX };

  const storedNames = (): AsyncIterable<string> => indexedIdentifiers(client, tableName, BY_NAME_INDEX, ADAPTER_KIND, 'name');

  /**
   * Runs one transaction: `done`, or `refused` when a condition failed or another transaction
   * touched the same item (the caller reads again); any other failure is thrown.
   */
  const transact = async (items: TransactItem[]): Promise<'done' | 'refused'> => {
    try {
      await client.send(new TransactWriteCommand({ TransactItems: items }));
      return 'done';
    } catch (error) {
      // Mutation: → `false` is equivalent: any other failure carries no `CancellationReasons`, so the last line
      // throws it just the same.
      if ((error as { name?: string }).name !== 'TransactionCanceledException') throw error;
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons.some((r) => r.Code === 'ConditionalCheckFailed' || r.Code === 'TransactionConflict')) return 'refused';
      throw error;
    }
  };

  /**
   * The record after a write whose outcome DynamoDB did not confirm (a timeout, a dropped
   * connection, a 5xx, or a retry refused because the first attempt had landed): one consistent
   * read, bounded; {@link WriteOutcomeUnknown} when even that fails.
   */
  const readBack = async (name: string): Promise<Record<string, unknown> | undefined> => {
    try {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: adapterKey(name), ConsistentRead: true }), {
        abortSignal: AbortSignal.timeout(READ_BACK_MS),
      });
      return out.Item;
    } catch (error) {
      logger.warn('an adapter write was not confirmed and could not be read back', { adapter: name, reason: transientReason(error) ?? 'error' });
      throw new WriteOutcomeUnknown();
    }
  };

  const current = async (name: string): Promise<StoredState | null> => {
    const out = await client.send(new GetCommand({ TableName: tableName, Key: adapterKey(name), ConsistentRead: true }));
    if (!out.Item) return null;
    const auth = (out.Item['auth'] ?? {}) as Record<string, unknown>;
    const revision = out.Item['revision'];
    return {
      revision: typeof revision === 'number' ? revision : 0,
      ...(isString(out.Item['baseUrl']) ? { baseUrl: out.Item['baseUrl'] } : {}),
      ...(isString(auth['username']) ? { username: auth['username'] } : {}),
      ...(isString(auth['password']) ? { password: auth['password'] } : {}),
      item: out.Item,
    };
  };

  /** Whether writing `fields` over `stored` would move its secret to another origin or user name. */
  const movesSecret = (fields: AdapterFields, stored: StoredState | null): boolean =>
    stored !== null && stored.password === fields.auth.password && (stored.baseUrl !== fields.baseUrl || stored.username !== fields.auth.username);

  /**
   * Runs a transaction whose outcome must be known before anything is rolled back: when DynamoDB
   * does not confirm it, or refuses a retry that met its own first attempt, the record is read
   * back and `landed` decides.
   */
  const resolved = (name: string, landed: (item: Record<string, unknown> | undefined) => boolean, items: TransactItem[]): Promise<'done' | 'refused'> =>
    settleWrite(
      () => transact(items),
      () => readBack(name),
      landed,
    );

  /**
   * Sets `set` on an existing record (a new revision, `lastUpdated` = `now`), with its changelog
   * entry; undefined when there is no such adapter. An unconfirmed write is read back by its
   * write id, as every adapter write is: the answer says whether it was made.
   */
  const transition = async (name: string, set: Record<string, unknown>, now: string, by: string, action: ChangeAction): Promise<Adapter | undefined> => {
    const writeId = newWriteId();
    for (let attempt = 1; ; attempt++) {
      const before = await current(name);
      if (!before?.item) return undefined;
      // Mutation: `+ 1` → `- 1` is equivalent: `next` is read only by `toAdapter` and `auditView`, which ignore
      // `revision`; the stored one is `:next`.
      const next = { ...before.item, ...set, lastUpdated: now, revision: before.revision + 1 };
      // A damaged record fails here, before anything is written.
      const adapter = toAdapter(next);
      const names: Record<string, string> = { '#pk': 'pk', '#lastUpdated': 'lastUpdated', '#revision': 'revision', '#writeId': WRITE_ID_ATTRIBUTE };
      const values: Record<string, unknown> = { ':now': now, ':next': before.revision + 1, ':revision': before.revision, ':writeId': writeId };
      const assignments = ['#lastUpdated = :now', '#revision = :next', '#writeId = :writeId'];
      for (const [field, value] of Object.entries(set)) {
        names[`#${field}`] = field;
        values[`:${field}`] = value;
        assignments.push(`#${field} = :${field}`);
      }
      const outcome = await resolved(name, (item) => holdsWrite(item, writeId), [
        {
          Update: {
            TableName: tableName,
            Key: adapterKey(name),
            UpdateExpression: `SET ${assignments.join(', ')}`,
            ConditionExpression: `attribute_exists(#pk) AND ${atRevision(before.revision)}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
        changelogPut({ kind: 'adapter', name, at: now, by, action, changes: diffFields(auditView(before.item), auditView(next)) }, entryTable()),
      ]);
      if (outcome === 'done') return adapter;
      if (attempt >= WRITE_ATTEMPTS) throw new AdapterWriteRefused('changed');
    }
  };

  return {
    async get(name) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: adapterKey(name), ConsistentRead: true }));
      return out.Item ? toAdapter(out.Item) : undefined;
    },

    current,

    async put(fields, now, expected, by = SYSTEM_ACTOR) {
      if (!fields.auth.password.startsWith(VAULT_PREFIX)) {
        // The last guard before DynamoDB: a value that is not a reference must never be stored.
        throw new InternalError('refused to store an adapter password that is not a $VAULT_ reference', { adapter: fields.name });
      }
      const { values, names, expression } = putUpdate(fields, now, newWriteId());
      // The secret stays with its orchestrator and user: the same reference only with the same
      // origin and user name (a new adapter, or a new reference, may name any). Checked on the
      // read below, and by DynamoDB on the record the write meets.
      const keepsSecret = '(#auth.#password <> :password OR (#baseUrl = :baseUrl AND #auth.#username = :username))';
      for (let attempt = 1; ; attempt++) {
        const before = expected !== undefined ? expected : await current(fields.name);
        if (movesSecret(fields, before)) throw new AdapterWriteRefused('secret-moved');
        const old = before?.item;
        let condition = 'attribute_not_exists(#pk)';
        let conditionNames = {};
        let conditionValues = {};
        if (before !== null) {
          condition = `attribute_exists(#pk) AND ${atRevision(before.revision)} AND ${keepsSecret}`;
          conditionNames = { '#username': 'username', '#password': 'password' };
          conditionValues = { ':revision': before.revision, ':password': fields.auth.password, ':username': fields.auth.username };
        }
        const created = before === null;
        if (created) await ensureClaims(client, names_, storedNames);
        // A replace keeps the adapter's state and log level: only their own routes change them.
        const adapter: Adapter = {
          ...fields,
          state: old?.['state'] === 'STOPPED' ? 'STOPPED' : 'RUNNING',
          logLevel: isLogLevel(old?.['logLevel']) ? old['logLevel'] : DEFAULT_ADAPTER_LOG_LEVEL,
          created: !created && isString(old?.['created']) ? old['created'] : now,
          lastUpdated: now,
        };
        const outcome = await resolved(fields.name, (item) => holdsWrite(item, values[':writeId'] as string), [
          {
            Update: {
              TableName: tableName,
              Key: adapterKey(fields.name),
              UpdateExpression: expression,
              ConditionExpression: condition,
              ExpressionAttributeNames: { ...names, ...conditionNames },
              ExpressionAttributeValues: { ...values, ...conditionValues },
            },
          },
          changelogPut(
            {
              kind: 'adapter',
              name: fields.name,
              at: now,
              by,
              action: created ? 'created' : 'replaced',
              changes: diffFields(old ? auditView(old) : undefined, auditView({ ...adapter })),
            },
            entryTable(),
          ),
          // A new name claims its case-folded form with the record: a twin refuses the create.
          ...(created ? [claimPut(names_, fields.name)] : []),
        ]);
        if (outcome === 'done') {
          const previousPassword = before?.password;
          return { created, adapter, ...(isString(previousPassword) ? { previousPassword } : {}) };
        }
        const twin = created ? await caseTwinOf(client, names_, fields.name) : undefined;
        if (twin !== undefined) throw new AdapterWriteRefused('case-twin', twin);
        // Lost a race: say why when the caller had read the record itself, else read it again.
        if (expected !== undefined || attempt >= WRITE_ATTEMPTS) {
          throw new AdapterWriteRefused(movesSecret(fields, await current(fields.name)) ? 'secret-moved' : 'changed');
        }
      }
    },

    async list({ limit, after }) {
      const items: (Adapter | DamagedAdapter)[] = [];
      let startKey: Record<string, unknown> | undefined;
      // One more than asked tells whether another page exists; the loop only continues when
      // DynamoDB stopped early at its 1 MB page size.
      do {
        const out = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: BY_NAME_INDEX,
            KeyConditionExpression: after === undefined ? '#kind = :kind' : '#kind = :kind AND #name > :after',
            ExpressionAttributeNames: { '#kind': 'kind', ...(after === undefined ? {} : { '#name': 'name' }) },
            // Mutation: always `{ ':after': after }` is equivalent: the document client leaves an undefined value
            // out, so DynamoDB receives the same query.
            ExpressionAttributeValues: { ':kind': ADAPTER_KIND, ...(after === undefined ? {} : { ':after': after }) },
            Limit: limit + 1 - items.length,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        );
        for (const item of out.Items ?? []) {
          // One damaged item must not hide every other adapter, nor be hidden itself: it is
          // listed as damaged (its name and what is wrong, none of its values) and logged.
          try {
            items.push(toAdapter(item));
          } catch (error) {
            if (error instanceof SecretReferenceInvalid) {
              items.push({ name: nameOf(item), status: 'damaged', problem: 'secret-reference-invalid', detail: error.detail });
              // Mutation: → `true` is equivalent: `toAdapter` throws only `SecretReferenceInvalid` (handled above) and
              // `InternalError`, so the `else` is never reached.
            } else if (error instanceof InternalError) {
              items.push({
                name: nameOf(item),
                status: 'damaged',
                problem: 'damaged-record',
                detail: 'The stored record is damaged (a field is missing or of the wrong type); store the adapter again.',
              });
            } else throw error;
            logger.error('damaged adapter item', { adapter: nameOf(item) });
          }
        }
        startKey = out.LastEvaluatedKey;
      } while (startKey && items.length <= limit);
      return { items: items.slice(0, limit), more: items.length > limit };
    },

    setState: (name, state, now, by = SYSTEM_ACTOR, action = state === 'STOPPED' ? 'stopped' : 'started') => transition(name, { state }, now, by, action),

    setLogLevel: (name, level, now, by = SYSTEM_ACTOR) => transition(name, { logLevel: level }, now, by, 'loglevel'),

    async caseTwin(name) {
      await ensureClaims(client, names_, storedNames);
      return caseTwinOf(client, names_, name);
    },

    async pendingSecrets() {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: PENDING_SECRETS_KEY, ConsistentRead: true }));
      const pending = out.Item?.['pending'];
      return pending instanceof Set ? [...(pending as Set<string>)] : [];
    },

    async markPending(entries, change) {
      if (entries.length === 0) return;
      const out = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: PENDING_SECRETS_KEY,
          UpdateExpression: `${change === 'add' ? 'ADD' : 'DELETE'} #pending :entries`,
          ExpressionAttributeNames: { '#pending': 'pending' },
          ExpressionAttributeValues: { ':entries': new Set(entries) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      // DynamoDB drops an emptied set, not the item: the item goes too, unless an entry was
      // added meanwhile (then the condition fails, and the item stays for that entry).
      if (change === 'clear' && out.Attributes?.['pending'] === undefined) {
        try {
          await client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: PENDING_SECRETS_KEY,
              ConditionExpression: 'attribute_not_exists(#pending)',
              ExpressionAttributeNames: { '#pending': 'pending' },
            }),
          );
        } catch (error) {
          if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
        }
      }
    },

    async delete(name, by = SYSTEM_ACTOR) {
      for (let attempt = 1; ; attempt++) {
        const before = await current(name);
        if (!before?.item) return undefined;
        // Landed when the record is gone (a record still there was not deleted by this request).
        const outcome = await resolved(name, (item) => item === undefined, [
          {
            Delete: {
              TableName: tableName,
              Key: adapterKey(name),
              ConditionExpression: `attribute_exists(#pk) AND ${atRevision(before.revision)}`,
              ExpressionAttributeNames: { '#pk': 'pk', '#revision': 'revision' },
              ExpressionAttributeValues: { ':revision': before.revision },
            },
          },
          changelogPut(
            { kind: 'adapter', name, at: new Date().toISOString(), by, action: 'deleted', changes: diffFields(auditView(before.item), undefined) },
            entryTable(),
          ),
          claimDelete(names_, name),
        ]);
        if (outcome === 'done') return isString(before.password) ? { password: before.password } : {};
        if (attempt >= WRITE_ATTEMPTS) throw new AdapterWriteRefused('changed');
      }
    },
  };
};
