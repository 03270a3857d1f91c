/**
 * One DynamoDB Local for the whole run. Its endpoint reaches every test worker through
 * `AWS_ENDPOINT_URL_DYNAMODB`, which the AWS SDK reads itself: the code under test is not
 * told it is being tested.
 */
import { startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';

let dynamo: DynamoDbLocal | undefined;

export const setup = async (): Promise<void> => {
  dynamo = await startDynamoDbLocal();
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = dynamo.endpoint;
};

export const teardown = async (): Promise<void> => {
  await dynamo?.stop();
};
