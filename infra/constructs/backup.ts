/**
 * AWS Backup of the tables, beside their point-in-time recovery (35 days at most, and gone with
 * the table): a plan with one rule (schedule, retention, an optional copy to another vault, in
 * another account or region), a selection of every table, and the vault the backups land in
 * (an existing one by ARN, or one created here, retained and encrypted with the customer key
 * when given). docs/operations.md, "Restore", has the procedure that brings a backup back.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { BackupPlan, BackupPlanRule, BackupResource, BackupVault, type IBackupVault } from 'aws-cdk-lib/aws-backup';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import type { BackupSettings } from '../config.js';

export interface TableBackupProps {
  readonly settings: BackupSettings;
  readonly tables: readonly ITable[];
  /** Encrypts a created vault; absent: AWS Backup's own key. */
  readonly key?: IKey;
  readonly serviceName: string;
}

export class TableBackup extends Construct {
  readonly plan: BackupPlan;
  readonly vault: IBackupVault;

  constructor(scope: Construct, id: string, props: TableBackupProps) {
    super(scope, id);
    const { settings } = props;
    this.vault = settings.vaultArn
      ? BackupVault.fromBackupVaultArn(this, 'Vault', settings.vaultArn)
      : new BackupVault(this, 'Vault', {
          backupVaultName: `${props.serviceName}-tables`,
          ...(props.key ? { encryptionKey: props.key } : {}),
          // Holds the backups: deleting the stack must never delete them.
          removalPolicy: RemovalPolicy.RETAIN,
        });
    const copy = settings.copyTo;
    this.plan = new BackupPlan(this, 'Plan', {
      backupPlanName: `${props.serviceName}-tables`,
      backupVault: this.vault,
      backupPlanRules: [
        new BackupPlanRule({
          ruleName: 'tables',
          scheduleExpression: Schedule.expression(settings.schedule),
          deleteAfter: Duration.days(settings.retentionDays),
          ...(copy
            ? {
                copyActions: [
                  {
                    destinationBackupVault: BackupVault.fromBackupVaultArn(this, 'CopyVault', copy.vaultArn),
                    deleteAfter: Duration.days(copy.retentionDays ?? settings.retentionDays),
                  },
                ],
              }
            : {}),
        }),
      ],
    });
    // The selection's role (created by CDK) carries AWS Backup's managed backup and restore policies.
    const selection = this.plan.addSelection('Tables', {
      resources: props.tables.map((table) => BackupResource.fromDynamoDbTable(table)),
      allowRestores: true,
    });
    // The role CDK creates for the selection (no role was given).
    NagSuppressions.addResourceSuppressions(
      selection.grantPrincipal as Role,
      [
        {
          id: 'AwsSolutions-IAM4',
          reason:
            'AWS Backup assumes this role to back up and restore the selected tables; AWSBackupServiceRolePolicyForBackup and ...ForRestores are the policies AWS maintains for exactly that (they follow the service as it adds resource types and encryption cases).',
          appliesTo: [
            'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup',
            'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForRestores',
          ],
        },
      ],
      true,
    );
  }
}
