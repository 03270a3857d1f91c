/**
 * Identifiers a user types (adapter names, profile ids) are unique without regard to case: a
 * second one that differs only by case would be a different target that reads the same. Each
 * stored identifier holds a *claim*, an item keyed by its case-folded form
 * (`<prefix><lower-case name>`, member `name`: the identifier as stored), written in the same
 * transaction as the record it names (refused when a claim of another spelling exists) and
 * deleted in the same transaction as the record. So the check costs one conditional write,
 * whatever the count, and two concurrent creates of `LAB` and `lab` cannot both land.
 *
 * Records stored before claims existed get theirs once per table: the first create that finds
 * no marker item (`<prefix>*`) writes a claim for every stored identifier, then the marker
 * ({@link ensureClaims}). Until then a create waits for that backfill; afterwards it reads
 * nothing but the marker, once per container.
 */
import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { logger } from './logger.js';

/** A transaction item, as `TransactWriteCommand` takes it. */
type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Where the claims of one kind of identifier live. */
export interface ClaimSpace {
  readonly tableName: string;
  /** Key prefix of the claims, e.g. `NAME#`. */
  readonly prefix: string;
}

/** The key of the claim of `name`: its case-folded form. */
export const claimKey = (space: ClaimSpace, name: string): { pk: string } => ({ pk: `${space.prefix}${name.toLowerCase()}` });

/** Claims `name` in a transaction: refused when another spelling of it holds the claim. */
export const claimPut = (space: ClaimSpace, name: string): TransactItem => ({
  Put: {
    TableName: space.tableName,
    Item: { ...claimKey(space, name), name },
    ConditionExpression: 'attribute_not_exists(#pk) OR #name = :name',
    ExpressionAttributeNames: { '#pk': 'pk', '#name': 'name' },
    ExpressionAttributeValues: { ':name': name },
  },
});

/** Releases the claim of `name` in a transaction (never one another spelling holds). */
export const claimDelete = (space: ClaimSpace, name: string): TransactItem => ({
  Delete: {
    TableName: space.tableName,
    Key: claimKey(space, name),
    ConditionExpression: 'attribute_not_exists(#pk) OR #name = :name',
    ExpressionAttributeNames: { '#pk': 'pk', '#name': 'name' },
    ExpressionAttributeValues: { ':name': name },
  },
});

/** The stored spelling that holds the claim of `name` when it is not `name` itself; else undefined. */
export const caseTwinOf = async (client: Pick<DynamoDBDocumentClient, 'send'>, space: ClaimSpace, name: string): Promise<string | undefined> => {
  const out = await client.send(new GetCommand({ TableName: space.tableName, Key: claimKey(space, name), ConsistentRead: true }));
  const holder = out.Item?.['name'];
  return typeof holder === 'string' && holder !== name ? holder : undefined;
};

/** Tables whose claims are known complete in this container. */
const complete = new Set<string>();

/**
 * Makes sure every stored identifier holds its claim: once per table (a marker item records it)
 * and, after that is seen, once per container. `stored` yields every identifier stored now.
 * Two identifiers already stored that differ only by case (possible before claims) keep one
 * claim; the other is logged, and can be read, replaced and deleted as before.
 */
export const ensureClaims = async (client: Pick<DynamoDBDocumentClient, 'send'>, space: ClaimSpace, stored: () => AsyncIterable<string>): Promise<void> => {
  const marker = { pk: `${space.prefix}*` };
  const id = `${space.tableName}\u0000${space.prefix}`;
  if (complete.has(id)) return;
  const out = await client.send(new GetCommand({ TableName: space.tableName, Key: marker, ConsistentRead: true }));
  if (!out.Item) {
    for await (const name of stored()) {
      try {
        await client.send(new PutCommand(claimPut(space, name).Put!));
      } catch (error) {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
        logger.warn('two stored identifiers differ only by case; one holds the claim', { name });
      }
    }
    await client.send(new PutCommand({ TableName: space.tableName, Item: marker }));
  }
  complete.add(id);
};

/** Every identifier stored under `kind` in a sparse index whose sort key is `field`, page by page (for {@link ensureClaims}). */
export async function* indexedIdentifiers(
  client: Pick<DynamoDBDocumentClient, 'send'>,
  tableName: string,
  indexName: string,
  kind: string,
  field: string,
): AsyncIterable<string> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: indexName,
        KeyConditionExpression: '#kind = :kind',
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExpressionAttributeValues: { ':kind': kind },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    for (const item of out.Items ?? []) if (typeof item[field] === 'string') yield item[field];
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}
