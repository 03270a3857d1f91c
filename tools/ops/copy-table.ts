/**
 * Copies every item of one DynamoDB table into another: the step of a restore that brings a
 * restored table's items back into the stack's own table (docs/operations.md, "Restore").
 * Items are copied as DynamoDB stores them (attribute values untouched); the two tables must
 * have the same key schema.
 *
 *   npx tsx tools/ops/copy-table.ts --from <table> --to <table> [--create] [--prune | --append-only]
 *
 * --create  creates the target first (on demand, the source's keys and indexes) and waits for it.
 * --prune   deletes the target's items that the source does not hold, so that the target ends
 *           exactly as the source (a restore to a point in time); without it, items are only
 *           added or overwritten.
 * --append-only  adds only the items the target lacks, one conditional PutItem each
 *           (`attribute_not_exists`), never overwriting or deleting one: for an append-only
 *           table (the changelog), whose resource policy refuses BatchWriteItem.
 *
 * The region and credentials are the AWS SDK's usual ones (AWS_REGION, AWS_PROFILE, ...);
 * AWS_ENDPOINT_URL_DYNAMODB points it at DynamoDB Local.
 */
import {
  type AttributeValue,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  type TableDescription,
  type WriteRequest,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

type Item = Record<string, AttributeValue>;

export interface CopyOptions {
  readonly from: string;
  readonly to: string;
  readonly create?: boolean;
  readonly prune?: boolean;
  /** Add only what the target lacks, by conditional PutItem (an append-only table). */
  readonly appendOnly?: boolean;
}

export interface CopyResult {
  readonly copied: number;
  readonly deleted: number;
}

/** BatchWriteItem takes at most 25 requests. */
const BATCH = 25;
/** Rounds of retrying the requests DynamoDB left unprocessed (throttling) before giving up. */
const UNPROCESSED_ROUNDS = 8;

const describeTable = async (client: DynamoDBClient, name: string): Promise<TableDescription | undefined> => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
};

const keySchemaOf = (table: TableDescription): string => JSON.stringify(table.KeySchema?.map((k) => [k.AttributeName, k.KeyType]));

/** Every item of a table (or only the attributes named), page by page, read consistently. */
async function* scan(client: DynamoDBClient, table: string, attributes?: readonly string[]): AsyncGenerator<Item> {
  let start: Item | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
        ...(attributes
          ? {
              ProjectionExpression: attributes.map((_, i) => `#k${i}`).join(', '),
              ExpressionAttributeNames: Object.fromEntries(attributes.map((a, i) => [`#k${i}`, a])),
            }
          : {}),
      }),
    );
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Writes the requests in batches, retrying what DynamoDB leaves unprocessed, with a growing pause. */
const writeAll = async (client: DynamoDBClient, table: string, requests: WriteRequest[], pause: (ms: number) => Promise<void>): Promise<void> => {
  for (let i = 0; i < requests.length; i += BATCH) {
    let pending = requests.slice(i, i + BATCH);
    for (let round = 0; pending.length; round++) {
      if (round === UNPROCESSED_ROUNDS)
        throw new Error(`${table}: ${pending.length} writes still unprocessed after ${UNPROCESSED_ROUNDS} rounds (throttled); run again`);
      if (round > 0) await pause(100 * 2 ** round);
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = out.UnprocessedItems?.[table] ?? [];
    }
  }
};

const keyOf = (item: Item, keys: readonly string[]): string => JSON.stringify(keys.map((k) => item[k]));

/** Copies the items of `from` into `to` (created first with `create`; pruned to `from`'s items with `prune`). */
export const copyTable = async (
  options: CopyOptions,
  client = new DynamoDBClient({}),
  pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
): Promise<CopyResult> => {
  const source = await describeTable(client, options.from);
  if (!source) throw new Error(`${options.from}: no such table`);
  let target = await describeTable(client, options.to);
  if (!target && options.create) {
    await client.send(
      new CreateTableCommand({
        TableName: options.to,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: source.KeySchema,
        AttributeDefinitions: source.AttributeDefinitions,
        ...(source.GlobalSecondaryIndexes?.length
          ? {
              GlobalSecondaryIndexes: source.GlobalSecondaryIndexes.map((g) => ({ IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection })),
            }
          : {}),
      }),
    );
    await waitUntilTableExists({ client, maxWaitTime: 600 }, { TableName: options.to });
    target = await describeTable(client, options.to);
  }
  if (!target) throw new Error(`${options.to}: no such table (--create makes it)`);
  if (keySchemaOf(source) !== keySchemaOf(target)) throw new Error(`${options.to}: its key schema differs from ${options.from}'s: items cannot be copied`);
  const keys = (source.KeySchema ?? []).map((k) => k.AttributeName!);

  if (options.appendOnly) {
    if (options.prune) throw new Error('--append-only adds items only: it takes no --prune');
    let copied = 0;
    // Each item only where its key is free: an entry the target holds is never overwritten.
    for await (const item of scan(client, options.from)) {
      try {
        await client.send(
          new PutItemCommand({
            TableName: options.to,
            Item: item,
            ConditionExpression: 'attribute_not_exists(#k)',
            ExpressionAttributeNames: { '#k': keys[0]! },
          }),
        );
        copied++;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    return { copied, deleted: 0 };
  }
  const kept = new Set<string>();
  const puts: WriteRequest[] = [];
  for await (const item of scan(client, options.from)) {
    kept.add(keyOf(item, keys));
    puts.push({ PutRequest: { Item: item } });
  }
  await writeAll(client, options.to, puts, pause);
  const deletes: WriteRequest[] = [];
  if (options.prune) {
    for await (const key of scan(client, options.to, keys)) if (!kept.has(keyOf(key, keys))) deletes.push({ DeleteRequest: { Key: key } });
    await writeAll(client, options.to, deletes, pause);
  }
  return { copied: puts.length, deleted: deletes.length };
};

/** The command line; the exit status. */
export const main = async (argv: readonly string[], client?: DynamoDBClient): Promise<number> => {
  const { values } = parseArgs({
    args: [...argv],
    options: { from: { type: 'string' }, to: { type: 'string' }, create: { type: 'boolean' }, prune: { type: 'boolean' }, 'append-only': { type: 'boolean' } },
  });
  if (!values.from || !values.to || values.from === values.to) {
    process.stderr.write('usage: copy-table.ts --from <table> --to <another table> [--create] [--prune | --append-only]\n');
    return 2;
  }
  try {
    const { copied, deleted } = await copyTable(
      { from: values.from, to: values.to, create: values.create ?? false, prune: values.prune ?? false, appendOnly: values['append-only'] ?? false },
      client,
    );
    process.stdout.write(`${values.from} -> ${values.to}: ${copied} item(s) copied${values.prune ? `, ${deleted} deleted` : ''}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 1;
  }
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main(process.argv.slice(2));
