/**
 * How long the service's logs are kept and where they are archived, for every log group the
 * stacks create (the functions', the access log, API Gateway's execution log, and any a
 * construct adds later): one aspect, so that no log group can be created outside the policy.
 *
 * - retention: `logs.retentionDays` of the deployment config (default 365);
 * - removal: retained when the stack is deleted (or a log group replaced) in a deployment, so
 *   that deleting the service never deletes its audit trail; destroyed in local mode;
 * - archive: with `logs.archive`, a subscription filter on each group sends every event to the
 *   archive destination (the landing zone's log archive: a CloudWatch Logs destination in the
 *   log-archive account, or a Firehose or Kinesis stream with the role CloudWatch Logs uses).
 */
import type { IAspect, RemovalPolicy } from 'aws-cdk-lib';
import { CfnLogGroup, CfnSubscriptionFilter } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

/** The archive destination of every log group (docs/deployment.md, `logs.archive`). */
export interface LogArchive {
  /** A CloudWatch Logs destination (`arn:…:logs:…:destination:…`), Firehose delivery stream or Kinesis stream. */
  readonly destinationArn: string;
  /** The role CloudWatch Logs assumes to put records on a Firehose or Kinesis stream; none for a Logs destination. */
  readonly roleArn?: string;
}

export interface LogPolicySettings {
  /** One of the values CloudWatch Logs accepts (`RetentionDays`). */
  readonly retentionDays: number;
  readonly removalPolicy: RemovalPolicy.RETAIN | RemovalPolicy.DESTROY;
  readonly archive?: LogArchive;
}

/** The id of the subscription filter the policy adds beside a log group (after the log group's own id). */
export const ARCHIVE_FILTER_ID = 'Archive';

/** Applies {@link LogPolicySettings} to every `AWS::Logs::LogGroup` under the scope it is added to. */
export class LogPolicy implements IAspect {
  constructor(private readonly settings: LogPolicySettings) {}

  visit(node: IConstruct): void {
    if (!(node instanceof CfnLogGroup)) return;
    node.retentionInDays = this.settings.retentionDays;
    node.applyRemovalPolicy(this.settings.removalPolicy);
    const { archive } = this.settings;
    const scope = node.node.scope!;
    const id = `${node.node.id}${ARCHIVE_FILTER_ID}`;
    if (!archive || scope.node.tryFindChild(id)) return;
    new CfnSubscriptionFilter(scope, id, {
      logGroupName: node.ref,
      destinationArn: archive.destinationArn,
      // Every event: the archive is the trail, not a sample of it.
      filterPattern: '',
      ...(archive.roleArn ? { roleArn: archive.roleArn } : {}),
    });
  }
}
