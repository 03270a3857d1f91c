/**
 * The stacks of one deployment as one template: the stateful stack, the API stack and its
 * nested stacks (one per application), merged so that what reads a template (the local stack,
 * the bench, the tests) sees the whole service as CloudFormation would run it.
 *
 * - A nested stack's resources get its construct id as a prefix (`Runtime` + `GetProfile…`);
 *   its parameters are replaced by the values its parent passes, and the parent's
 *   `Fn::GetAtt [<nested stack>, Outputs.<name>]` by the output's value.
 * - `Fn::ImportValue` of an export of another stack of the set is replaced by the exported value.
 * - Two top-level stacks that use one logical id are refused (the service's never do).
 */
type Json = Record<string, unknown>;

export interface StackTemplate {
  readonly Resources: Readonly<Record<string, { readonly Type: string; readonly Properties?: Json; readonly Metadata?: Json; readonly DependsOn?: unknown }>>;
  readonly Parameters?: Readonly<Record<string, Json>>;
  readonly Outputs?: Readonly<Record<string, { readonly Value: unknown; readonly Export?: { readonly Name?: unknown } }>>;
  readonly Conditions?: Readonly<Record<string, unknown>>;
  readonly Mappings?: Readonly<Record<string, unknown>>;
}

/** Reads the template of a nested stack resource (`AWS::CloudFormation::Stack`), from its `aws:asset:path` metadata. */
export type NestedReader = (resource: StackTemplate['Resources'][string], logicalId: string) => StackTemplate | undefined;

const NESTED = 'AWS::CloudFormation::Stack';

/** The nested stack's short name: its construct id (`NetconfigApi/Runtime.NestedStack/Runtime.NestedStackResource` → `Runtime`). */
const nestedPrefix = (resource: StackTemplate['Resources'][string], logicalId: string): string => {
  const cdkPath = resource.Metadata?.['aws:cdk:path'];
  const match = typeof cdkPath === 'string' ? /([^/]+)\.NestedStackResource$/.exec(cdkPath) : null;
  // Without path metadata, from the logical id CDK gives it: `<id>NestedStack<id>NestedStackResource<hash>`.
  const fromId = /^([A-Za-z0-9]+?)NestedStack\1NestedStackResource[0-9A-F]{8}$/.exec(logicalId)?.[1];
  return (match?.[1] ?? fromId ?? logicalId).replace(/[^A-Za-z0-9]/g, '');
};

interface Inlined {
  readonly resources: Record<string, StackTemplate['Resources'][string]>;
  readonly outputs: Record<string, unknown>;
  readonly exports: Record<string, unknown>;
  readonly conditions: Record<string, unknown>;
  readonly mappings: Record<string, unknown>;
}

const inline = (template: StackTemplate, prefix: string, parameters: Readonly<Record<string, unknown>>, read: NestedReader): Inlined => {
  const own = template.Resources;
  const nestedOutputs = new Map<string, Record<string, unknown>>();
  const out: Inlined = { resources: {}, outputs: {}, exports: {}, conditions: {}, mappings: {} };

  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!value || typeof value !== 'object') return value;
    const v = value as Json;
    const keys = Object.keys(v);
    if (keys.length === 1 && typeof v['Ref'] === 'string') {
      const target = v['Ref'];
      if (target in parameters) return parameters[target];
      if (target in own) return { Ref: prefix + target };
      return v;
    }
    if (keys.length === 1 && v['Fn::GetAtt'] !== undefined) {
      const att = typeof v['Fn::GetAtt'] === 'string' ? (v['Fn::GetAtt'] as string).split('.') : (v['Fn::GetAtt'] as unknown[]);
      const [target, ...rest] = att as [string, ...string[]];
      const attribute = rest.join('.');
      if (own[target]?.Type === NESTED && attribute.startsWith('Outputs.')) {
        const outputs = nestedOutputs.get(target);
        const name = attribute.slice('Outputs.'.length);
        if (!outputs || !(name in outputs)) throw new Error(`nested stack ${target} has no output ${name}`);
        return outputs[name];
      }
      if (target in own) return { 'Fn::GetAtt': [prefix + target, attribute] };
      return v;
    }
    if (keys.length === 1 && typeof v['Condition'] === 'string') return { Condition: prefix + v['Condition'] };
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rewrite(x)]));
  };

  // Nested stacks first: the parent's other resources and outputs may read their outputs.
  // A nested stack's parameters may read a sibling's outputs: each is inlined once its siblings are.
  const pending = Object.entries(own).filter(([, r]) => r.Type === NESTED);
  while (pending.length) {
    const ready = pending.findIndex(([, r]) => {
      const text = JSON.stringify(r.Properties?.['Parameters'] ?? {});
      return pending.every(([other]) => !text.includes(`"${other}"`));
    });
    if (ready < 0) throw new Error(`nested stacks read each other's outputs in a cycle: ${pending.map(([id]) => id).join(', ')}`);
    const [id, r] = pending.splice(ready, 1)[0]!;
    const nested = read(r, id);
    if (!nested) throw new Error(`nested stack ${id}: its template is not in the assembly`);
    const values = Object.fromEntries(Object.entries((r.Properties?.['Parameters'] ?? {}) as Json).map(([k, x]) => [k, rewrite(x)]));
    const inner = inline(nested, `${prefix}${nestedPrefix(r, id)}`, values, read);
    for (const [rid, res] of Object.entries(inner.resources)) {
      if (out.resources[rid]) throw new Error(`logical id ${rid} of nested stack ${id} is used twice`);
      out.resources[rid] = res;
    }
    Object.assign(out.exports, inner.exports);
    Object.assign(out.conditions, inner.conditions);
    Object.assign(out.mappings, inner.mappings);
    nestedOutputs.set(id, inner.outputs);
  }
  for (const [id, r] of Object.entries(own)) {
    if (r.Type === NESTED) continue;
    const dependsOn = r.DependsOn === undefined ? undefined : [r.DependsOn].flat().map((d) => prefix + String(d));
    out.resources[prefix + id] = { ...(rewrite(r) as object), ...(dependsOn ? { DependsOn: dependsOn } : {}) } as StackTemplate['Resources'][string];
  }
  for (const [name, o] of Object.entries(template.Outputs ?? {})) {
    const value = rewrite(o.Value);
    out.outputs[name] = value;
    if (typeof o.Export?.Name === 'string') out.exports[o.Export.Name] = value;
  }
  for (const [name, c] of Object.entries(template.Conditions ?? {})) out.conditions[prefix + name] = rewrite(c);
  Object.assign(out.mappings, template.Mappings ?? {});
  return out;
};

/** Replaces `Fn::ImportValue` of a known export by its value. */
const resolveImports = (value: unknown, exports: Readonly<Record<string, unknown>>): unknown => {
  if (Array.isArray(value)) return value.map((x) => resolveImports(x, exports));
  if (!value || typeof value !== 'object') return value;
  const v = value as Json;
  const name = v['Fn::ImportValue'];
  if (Object.keys(v).length === 1 && typeof name === 'string' && name in exports) return resolveImports(exports[name], exports);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveImports(x, exports)]));
};

/**
 * One template of several stacks (each with its nested stacks inlined), in the order given:
 * a stack's exports are visible to all. Logical ids of top-level stacks keep no prefix.
 */
export const mergeStacks = (
  stacks: readonly { readonly name: string; readonly template: StackTemplate }[],
  read: NestedReader,
): StackTemplate & { Resources: Record<string, StackTemplate['Resources'][string]> } => {
  const resources: Record<string, StackTemplate['Resources'][string]> = {};
  const exports: Record<string, unknown> = {};
  const conditions: Record<string, unknown> = {};
  const mappings: Record<string, unknown> = {};
  const outputs: Record<string, { Value: unknown }> = {};
  for (const { name, template } of stacks) {
    const inlined = inline(template, '', {}, read);
    for (const [id, r] of Object.entries(inlined.resources)) {
      if (resources[id]) throw new Error(`stacks ${stacks.map((s) => s.name).join(', ')}: logical id ${id} (of ${name}) is used twice`);
      resources[id] = r;
    }
    Object.assign(exports, inlined.exports);
    Object.assign(conditions, inlined.conditions);
    Object.assign(mappings, inlined.mappings);
    for (const [k, value] of Object.entries(inlined.outputs)) outputs[k] = { Value: value };
  }
  return {
    Resources: resolveImports(resources, exports) as Record<string, StackTemplate['Resources'][string]>,
    Outputs: resolveImports(outputs, exports) as Record<string, { Value: unknown }>,
    ...(Object.keys(conditions).length ? { Conditions: resolveImports(conditions, exports) as Record<string, unknown> } : {}),
    ...(Object.keys(mappings).length ? { Mappings: mappings } : {}),
  };
};
