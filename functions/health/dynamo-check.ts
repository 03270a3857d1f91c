/**
 * DynamoDB reachability, per table the function is bound to: a `GetItem` on a key no item
 * uses. It exercises what real requests use (endpoint, credentials, the table's IAM grant,
 * the table itself) at the price of half a read unit, and needs only the read grant
 * (`grantReadData` does not include `DescribeTable`).
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableEnv, tableSpecs } from '../platform/tables.js';
import type { TableKey } from '../platform/route.js';
import type { Check } from './checks.js';

/** The key value no item of any table uses (item keys start with a letter, e.g. `TREE#`). */
export const SENTINEL = '#health-probe';

/** A check that reads the sentinel key of `tableName` (the table of `key`'s spec). */
export const dynamoTableCheck = (client: DynamoDBDocumentClient, key: TableKey, tableName: string): Check => {
  const spec = tableSpecs[key];
  const item: Record<string, string | number> = { [spec.partitionKey.name]: spec.partitionKey.type === 'S' ? SENTINEL : 0 };
  if (spec.sortKey) item[spec.sortKey.name] = spec.sortKey.type === 'S' ? SENTINEL : 0;
  return {
    name: `dynamodb:${key}`,
    run: async (signal) => {
      await client.send(
        new GetCommand({ TableName: tableName, Key: item, ProjectionExpression: '#k', ExpressionAttributeNames: { '#k': spec.partitionKey.name } }),
        {
          abortSignal: signal,
        },
      );
    },
  };
};

/** The tables this function is bound to: those whose name variable the stack has set. */
export const boundTables = (env: NodeJS.ProcessEnv = process.env): { key: TableKey; name: string }[] =>
  (Object.keys(tableSpecs) as TableKey[]).flatMap((key) => {
    const name = env[tableEnv(key)];
    return name ? [{ key, name }] : [];
  });
