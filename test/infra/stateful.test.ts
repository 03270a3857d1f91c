/**
 * The stateful resources keep their logical ids and key schemas: a change that would make
 * CloudFormation replace one (a construct moved or renamed, a key changed) fails here, before
 * a deploy swaps in a new, empty table. The ids are those of the single stack of earlier
 * versions, which the stateful stack continues (docs/deployment.md, "Moving an existing deployment to the split").
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDeployConfig } from '../../infra/config.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import { NO_BUNDLING } from './service-template.js';

const TABLES = {
  TreesTable484BD673: {
    keys: [['pk', 'HASH', 'S']],
    indexes: {
      byName: [
        ['kind', 'HASH', 'S'],
        ['name', 'RANGE', 'S'],
      ],
    },
  },
  AdaptersTable727022F8: {
    keys: [['pk', 'HASH', 'S']],
    indexes: {
      byName: [
        ['kind', 'HASH', 'S'],
        ['name', 'RANGE', 'S'],
      ],
    },
  },
  IdempotencyTable22A5A209: { keys: [['pk', 'HASH', 'S']], indexes: {} },
  ComplianceTable974C034F: {
    keys: [
      ['pk', 'HASH', 'S'],
      ['sk', 'RANGE', 'S'],
    ],
    // Added by a table update (one index per update): the table keeps its id and data.
    indexes: {
      byList: [
        ['list', 'HASH', 'S'],
        ['listSk', 'RANGE', 'S'],
      ],
    },
  },
  ChangelogTableB264FA8C: {
    keys: [
      ['pk', 'HASH', 'S'],
      ['sk', 'RANGE', 'S'],
    ],
    indexes: {},
  },
  ConfigsTable591905F6: {
    keys: [
      ['pk', 'HASH', 'S'],
      ['sk', 'RANGE', 'S'],
    ],
    indexes: {},
  },
  ProfilesTable3B48B4C6: {
    keys: [['pk', 'HASH', 'S']],
    indexes: {
      byId: [
        ['kind', 'HASH', 'S'],
        ['id', 'RANGE', 'S'],
      ],
    },
  },
} as const;

/** The configuration history's bucket and the bucket of its access logs. */
const CONFIG_ARCHIVE = {
  ConfigArchiveBucketB0A5FA8C: 'AWS::S3::Bucket',
  ConfigArchiveAccessLogsA37158F0: 'AWS::S3::Bucket',
} as const;

/** Every stateful resource of each variant, by logical id and type. */
const STATEFUL = {
  default: {
    ...Object.fromEntries(Object.keys(TABLES).map((id) => [id, 'AWS::DynamoDB::GlobalTable'])),
    SecretsVaultReaderCredentials706FF851: 'AWS::SecretsManager::Secret',
    SecretsVaultWriterCredentialsCE22E51E: 'AWS::SecretsManager::Secret',
    AuthUsersE210B9B0: 'AWS::Cognito::UserPool',
    AuthClient24ECC16D: 'AWS::Cognito::UserPoolClient',
    AuthGroupadmin6F753BE8: 'AWS::Cognito::UserPoolGroup',
    AuthGroupapiread99778442: 'AWS::Cognito::UserPoolGroup',
    IdempotencyKeyDBB712AD: 'AWS::SecretsManager::Secret',
    ...CONFIG_ARCHIVE,
  },
  private: {
    ...Object.fromEntries(Object.keys(TABLES).map((id) => [id, 'AWS::DynamoDB::GlobalTable'])),
    IdempotencyKeyDBB712AD: 'AWS::SecretsManager::Secret',
    ...CONFIG_ARCHIVE,
    // The vault the table backups land in (backup without vaultArn).
    BackupVaultADF21B19: 'AWS::Backup::BackupVault',
  },
} as const;

const STATEFUL_TYPE = /^AWS::(DynamoDB::|Cognito::UserPool|SecretsManager::Secret$|S3::Bucket$|RDS::|EFS::|KMS::Key$|Backup::BackupVault$)/;

/**
 * Cognito resources of the API stack that hold no user data: the console's sign-in client and
 * hosted-UI domain. Replaced, they come back the same but for the client's id, which only the API
 * stack itself uses (the authorizer's audience and the console's settings).
 */
const CONSOLE_SIGN_IN = new Set(['AWS::Cognito::UserPoolDomain', 'AWS::Cognito::UserPoolClient']);

const synth = (variant: 'default' | 'private') => {
  const app = new App({ context: NO_BUNDLING });
  if (variant === 'default') return new NetconfigService(app, 'Netconfig');
  const { stackName, ...settings } = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy/config.private.example.json'));
  return new NetconfigService(app, stackName, { settings });
};

describe('the stateful stack', () => {
  for (const variant of ['default', 'private'] as const) {
    it(`${variant}: holds every stateful resource under its pinned logical id, retained, with termination protection`, () => {
      const service = synth(variant);
      expect(service.data.terminationProtection).toBe(true);
      const data = Template.fromStack(service.data).toJSON().Resources as Record<
        string,
        { Type: string; DeletionPolicy?: string; UpdateReplacePolicy?: string }
      >;
      const stateful = Object.fromEntries(
        Object.entries(data)
          .filter(([, r]) => STATEFUL_TYPE.test(r.Type))
          .map(([id, r]) => [id, r.Type]),
      );
      expect(stateful).toEqual(STATEFUL[variant]);
      for (const id of Object.keys(stateful)) expect([id, data[id]!.DeletionPolicy, data[id]!.UpdateReplacePolicy]).toEqual([id, 'Retain', 'Retain']);
      // No other stack holds a stateful resource.
      for (const stack of service.stacks.filter((s) => s !== service.data)) {
        const types = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string }>).map((r) => r.Type);
        expect(
          types.filter((t) => STATEFUL_TYPE.test(t) && !CONSOLE_SIGN_IN.has(t)),
          stack.node.path,
        ).toEqual([]);
      }
    });
  }

  it('keeps each table’s key schema and indexes (a change would replace the table)', () => {
    const data = Template.fromStack(synth('default').data).toJSON().Resources as Record<string, { Properties: Record<string, any> }>;
    for (const [id, expected] of Object.entries(TABLES)) {
      const p = data[id]!.Properties;
      const types = Object.fromEntries(
        (p['AttributeDefinitions'] as { AttributeName: string; AttributeType: string }[]).map((a) => [a.AttributeName, a.AttributeType]),
      );
      const keys = (schema: { AttributeName: string; KeyType: string }[]) => schema.map((k) => [k.AttributeName, k.KeyType, types[k.AttributeName]]);
      expect(keys(p['KeySchema']), id).toEqual(expected.keys);
      const indexes = Object.fromEntries(
        ((p['GlobalSecondaryIndexes'] ?? []) as { IndexName: string; KeySchema: any[] }[]).map((g) => [g.IndexName, keys(g.KeySchema)]),
      );
      expect(indexes, id).toEqual(expected.indexes);
      expect(p['TableName'], id).toBeUndefined();
    }
  });

  it('lists batches through byList, which copies what a listed batch shows and never the counted chunks', () => {
    const data = Template.fromStack(synth('default').data).toJSON().Resources as Record<string, { Properties: Record<string, any> }>;
    const byList = (data['ComplianceTable974C034F']!.Properties['GlobalSecondaryIndexes'] as { IndexName: string; Projection: any }[]).find(
      (g) => g.IndexName === 'byList',
    )!;
    expect(byList.Projection.ProjectionType).toBe('INCLUDE');
    expect(byList.Projection.NonKeyAttributes).toEqual(expect.arrayContaining(['status', 'planId', 'g_fail', 't_errors']));
    expect(byList.Projection.NonKeyAttributes).not.toContain('counted');
    // CloudFormation takes 20 at most.
    expect(byList.Projection.NonKeyAttributes.length).toBeLessThanOrEqual(20);
  });
});
