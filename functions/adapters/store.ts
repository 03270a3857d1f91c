/**
 * Adapters in DynamoDB (table key `adapters`, env `ADAPTERS_TABLE`).
 *
 * Item: `pk = "ADAPTER#<name>"`, `kind = "adapter"` (the sparse `byName` index, sort key
 * `name`, lists adapters sorted by name), and the {@link Adapter} fields. `auth.password`
 * only ever holds a `$VAULT_` reference: the service writes the value to the secrets store
 * before it writes the item.
 */
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../shared/dynamo.js';
import { requiredEnv } from '../shared/env.js';
import { logger } from '../shared/logger.js';
import { InternalError } from '../shared/problem.js';
import { SecretReferenceInvalid } from '../secrets/errors.js';
import { ENC_REMOVED, VAULT_PREFIX, isEncValue } from '../secrets/reference.js';
import type { Adapter, AdapterState } from './model.js';

export const ADAPTER_KIND = 'adapter';
export const BY_NAME_INDEX = 'byName';
export const adapterKey = (name: string): { pk: string } => ({ pk: `ADAPTER#${name}` });

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
}

/**
 * The record changed between the read and the write (`reason: 'changed'`), or the write would
 * have moved the stored secret to another orchestrator or user name (`reason: 'secret-moved'`).
 */
export class AdapterWriteRefused extends Error {
  constructor(readonly reason: 'changed' | 'secret-moved') {
    super(reason === 'changed' ? 'the adapter changed since it was read' : 'the stored secret would follow the adapter to another origin or user name');
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
   * password reference, whether or not the rest of it parses (a damaged record can be replaced).
   */
  current(name: string): Promise<StoredState | null>;
  /**
   * Creates or replaces in one atomic update: `created` is kept, `lastUpdated` set to `now`.
   *
   * Every write of an adapter comes here, and the update is conditional, so DynamoDB itself
   * refuses (with {@link AdapterWriteRefused}) a write that keeps the stored password reference
   * while changing `baseUrl` or the user name: a stored secret never follows an adapter to
   * another orchestrator. With `expected`, the write also requires the record to be unchanged
   * since that read (`null`: that it still does not exist).
   */
  put(fields: AdapterFields, now: string, expected?: StoredState | null): Promise<PutResult>;
  /** Adapters sorted by name, after `after` (exclusive) when given; damaged items listed as such (and logged). */
  list(options: { readonly limit: number; readonly after?: string }): Promise<AdapterPage>;
  /** Deletes one adapter; returns its password reference, or undefined when there was none. */
  delete(name: string): Promise<{ readonly password?: string } | undefined>;
  /**
   * Sets an existing adapter's state (a new revision and `lastUpdated`, so every cache keyed on
   * the record reads it afresh); undefined when there is no such adapter.
   */
  setState(name: string, state: AdapterState, now: string): Promise<Adapter | undefined>;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** A value of an item in DynamoDB's wire form (`{ S: "x" }`), or as is when already plain. */
const wire = (value: unknown, type: 'S' | 'M'): unknown =>
  value !== null && typeof value === 'object' && type in value ? (value as Record<string, unknown>)[type] : value;

/**
 * Maps an item to an adapter. A damaged item (missing field, wrong type, or a password that is
 * not a reference) is a 500 whose cause is logged with the adapter name only.
 */
export const toAdapter = (item: Record<string, unknown>): Adapter => {
  const auth = item['auth'] as Record<string, unknown> | undefined;
  const timeoutMs = item['timeoutMs'];
  const complianceConcurrency = item['complianceConcurrency'];
  const state = item['state'];
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
    (timeoutMs === undefined || (typeof timeoutMs === 'number' && Number.isInteger(timeoutMs))) &&
    (complianceConcurrency === undefined || (typeof complianceConcurrency === 'number' && Number.isInteger(complianceConcurrency))) &&
    (state === undefined || state === 'RUNNING' || state === 'STOPPED') &&
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
    state: state === 'STOPPED' ? 'STOPPED' : 'RUNNING',
    created: item['created'] as string,
    lastUpdated: item['lastUpdated'] as string,
  };
};

/** The adapter name of an item, from its key when the `name` attribute is damaged. */
const nameOf = (item: Record<string, unknown>): string =>
  isString(item['name']) ? item['name'] : String(item['pk'] ?? '').replace(/^ADAPTER#/, '');

/** An adapter store over `tableName` (default: `ADAPTERS_TABLE`). */
export const createAdapterStore = (
  client: Pick<DynamoDBDocumentClient, 'send'> = documentClient,
  tableName: string = requiredEnv('ADAPTERS_TABLE'),
): AdapterStore => ({
  async get(name) {
    const out = await client.send(new GetCommand({ TableName: tableName, Key: adapterKey(name), ConsistentRead: true }));
    return out.Item ? toAdapter(out.Item) : undefined;
  },

  async current(name) {
    const out = await client.send(
      new GetCommand({
        TableName: tableName,
        Key: adapterKey(name),
        ConsistentRead: true,
        ProjectionExpression: '#revision, #baseUrl, #auth',
        ExpressionAttributeNames: { '#revision': 'revision', '#baseUrl': 'baseUrl', '#auth': 'auth' },
      }),
    );
    if (!out.Item) return null;
    const auth = (out.Item['auth'] ?? {}) as Record<string, unknown>;
    const revision = out.Item['revision'];
    return {
      revision: typeof revision === 'number' ? revision : 0,
      ...(isString(out.Item['baseUrl']) ? { baseUrl: out.Item['baseUrl'] } : {}),
      ...(isString(auth['username']) ? { username: auth['username'] } : {}),
      ...(isString(auth['password']) ? { password: auth['password'] } : {}),
    };
  },

  async put(fields, now, expected) {
    if (!fields.auth.password.startsWith(VAULT_PREFIX)) {
      // The last guard before DynamoDB: a value that is not a reference must never be stored.
      throw new InternalError('refused to store an adapter password that is not a $VAULT_ reference', { adapter: fields.name });
    }
    const values: Record<string, unknown> = {
      ':kind': ADAPTER_KIND,
      ':name': fields.name,
      ':type': fields.type,
      ':baseUrl': fields.baseUrl,
      ':auth': { type: fields.auth.type, username: fields.auth.username, password: fields.auth.password },
      ':now': now,
    };
    const names: Record<string, string> = {
      '#kind': 'kind',
      '#name': 'name',
      '#type': 'type',
      '#baseUrl': 'baseUrl',
      '#auth': 'auth',
      '#lastUpdated': 'lastUpdated',
      '#created': 'created',
      '#timeoutMs': 'timeoutMs',
      '#complianceConcurrency': 'complianceConcurrency',
      '#state': 'state',
      '#revision': 'revision',
      '#username': 'username',
      '#password': 'password',
    };
    values[':password'] = fields.auth.password;
    values[':username'] = fields.auth.username;
    values[':one'] = 1;
    values[':zero'] = 0;
    values[':running'] = 'RUNNING';
    // The secret stays with its orchestrator and user: the same reference only with the same
    // origin and user name (a new adapter, or a new reference, may name any).
    let condition = 'attribute_not_exists(pk) OR #auth.#password <> :password OR (#baseUrl = :baseUrl AND #auth.#username = :username)';
    if (expected === null) condition = `attribute_not_exists(pk) AND (${condition})`;
    else if (expected !== undefined) {
      // Records written before revisions existed count as revision 0.
      values[':revision'] = expected.revision;
      const sameRevision = expected.revision === 0 ? '(attribute_not_exists(#revision) OR #revision = :revision)' : '#revision = :revision';
      condition = `attribute_exists(pk) AND ${sameRevision} AND (${condition})`;
    }
    let expression =
      'SET #kind = :kind, #name = :name, #type = :type, #baseUrl = :baseUrl, #auth = :auth, #lastUpdated = :now, #created = if_not_exists(#created, :now), #revision = if_not_exists(#revision, :zero) + :one, #state = if_not_exists(#state, :running)';
    // Optional settings: set when given, else removed (a PUT replaces the whole record).
    const removed: string[] = [];
    for (const field of ['timeoutMs', 'complianceConcurrency'] as const) {
      const value = fields[field];
      if (value !== undefined) {
        expression += `, #${field} = :${field}`;
        values[`:${field}`] = value;
      } else removed.push(`#${field}`);
    }
    if (removed.length) expression += ` REMOVE ${removed.join(', ')}`;
    // One atomic update decides created-or-replaced: ALL_OLD is empty exactly when the item is new.
    let out;
    try {
      out = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: adapterKey(fields.name),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      // The item on the exception is in DynamoDB's wire form (`{ S: … }`, `{ M: … }`).
      const item = (error as { Item?: Record<string, unknown> }).Item;
      const auth = wire(item?.['auth'], 'M') as Record<string, unknown> | undefined;
      const moved =
        item !== undefined &&
        wire(auth?.['password'], 'S') === fields.auth.password &&
        (wire(item['baseUrl'], 'S') !== fields.baseUrl || wire(auth?.['username'], 'S') !== fields.auth.username);
      throw new AdapterWriteRefused(moved ? 'secret-moved' : 'changed');
    }
    const old = out.Attributes;
    const created = old === undefined;
    const oldCreated = old?.['created'];
    const oldPassword = (old?.['auth'] as { password?: unknown } | undefined)?.password;
    const oldState = old?.['state'];
    return {
      created,
      // A replace keeps the adapter's state: only the lifecycle routes change it.
      adapter: { ...fields, state: oldState === 'STOPPED' ? 'STOPPED' : 'RUNNING', created: !created && isString(oldCreated) ? oldCreated : now, lastUpdated: now },
      ...(isString(oldPassword) ? { previousPassword: oldPassword } : {}),
    };
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
          } else if (error instanceof InternalError) {
            items.push({ name: nameOf(item), status: 'damaged', problem: 'damaged-record', detail: 'The stored record is damaged (a field is missing or of the wrong type); store the adapter again.' });
          } else throw error;
          logger.error('damaged adapter item', { adapter: nameOf(item) });
        }
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey && items.length <= limit);
    return { items: items.slice(0, limit), more: items.length > limit };
  },

  async setState(name, state, now) {
    try {
      const out = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: adapterKey(name),
          UpdateExpression: 'SET #state = :state, #lastUpdated = :now, #revision = if_not_exists(#revision, :zero) + :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#state': 'state', '#lastUpdated': 'lastUpdated', '#revision': 'revision' },
          ExpressionAttributeValues: { ':state': state, ':now': now, ':zero': 0, ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toAdapter(out.Attributes ?? {});
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
  },

  async delete(name) {
    const out = await client.send(new DeleteCommand({ TableName: tableName, Key: adapterKey(name), ReturnValues: 'ALL_OLD' }));
    if (!out.Attributes) return undefined;
    const password = (out.Attributes['auth'] as { password?: unknown } | undefined)?.password;
    return isString(password) ? { password } : {};
  },
});
