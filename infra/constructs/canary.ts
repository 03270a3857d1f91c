/**
 * A function released through its `live` alias: API Gateway invokes the alias, and CodeDeploy
 * moves the alias from the old version to the new one as the deployment setting says (10 % for
 * five minutes, then all, by default), rolling it back when the alias' error or throttle alarm
 * fires meanwhile. Used for the functions whose failure stops the service: the relay (every
 * write to NSO) and the authorizer (every authorized route). docs/operations.md, "Canary and
 * rollback", says what an operator sees.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { type ILambdaDeploymentConfig, LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Alias, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import type { CanaryMode } from '../config.js';
import type { ServiceFunction } from './service-function.js';

/** CodeDeploy's predefined configuration of each mode the config file names. */
const CONFIGS: Readonly<Record<Exclude<CanaryMode, 'off'>, ILambdaDeploymentConfig>> = {
  'canary-10-percent-5-minutes': LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  'canary-10-percent-10-minutes': LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
  'canary-10-percent-30-minutes': LambdaDeploymentConfig.CANARY_10PERCENT_30MINUTES,
  'linear-10-percent-every-1-minute': LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  'linear-10-percent-every-10-minutes': LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_10MINUTES,
  'all-at-once': LambdaDeploymentConfig.ALL_AT_ONCE,
};

/** The name of the alias API Gateway invokes. */
export const LIVE_ALIAS = 'live';

export class CanaryRelease extends Construct {
  readonly alias: Alias;
  readonly deploymentGroup: LambdaDeploymentGroup;
  /** The alarm that rolls a deployment back. */
  readonly alarms: readonly Alarm[];

  /**
   * @param alarmStem the alarm's name before `-errors` (`<service>-release-<function>`).
   * @param failures what counts as the function failing, per minute (default: the alias' function
   *   errors). The authorizer passes its own failure metric: it refuses a bad token by throwing,
   *   which Lambda counts as an error, so any client's expired token would roll a release back.
   */
  constructor(scope: Construct, id: string, fn: ServiceFunction, mode: Exclude<CanaryMode, 'off'>, alarmStem: string, failures?: IMetric) {
    super(scope, id);
    this.alias = new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: fn.function.currentVersion });
    // One failure while the new version takes traffic is reason enough to go back (it counts
    // across both versions, which errs on the safe side). Throttles are not: they come from the
    // function's reserved concurrency, whatever the version.
    this.alarms = [
      new Alarm(this, 'Errors', {
        alarmName: `${alarmStem}-errors`,
        metric: failures ?? this.alias.metricErrors({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: `${fn.node.path}: ${failures ? 'failures' : `function errors of its ${LIVE_ALIAS} alias`}; during a deployment, CodeDeploy rolls the alias back to the previous version`,
      }),
    ];
    this.deploymentGroup = new LambdaDeploymentGroup(this, 'Deployment', {
      alias: this.alias,
      deploymentConfig: CONFIGS[mode],
      alarms: [...this.alarms],
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    NagSuppressions.addResourceSuppressions(
      this.deploymentGroup.role,
      [
        {
          id: 'AwsSolutions-IAM4',
          reason:
            'CodeDeploy assumes this role to shift the alias and read the alarms; AWSCodeDeployRoleForLambdaLimited is the AWS-maintained policy for Lambda deployments (alias updates and the hooks it may call, nothing else).',
          appliesTo: ['Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited'],
        },
      ],
      true,
    );
  }
}

/**
 * What API Gateway invokes for a function: its `live` alias under a canary release, or the
 * function itself with `deployment.canary` "off" (and in local mode).
 */
export const releaseTarget = (
  scope: Construct,
  id: string,
  fn: ServiceFunction,
  mode: CanaryMode | undefined,
  alarmStem: string,
  failures?: IMetric,
): IFunction => (mode && mode !== 'off' ? new CanaryRelease(scope, id, fn, mode, alarmStem, failures).alias : fn.function);
