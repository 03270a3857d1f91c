/**
 * Encrypts every CloudWatch Logs log group of a stack (and its nested stacks) with a
 * customer-managed key: the functions' groups, the API access log, and any group added later,
 * without each construct having to be told. The key is the customer's: its policy must let
 * `logs.<region>.amazonaws.com` use it (docs/deployment.md, "Customer-managed keys"), or the
 * log group's creation fails.
 */
import type { IAspect } from 'aws-cdk-lib';
import { CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';

export class LogEncryption implements IAspect {
  constructor(private readonly keyArn: string) {}

  visit(node: IConstruct): void {
    if (node instanceof CfnLogGroup) node.kmsKeyId = this.keyArn;
  }
}
