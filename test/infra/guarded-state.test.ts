/**
 * Guarded state and safe deploys, from the config file: customer-managed keys on the tables,
 * log groups, secrets and alarm topic; AWS Backup of the tables; MFA of the user pool;
 * termination protection of both stacks; the relay and the authorizer released through a
 * `live` alias by CodeDeploy with alarm-driven rollback. And the config's refusals for these keys.
 */
import { App, Aspects, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeployConfigError, loadDeployConfig, parseDeployConfig } from '../../infra/config.js';
import { addNagSuppressions } from '../../infra/nag.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { NetconfigService } from '../../infra/stack.js';
import { localStackProps } from '../../infra/local-mode.js';
import { logicalIdOf, NO_BUNDLING, serviceTemplate } from './service-template.js';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string };

const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9';
const LOG_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555';
const VAULT = 'arn:aws:backup:eu-west-1:123456789012:backup-vault:bank-tables';
const COPY_VAULT = 'arn:aws:backup:eu-central-1:210987654321:backup-vault:netconfig-copies';

const BASE = { stackName: 'Netconfig', vault: { address: 'https://vault.example.net:8200' } };

const parse = (config: Record<string, unknown>) => parseDeployConfig({ ...BASE, ...config }, 'variant.json', PROJECT_ROOT);

const built = new Map<string, ReturnType<typeof synth>>();
/** The service of a config, synthesized once per config in this file (each synth takes seconds). */
const build = (config: Record<string, unknown>, nag = false) => {
  const key = JSON.stringify([config, nag]);
  return built.get(key) ?? built.set(key, synth(config, nag)).get(key)!;
};

const synth = (config: Record<string, unknown>, nag: boolean) => {
  const app = new App({ context: NO_BUNDLING });
  const { stackName, ...settings } = parse(config);
  const service = new NetconfigService(app, stackName, { settings });
  if (nag) {
    addNagSuppressions(service);
    for (const stack of [service.data, service.api]) Aspects.of(stack).add(new AwsSolutionsChecks());
  }
  const resources = serviceTemplate(service).toJSON().Resources as Record<string, Resource>;
  return { service, resources };
};

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

const problemsOf = (config: Record<string, unknown>): readonly string[] => {
  try {
    parse(config);
  } catch (error) {
    expect(error).toBeInstanceOf(DeployConfigError);
    return (error as DeployConfigError).problems;
  }
  throw new Error('the configuration was accepted');
};

describe('customer-managed keys', () => {
  const { service, resources } = build({ kms: { key: KEY, logs: LOG_KEY }, alarms: { email: 'noc@example.net' } });

  it('encrypt the tables with the table key, under their pinned logical ids', () => {
    const tables = ofType(resources, 'AWS::DynamoDB::GlobalTable');
    expect(tables).toHaveLength(7);
    for (const [id, table] of tables) {
      expect([id, table.Properties['SSESpecification']]).toEqual([id, { SSEEnabled: true, SSEType: 'KMS' }]);
      expect([id, table.Properties['Replicas'].map((r: Record<string, unknown>) => r['SSESpecification'])]).toEqual([id, [{ KMSMasterKeyId: KEY }]]);
    }
    // The logical ids do not follow the key (test/infra/stateful.test.ts pins them for every variant).
    expect(tables.map(([id]) => id).sort()).toEqual(
      ofType(build({}, true).resources, 'AWS::DynamoDB::GlobalTable')
        .map(([id]) => id)
        .sort(),
    );
  });

  it('encrypt every log group of every stack with the log key', () => {
    const groups = ofType(resources, 'AWS::Logs::LogGroup');
    expect(groups.length).toBeGreaterThan(50);
    expect(groups.filter(([, g]) => g.Properties['KmsKeyId'] !== LOG_KEY).map(([id]) => id)).toEqual([]);
  });

  it('encrypt the created secrets and the alarm topic', () => {
    const secrets = ofType(resources, 'AWS::SecretsManager::Secret');
    expect(secrets.length).toBe(3);
    for (const [id, secret] of secrets) expect([id, secret.Properties['KmsKeyId']]).toEqual([id, KEY]);
    const topics = ofType(resources, 'AWS::SNS::Topic');
    expect(topics.map(([, t]) => t.Properties['KmsMasterKeyId'])).toEqual([KEY]);
  });

  it('let the functions that read a table or a secret use the key, and no other', () => {
    const read = Template.fromStack(service.api.parts['Runtime']!).toJSON().Resources as Record<string, Resource>;
    const decrypting = ofType(read, 'AWS::IAM::Policy').filter(([, p]) =>
      (p.Properties['PolicyDocument'].Statement as { Action: string | string[]; Resource: unknown }[]).some(
        (st) => [st.Action].flat().includes('kms:Decrypt') && JSON.stringify(st.Resource).includes(KEY),
      ),
    );
    expect(decrypting.length).toBeGreaterThan(0);
    expect(JSON.stringify(decrypting)).not.toContain(LOG_KEY);
  });

  it('are absent by default: AWS-managed keys, no KmsKeyId anywhere', () => {
    const plain = build({}, true).resources;
    for (const [, t] of ofType(plain, 'AWS::DynamoDB::GlobalTable')) expect(t.Properties['SSESpecification']).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(JSON.stringify(plain)).not.toMatch(/KmsKeyId|KMSMasterKeyId|KmsMasterKeyId/);
  });
});

describe('AWS Backup of the tables', () => {
  it('backs up every table on the schedule into a created, retained vault under the backup key, with a copy elsewhere', () => {
    const { service, resources } = build({
      kms: { key: KEY },
      backup: { schedule: 'cron(0 3 * * ? *)', retentionDays: 35, copyTo: { vaultArn: COPY_VAULT, retentionDays: 90 } },
    });
    const data = Template.fromStack(service.data);
    const [[vaultId, vault]] = ofType(resources, 'AWS::Backup::BackupVault') as [[string, Resource]];
    expect(vault.Properties).toMatchObject({ BackupVaultName: 'netconfig-tables', EncryptionKeyArn: KEY });
    expect(vault.DeletionPolicy).toBe('Retain');
    data.hasResourceProperties('AWS::Backup::BackupPlan', {
      BackupPlan: {
        BackupPlanRule: [
          {
            RuleName: 'tables',
            ScheduleExpression: 'cron(0 3 * * ? *)',
            Lifecycle: { DeleteAfterDays: 35 },
            TargetBackupVault: { 'Fn::GetAtt': [vaultId, 'BackupVaultName'] },
            CopyActions: [{ DestinationBackupVaultArn: COPY_VAULT, Lifecycle: { DeleteAfterDays: 90 } }],
          },
        ],
      },
    });
    const [[, selection]] = ofType(resources, 'AWS::Backup::BackupSelection') as [[string, Resource]];
    const tableIds = Object.values(service.tables).map((t) => logicalIdOf(t));
    expect(selection.Properties['BackupSelection'].Resources).toEqual(expect.arrayContaining(tableIds.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] }))));
    expect(selection.Properties['BackupSelection'].Resources).toHaveLength(tableIds.length);
  });

  it('uses a given vault by ARN and creates none', () => {
    const { service, resources } = build({ backup: { schedule: 'cron(0 1 ? * SUN *)', retentionDays: 400, vaultArn: VAULT } });
    expect(ofType(resources, 'AWS::Backup::BackupVault')).toEqual([]);
    Template.fromStack(service.data).hasResourceProperties('AWS::Backup::BackupPlan', {
      BackupPlan: { BackupPlanRule: [Match.objectLike({ TargetBackupVault: 'bank-tables', Lifecycle: { DeleteAfterDays: 400 } })] },
    });
  });

  it('is absent without backup', () => {
    expect(ofType(build({}, true).resources, 'AWS::Backup::BackupPlan')).toEqual([]);
  });
});

describe('MFA of the user pool', () => {
  const pool = (mfa?: string) => {
    const { resources } = build({ identity: { provider: 'cognito', ...(mfa ? { mfa } : {}) } });
    return ofType(resources, 'AWS::Cognito::UserPool')[0]![1].Properties;
  };
  it('required: TOTP only', () => expect(pool('required')).toMatchObject({ MfaConfiguration: 'ON', EnabledMfas: ['SOFTWARE_TOKEN_MFA'] }));
  it('off', () => {
    const p = pool('off');
    expect(p['MfaConfiguration']).toBe('OFF');
    expect(p['EnabledMfas']).toBeUndefined();
  });
  it('absent: the template leaves the setting alone', () => {
    const p = pool();
    expect(p['MfaConfiguration']).toBeUndefined();
    expect(p['EnabledMfas']).toBeUndefined();
  });
});

describe('termination protection', () => {
  it('guards both stacks of a deployment by default; the API stack’s follows deployment.terminationProtection', () => {
    const on = build({}, true).service;
    expect([on.data.terminationProtection, on.api.terminationProtection]).toEqual([true, true]);
    const off = build({ deployment: { terminationProtection: false } }).service;
    expect([off.data.terminationProtection, off.api.terminationProtection]).toEqual([true, false]);
  });
  it('is off in local mode', () => {
    const local = new NetconfigService(new App({ context: { ...NO_BUNDLING, local: 'true' } }), 'Netconfig', localStackProps());
    expect([local.data.terminationProtection, local.api.terminationProtection]).toEqual([false, false]);
  });
});

describe('canary releases of the relay and the authorizer', () => {
  // The default config (canary on) with cdk-nag: the other tests' default build is this one.
  const { service, resources } = build({}, true);
  const relay = service.functions['relayRestAction']!;
  const authorizer = service.functions['authorizer']!;
  const aliasOf = (fn: typeof relay) =>
    ofType(resources, 'AWS::Lambda::Alias').find(([, a]) => JSON.stringify(a.Properties['FunctionName']).includes(logicalIdOf(fn.function)));

  it('puts each behind a live alias on its current version', () => {
    for (const fn of [relay, authorizer]) {
      const [, alias] = aliasOf(fn)!;
      expect(alias.Properties['Name']).toBe('live');
      expect(JSON.stringify(alias.Properties['FunctionVersion'])).toContain('Version');
    }
  });

  it('shifts traffic by CodeDeploy, 10 % for five minutes, rolled back on the relay’s errors or the authorizer’s failures, and notifies', () => {
    const groups = ofType(resources, 'AWS::CodeDeploy::DeploymentGroup');
    expect(groups).toHaveLength(2);
    for (const [, group] of groups) {
      expect(group.Properties['DeploymentConfigName']).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
      expect(group.Properties['AutoRollbackConfiguration']).toEqual({
        Enabled: true,
        Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
      });
      expect(group.Properties['AlarmConfiguration'].Alarms).toHaveLength(1);
    }
    const alarms = ofType(resources, 'AWS::CloudWatch::Alarm').filter(([, a]) => /-release-/.test(a.Properties['AlarmName']));
    // The relay by its alias' errors; the authorizer by the requests it could not decide, since it
    // refuses a bad token by throwing (a Lambda error): no client's expired token rolls a release back.
    expect(alarms.map(([, a]) => [a.Properties['AlarmName'], a.Properties['MetricName'], a.Properties['Threshold']]).sort()).toEqual([
      ['netconfig-release-authorizer-errors', 'AuthorizerFailures', 1],
      ['netconfig-release-relay-rest-action-errors', 'Errors', 1],
    ]);
    const relayAlarm = alarms.find(([, a]) => a.Properties['MetricName'] === 'Errors')![1];
    expect(relayAlarm.Properties['Dimensions']).toContainEqual({ Name: 'Resource', Value: expect.anything() });
    // With an alarm topic, a rollback notifies as every other alarm does.
    const notified = ofType(build({ alarms: { email: 'noc@example.net' } }).resources, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      /-release-/.test(a.Properties['AlarmName']),
    );
    expect(notified).toHaveLength(2);
    for (const [, a] of notified) expect(a.Properties['AlarmActions'], a.Properties['AlarmName']).toHaveLength(1);
  });

  it('makes API Gateway invoke the aliases, and lets it invoke them', () => {
    const [relayAliasId] = aliasOf(relay)!;
    const [authorizerAliasId] = aliasOf(authorizer)!;
    const method = ofType(resources, 'AWS::ApiGateway::Method').find(([, m]) => m.Properties['OperationName'] === 'relayRestAction')![1];
    expect(JSON.stringify(method.Properties['Integration'].Uri)).toContain(`"Ref":"${relayAliasId}"`);
    const [, auth] = ofType(resources, 'AWS::ApiGateway::Authorizer')[0]!;
    expect(JSON.stringify(auth.Properties['AuthorizerUri'])).toContain(`"Ref":"${authorizerAliasId}"`);
    const permissions = ofType(resources, 'AWS::Lambda::Permission').map(([, p]) => p.Properties['FunctionName']);
    expect(permissions).toContainEqual({ Ref: relayAliasId });
    expect(permissions).toContainEqual({ Ref: authorizerAliasId });
  });

  it('raises no cdk-nag finding', () => {
    const errors = [service.data, service.api].flatMap((stack: Stack) =>
      Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).split('\n')[0]}`)).toEqual([]);
  });

  it('"off": the functions are invoked directly and updated in place', () => {
    const off = build({ deployment: { canary: 'off' } }).resources;
    expect(ofType(off, 'AWS::CodeDeploy::DeploymentGroup')).toEqual([]);
    // The durable functions' aliases (the compliance batch, the remediation run) are the only ones.
    expect(ofType(off, 'AWS::Lambda::Alias')).toHaveLength(2);
  });

  it('follows the configured mode', () => {
    const linear = build({ deployment: { canary: 'linear-10-percent-every-1-minute' } }).resources;
    for (const [, g] of ofType(linear, 'AWS::CodeDeploy::DeploymentGroup'))
      expect(JSON.stringify(g.Properties['DeploymentConfigName'])).toContain('Linear10PercentEvery1Minute');
  });
});

describe('the private example', () => {
  it('turns these controls on', () => {
    const config = loadDeployConfig(path.join(PROJECT_ROOT, 'deploy/config.private.example.json'));
    expect(config.kms?.key).toMatch(/^arn:aws:kms:/);
    expect(config.backup).toMatchObject({ retentionDays: expect.any(Number), copyTo: { vaultArn: expect.stringMatching(/^arn:aws:backup:/) } });
    expect(config.deployment).toEqual({ terminationProtection: true, canary: 'canary-10-percent-5-minutes' });
  });
});

describe('config refusals', () => {
  it('names each key', () => {
    expect(
      problemsOf({
        identity: { provider: 'oidc', issuer: 'https://login.example.com', audience: 'x', mfa: 'required' },
        alarms: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:noc' },
        kms: { tables: KEY, logs: 'arn:aws:kms:us-east-1:123456789012:key/abc', alarmTopic: KEY, backup: KEY },
        backup: { schedule: 'cron(0 3 * * ? *)', retentionDays: 7, vaultArn: VAULT, copyTo: { vaultArn: VAULT } },
      }),
    ).toEqual([
      'identity.mfa: only used with identity.provider "cognito" (an external issuer enforces its own MFA)',
      'kms: keys of more than one region (eu-west-1, us-east-1): tables, log groups and secrets use a key of their own region only',
      'kms.alarmTopic: only used for the topic created for alarms.email (a topic given by alarms.topicArn keeps its own key)',
      'kms.backup: only used for the vault created for backup (backup given without backup.vaultArn)',
      'backup.copyTo.vaultArn: the copy goes to another vault than backup.vaultArn',
    ]);
  });

  it('refuses a key alias, a bad schedule, an unknown canary mode', () => {
    expect(
      problemsOf({
        kms: { secrets: 'arn:aws:kms:eu-west-1:123456789012:alias/netconfig' },
        backup: { schedule: 'rate(1 day)', retentionDays: 0 },
        deployment: { canary: 'canary-50-percent' },
      }),
    ).toEqual([
      expect.stringMatching(/^kms\.secrets: must be the ARN of a KMS key .*, got "arn:aws:kms:eu-west-1:123456789012:alias\/netconfig"$/),
      expect.stringMatching(/^backup\.schedule: must be an EventBridge cron expression in UTC/),
      'backup.retentionDays: must be >= 1, got 0',
      expect.stringMatching(/^deployment\.canary: must be one of "canary-10-percent-5-minutes", /),
    ]);
  });
});
