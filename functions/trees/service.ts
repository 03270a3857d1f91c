/**
 * The tree operations, free of Lambda and of DynamoDB: each takes its store (and clock, id
 * source) as arguments and throws the typed errors that the HTTP stack renders.
 */
import { randomBytes } from 'node:crypto';
import { logger } from '../platform/logger.js';
import { refuseBadNames } from '../platform/names.js';
import { BadRequest, Conflict, InternalError, NotFound, ServiceUnavailable } from '../platform/problem.js';
import { invalidCursor } from '../platform/cursor.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { TreeSummary } from './model.js';
import { BadPageKey, StoreUnavailable, type StoredTree, type TreeStore } from './store.js';

/** Page sizes of the list: `limit` from 1 to 100, 50 when absent. The route's query schema says the same. */
export const PAGE_LIMIT = { min: 1, max: 100, default: 50 } as const;

/** The body of a create request, after validation. */
export interface CreateTreeInput {
  readonly name: string;
  readonly deviceType: string;
  readonly description?: string;
}

export interface CreateDeps {
  readonly store: TreeStore;
  readonly now: () => Date;
  readonly newId: () => string;
  /** Waits between attempts when writers contend; injectable so tests need not wait. */
  readonly pause?: (ms: number) => Promise<void>;
}

/** A fresh tree id: 96 random bits as 24 lowercase hexadecimal characters. */
export const newTreeId = (): string => randomBytes(12).toString('hex');

/** The label every new tree starts with. */
export const INITIAL_VERSION = 'initial';

/** How many times a create is tried when transactions collide or (astronomically rarely) an id is reused. */
const CREATE_ATTEMPTS = 5;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a store call, turning "the store is unreachable" into a 503 the client may retry. */
export const storeCall = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    if (error instanceof StoreUnavailable) {
      logger.warn('trees store unavailable', { storeOperation: error.operation, reason: error.reason });
      throw new ServiceUnavailable('The tree store is unavailable at the moment; try again shortly.');
    }
    throw error;
  }
};

const damaged = (trees: readonly Extract<StoredTree, { ok: false }>[]): InternalError =>
  new InternalError('damaged tree item', {
    treeIds: trees.map((t) => t.id),
    problems: Object.fromEntries(trees.map((t) => [t.id, t.problems])),
  });

/** The summary of one tree; 404 when unknown, 500 (logged with the id) when its item is damaged. */
export const getTreeSummary = async (store: TreeStore, id: string): Promise<TreeSummary> => {
  const stored = await storeCall(() => store.get(id));
  if (!stored) throw new NotFound(`No tree has the id ${id}.`);
  if (!stored.ok) throw damaged([stored]);
  return stored.tree;
};

/**
 * Creates a tree named `input.name` with versions `["initial"]` and `created === lastUpdated`.
 * 409 when the name is taken, however close two creates run: the store's conditional
 * transaction decides, not a read before the write.
 */
export const createTree = async (deps: CreateDeps, input: CreateTreeInput): Promise<TreeSummary> => {
  refuseBadNames('body', { name: input.name, deviceType: input.deviceType });
  const pause = deps.pause ?? sleep;
  for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
    const at = deps.now().toISOString();
    const tree: TreeSummary = {
      id: deps.newId(),
      name: input.name,
      deviceType: input.deviceType,
      versions: [INITIAL_VERSION],
      created: at,
      lastUpdated: at,
      ...(input.description !== undefined ? { description: input.description } : {}),
    };
    const outcome = await storeCall(() => deps.store.create(tree));
    switch (outcome) {
      case 'created':
        logger.info('tree created', { treeId: tree.id });
        return tree;
      case 'name-taken':
        throw new Conflict(`A tree named "${input.name}" already exists.`, 'tree-name-taken');
      case 'id-taken':
        // A fresh id is drawn on the next attempt.
        continue;
      case 'contended':
        // Another transaction held the same name lock: back off with jitter, then ask again.
        if (attempt < CREATE_ATTEMPTS) await pause(20 * 2 ** attempt + Math.floor(Math.random() * 50));
        continue;
    }
  }
  logger.warn('tree create gave up after contention', { attempts: CREATE_ATTEMPTS });
  throw new ServiceUnavailable('The tree could not be created because of concurrent writes; try again.');
};

export interface ListQuery {
  readonly limit: number;
  readonly cursor?: string;
}

export interface TreeList {
  readonly items: readonly TreeSummary[];
  /** The `cursor` of the next page; absent on the last page. */
  readonly next?: string;
}

/** One page of tree summaries in name order. */
export const listTreeSummaries = async (store: TreeStore, query: ListQuery): Promise<TreeList> => {
  if (!Number.isInteger(query.limit) || query.limit < PAGE_LIMIT.min || query.limit > PAGE_LIMIT.max) {
    throw new BadRequest(`The limit query parameter must be an integer from ${PAGE_LIMIT.min} to ${PAGE_LIMIT.max}.`, [
      { in: 'query', field: 'limit', message: `must be an integer from ${PAGE_LIMIT.min} to ${PAGE_LIMIT.max}` },
    ]);
  }
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (query.cursor !== undefined && !after) throw invalidCursor();
  let page;
  try {
    page = await storeCall(() => store.page(query.limit, after));
  } catch (error) {
    if (error instanceof BadPageKey) throw invalidCursor();
    throw error;
  }
  const broken = page.items.filter((t): t is Extract<StoredTree, { ok: false }> => !t.ok);
  if (broken.length) throw damaged(broken);
  const items = page.items.flatMap((t) => (t.ok ? [t.tree] : []));
  return { items, ...(page.next ? { next: encodeCursor(page.next) } : {}) };
};
