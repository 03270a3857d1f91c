/**
 * The archive bucket's lifecycle follows the active profile's `configRetentionDays`: the hourly
 * housekeeping (functions/api/handlers/housekeeping.ts) compares the bucket's rules with
 * {@link lifecycleRules} and writes them when they differ. The stack sets no lifecycle of its
 * own: a deploy would put back its own days, and a shorter expiry than the profile's would
 * delete content that entries still name.
 */
import { GetBucketLifecycleConfigurationCommand, PutBucketLifecycleConfigurationCommand, type LifecycleRule, type S3Client } from '@aws-sdk/client-s3';
import { canonicalJson } from '../platform/canonical-json.js';
import { REFRESH_DAYS } from './archive.js';

/** What the housekeeping asks of the bucket. */
export interface BucketLifecycleApi {
  /** The bucket's lifecycle rules (none: empty). */
  rules(): Promise<LifecycleRule[]>;
  /** Replaces the bucket's lifecycle rules. */
  putRules(rules: LifecycleRule[]): Promise<void>;
}

/** The prefix every content object is under (keys.ts). */
export const CONTENT_PREFIX = 'configs/';

/**
 * The bucket's rules for a retention: contents expire `retention + REFRESH_DAYS + 1` days after
 * they were last written (the refresh window keeps content a recent take names; the extra day
 * covers S3 counting from the next midnight UTC); an overwritten or expired version (the bucket
 * is versioned) goes a day later; an upload left incomplete after a day is removed; so is a
 * delete marker with nothing left behind it.
 */
export const lifecycleRules = (retentionDays: number): LifecycleRule[] => [
  {
    ID: 'config-retention',
    Status: 'Enabled',
    Filter: { Prefix: CONTENT_PREFIX },
    Expiration: { Days: retentionDays + REFRESH_DAYS + 1 },
    NoncurrentVersionExpiration: { NoncurrentDays: 1 },
    AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
  },
  {
    ID: 'expired-delete-markers',
    Status: 'Enabled',
    Filter: { Prefix: CONTENT_PREFIX },
    Expiration: { ExpiredObjectDeleteMarker: true },
  },
];

/** A rule as compared: the fields {@link lifecycleRules} sets (S3 answers with others filled in). */
const comparable = (rules: readonly LifecycleRule[]): string =>
  canonicalJson(
    [...rules]
      .map((r) => ({
        id: r.ID,
        status: r.Status,
        prefix: r.Filter?.Prefix,
        days: r.Expiration?.Days,
        markers: r.Expiration?.ExpiredObjectDeleteMarker,
        noncurrent: r.NoncurrentVersionExpiration?.NoncurrentDays,
        abort: r.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
      }))
      .sort((a, b) => String(a.id).localeCompare(String(b.id))),
  );

/** What a reconcile did: `unsupported` when the S3 server has no lifecycle (the local S3 server). */
export type LifecycleOutcome = { readonly status: 'unchanged' | 'updated'; readonly expirationDays: number } | { readonly status: 'unsupported' };

/** Makes the bucket's lifecycle that of `retentionDays`, writing only when it differs. */
export const reconcileLifecycle = async (api: BucketLifecycleApi, retentionDays: number): Promise<LifecycleOutcome> => {
  const wanted = lifecycleRules(retentionDays);
  const expirationDays = wanted[0]!.Expiration!.Days!;
  try {
    if (comparable(await api.rules()) === comparable(wanted)) return { status: 'unchanged', expirationDays };
    await api.putRules(wanted);
    return { status: 'updated', expirationDays };
  } catch (error) {
    if (error instanceof Error && error.name === 'NotImplemented') return { status: 'unsupported' };
    throw error;
  }
};

/** {@link BucketLifecycleApi} of an S3 bucket. */
export const s3Lifecycle = (client: S3Client, bucket: string): BucketLifecycleApi => ({
  async rules() {
    try {
      return (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules ?? [];
    } catch (error) {
      if (error instanceof Error && error.name === 'NoSuchLifecycleConfiguration') return [];
      throw error;
    }
  },
  async putRules(rules) {
    await client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
  },
});
