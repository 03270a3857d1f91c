/**
 * The tests' DynamoDB Local client with a hook that sees each command before it is sent: to
 * record what a store asks of DynamoDB, to let another writer act first, or to fail one call
 * as DynamoDB would.
 */
import type { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../functions/platform/dynamo.js';

export const documentClientWith = (hook: (command: unknown) => unknown): DynamoDBDocumentClient =>
  ({
    send: async (command: unknown) => {
      await hook(command);
      return documentClient.send(command as GetCommand);
    },
  }) as unknown as DynamoDBDocumentClient;
