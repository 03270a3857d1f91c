/**
 * DynamoDB Local for the tests: the same starter `npm start` uses (`infra/local/dynamodb-local.ts`).
 */
export { freePort, startDynamoDbLocal, type DynamoDbLocal } from '../../infra/local/dynamodb-local.js';
