/**
 * The container's one DynamoDB Document client. The endpoint comes from the SDK's own
 * configuration (`AWS_ENDPOINT_URL_DYNAMODB` locally), so code never branches on local mode.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Fail fast when DynamoDB is unreachable or hangs: a call normally takes milliseconds, so a
 * second to connect and two to answer are generous, and three attempts (with the SDK's
 * backoff) end well inside the shortest function timeout (10 s). Without these limits a
 * hung endpoint holds the function until Lambda stops it, and the client gets a 504 instead
 * of a 503 with `Retry-After`.
 */
export const DYNAMODB_CLIENT_LIMITS = { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 2_000 } as const;

const client = new DynamoDBClient({
  maxAttempts: DYNAMODB_CLIENT_LIMITS.maxAttempts,
  requestHandler: {
    connectionTimeout: DYNAMODB_CLIENT_LIMITS.connectionTimeoutMs,
    requestTimeout: DYNAMODB_CLIENT_LIMITS.requestTimeoutMs,
    throwOnRequestTimeout: true,
  },
});

export const documentClient = DynamoDBDocumentClient.from(client, {
  marshallOptions: { removeUndefinedValues: true },
});
