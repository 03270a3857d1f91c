/** cdk-nag suppressions, each with its reason. */
import type { Stack } from 'aws-cdk-lib';
import { NagSuppressions } from 'cdk-nag';

export const addNagSuppressions = (stack: Stack): void => {
  NagSuppressions.addStackSuppressions(
    stack,
    [
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Requests are validated in each function against schemas compiled from the route table, so that every violation gets a problem+json body naming the field; API Gateway request validators cannot render that.',
      },
      {
        id: 'AwsSolutions-APIG3',
        reason:
          'A web ACL is the organisation’s choice (shared and priced per ACL): the stack associates the one api.webAclArn names with the stage; a config without one has none.',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Only the removed routes (Mock integrations answering 410) and GET /status have no authorizer: they reveal nothing and run no code. Every other method uses the role authorizer.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Routes use a Lambda REQUEST authorizer that checks roles per route (a Cognito authorizer cannot); it verifies Cognito-issued tokens by default.',
      },
      {
        id: 'AwsSolutions-IAM4',
        reason:
          'AWSLambdaBasicExecutionRole (log writing), AWSLambdaVPCAccessExecutionRole (a function in a VPC managing its network interfaces, added by CDK with vpc), AWSLambdaBasicDurableExecutionRolePolicy (a durable function checkpointing and reading its own executions, added by CDK with durableConfig) and AmazonAPIGatewayPushToCloudWatchLogs are the AWS-maintained minimal policies for these purposes.',
        appliesTo: [
          'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
          'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole',
          'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicDurableExecutionRolePolicy',
          'Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs',
        ],
      },
      {
        id: 'AwsSolutions-IAM5',
        reason: 'Table grants include the table’s own indexes (<table>/index/*), and X-Ray segment writes have no resource-level permissions.',
      },
      {
        id: 'AwsSolutions-L1',
        reason: 'The service targets Node.js 22, the runtime its tests and local mode run on; moving to a newer runtime is a deliberate upgrade.',
      },
      {
        id: 'AwsSolutions-COG2',
        reason: 'Users are created by administrators (no self sign-up); MFA is set by identity.mfa in the deployment config ("required" passes this rule).',
      },
      {
        id: 'AwsSolutions-COG3',
        reason: 'Cognito threat protection is a paid feature plan chosen per organisation.',
      },
      {
        id: 'AwsSolutions-COG8',
        reason: 'The Plus feature plan (threat protection) is a paid plan chosen per organisation; the pool works on Essentials.',
      },
      {
        id: 'AwsSolutions-SMG4',
        reason: 'The Vault credential is issued by Vault itself; Vault rotates it (AppRole secret ids and token TTLs), not Secrets Manager.',
      },
    ],
    // The API stack's nested stacks (one per application) hold the functions and methods these reasons cover.
    true,
  );
};
