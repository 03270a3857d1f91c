/**
 * The container's one DynamoDB Document client. The endpoint comes from the SDK's own
 * configuration (`AWS_ENDPOINT_URL_DYNAMODB` locally), so code never branches on local mode.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 3 }), {
  marshallOptions: { removeUndefinedValues: true },
});
