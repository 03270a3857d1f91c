/**
 * How the configuration contents' store (functions/configs/blobs.ts) answers S3's failures: a
 * missing object is an expired configuration (undefined), S3's own failures (5xx, SlowDown,
 * InternalError) are transient (routes answer 503, batch chunks retry), a refusal is neither.
 */
import { NoSuchKey, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { MAX_CONTENT_BYTES, s3Blobs } from '../../functions/configs/blobs.js';
import { transientReason } from '../../functions/platform/transient.js';

const s3Error = (name: string, httpStatusCode: number): S3ServiceException =>
  new S3ServiceException({ name, message: name, $fault: httpStatusCode >= 500 ? 'server' : 'client', $metadata: { httpStatusCode } });

/** Blobs over a client whose every call fails with `error`. */
const failingWith = (error: Error) => {
  const client = new S3Client({ region: 'eu-west-1' });
  client.send = (() => Promise.reject(error)) as S3Client['send'];
  return s3Blobs(client, { bucket: 'b' });
};

describe('reading a configuration content when S3 fails', () => {
  it('reads a missing object (NoSuchKey) as expired', async () => {
    await expect(failingWith(new NoSuchKey({ message: 'gone', $metadata: { httpStatusCode: 404 } })).get('configs/x')).resolves.toBeUndefined();
  });

  it.each([
    ['SlowDown', 503],
    ['InternalError', 500],
    ['ServiceUnavailable', 503],
    ['AnythingElse', 502],
  ])('throws %s (%i) as a transient failure', async (name, status) => {
    const error = s3Error(name, status);
    await expect(failingWith(error).get('configs/x')).rejects.toBe(error);
    expect(transientReason(error)).toBeDefined();
  });

  it('throws a refusal (403 AccessDenied) as a permanent failure, not as expired', async () => {
    const error = s3Error('AccessDenied', 403);
    await expect(failingWith(error).get('configs/x')).rejects.toBe(error);
    expect(transientReason(error)).toBeUndefined();
  });
});

describe('unpacking a stored content', () => {
  it('refuses one that unpacks past the bound (a gzip bomb) instead of filling memory', async () => {
    const client = new S3Client({ region: 'eu-west-1' });
    const packed = gzipSync(Buffer.alloc(MAX_CONTENT_BYTES + 1, 32));
    client.send = (() => Promise.resolve({ Body: { transformToByteArray: async () => packed } })) as unknown as S3Client['send'];
    await expect(s3Blobs(client, { bucket: 'b' }).get('configs/x')).rejects.toThrow(RangeError);
  });
});
