/**
 * The bucket of the configuration history (functions/configs): gzip of each configuration's
 * canonical JSON, one object per device and content. Private (public access blocked, TLS only),
 * versioned (a function that can put objects cannot destroy a stored configuration by
 * overwriting it: the old version stays until the lifecycle removes noncurrent versions a day
 * later), KMS-encrypted (the deployment's customer key for `configs`, else the AWS-managed
 * `aws/s3` key), its server access logs in a bucket of their own. It has no lifecycle here: the
 * hourly housekeeping sets it from the active profile (functions/configs/lifecycle.ts).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { FunctionPermission } from './service-function.js';

/** The prefix of the contents (functions/configs/lifecycle.ts `CONTENT_PREFIX`). */
const CONTENTS = 'configs/*';

export interface ConfigArchiveProps {
  /** The customer-managed key; absent: the AWS-managed key. */
  readonly key?: IKey | undefined;
  /** Days the access logs are kept. */
  readonly accessLogDays: number;
}

export class ConfigArchiveBucket extends Construct {
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;
  readonly key?: IKey | undefined;

  constructor(scope: Construct, id: string, props: ConfigArchiveProps) {
    super(scope, id);
    this.key = props.key;
    // S3 delivers server access logs only to a bucket encrypted with S3-managed keys (and, the
    // app not opting into log delivery by bucket policy, through the log delivery group's ACL).
    this.accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ expiration: Duration.days(props.accessLogDays), noncurrentVersionExpiration: Duration.days(1) }],
    });
    this.bucket = new Bucket(this, 'Bucket', {
      ...(props.key ? { encryption: BucketEncryption.KMS, encryptionKey: props.key } : { encryption: BucketEncryption.KMS_MANAGED }),
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'configs-bucket/',
    });
  }

  /**
   * What a function may do with the contents: `read` gets them, `write` only puts them (the
   * batches never read a stored configuration back); both use the customer key when there is
   * one. A reader may also list the contents' prefix: without s3:ListBucket, S3 answers a get of
   * a missing (expired) object with 403 AccessDenied instead of 404 NoSuchKey, and an expired
   * configuration would read as a failure. The bucket's name (and the key) reach the function
   * in the environment ({@link ConfigArchiveBucket.environment}).
   */
  permission(access: 'read' | 'write'): FunctionPermission {
    return {
      key: `bucket:${this.bucket.node.path}:${access}`,
      grant: (grantee: IGrantable) => {
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({ actions: [access === 'write' ? 's3:PutObject' : 's3:GetObject'], resources: [this.bucket.arnForObjects(CONTENTS)] }),
        );
        if (access === 'read') {
          grantee.grantPrincipal.addToPrincipalPolicy(
            new PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn], conditions: { StringLike: { 's3:prefix': CONTENTS } } }),
          );
        }
        // S3 asks KMS for a data key on a put and decrypts it on a get, as the caller.
        this.key?.grant(grantee, ...(access === 'write' ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt']));
      },
    };
  }

  /** Reads and writes the bucket's lifecycle (the housekeeping). */
  lifecyclePermission(): FunctionPermission {
    return {
      key: `bucket:${this.bucket.node.path}:lifecycle`,
      grant: (grantee: IGrantable) => {
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['s3:GetLifecycleConfiguration', 's3:PutLifecycleConfiguration'], resources: [this.bucket.bucketArn] }),
        );
      },
    };
  }

  /** The environment of a function that uses the bucket. */
  environment(): Record<string, string> {
    return { CONFIGS_BUCKET: this.bucket.bucketName, ...(this.key ? { CONFIGS_KMS_KEY: this.key.keyArn } : {}) };
  }
}
