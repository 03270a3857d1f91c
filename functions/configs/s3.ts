/**
 * The container's one S3 client for the configuration archive. The endpoint comes from the
 * SDK's own configuration (`AWS_ENDPOINT_URL_S3` locally, as `AWS_ENDPOINT_URL_DYNAMODB` for
 * DynamoDB); `S3_FORCE_PATH_STYLE=true` (local mode only) addresses the bucket in the path, as
 * the local S3 server needs.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { optionalEnv } from '../platform/env.js';

/**
 * Fail fast when S3 is unreachable or hangs, as the DynamoDB client does: a second to connect,
 * five to answer (a configuration is at most a few megabytes), three attempts.
 */
export const S3_CLIENT_LIMITS = { maxAttempts: 3, connectionTimeoutMs: 1_000, requestTimeoutMs: 5_000 } as const;

/** An S3 client with the archive's limits; `endpoint` overrides the SDK's configuration (tests). */
export const createS3Client = (endpoint?: string): S3Client =>
  new S3Client({
    maxAttempts: S3_CLIENT_LIMITS.maxAttempts,
    forcePathStyle: optionalEnv('S3_FORCE_PATH_STYLE', 'false') === 'true',
    ...(endpoint ? { endpoint } : {}),
    requestHandler: {
      connectionTimeout: S3_CLIENT_LIMITS.connectionTimeoutMs,
      requestTimeout: S3_CLIENT_LIMITS.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
