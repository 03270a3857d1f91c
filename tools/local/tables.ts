/**
 * Creates the DynamoDB tables the template declares in DynamoDB Local, when they are missing:
 * key schema, attribute definitions, global and local secondary indexes, and time to live.
 * An existing table is kept with its data; an index the template added since is created.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { IndexSpec, TableSpec } from './template.js';

const index = (i: IndexSpec) => ({
  IndexName: i.IndexName,
  KeySchema: i.KeySchema.map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType })),
  Projection: {
    ProjectionType: (i.Projection.ProjectionType ?? 'ALL') as 'ALL' | 'KEYS_ONLY' | 'INCLUDE',
    ...(i.Projection.NonKeyAttributes ? { NonKeyAttributes: i.Projection.NonKeyAttributes } : {}),
  },
});

const tableNames = async (client: DynamoDBClient): Promise<Set<string>> => {
  const names = new Set<string>();
  let start: string | undefined;
  for (let page = 0; page < 1000; page += 1) {
    const out = await client.send(new ListTablesCommand({ ...(start ? { ExclusiveStartTableName: start } : {}) }));
    for (const n of out.TableNames ?? []) names.add(n);
    start = out.LastEvaluatedTableName;
    if (!start) break;
  }
  return names;
};

export interface EnsureReport {
  readonly created: readonly string[];
  readonly existing: readonly string[];
  readonly indexesAdded: readonly string[];
}

/** Makes every table of `tables` exist; says which it created. */
export const ensureTables = async (client: DynamoDBClient, tables: readonly TableSpec[]): Promise<EnsureReport> => {
  const present = await tableNames(client);
  const created: string[] = [];
  const existing: string[] = [];
  const indexesAdded: string[] = [];
  for (const t of tables) {
    if (present.has(t.name)) {
      existing.push(t.name);
      const described = await client.send(new DescribeTableCommand({ TableName: t.name }));
      const have = new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
      for (const gsi of t.globalSecondaryIndexes.filter((g) => !have.has(g.IndexName))) {
        await client.send(
          new UpdateTableCommand({
            TableName: t.name,
            AttributeDefinitions: t.attributeDefinitions.map((a) => ({ AttributeName: a.AttributeName, AttributeType: a.AttributeType })),
            GlobalSecondaryIndexUpdates: [{ Create: index(gsi) }],
          }),
        );
        indexesAdded.push(`${t.name}.${gsi.IndexName}`);
      }
      continue;
    }
    await client.send(
      new CreateTableCommand({
        TableName: t.name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: t.attributeDefinitions.map((a) => ({ AttributeName: a.AttributeName, AttributeType: a.AttributeType })),
        KeySchema: t.keySchema.map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType })),
        ...(t.globalSecondaryIndexes.length ? { GlobalSecondaryIndexes: t.globalSecondaryIndexes.map(index) } : {}),
        ...(t.localSecondaryIndexes.length ? { LocalSecondaryIndexes: t.localSecondaryIndexes.map(index) } : {}),
      }),
    );
    if (t.timeToLiveAttribute) {
      await client.send(new UpdateTimeToLiveCommand({ TableName: t.name, TimeToLiveSpecification: { Enabled: true, AttributeName: t.timeToLiveAttribute } }));
    }
    created.push(t.name);
  }
  return { created, existing, indexesAdded };
};
