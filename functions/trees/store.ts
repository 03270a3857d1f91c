/**
 * Trees in DynamoDB. One table (`TREES_TABLE`), partition key `pk`:
 *
 * - a tree: `pk = "TREE#<id>"`, `kind = "tree"`, and the summary fields;
 * - a name lock: `pk = "NAME#<name>"`, `treeId`. It has no `kind`, so it stays out of the
 *   sparse `byName` index (partition `kind`, sort `name`) that lists trees by name.
 *
 * Writes that touch a name put the tree and its lock in one transaction, each conditional,
 * so that no interleaving of writers can leave two trees with one name.
 */
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { pickSummary, summaryProblems, type TreeSummary } from './model.js';
import { transientReason } from '../platform/transient.js';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';

export const TREE_KIND = 'tree';
export const BY_NAME_INDEX = 'byName';

export const treeKey = (id: string) => ({ pk: `TREE#${id}` });
export const nameKey = (name: string) => ({ pk: `NAME#${name}` });

/** The stored item of a tree: its key, its `kind` (which puts it in `byName`), its summary. */
export const treeItem = (tree: TreeSummary): Record<string, unknown> => ({ ...treeKey(tree.id), kind: TREE_KIND, ...pickSummary(tree) });

/** The item that reserves a name for one tree. */
export const nameLockItem = (name: string, treeId: string): Record<string, unknown> => ({ ...nameKey(name), treeId });

/** A stored tree read back: its summary, or why the item is damaged (for the log, never the client). */
export type StoredTree = { readonly ok: true; readonly tree: TreeSummary } | { readonly ok: false; readonly id: string; readonly problems: readonly string[] };

/**
 * Checks a stored item's shape before anything of it is returned: every summary field
 * present with its type and format, `kind` set, and the key agreeing with the id. Extra
 * attributes (the key, `kind`, anything a later version adds) never reach the summary.
 */
export const readTreeItem = (item: Record<string, unknown>): StoredTree => {
  const pk = typeof item['pk'] === 'string' ? item['pk'] : '';
  const keyId = pk.startsWith('TREE#') ? pk.slice('TREE#'.length) : pk;
  const problems = summaryProblems(item, 'stored');
  if (item['kind'] !== TREE_KIND) problems.push(`kind is not "${TREE_KIND}"`);
  if (typeof item['id'] === 'string' && pk !== `TREE#${item['id']}`) problems.push('id does not match the item key');
  if (problems.length) return { ok: false, id: keyId, problems };
  return { ok: true, tree: pickSummary(item as unknown as TreeSummary) };
};

/** Where a page of the name-ordered list starts: just after this tree. */
export interface TreePageKey {
  readonly name: string;
  readonly id: string;
}

export interface TreePage {
  readonly items: readonly StoredTree[];
  /** Set when more trees follow: the key of the last tree of this page. */
  readonly next?: TreePageKey;
}

export type CreateOutcome = 'created' | 'name-taken' | 'id-taken' | 'contended';

export type UpsertOutcome = { readonly kind: 'created' | 'updated' } | { readonly kind: 'name-held'; readonly by: string } | { readonly kind: 'contended' };

/** What the tree operations need from storage; the DynamoDB one is {@link DynamoTreeStore}. */
export interface TreeStore {
  /** The tree with this id, or `undefined` when there is none. Reads are strongly consistent. */
  get(id: string): Promise<StoredTree | undefined>;
  /** Creates the tree and reserves its name, both or neither. */
  create(tree: TreeSummary): Promise<CreateOutcome>;
  /** Up to `limit` trees in name order, after `after` when given. */
  page(limit: number, after?: TreePageKey): Promise<TreePage>;
}

/** The store could not be reached or refused for load: worth retrying later (503, not 500). */
export class StoreUnavailable extends Error {
  constructor(
    readonly operation: string,
    readonly reason: string,
  ) {
    super(`trees store unavailable during ${operation}: ${reason}`);
    this.name = 'StoreUnavailable';
  }
}

/** DynamoDB refused an ExclusiveStartKey: the cursor it came from does not fit this table. */
export class BadPageKey extends Error {
  constructor() {
    super('the page key does not fit the index');
    this.name = 'BadPageKey';
  }
}

interface CancellationReason {
  readonly Code?: string;
}

const cancellationCodes = (error: unknown): readonly (string | undefined)[] | undefined => {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: readonly CancellationReason[] }).CancellationReasons ?? [];
  return reasons.map((r) => r.Code);
};

const isContention = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'TransactionConflictException' || error.name === 'TransactionInProgressException');

/** Runs a DynamoDB call, turning "unreachable, throttled, timed out" into {@link StoreUnavailable}. */
export const sendToStore = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    const reason = transientReason(error);
    if (reason) throw new StoreUnavailable(operation, reason);
    throw error;
  }
};

/** The trees table through the Document client. */
export class DynamoTreeStore implements TreeStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  #send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return sendToStore(operation, call);
  }

  async #getItem(key: Record<string, string>): Promise<Record<string, unknown> | undefined> {
    const result = await this.#send('get', () => this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true })));
    return result.Item;
  }

  async get(id: string): Promise<StoredTree | undefined> {
    const item = await this.#getItem(treeKey(id));
    return item ? readTreeItem(item) : undefined;
  }

  async create(tree: TreeSummary): Promise<CreateOutcome> {
    try {
      await this.#send('create', () =>
        this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.tableName, Item: treeItem(tree), ConditionExpression: 'attribute_not_exists(pk)' } },
              { Put: { TableName: this.tableName, Item: nameLockItem(tree.name, tree.id), ConditionExpression: 'attribute_not_exists(pk)' } },
            ],
          }),
        ),
      );
      return 'created';
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes) {
        // The name check wins over the id check: a taken name is the caller's answer (409).
        if (codes[1] === 'ConditionalCheckFailed') return 'name-taken';
        if (codes[0] === 'ConditionalCheckFailed') return 'id-taken';
        if (codes.includes('TransactionConflict')) return 'contended';
      }
      if (isContention(error)) return 'contended';
      throw error;
    }
  }

  async page(limit: number, after?: TreePageKey): Promise<TreePage> {
    let result;
    try {
      result = await this.#send('list', () =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: BY_NAME_INDEX,
            KeyConditionExpression: 'kind = :kind',
            ExpressionAttributeValues: { ':kind': TREE_KIND },
            // One more than asked: whether a next page exists is known without a trailing empty page.
            Limit: limit + 1,
            ...(after ? { ExclusiveStartKey: { ...treeKey(after.id), kind: TREE_KIND, name: after.name } } : {}),
          }),
        ),
      );
    } catch (error) {
      if (after && error instanceof Error && error.name === 'ValidationException') throw new BadPageKey();
      throw error;
    }
    const raw = result.Items ?? [];
    const items = raw.slice(0, limit);
    const more = raw.length > limit || result.LastEvaluatedKey !== undefined;
    if (!more) return { items: items.map(readTreeItem) };
    const last = items.at(-1) ?? result.LastEvaluatedKey;
    const pk = typeof last?.['pk'] === 'string' ? last['pk'] : '';
    const next = { name: String(last?.['name'] ?? ''), id: pk.slice('TREE#'.length) };
    return { items: items.map(readTreeItem), next };
  }

  /**
   * Writes a tree as given (seeding), with `extra` attributes beside the summary (its version
   * contents): creates it or replaces the stored one, moves its name
   * lock when the name changed, and refuses a name that another tree holds. Conditional on
   * the state read first, so a concurrent writer makes it `contended` rather than wrong.
   */
  async upsert(tree: TreeSummary, extra: Readonly<Record<string, unknown>> = {}): Promise<UpsertOutcome> {
    const existing = await this.#getItem(treeKey(tree.id));
    const oldName = typeof existing?.['name'] === 'string' ? existing['name'] : undefined;
    const treeCondition = !existing
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : oldName !== undefined
        ? { ConditionExpression: '#name = :oldName', ExpressionAttributeNames: { '#name': 'name' }, ExpressionAttributeValues: { ':oldName': oldName } }
        : { ConditionExpression: 'attribute_exists(pk)' };
    const releaseOld = oldName !== undefined && oldName !== tree.name;
    try {
      await this.#send('upsert', () =>
        this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.tableName, Item: { ...extra, ...treeItem(tree) }, ...treeCondition } },
              {
                Put: {
                  TableName: this.tableName,
                  Item: nameLockItem(tree.name, tree.id),
                  ConditionExpression: 'attribute_not_exists(pk) OR treeId = :id',
                  ExpressionAttributeValues: { ':id': tree.id },
                },
              },
              ...(releaseOld
                ? [
                    {
                      Delete: {
                        TableName: this.tableName,
                        Key: nameKey(oldName),
                        ConditionExpression: 'attribute_not_exists(pk) OR treeId = :id',
                        ExpressionAttributeValues: { ':id': tree.id },
                      },
                    },
                  ]
                : []),
            ],
          }),
        ),
      );
      return { kind: existing ? 'updated' : 'created' };
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[1] === 'ConditionalCheckFailed') {
        const lock = await this.#getItem(nameKey(tree.name));
        const by = lock?.['treeId'];
        // The lock vanished or is ours by now: another writer moved it; try again.
        if (typeof by !== 'string' || by === tree.id) return { kind: 'contended' };
        return { kind: 'name-held', by };
      }
      if (codes || isContention(error)) return { kind: 'contended' };
      throw error;
    }
  }
}

/** The tree store over `tableName` (default: `TREES_TABLE`), through the container's Document client: how handlers get one. */
export const createTreeStore = (client: DynamoDBDocumentClient = documentClient, tableName: string = requiredEnv('TREES_TABLE')): DynamoTreeStore =>
  new DynamoTreeStore(client, tableName);
