/**
 * Idempotency keys in DynamoDB (table key `idempotency`, env `IDEMPOTENCY_TABLE`, partition key
 * `pk`, time to live on `expiresAt`). Kept apart from `idempotency.ts` so that the HTTP stack
 * does not load the DynamoDB client into functions that never use it.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './dynamo.js';
import { requiredEnv } from './env.js';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency.js';

const isConditionFailure = (error: unknown): boolean => error instanceof Error && error.name === 'ConditionalCheckFailedException';

const readRecord = (item: Record<string, unknown> | undefined): IdempotencyRecord | undefined => {
  if (!item) return undefined;
  const response = item['response'] as { statusCode?: unknown; headers?: unknown; body?: unknown } | undefined;
  return {
    pk: String(item['pk']),
    status: item['status'] === 'COMPLETED' ? 'COMPLETED' : 'IN_PROGRESS',
    fingerprint: String(item['fingerprint'] ?? ''),
    attempt: String(item['attempt'] ?? ''),
    lockedUntil: Number(item['lockedUntil'] ?? 0),
    expiresAt: Number(item['expiresAt'] ?? 0),
    ...(response && typeof response.statusCode === 'number'
      ? {
          response: {
            statusCode: response.statusCode,
            headers: (response.headers ?? {}) as Record<string, string>,
            ...(response.body instanceof Uint8Array ? { body: response.body } : {}),
          },
        }
      : {}),
  };
};

/**
 * The store over `tableName` (default: `IDEMPOTENCY_TABLE`). DynamoDB deletes expired items
 * lazily, so a claim treats an item past `expiresAt` as absent.
 */
export const createIdempotencyStore = (
  client: Pick<DynamoDBDocumentClient, 'send'> = documentClient,
  tableName: string = requiredEnv('IDEMPOTENCY_TABLE'),
): IdempotencyStore => ({
  async claim(record, nowMs) {
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...record },
          ConditionExpression:
            'attribute_not_exists(pk) OR expiresAt < :nowSec OR (#status = :inProgress AND lockedUntil < :nowMs AND fingerprint = :fingerprint)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':nowSec': Math.floor(nowMs / 1000),
            ':nowMs': nowMs,
            ':inProgress': 'IN_PROGRESS',
            ':fingerprint': record.fingerprint,
          },
        }),
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: record.pk }, ConsistentRead: true }));
    const held = readRecord(out.Item);
    return { kind: 'taken', record: held && held.expiresAt >= Math.floor(nowMs / 1000) ? held : undefined };
  },

  async complete(pk, attempt, response, expiresAt) {
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk },
          UpdateExpression: 'SET #status = :completed, #response = :response, expiresAt = :expiresAt REMOVE lockedUntil',
          ConditionExpression: 'attempt = :attempt',
          ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
          ExpressionAttributeValues: { ':completed': 'COMPLETED', ':response': response, ':expiresAt': expiresAt, ':attempt': attempt },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  },

  async release(pk, attempt) {
    try {
      await client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: { pk },
          ConditionExpression: 'attempt = :attempt',
          ExpressionAttributeValues: { ':attempt': attempt },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  },
});
