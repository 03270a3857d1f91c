/** The service's stacks synthesized and read as one template, as the local stack reads them (tools/local/stacks.ts). */
import { App, Aspects, NestedStack, Stack, type CfnElement } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { mergeStacks, type StackTemplate } from '../../tools/local/stacks.js';
import { appContext } from '../../infra/app-context.js';
import { addNagSuppressions } from '../../infra/nag.js';
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

/** Puts the service under cdk-nag's AwsSolutions and NIST 800-53 R5 packs, with its suppressions: before the synth. */
export const checkNag = (service: NetconfigService): void => {
  addNagSuppressions(service);
  for (const stack of [service.data, service.api]) {
    Aspects.of(stack).add(new AwsSolutionsChecks());
    Aspects.of(stack).add(new NIST80053R5Checks());
  }
};

/** The findings cdk-nag left open (nested stacks included), one line each: after the synth. */
export const nagFindings = (service: NetconfigService): string[] =>
  [service.data, service.api].flatMap((stack) => {
    const finding = Match.stringLikeRegexp('^(AwsSolutions|NIST\\.800\\.53\\.R5)-');
    const annotations = Annotations.fromStack(stack);
    return [...annotations.findError('*', finding), ...annotations.findWarning('*', finding)].map((e) => `${e.id}: ${String(e.entry.data).split('\n')[0]}`);
  });
