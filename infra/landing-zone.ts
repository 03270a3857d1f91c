/**
 * What a governed account asks of every stack (docs/deployment.md, "Landing zone"): the
 * account and region it deploys to, the bootstrap it deploys with, a permissions boundary and
 * a path on every IAM role, and tags on every resource. Applied to a deployment's stacks from
 * `landingZone` in the config file.
 */
import { AspectPriority, Aspects, CfnResource, DefaultStackSynthesizer, type IAspect, type Stack, type StackProps, Tags } from 'aws-cdk-lib';
import { CfnRole, ManagedPolicy, PermissionsBoundary } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { LandingZoneSettings } from './config.js';

/** The environment and synthesizer of a stack of this deployment (each stack needs its own synthesizer). */
export const stackPlacement = (settings: LandingZoneSettings): Pick<StackProps, 'env' | 'synthesizer' | 'tags'> => ({
  // The stacks' own tags, given explicitly: with @aws-cdk/core:explicitStackTags, Tags.of tags the resources only.
  ...(Object.keys(settings.tags).length ? { tags: { ...settings.tags } } : {}),
  ...(settings.account && settings.region ? { env: { account: settings.account, region: settings.region } } : {}),
  ...(settings.bootstrapQualifier ? { synthesizer: new DefaultStackSynthesizer({ qualifier: settings.bootstrapQualifier }) } : {}),
});

/**
 * Sets the path of every IAM role in its scope: the roles CDK makes for constructs (and the
 * raw `AWS::IAM::Role` resources of custom resource providers) as well as the service's own.
 */
export class RolePath implements IAspect {
  constructor(private readonly path: string) {}
  visit(node: IConstruct): void {
    if (node instanceof CfnRole) node.path = this.path;
    else if (CfnResource.isCfnResource(node) && node.cfnResourceType === CfnRole.CFN_RESOURCE_TYPE_NAME) node.addPropertyOverride('Path', this.path);
  }
}

/** The boundary policy: an ARN as given, a name in the stack's own account. */
const boundaryPolicy = (scope: Stack, boundary: string) =>
  boundary.startsWith('arn:')
    ? ManagedPolicy.fromManagedPolicyArn(scope, 'PermissionsBoundary', boundary)
    : ManagedPolicy.fromManagedPolicyName(scope, 'PermissionsBoundary', boundary);

/** Applies the boundary, the role path and the tags to the stacks (their nested stacks and every resource in them included). */
export const applyLandingZone = (stacks: readonly Stack[], settings: LandingZoneSettings): void => {
  for (const stack of stacks) {
    if (settings.permissionsBoundary) PermissionsBoundary.of(stack).apply(boundaryPolicy(stack, settings.permissionsBoundary));
    if (settings.rolePath) Aspects.of(stack).add(new RolePath(settings.rolePath), { priority: AspectPriority.MUTATING });
    for (const [key, value] of Object.entries(settings.tags)) Tags.of(stack).add(key, value);
  }
};
