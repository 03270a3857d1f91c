/**
 * Creates a private copy of every table for one test file (names prefixed), from the same
 * specs the stack uses, and points the functions at them through their environment.
 */
import { CreateTableCommand, DynamoDBClient, type AttributeDefinition } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { TableKey } from '../../functions/platform/route.js';
import { tableEnv, tableSpecs, type KeySpec } from '../../functions/platform/tables.js';

export const createTables = async (client = new DynamoDBClient({})): Promise<Record<TableKey, string>> => {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const names = {} as Record<TableKey, string>;
  for (const key of Object.keys(tableSpecs) as TableKey[]) {
    const spec = tableSpecs[key];
    const name = `${prefix}-${key}`;
    const attributes = new Map<string, KeySpec>();
    for (const k of [spec.partitionKey, spec.sortKey, ...(spec.globalIndexes ?? []).flatMap((g) => [g.partitionKey, g.sortKey])]) {
      if (k) attributes.set(k.name, k);
    }
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes.values()].map((a): AttributeDefinition => ({ AttributeName: a.name, AttributeType: a.type })),
        KeySchema: [
          { AttributeName: spec.partitionKey.name, KeyType: 'HASH' },
          ...(spec.sortKey ? [{ AttributeName: spec.sortKey.name, KeyType: 'RANGE' as const }] : []),
        ],
        ...(spec.globalIndexes?.length
          ? {
              GlobalSecondaryIndexes: spec.globalIndexes.map((g) => ({
                IndexName: g.name,
                KeySchema: [
                  { AttributeName: g.partitionKey.name, KeyType: 'HASH' as const },
                  ...(g.sortKey ? [{ AttributeName: g.sortKey.name, KeyType: 'RANGE' as const }] : []),
                ],
                Projection: g.include ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...g.include] } : { ProjectionType: 'ALL' as const },
              })),
            }
          : {}),
      }),
    );
    names[key] = name;
    process.env[tableEnv(key)] = name;
  }
  return names;
};
