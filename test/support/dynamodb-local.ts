/**
 * DynamoDB Local for the tests: the same starter `npm start` uses (`tools/local/dynamodb-local.ts`).
 */
export { freePort, startDynamoDbLocal, type DynamoDbLocal } from '../../tools/local/dynamodb-local.js';
