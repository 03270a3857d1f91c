/**
 * The configuration history's bucket and index: in the stateful stack, private, TLS-only,
 * versioned, KMS-encrypted (the deployment's key, else AWS-managed), access-logged, no lifecycle
 * of its own (the housekeeping sets it); and least-privilege grants: the batch function puts and
 * gets contents, the configuration route gets them, the list routes use only the index, the
 * housekeeping reads and writes the lifecycle; nobody lists or deletes. cdk-nag (AwsSolutions,
 * NIST 800-53 R5) has nothing open on either variant.
 */
import { App } from 'aws-cdk-lib';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDeployConfig } from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import type { Resources } from './api-template.js';
import { checkNag, logicalIdOf, NO_BUNDLING, nagFindings, serviceTemplate } from './service-template.js';

type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: unknown };
const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9';

const build = (variant: 'default' | 'private') => {
  const app = new App({ context: NO_BUNDLING });
  let service: NetconfigService;
  if (variant === 'default') service = new NetconfigService(app, 'Netconfig');
  else {
    const { stackName, ...settings } = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy/config.private.example.json'));
    service = new NetconfigService(app, stackName, { settings });
  }
  checkNag(service);
  const resources = serviceTemplate(service).toJSON().Resources as Resources;
  const nag = nagFindings(service);
  const bucketId = logicalIdOf(service.data.configArchive.bucket);
  const logsId = logicalIdOf(service.data.configArchive.accessLogs);
  /** The statements of the policies attached to a function's role. */
  const statementsOf = (operation: string): Statement[] => {
    const fn = resources[logicalIdOf(service.api.functions[operation]!.function)]!;
    const role = JSON.stringify(fn.Properties['Role']['Fn::GetAtt'][0]);
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(role.slice(1, -1)))
      .flatMap((p) => p.Properties['PolicyDocument']['Statement']);
  };
  const s3Actions = (operation: string) =>
    statementsOf(operation)
      .flatMap((st) => [st.Action].flat())
      .filter((a) => a.startsWith('s3:'))
      .sort();
  const env = (operation: string) => resources[logicalIdOf(service.api.functions[operation]!.function)]!.Properties['Environment']['Variables'];
  return { service, resources, nag, bucketId, logsId, statementsOf, s3Actions, env };
};

describe.each(['default', 'private'] as const)('the configuration history (%s config)', (variant) => {
  let built: ReturnType<typeof build>;
  beforeAll(() => {
    built = build(variant);
  });

  it('has no open cdk-nag finding', () => {
    expect(built.nag).toEqual([]);
  });

  it('keeps contents in a private, TLS-only, versioned, KMS-encrypted, access-logged bucket with no lifecycle of its own', () => {
    const { Properties: p } = built.resources[built.bucketId]!;
    const sse = p['BucketEncryption']['ServerSideEncryptionConfiguration'][0];
    expect(sse.ServerSideEncryptionByDefault.SSEAlgorithm).toBe('aws:kms');
    expect(sse.ServerSideEncryptionByDefault.KMSMasterKeyID).toEqual(variant === 'private' ? KEY : undefined);
    expect(sse.BucketKeyEnabled).toBe(true);
    expect(p['VersioningConfiguration']).toEqual({ Status: 'Enabled' });
    expect(p['PublicAccessBlockConfiguration']).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(p['LoggingConfiguration']).toEqual({ DestinationBucketName: { Ref: built.logsId }, LogFilePrefix: 'configs-bucket/' });
    expect(p['LifecycleConfiguration']).toBeUndefined();
    const policy = Object.values(built.resources).find((r) => r.Type === 'AWS::S3::BucketPolicy' && r.Properties['Bucket'].Ref === built.bucketId)!;
    expect(policy.Properties['PolicyDocument']['Statement']).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it('indexes takes in the configs table, expiring on expiresAt', () => {
    const table = Object.entries(built.resources).find(([id]) => id.startsWith('ConfigsTable'))![1];
    expect(table.Properties['TimeToLiveSpecification']).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('grants each function only what it does with the bucket: batches only put, readers get and list the contents prefix, nobody deletes', () => {
    expect(built.s3Actions('complianceBatch')).toEqual(['s3:PutObject']);
    expect(built.s3Actions('getDeviceConfig')).toEqual(['s3:GetObject', 's3:ListBucket']);
    // Without s3:ListBucket, S3 answers a get of an expired object with 403 instead of 404.
    const list = built.statementsOf('getDeviceConfig').find((st) => [st.Action].flat().includes('s3:ListBucket'))!;
    expect(list.Resource).toEqual({ 'Fn::GetAtt': [built.bucketId, 'Arn'] });
    expect(list.Condition).toEqual({ StringLike: { 's3:prefix': 'configs/*' } });
    expect(built.s3Actions('listDeviceConfigs')).toEqual([]);
    expect(built.s3Actions('listConfigDevices')).toEqual([]);
    expect(built.s3Actions('complianceHousekeeping')).toEqual(['s3:GetLifecycleConfiguration', 's3:PutLifecycleConfiguration']);
    const objects = built.statementsOf('getDeviceConfig').find((st) => [st.Action].flat().includes('s3:GetObject'))!;
    expect(JSON.stringify(objects.Resource)).toContain(`"${built.bucketId}","Arn"]},"/configs/*"`);
    expect(built.env('getDeviceConfig')['CONFIGS_BUCKET']).toEqual({ Ref: built.bucketId });
    expect(built.env('listDeviceConfigs')['CONFIGS_BUCKET']).toBeUndefined();
  });

  it('names the customer key to the functions that put or get contents, and lets them use it', () => {
    const kms = (operation: string) =>
      built
        .statementsOf(operation)
        .filter((st) => JSON.stringify(st.Resource).includes(KEY))
        .flatMap((st) => [st.Action].flat());
    if (variant === 'default') {
      expect(built.env('complianceBatch')['CONFIGS_KMS_KEY']).toBeUndefined();
      return;
    }
    expect(built.env('complianceBatch')['CONFIGS_KMS_KEY']).toBe(KEY);
    expect(kms('complianceBatch')).toEqual(expect.arrayContaining(['kms:GenerateDataKey', 'kms:Decrypt']));
    expect(kms('getDeviceConfig')).toContain('kms:Decrypt');
  });
});
