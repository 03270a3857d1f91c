/**
 * Versions in DynamoDB, in the trees table beside the tree items (store.ts):
 *
 * - the tree item gains `contents` (one `{ id, bytes }` per entry of `versions`, same order;
 *   `id` is `""` while a version holds nothing yet, as the versions of a new or seeded tree) and
 *   `revision` (a counter every change of the tree moves);
 * - a version's content is the item `pk = "CONTENT#<treeId>#<id>"`: `body` (the JSON text of
 *   `{ variables, root }`, kept as text so that rule values may nest deeper than DynamoDB's 32
 *   levels of maps), `created`, `createdBy`, `lastUpdated`, `lastUpdatedBy`.
 *
 * Every change is one transaction conditioned on the tree's `revision` as read: two writers
 * that read the same revision cannot both commit, whatever they change, so no check made on
 * the read (unique labels, devices, rule ids, limits) is ever undone by a concurrent write. A
 * content item nothing refers to (an import that lost its name race, a deleted tree's content
 * not yet cleaned up) is never read: every read starts at the tree item.
 */
import { BatchWriteCommand, GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Version } from './config.js';
import { readTreeItem, sendToStore, treeItem, treeKey, nameKey, nameLockItem, StoreUnavailable, type StoredTree } from './store.js';
import type { TreeSummary } from './model.js';

/** Where a version's content is stored; `id === ""`: it holds nothing yet. */
export interface ContentRef {
  readonly id: string;
  /** Size of the content's JSON text (for the tree's size limit). */
  readonly bytes: number;
}

/** A tree as the version operations read it. */
export interface TreeState {
  readonly summary: TreeSummary;
  /** One per entry of `summary.versions`, same order. */
  readonly contents: readonly ContentRef[];
  /** 0 for a tree no version operation has changed yet. */
  readonly revision: number;
}

/** A version's stored content: the version but its label (the tree item keeps labels). */
export type VersionContent = Omit<Version, 'name'>;

/** One change of a tree: its new summary and refs, the contents to write and those to remove. */
export interface TreeChange {
  readonly before: TreeState;
  readonly summary: TreeSummary;
  readonly contents: readonly ContentRef[];
  readonly put: readonly { readonly id: string; readonly content: VersionContent }[];
  readonly remove: readonly string[];
}

export type LoadedTree = { readonly ok: true; readonly state: TreeState } | Extract<StoredTree, { ok: false }>;

/** What the version operations need from storage; the DynamoDB one is {@link DynamoVersionStore}. */
export interface VersionStore {
  loadTree(treeId: string): Promise<LoadedTree | undefined>;
  loadContent(treeId: string, contentId: string): Promise<VersionContent | undefined>;
  /** Applies the change when the tree is still at `before.revision`: `contended` otherwise. */
  commit(change: TreeChange): Promise<'committed' | 'contended'>;
  /** Creates a tree with its contents (an import): the tree appears with all of it or not at all. */
  create(tree: TreeState, put: TreeChange['put']): Promise<'created' | 'name-taken' | 'contended'>;
  /** Deletes the tree and its name lock when still at `state.revision`, then its contents. */
  delete(state: TreeState): Promise<'deleted' | 'contended'>;
}

export const contentKey = (treeId: string, contentId: string) => ({ pk: `CONTENT#${treeId}#${contentId}` });

const contentItem = (treeId: string, id: string, c: VersionContent): Record<string, unknown> => ({
  ...contentKey(treeId, id),
  body: JSON.stringify({ variables: c.variables, root: c.root }),
  created: c.created,
  createdBy: c.createdBy,
  lastUpdated: c.lastUpdated,
  lastUpdatedBy: c.lastUpdatedBy,
});

/** The JSON text size of a content, as the tree's size limit counts it. */
export const contentBytes = (c: Pick<VersionContent, 'variables' | 'root'>): number =>
  Buffer.byteLength(JSON.stringify({ variables: c.variables, root: c.root }), 'utf8');

const stateItem = (summary: TreeSummary, contents: readonly ContentRef[], revision: number): Record<string, unknown> => ({
  ...treeItem(summary),
  contents: contents.map((c) => ({ id: c.id, bytes: c.bytes })),
  revision,
});

/** Reads the version fields of a tree item beside its summary; damaged when they do not fit. */
export const readTreeState = (item: Record<string, unknown>): LoadedTree => {
  const stored = readTreeItem(item);
  if (!stored.ok) return stored;
  const { tree } = stored;
  const raw = item['contents'];
  const revision = typeof item['revision'] === 'number' ? item['revision'] : 0;
  if (raw === undefined) return { ok: true, state: { summary: tree, contents: tree.versions.map(() => ({ id: '', bytes: 0 })), revision } };
  const fits =
    Array.isArray(raw) &&
    raw.length === tree.versions.length &&
    raw.every((c: unknown) => typeof c === 'object' && c !== null && typeof (c as ContentRef).id === 'string' && typeof (c as ContentRef).bytes === 'number');
  if (!fits) return { ok: false, id: tree.id, problems: ['contents does not match versions'] };
  return { ok: true, state: { summary: tree, contents: (raw as ContentRef[]).map((c) => ({ id: c.id, bytes: c.bytes })), revision } };
};

const revisionCondition = (revision: number) =>
  revision === 0
    ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#rev)', ExpressionAttributeNames: { '#rev': 'revision' } }
    : { ConditionExpression: '#rev = :rev', ExpressionAttributeNames: { '#rev': 'revision' }, ExpressionAttributeValues: { ':rev': revision } };

const isCancelledOrConflict = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === 'TransactionCanceledException' || error.name === 'TransactionConflictException' || error.name === 'TransactionInProgressException');

/** The trees table through the Document client. */
export class DynamoVersionStore implements VersionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  #send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return sendToStore(operation, call);
  }

  async loadTree(treeId: string): Promise<LoadedTree | undefined> {
    const out = await this.#send('get', () => this.client.send(new GetCommand({ TableName: this.tableName, Key: treeKey(treeId), ConsistentRead: true })));
    return out.Item ? readTreeState(out.Item) : undefined;
  }

  async loadContent(treeId: string, contentId: string): Promise<VersionContent | undefined> {
    const out = await this.#send('get', () =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: contentKey(treeId, contentId), ConsistentRead: true })),
    );
    const item = out.Item;
    if (!item || typeof item['body'] !== 'string') return undefined;
    const body = JSON.parse(item['body']) as Pick<VersionContent, 'variables' | 'root'>;
    return {
      variables: body.variables,
      root: body.root,
      created: String(item['created']),
      createdBy: String(item['createdBy']),
      lastUpdated: String(item['lastUpdated']),
      lastUpdatedBy: String(item['lastUpdatedBy']),
    };
  }

  async commit(change: TreeChange): Promise<'committed' | 'contended'> {
    const treeId = change.summary.id;
    try {
      await this.#send('commit', () =>
        this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.tableName, Item: stateItem(change.summary, change.contents, change.before.revision + 1), ...revisionCondition(change.before.revision) } },
              ...change.put.map((p) => ({ Put: { TableName: this.tableName, Item: contentItem(treeId, p.id, p.content) } })),
              ...change.remove.map((id) => ({ Delete: { TableName: this.tableName, Key: contentKey(treeId, id) } })),
            ],
          }),
        ),
      );
      return 'committed';
    } catch (error) {
      // A failed revision check or a colliding transaction: the caller reads again and retries.
      if (isCancelledOrConflict(error)) return 'contended';
      throw error;
    }
  }

  async create(tree: TreeState, put: TreeChange['put']): Promise<'created' | 'name-taken' | 'contended'> {
    const treeId = tree.summary.id;
    // The contents first: nothing refers to them until the tree item below exists.
    await this.#batch(put.map((p) => ({ PutRequest: { Item: contentItem(treeId, p.id, p.content) } })));
    try {
      await this.#send('create', () =>
        this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.tableName, Item: stateItem(tree.summary, tree.contents, 1), ConditionExpression: 'attribute_not_exists(pk)' } },
              { Put: { TableName: this.tableName, Item: nameLockItem(tree.summary.name, treeId), ConditionExpression: 'attribute_not_exists(pk)' } },
            ],
          }),
        ),
      );
      return 'created';
    } catch (error) {
      if (!isCancelledOrConflict(error)) throw error;
      await this.#removeContents(treeId, put.map((p) => p.id));
      const reasons = (error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons ?? [];
      return reasons[1]?.Code === 'ConditionalCheckFailed' ? 'name-taken' : 'contended';
    }
  }

  async delete(state: TreeState): Promise<'deleted' | 'contended'> {
    const treeId = state.summary.id;
    try {
      await this.#send('delete', () =>
        this.client.send(
          new TransactWriteCommand({
            TransactItems: [
              { Delete: { TableName: this.tableName, Key: treeKey(treeId), ...revisionCondition(state.revision) } },
              {
                Delete: {
                  TableName: this.tableName,
                  Key: nameKey(state.summary.name),
                  ConditionExpression: 'attribute_not_exists(pk) OR treeId = :id',
                  ExpressionAttributeValues: { ':id': treeId },
                },
              },
            ],
          }),
        ),
      );
    } catch (error) {
      if (isCancelledOrConflict(error)) return 'contended';
      throw error;
    }
    await this.#removeContents(treeId, state.contents.map((c) => c.id).filter((id) => id !== ''));
    return 'deleted';
  }

  /** Removes content items nothing refers to any more; one left behind is harmless (never read). */
  async #removeContents(treeId: string, ids: readonly string[]): Promise<void> {
    try {
      await this.#batch(ids.map((id) => ({ DeleteRequest: { Key: contentKey(treeId, id) } })));
    } catch {
      // Best effort: the tree item no longer names these items.
    }
  }

  /** BatchWrite in chunks of 25 (DynamoDB's limit), resending what DynamoDB leaves unprocessed. */
  async #batch(requests: readonly Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < requests.length; i += 25) {
      let pending: Record<string, unknown>[] = requests.slice(i, i + 25);
      for (let attempt = 0; pending.length && attempt < 8; attempt++) {
        if (attempt) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const out = await this.#send('batch', () => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending as never } })));
        pending = (out.UnprocessedItems?.[this.tableName] ?? []) as Record<string, unknown>[];
      }
      if (pending.length) throw new StoreUnavailable('batch', 'unprocessed items after retries');
    }
  }
}

/** Writes a content item on its own (seeding, which then writes the tree item that refers to it). */
export const putContent = (client: DynamoDBDocumentClient, tableName: string, treeId: string, id: string, content: VersionContent) =>
  client.send(new PutCommand({ TableName: tableName, Item: contentItem(treeId, id, content) }));
