/**
 * Where configurations' contents are kept: one gzip of the canonical JSON per object, in the
 * archive bucket, encrypted with KMS (the deployment's customer key when it names one, else
 * the AWS-managed `aws/s3` key). {@link ConfigBlobs} is what the archive needs of it, so tests
 * and the bench count what is uploaded.
 */
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** Bytes of canonical JSON a stored content may unpack to at most. */
export const MAX_CONTENT_BYTES = 16 * 1024 * 1024;

/** The contents of configurations, by object key. */
export interface ConfigBlobs {
  /** Stores `canonical` (the configuration's canonical JSON) under `key`, compressed. */
  put(key: string, canonical: string): Promise<void>;
  /** The canonical JSON stored under `key`, or undefined when there is none (expired). */
  get(key: string): Promise<string | undefined>;
}

/** The bucket and its key: `kmsKeyId` absent uses the AWS-managed key (`aws:kms` without a key id). */
export interface BucketSettings {
  readonly bucket: string;
  readonly kmsKeyId?: string | undefined;
}

/** {@link ConfigBlobs} in an S3 bucket. */
export const s3Blobs = (client: S3Client, { bucket, kmsKeyId }: BucketSettings): ConfigBlobs => ({
  async put(key, canonical) {
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: await gzipAsync(Buffer.from(canonical, 'utf8')),
        ContentType: 'application/json',
        ContentEncoding: 'gzip',
        ServerSideEncryption: 'aws:kms',
        ...(kmsKeyId ? { SSEKMSKeyId: kmsKeyId } : {}),
        // One data key per bucket and day instead of a KMS call per object.
        BucketKeyEnabled: true,
      }),
    );
  },
  async get(key) {
    try {
      const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const bytes = await answer.Body!.transformToByteArray();
      // A content is at most a few MB of JSON: a larger output is not one of ours (a gzip bomb), refused before it fills memory.
      return (await gunzipAsync(bytes, { maxOutputLength: MAX_CONTENT_BYTES })).toString('utf8');
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  },
});
