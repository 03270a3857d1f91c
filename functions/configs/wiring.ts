/**
 * The archive's clients in a function container, made once: the S3 bucket the stack names
 * (`CONFIGS_BUCKET`, with `CONFIGS_KMS_KEY` when the deployment has a customer key for it) and
 * the index table (`CONFIGS_TABLE`).
 */
import { optionalEnv, requiredEnv } from '../platform/env.js';
import { s3Blobs, type ConfigBlobs } from './blobs.js';
import { createS3Client } from './s3.js';
import { createConfigIndex, type ConfigIndex } from './store.js';

/** The env variable naming the bucket (set by the stack for a function whose needs name it). */
export const CONFIGS_BUCKET_ENV = 'CONFIGS_BUCKET';
/** The env variable carrying the customer key's ARN (absent: the AWS-managed key). */
export const CONFIGS_KMS_KEY_ENV = 'CONFIGS_KMS_KEY';

let made: { readonly blobs: ConfigBlobs; readonly index: ConfigIndex } | undefined;

/** The container's blob store and index. */
export const archiveStores = (): { readonly blobs: ConfigBlobs; readonly index: ConfigIndex } =>
  (made ??= {
    blobs: s3Blobs(createS3Client(), {
      bucket: requiredEnv(CONFIGS_BUCKET_ENV),
      kmsKeyId: optionalEnv(CONFIGS_KMS_KEY_ENV, '') || undefined,
    }),
    index: createConfigIndex(),
  });
