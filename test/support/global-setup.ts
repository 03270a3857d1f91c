/**
 * One DynamoDB Local and one local S3 server for the whole run. Their endpoints reach every test
 * worker through `AWS_ENDPOINT_URL_DYNAMODB` and `AWS_ENDPOINT_URL_S3`, which the AWS SDK reads
 * itself: the code under test is not told it is being tested. The configuration archive's bucket
 * exists from the start (`CONFIGS_BUCKET`).
 */
import { startS3Local, type S3Local } from '../../tools/local/s3-local.js';
import { startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';

/** The archive bucket every test shares (keys are per adapter and device: tests use their own names). */
export const TEST_CONFIGS_BUCKET = 'netconfig-configs-test';

let dynamo: DynamoDbLocal | undefined;
let s3: S3Local | undefined;

export const setup = async (): Promise<void> => {
  [dynamo, s3] = await Promise.all([
    startDynamoDbLocal(),
    startS3Local({ buckets: [TEST_CONFIGS_BUCKET], credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  ]);
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = dynamo.endpoint;
  process.env['AWS_ENDPOINT_URL_S3'] = s3.endpoint;
  process.env['S3_FORCE_PATH_STYLE'] = 'true';
  process.env['CONFIGS_BUCKET'] = TEST_CONFIGS_BUCKET;
};

export const teardown = async (): Promise<void> => {
  await Promise.all([dynamo?.stop(), s3?.stop()]);
};
