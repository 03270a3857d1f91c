/** Reading the API out of a synthesized template: the full path of each API Gateway resource, and the methods. */
import type { Template } from 'aws-cdk-lib/assertions';

export type Resources = Record<
  string,
  { Type: string; Properties: Record<string, any>; DependsOn?: string[]; DeletionPolicy?: string; UpdateReplacePolicy?: string }
>;

/** Full path of every API Gateway resource id, from PathPart/ParentId. */
export const resourcePaths = (resources: Resources): Map<string, string> => {
  const paths = new Map<string, string>();
  const resolve = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const res = resources[id];
    if (res?.Type !== 'AWS::ApiGateway::Resource') return '';
    const parent = res.Properties['ParentId'];
    const parentPath = parent?.Ref ? resolve(parent.Ref) : '';
    const full = `${parentPath}/${res.Properties['PathPart']}`;
    paths.set(id, full);
    return full;
  };
  for (const id of Object.keys(resources)) resolve(id);
  return paths;
};

export interface Method {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly props: Record<string, any>;
}

export const methods = (template: Template): Method[] => {
  const resources = template.toJSON().Resources as Resources;
  const paths = resourcePaths(resources);
  return Object.entries(resources)
    .filter(([, r]) => r.Type === 'AWS::ApiGateway::Method')
    .map(([id, r]) => {
      const ref = r.Properties['ResourceId'];
      const path = ref?.Ref ? paths.get(ref.Ref)! : '/';
      return { id, method: r.Properties['HttpMethod'], path, props: r.Properties };
    });
};
