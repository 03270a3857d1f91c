/**
 * A tree's exemptions in DynamoDB, in the compliance table (env `COMPLIANCE_TABLE`), one
 * partition per tree:
 *
 * - An exemption: `pk = "EXEMPTIONS#<treeId>"`, `sk = "E#<exemptionId>"`, its fields, `untilMs`
 *   (`until` in epoch milliseconds: offsets make the text unfit to compare) and `revision`
 *   (every replace and delete is conditional on the one read before it).
 * - The count: `pk` the same, `sk = "COUNT"`, `count`: every create adds one under the
 *   condition that the tree holds fewer than {@link EXEMPTION_LIMITS.perTree}, every delete
 *   takes one away, in the same transaction, so no race passes the limit.
 *
 * Exemption ids begin with their creation time (see {@link newExemptionId}): the partition read
 * backwards lists the newest first. Every write is one transaction with a condition that the
 * tree exists (trees table) and with its changelog entry (kind `tree`, name the treeId): all
 * land, or none.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';
import { Conflict, ContentTooLarge, NotFound, ServiceUnavailable } from '../platform/problem.js';
import { storeCaller } from '../platform/transient.js';
import { changelogPut, changelogTable, diffFields, type ChangeAction } from '../runtime/changelog.js';
import { treeKey } from '../trees/store.js';
import { EXEMPTION_LIMITS, type Exemption, type ExemptionSource } from './model.js';

export const exemptionsPk = (treeId: string): string => `EXEMPTIONS#${treeId}`;
const exemptionSk = (exemptionId: string): string => `E#${exemptionId}`;
const COUNT_SK = 'COUNT';

/**
 * A new exemption id: 12 hex digits of the creation time in milliseconds, then 48 random bits.
 * Ids sort by creation (the list's order); two made in one millisecond differ in the random part.
 */
export const newExemptionId = (now: Date): string => `${now.getTime().toString(16).padStart(12, '0').slice(-12)}${randomBytes(6).toString('hex')}`;

/** An exemption as stored: what the routes show, and its revision. */
export type StoredExemption = Exemption & { readonly revision: number };

/** The exemption changed between its read and this write: 409 `changed`, read it again. */
export class ExemptionChanged extends Conflict {
  constructor() {
    super('The exemption changed while this request was handled; read it again and retry.', 'changed');
  }
}

/** The user's fields of an exemption as the changelog keeps them: the device list as its count and SHA-256, as plans do. */
const auditedFields = (e: Exemption): Record<string, unknown> => ({
  ruleId: e.ruleId,
  ...(e.devices ? { devices: { count: e.devices.length, sha256: createHash('sha256').update(JSON.stringify(e.devices)).digest('hex') } } : {}),
  ...(e.selector ? { selector: e.selector } : {}),
  until: e.until,
  reason: e.reason,
});

/** The changes of an entry: each field under the exemption's id (`<exemptionId>.until`). */
const changesOf = (id: string, before: Exemption | undefined, after: Exemption | undefined) =>
  diffFields(before && { [id]: auditedFields(before) }, after && { [id]: auditedFields(after) });

const toExemption = (item: Record<string, unknown>): StoredExemption => {
  const { pk: _pk, sk: _sk, untilMs: _untilMs, ...exemption } = item;
  return exemption as unknown as StoredExemption;
};

const cancelled = (error: unknown): readonly string[] | undefined =>
  error instanceof Error && error.name === 'TransactionCanceledException'
    ? ((error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None')
    : undefined;

export interface ExemptionPage {
  readonly items: readonly StoredExemption[];
  /** The last exemption's id when more follow. */
  readonly after?: string;
}

/** Bytes of exemptions one page holds at most: a page of exemptions of 1,000 long device names each stays inside Lambda's 6 MB answer. */
export const PAGE_BYTES = 4_000_000;

export class ExemptionStore implements ExemptionSource {
  constructor(
    private readonly client: Pick<DynamoDBDocumentClient, 'send'>,
    private readonly tableName: string,
    private readonly treesTable: string,
    private readonly changelog: () => string = changelogTable,
  ) {}

  readonly #send = storeCaller('compliance store');

  #entry(treeId: string, action: ChangeAction, at: string, by: string, changes: ReturnType<typeof diffFields>) {
    return changelogPut({ kind: 'tree', name: treeId, action, at, by, changes }, this.changelog());
  }

  #treeExists(treeId: string) {
    return { ConditionCheck: { TableName: this.treesTable, Key: treeKey(treeId), ConditionExpression: 'attribute_exists(pk)' } };
  }

  #count(treeId: string, delta: 1 | -1) {
    return {
      Update: {
        TableName: this.tableName,
        Key: { pk: exemptionsPk(treeId), sk: COUNT_SK },
        UpdateExpression: 'ADD #count :delta',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':delta': delta, ...(delta > 0 ? { ':limit': EXEMPTION_LIMITS.perTree } : {}) },
        ...(delta > 0 ? { ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit' } : {}),
      },
    };
  }

  #item(e: StoredExemption) {
    return { pk: exemptionsPk(e.treeId), sk: exemptionSk(e.exemptionId), ...e, untilMs: Date.parse(e.until) };
  }

  /**
   * Runs a write whose first item checks that the tree exists and whose second is the
   * exemption: a refusal names which failed (the tree gone: 404; the count at its limit: 413;
   * the exemption changed: 409).
   */
  async #transact(treeId: string, items: readonly object[], countAt?: number): Promise<void> {
    try {
      await this.#send(() => this.client.send(new TransactWriteCommand({ TransactItems: items as never })));
    } catch (error) {
      const codes = cancelled(error);
      if (!codes) throw error;
      if (codes[0] === 'ConditionalCheckFailed') throw new NotFound(`No tree has the id '${treeId}'.`);
      if (countAt !== undefined && codes[countAt] === 'ConditionalCheckFailed') {
        throw new ContentTooLarge(`Tree '${treeId}' already holds ${EXEMPTION_LIMITS.perTree} exemptions; delete one (expired ones count until deleted).`);
      }
      if (codes.includes('ConditionalCheckFailed')) throw new ExemptionChanged();
      throw Object.assign(new ServiceUnavailable('The compliance store could not write the exemption now; retry later.'), { cause: error });
    }
  }

  /** One exemption (strongly consistent); undefined when there is none. */
  async get(treeId: string, exemptionId: string): Promise<StoredExemption | undefined> {
    const out = await this.#send(() =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk: exemptionsPk(treeId), sk: exemptionSk(exemptionId) }, ConsistentRead: true })),
    );
    return out.Item ? toExemption(out.Item) : undefined;
  }

  /**
   * The tree's exemptions newest first, `limit` at most, older than `after` (exclusive); a page
   * also ends before it would pass {@link PAGE_BYTES} (it always holds one).
   */
  async list(treeId: string, limit: number, after?: string): Promise<ExemptionPage> {
    const items: StoredExemption[] = [];
    let bytes = 0;
    let more = false;
    let startKey: Record<string, unknown> | undefined = after ? { pk: exemptionsPk(treeId), sk: exemptionSk(after) } : undefined;
    do {
      const out = await this.#query(treeId, { Limit: limit + 1 - items.length, startKey });
      for (const item of out.Items ?? []) {
        const size = Buffer.byteLength(JSON.stringify(item), 'utf8');
        if (items.length === limit || (items.length > 0 && bytes + size > PAGE_BYTES)) {
          more = true;
          break;
        }
        bytes += size;
        items.push(toExemption(item));
      }
      startKey = out.LastEvaluatedKey;
    } while (!more && startKey && items.length < limit);
    // DynamoDB may stop at the limit with a key though nothing follows: only an item seen past the page says more follow.
    if (!more && startKey) more = (await this.#query(treeId, { Limit: 1, startKey })).Items?.length === 1;
    return { items, ...(more ? { after: items.at(-1)!.exemptionId } : {}) };
  }

  #query(treeId: string, page: { readonly Limit?: number; readonly startKey?: Record<string, unknown> | undefined }, filter?: { readonly at: number }) {
    return this.#send(() =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)',
          ExpressionAttributeValues: { ':pk': exemptionsPk(treeId), ':e': 'E#', ...(filter ? { ':at': filter.at } : {}) },
          ...(filter ? { FilterExpression: 'untilMs > :at' } : {}),
          ScanIndexForward: false,
          ConsistentRead: true,
          ...(page.Limit ? { Limit: page.Limit } : {}),
          ...(page.startKey ? { ExclusiveStartKey: page.startKey } : {}),
        }),
      ),
    );
  }

  /** Every exemption of the tree whose `until` is after `at`, newest first (what a batch start freezes). */
  async active(treeId: string, at: Date): Promise<readonly Exemption[]> {
    const found: Exemption[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.#query(treeId, { startKey }, { at: at.getTime() });
      for (const item of out.Items ?? []) {
        const { revision: _revision, ...exemption } = toExemption(item);
        found.push(exemption);
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return found;
  }

  /** Creates an exemption, counted against the tree's limit, with its `exemption-created` entry. */
  async create(e: StoredExemption): Promise<void> {
    await this.#transact(
      e.treeId,
      [
        this.#treeExists(e.treeId),
        { Put: { TableName: this.tableName, Item: this.#item(e), ConditionExpression: 'attribute_not_exists(pk)' } },
        this.#count(e.treeId, 1),
        this.#entry(e.treeId, 'exemption-created', e.createdAt, e.createdBy, changesOf(e.exemptionId, undefined, e)),
      ],
      2,
    );
  }

  /** Replaces `before` (as read) with `after` (its revision one more), with an `exemption-replaced` entry. */
  async replace(before: StoredExemption, after: StoredExemption): Promise<void> {
    await this.#transact(after.treeId, [
      this.#treeExists(after.treeId),
      {
        Put: {
          TableName: this.tableName,
          Item: this.#item(after),
          ConditionExpression: 'revision = :before',
          ExpressionAttributeValues: { ':before': before.revision },
        },
      },
      this.#entry(after.treeId, 'exemption-replaced', after.updatedAt, after.updatedBy, changesOf(after.exemptionId, before, after)),
    ]);
  }

  /** Deletes `e` (as read), uncounted, with an `exemption-deleted` entry. */
  async delete(e: StoredExemption, at: string, by: string): Promise<void> {
    await this.#transact(e.treeId, [
      this.#treeExists(e.treeId),
      {
        Delete: {
          TableName: this.tableName,
          Key: { pk: exemptionsPk(e.treeId), sk: exemptionSk(e.exemptionId) },
          ConditionExpression: 'revision = :revision',
          ExpressionAttributeValues: { ':revision': e.revision },
        },
      },
      this.#count(e.treeId, -1),
      this.#entry(e.treeId, 'exemption-deleted', at, by, changesOf(e.exemptionId, e, undefined)),
    ]);
  }
}

/** The container's exemption store (tables `COMPLIANCE_TABLE` and `TREES_TABLE`, changelog `CHANGELOG_TABLE`). */
export const createExemptionStore = (client: Pick<DynamoDBDocumentClient, 'send'> = documentClient): ExemptionStore =>
  new ExemptionStore(client, requiredEnv('COMPLIANCE_TABLE'), requiredEnv('TREES_TABLE'));
