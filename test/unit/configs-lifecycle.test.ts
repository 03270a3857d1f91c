/**
 * The archive bucket's lifecycle follows the active profile's configRetentionDays: the rules
 * for a retention, and the reconcile against a fake bucket (the local S3 server has no
 * lifecycle, so the S3 calls are behind `BucketLifecycleApi`).
 */
import type { LifecycleRule } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { REFRESH_DAYS } from '../../functions/configs/archive.js';
import { lifecycleRules, reconcileLifecycle, type BucketLifecycleApi } from '../../functions/configs/lifecycle.js';

/** A bucket's lifecycle in memory, counting the writes; `refuse` makes it answer as a server without lifecycle does. */
const fakeBucket = (initial: LifecycleRule[] = [], refuse?: string) => {
  let rules = initial;
  const writes: LifecycleRule[][] = [];
  const fail = () => {
    const error = new Error('refused');
    error.name = refuse!;
    throw error;
  };
  const api: BucketLifecycleApi = {
    rules: async () => (refuse ? fail() : structuredClone(rules)),
    putRules: async (next) => {
      if (refuse) fail();
      writes.push(next);
      rules = structuredClone(next);
    },
  };
  return { api, writes, rules: () => rules };
};

describe('lifecycleRules', () => {
  it('expires contents the refresh window and a day after the retention, and cleans up versions, uploads and markers', () => {
    const [retention, markers] = lifecycleRules(90);
    expect(retention).toMatchObject({
      Status: 'Enabled',
      Filter: { Prefix: 'configs/' },
      Expiration: { Days: 90 + REFRESH_DAYS + 1 },
      NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
    });
    expect(markers).toMatchObject({ Expiration: { ExpiredObjectDeleteMarker: true } });
  });
});

describe('reconcileLifecycle', () => {
  it('writes the rules of the retention to a bucket without any', async () => {
    const bucket = fakeBucket();
    expect(await reconcileLifecycle(bucket.api, 30)).toEqual({ status: 'updated', expirationDays: 30 + REFRESH_DAYS + 1 });
    expect(bucket.rules()).toEqual(lifecycleRules(30));
  });

  it('writes nothing when the bucket already has them (as S3 answers them, fields in any order)', async () => {
    const answered = lifecycleRules(30)
      .reverse()
      .map((r) => ({ ...r, Prefix: undefined }));
    const bucket = fakeBucket(answered);
    expect(await reconcileLifecycle(bucket.api, 30)).toMatchObject({ status: 'unchanged' });
    expect(bucket.writes).toHaveLength(0);
  });

  it('follows a changed retention, longer or shorter, and replaces rules it did not write', async () => {
    const bucket = fakeBucket([{ ID: 'someone-else', Status: 'Enabled', Filter: { Prefix: '' }, Expiration: { Days: 1 } }]);
    await reconcileLifecycle(bucket.api, 30);
    await reconcileLifecycle(bucket.api, 400);
    expect(bucket.rules()).toEqual(lifecycleRules(400));
    await reconcileLifecycle(bucket.api, 7);
    expect(bucket.rules()).toEqual(lifecycleRules(7));
    expect(bucket.writes).toHaveLength(3);
  });

  it('says so when the server implements no lifecycle (the local S3 server), and throws any other failure', async () => {
    expect(await reconcileLifecycle(fakeBucket([], 'NotImplemented').api, 30)).toEqual({ status: 'unsupported' });
    await expect(reconcileLifecycle(fakeBucket([], 'AccessDenied').api, 30)).rejects.toThrow('refused');
  });
});
