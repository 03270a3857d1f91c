/**
 * The event bus of the compliance events (functions/compliance/events.ts): by default a custom
 * bus the stateful stack creates, `<service name>-compliance`, encrypted with the deployment's
 * customer key for `events` when one is given (else EventBridge's AWS owned key); or an existing
 * bus named by `events.busArn`, which the stack only uses.
 *
 * The created bus has no resource policy: only principals of this account whose IAM policies
 * allow it can put events on it or add rules to it, which is what EventBridge allows without one.
 * It has no archive: every event is derived from records the compliance table keeps (a batch's
 * totals and delta, a plan's trend and device history), so a consumer that missed events reads
 * them there; a consumer that wants replay can add an archive to the bus (docs/deployment.md,
 * "Compliance events").
 */
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { EventBus, type IEventBus } from 'aws-cdk-lib/aws-events';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { EVENT_SOURCE } from '../../functions/compliance/history-model.js';
import type { FunctionPermission } from './service-function.js';

export interface ComplianceEventBusProps {
  readonly serviceName: string;
  /** An existing bus (`events.busArn`); absent: one is created. */
  readonly busArn?: string | undefined;
  /** The created bus's customer-managed key; absent: an AWS owned key. */
  readonly key?: IKey | undefined;
}

export class ComplianceEventBus extends Construct {
  readonly bus: IEventBus;
  /** Whether the bus is the stack's own. */
  readonly created: boolean;

  constructor(scope: Construct, id: string, props: ComplianceEventBusProps) {
    super(scope, id);
    this.created = !props.busArn;
    this.bus = props.busArn
      ? EventBus.fromEventBusArn(this, 'Bus', props.busArn)
      : new EventBus(this, 'Bus', {
          eventBusName: `${props.serviceName}-compliance`,
          description: `${props.serviceName}: compliance events (source ${EVENT_SOURCE}): batches ended, devices whose grade changed`,
          ...(props.key ? { kmsKey: props.key } : {}),
        });
  }

  /**
   * Puts events of the compliance source on this bus, and nothing else: no other bus, no other
   * source (the `events:source` condition), no rule or target changes.
   */
  permission(): FunctionPermission {
    return {
      key: `events:${this.node.path}`,
      grant: (grantee: IGrantable) => {
        grantee.grantPrincipal.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['events:PutEvents'],
            resources: [this.bus.eventBusArn],
            conditions: { StringEquals: { 'events:source': EVENT_SOURCE } },
          }),
        );
      },
    };
  }

  /**
   * The environment of a function that publishes: the created bus by name, a given bus by ARN
   * (PutEvents needs the ARN for a bus of another account).
   */
  environment(): Record<string, string> {
    return { EVENT_BUS_NAME: this.created ? this.bus.eventBusName : this.bus.eventBusArn };
  }
}
