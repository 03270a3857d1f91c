/** The service's stacks synthesized and read as one template, as the local stack reads them (tools/local/stacks.ts). */
import { App, NestedStack, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { mergeStacks, type StackTemplate } from '../../tools/local/stacks.js';
import { appContext } from '../../infra/app-context.js';
import { NetconfigService, type NetconfigStackProps } from '../../infra/stack.js';

/**
 * The context of a test app: cdk.json's (the feature flags a deploy synthesizes with), assets not bundled.
 */
export const NO_BUNDLING: Record<string, unknown> = { ...appContext(), 'aws:cdk:bundling-stacks': [] };

/** One template of the stacks of a service (nested stacks inlined, their ids prefixed with the part's name). */
export const serviceTemplate = (service: NetconfigService): Template => {
  const nested = new Map<string, StackTemplate>();
  for (const part of Object.values(service.api.parts)) {
    nested.set(service.api.getLogicalId(part.nestedStackResource as CfnElement), Template.fromStack(part).toJSON() as StackTemplate);
  }
  const merged = mergeStacks(
    [service.data, service.api].map((s) => ({ name: s.stackName, template: Template.fromStack(s).toJSON() as StackTemplate })),
    (_resource, id) => nested.get(id),
  );
  return Template.fromJSON(merged as unknown as Record<string, unknown>);
};

/** The logical id of a construct's resource in {@link serviceTemplate}. */
export const logicalIdOf = (construct: IConstruct): string => {
  const element = ((construct as { node: { defaultChild?: IConstruct } }).node.defaultChild ?? construct) as CfnElement;
  const stack = Stack.of(element);
  const id = stack.getLogicalId(element);
  return stack instanceof NestedStack ? `${stack.node.id}${id}` : id;
};

export const synthService = (stackName = 'Netconfig', props: NetconfigStackProps = {}) => {
  const app = new App({ context: NO_BUNDLING });
  const service = new NetconfigService(app, stackName, props);
  return { app, service, template: serviceTemplate(service) };
};
