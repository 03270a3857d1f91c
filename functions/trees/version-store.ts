/**
 * Versions in DynamoDB, in the trees table beside the tree items (store.ts):
 *
 * - the tree item gains `contents` (one `{ id, wireBytes, ordinal }` per entry of `versions`,
 *   same order; `id` is `""` while a version holds nothing yet, as the versions of a new or
 *   seeded tree; `ordinal` is the version's place among the versions of its label, given once
 *   and kept: `label~2` names ordinal 2 whatever happens to ordinal 1) and `revision` (a counter
 *   every change of the tree moves);
 * - a version's content is the item `pk = "CONTENT#<treeId>#<id>"`: `body` (the JSON text of
 *   `{ variables, root }`, kept as text so that rule values may nest deeper than DynamoDB's 32
 *   levels of maps), `created`, `createdBy`, `lastUpdated`, `lastUpdatedBy`.
 *
 * Every change is one transaction conditioned on the tree's `revision` as read: two writers
 * that read the same revision cannot both commit, whatever they change, so no check made on
 * the read (unique labels, devices, rule ids, limits) is ever undone by a concurrent write. A
 * content item nothing refers to (an import that lost its name race, a deleted tree's content
 * not yet cleaned up) is never read: every read starts at the tree item. An import that fails
 * removes the content items it wrote (unless the outcome of its last write cannot be read back).
 */
import { BatchWriteCommand, GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemBytes, valueBytes } from '../platform/item-size.js';
import type { Version } from './config-model.js';
import { transportBytes } from './config-checks.js';
import { readTreeItem, sendToStore, treeItem, treeKey, nameKey, nameLockItem, StoreUnavailable, type StoredTree } from './store.js';
import type { TreeSummary } from './model.js';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';

/** Where a version's content is stored; `id === ""`: it holds nothing yet. */
export interface ContentRef {
  readonly id: string;
  /** The content as an export carries it, in transported bytes ({@link contentWireBytes}). */
  readonly wireBytes: number;
  /** 1 for the first version of its label, n for the one addressed `label~n`; never renumbered. */
  readonly ordinal: number;
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

/** A content as an export lists it (metadata included), in transported bytes: what it adds to the tree's transport size. */
export const contentWireBytes = (c: VersionContent): number =>
  transportBytes(
    JSON.stringify({
      variables: c.variables,
      root: c.root,
      created: c.created,
      createdBy: c.createdBy,
      lastUpdated: c.lastUpdated,
      lastUpdatedBy: c.lastUpdatedBy,
    }),
  );

/** The size of a content's item as DynamoDB counts it. */
export const contentItemBytes = (treeId: string, id: string, c: VersionContent): number => itemBytes(contentItem(treeId, id, c));

/**
 * Ordinals by occurrence: the i-th version of a label gets i (an import, a seed file, a tree
 * stored before ordinals were kept, whose addresses were computed that way).
 */
export const occurrenceOrdinals = (labels: readonly string[]): number[] => {
  const seen = new Map<string, number>();
  return labels.map((label) => {
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    return n;
  });
};

const stateItem = (summary: TreeSummary, contents: readonly ContentRef[], revision: number): Record<string, unknown> => ({
  ...treeItem(summary),
  contents: contents.map((c) => ({ id: c.id, wireBytes: c.wireBytes, ordinal: c.ordinal })),
  revision,
});

/** The size of the tree item as DynamoDB counts it (its labels, names and refs). */
export const treeItemBytes = (summary: TreeSummary, contents: readonly ContentRef[]): number =>
  itemBytes(stateItem(summary, contents, Number.MAX_SAFE_INTEGER));

/**
 * A transported size for refs written before it was kept (`bytes`: the stored JSON text of
 * `{ variables, root }`): escaping at most doubles a JSON text, and the metadata is allowed for.
 * An estimate from above, replaced by the exact count when the version is next written.
 */
const LEGACY_METADATA_BYTES = 2048;
const legacyWireBytes = (bytes: number): number => (bytes === 0 ? 0 : 2 * bytes + LEGACY_METADATA_BYTES);

type RawRef = { readonly id?: unknown; readonly wireBytes?: unknown; readonly bytes?: unknown; readonly ordinal?: unknown };

/** The refs of a tree item, ordinals filled in by occurrence for refs stored without one; `undefined` when damaged. */
const readRefs = (labels: readonly string[], raw: unknown): ContentRef[] | undefined => {
  if (raw === undefined) raw = labels.map(() => ({ id: '', wireBytes: 0 }));
  if (!Array.isArray(raw) || raw.length !== labels.length) return undefined;
  const byOccurrence = occurrenceOrdinals(labels);
  const refs: ContentRef[] = [];
  for (const [i, r] of (raw as RawRef[]).entries()) {
    if (typeof r !== 'object' || r === null || typeof r.id !== 'string') return undefined;
    const wireBytes = typeof r.wireBytes === 'number' ? r.wireBytes : typeof r.bytes === 'number' ? legacyWireBytes(r.bytes) : undefined;
    const ordinal = r.ordinal === undefined ? byOccurrence[i] : r.ordinal;
    if (wireBytes === undefined || typeof ordinal !== 'number' || !Number.isInteger(ordinal) || ordinal < 1) return undefined;
    refs.push({ id: r.id, wireBytes, ordinal });
  }
  const addresses = new Set(refs.map((r, i) => `${r.ordinal}:${labels[i]}`));
  return addresses.size === refs.length ? refs : undefined;
};

/** Reads the version fields of a tree item beside its summary; damaged when they do not fit. */
export const readTreeState = (item: Record<string, unknown>): LoadedTree => {
  const stored = readTreeItem(item);
  if (!stored.ok) return stored;
  const { tree } = stored;
  const revision = typeof item['revision'] === 'number' ? item['revision'] : 0;
  const contents = readRefs(tree.versions, item['contents']);
  if (!contents) return { ok: false, id: tree.id, problems: ['contents does not match versions'] };
  return { ok: true, state: { summary: tree, contents, revision } };
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
              {
                Put: {
                  TableName: this.tableName,
                  Item: stateItem(change.summary, change.contents, change.before.revision + 1),
                  ...revisionCondition(change.before.revision),
                },
              },
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
    try {
      // The contents first: nothing refers to them until the tree item below exists.
      await this.#batch(put.map((p) => ({ PutRequest: { Item: contentItem(treeId, p.id, p.content) } })));
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
      const outcome = await this.#failedCreate(treeId, error);
      if (outcome === 'created') return 'created';
      // Unless the tree may exist after all, nothing may refer to what was written: remove it.
      if (outcome !== 'unknown')
        await this.#removeContents(
          treeId,
          put.map((p) => p.id),
        );
      if (outcome === 'name-taken' || outcome === 'contended') return outcome;
      throw error;
    }
  }

  /**
   * What a failed create left: refused by a condition (`name-taken`, or `contended` for the id
   * or a colliding writer), refused otherwise (`refused`), or, when DynamoDB did not answer, what
   * reading the tree item back shows (`created`, `refused`; `unknown` when it cannot be read).
   */
  async #failedCreate(treeId: string, error: unknown): Promise<'created' | 'name-taken' | 'contended' | 'refused' | 'unknown'> {
    if (isCancelledOrConflict(error)) {
      const codes = ((error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
      if (codes[1] === 'ConditionalCheckFailed') return 'name-taken';
      return codes.every((c) => c === 'None' || c === 'ConditionalCheckFailed' || c === 'TransactionConflict') ? 'contended' : 'refused';
    }
    if (!(error instanceof StoreUnavailable)) return 'refused';
    try {
      return (await this.loadTree(treeId)) ? 'created' : 'refused';
    } catch {
      return 'unknown';
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
    await this.#removeContents(
      treeId,
      state.contents.map((c) => c.id).filter((id) => id !== ''),
    );
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

  /** BatchWrite in chunks ({@link batchChunks}), resending what DynamoDB leaves unprocessed. */
  async #batch(requests: readonly Record<string, unknown>[]): Promise<void> {
    for (const chunk of batchChunks(requests)) {
      let pending: Record<string, unknown>[] = chunk;
      for (let attempt = 0; pending.length && attempt < 8; attempt++) {
        if (attempt) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const out = await this.#send('batch', () => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending as never } })));
        pending = (out.UnprocessedItems?.[this.tableName] ?? []) as Record<string, unknown>[];
      }
      if (pending.length) throw new StoreUnavailable('batch', 'unprocessed items after retries');
    }
  }
}

/** Items per BatchWrite: DynamoDB's limit. */
const BATCH_ITEMS = 25;
/**
 * Bytes per BatchWrite: far below DynamoDB's 16 MB, so that a chunk of large versions is sent
 * within the client's request timeout (`DYNAMODB_CLIENT_LIMITS`) rather than timed out and
 * retried whole.
 */
const BATCH_BYTES = 1024 * 1024;

/** Write requests in chunks of at most {@link BATCH_ITEMS} items and {@link BATCH_BYTES} bytes (one item at least). */
export const batchChunks = (requests: readonly Record<string, unknown>[]): Record<string, unknown>[][] => {
  const chunks: Record<string, unknown>[][] = [];
  let chunk: Record<string, unknown>[] = [];
  let bytes = 0;
  for (const request of requests) {
    const size = valueBytes(request);
    if (chunk.length && (chunk.length === BATCH_ITEMS || bytes + size > BATCH_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(request);
    bytes += size;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
};

/** Writes a content item on its own (seeding, which then writes the tree item that refers to it). */
export const putContent = (client: DynamoDBDocumentClient, tableName: string, treeId: string, id: string, content: VersionContent) =>
  client.send(new PutCommand({ TableName: tableName, Item: contentItem(treeId, id, content) }));

/** The version store over `tableName` (default: `TREES_TABLE`), through the container's Document client: how handlers get one. */
export const createVersionStore = (client: DynamoDBDocumentClient = documentClient, tableName: string = requiredEnv('TREES_TABLE')): DynamoVersionStore =>
  new DynamoVersionStore(client, tableName);
