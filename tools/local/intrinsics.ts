/**
 * CloudFormation intrinsic functions, evaluated against local values: what `Ref`, `Fn::GetAtt`,
 * `Fn::Join`, `Fn::Sub` and friends would have produced in the deployed stack, with local
 * names in place of the physical ids CloudFormation would have created.
 */

/** The parts of a template the resolver reads. */
export interface TemplateLike {
  readonly Resources?: Readonly<Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>>;
  readonly Parameters?: Readonly<Record<string, { readonly Type?: string; readonly Default?: unknown }>>;
  readonly Conditions?: Readonly<Record<string, unknown>>;
  readonly Mappings?: Readonly<Record<string, Record<string, Record<string, unknown>>>>;
}

/** How local resources are named; each returns undefined when it does not know the resource. */
export interface LocalNames {
  readonly region: string;
  readonly accountId: string;
  readonly stackName: string;
  /** The value of `Ref` for a resource (its physical id). */
  ref(logicalId: string, type: string): string | undefined;
  /** The value of `Fn::GetAtt` for a resource attribute. */
  getAtt(logicalId: string, type: string, attribute: string): unknown;
  /** Parameter values that override the template's defaults. */
  readonly parameters?: Readonly<Record<string, string>>;
}

/** A reference the resolver cannot give a local value (a parameter without default, an import). */
export class UnresolvableReference extends Error {
  constructor(readonly reference: string) {
    super(`no local value for ${reference}`);
    this.name = 'UnresolvableReference';
  }
}

/** The standard pseudo parameters, for the `aws` partition. */
const pseudo = (names: LocalNames, name: string): string | undefined => {
  switch (name) {
    case 'AWS::Region':
      return names.region;
    case 'AWS::AccountId':
      return names.accountId;
    case 'AWS::Partition':
      return 'aws';
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    case 'AWS::StackName':
      return names.stackName;
    case 'AWS::StackId':
      return `arn:aws:cloudformation:${names.region}:${names.accountId}:stack/${names.stackName}/00000000-0000-0000-0000-000000000000`;
    default:
      return undefined;
  }
};

/** Marks a property removed by `AWS::NoValue`. */
export const NO_VALUE: unique symbol = Symbol('AWS::NoValue');

/**
 * Resolves every intrinsic in `value`. Objects and arrays are walked; `AWS::NoValue` removes
 * the property or element that holds it.
 */
export const resolveIntrinsics = (value: unknown, template: TemplateLike, names: LocalNames): unknown => {
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve).filter((x) => x !== NO_VALUE);
    if (v === null || typeof v !== 'object') return v;
    const entries = Object.entries(v as Record<string, unknown>);
    if (entries.length === 1) {
      const [key, arg] = entries[0]!;
      if (key === 'Ref' || key.startsWith('Fn::') || key === 'Condition') return intrinsic(key, arg);
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of entries) {
      const r = resolve(x);
      if (r !== NO_VALUE) out[k] = r;
    }
    return out;
  };

  const ref = (name: string): unknown => {
    if (name === 'AWS::NoValue') return NO_VALUE;
    const p = pseudo(names, name);
    if (p !== undefined) return p;
    const parameter = template.Parameters?.[name];
    if (parameter) {
      const given = names.parameters?.[name];
      if (given !== undefined) return given;
      if (parameter.Default !== undefined) return parameter.Default;
      throw new UnresolvableReference(`parameter ${name}`);
    }
    const resource = template.Resources?.[name];
    if (!resource) throw new UnresolvableReference(`Ref ${name}`);
    return names.ref(name, resource.Type) ?? name;
  };

  const getAtt = (logicalId: string, attribute: string): unknown => {
    const resource = template.Resources?.[logicalId];
    if (!resource) throw new UnresolvableReference(`Fn::GetAtt ${logicalId}.${attribute}`);
    const value = names.getAtt(logicalId, resource.Type, attribute);
    if (value === undefined) throw new UnresolvableReference(`Fn::GetAtt ${logicalId}.${attribute}`);
    return value;
  };

  const condition = (name: string): boolean => {
    const c = template.Conditions?.[name];
    if (c === undefined) throw new UnresolvableReference(`Condition ${name}`);
    return Boolean(resolve(c));
  };

  const str = (v: unknown): string => {
    const r = resolve(v);
    if (typeof r === 'string') return r;
    if (typeof r === 'number' || typeof r === 'boolean') return String(r);
    throw new UnresolvableReference(`a string from ${JSON.stringify(v)}`);
  };

  const sub = (text: string, variables: Record<string, unknown>): string =>
    text.replaceAll(/\$\{(!?)([^}]*)\}/g, (_, literal: string, name: string) => {
      if (literal) return `\${${name}}`;
      if (name in variables) return str(variables[name]);
      const dot = name.indexOf('.');
      if (dot > 0 && !name.startsWith('AWS::')) return String(getAtt(name.slice(0, dot), name.slice(dot + 1)));
      const r = ref(name);
      if (r === NO_VALUE) return '';
      return String(r);
    });

  const intrinsic = (key: string, arg: unknown): unknown => {
    switch (key) {
      case 'Ref':
        return ref(str(arg));
      case 'Fn::GetAtt': {
        const [id, attr] = typeof arg === 'string' ? (arg.split(/\.(.*)/s) as [string, string]) : (arg as [unknown, unknown]).map(str);
        return getAtt(id!, attr!);
      }
      case 'Fn::Join': {
        const [sep, list] = arg as [string, unknown];
        const items = resolve(list);
        if (!Array.isArray(items)) throw new UnresolvableReference('Fn::Join list');
        return items.map((i) => (typeof i === 'string' ? i : String(i))).join(sep);
      }
      case 'Fn::Sub': {
        if (typeof arg === 'string') return sub(arg, {});
        const [text, variables] = arg as [string, Record<string, unknown>];
        return sub(text, variables ?? {});
      }
      case 'Fn::Select': {
        const [index, list] = arg as [unknown, unknown];
        const items = resolve(list);
        const i = Number(resolve(index));
        if (!Array.isArray(items) || !Number.isInteger(i) || i < 0 || i >= items.length) {
          throw new UnresolvableReference('Fn::Select index');
        }
        return items[i];
      }
      case 'Fn::Split': {
        const [sep, text] = arg as [string, unknown];
        return str(text).split(sep);
      }
      case 'Fn::Base64':
        return Buffer.from(str(arg)).toString('base64');
      case 'Fn::GetAZs':
        return ['a', 'b', 'c'].map((z) => `${names.region}${z}`);
      case 'Fn::FindInMap': {
        const [map, top, second] = (arg as unknown[]).map(str);
        const found = template.Mappings?.[map!]?.[top!]?.[second!];
        if (found === undefined) throw new UnresolvableReference(`Fn::FindInMap ${map}.${top}.${second}`);
        return resolve(found);
      }
      case 'Fn::If': {
        const [name, yes, no] = arg as [string, unknown, unknown];
        return resolve(condition(name) ? yes : no);
      }
      case 'Fn::Equals': {
        const [a, b] = arg as [unknown, unknown];
        return JSON.stringify(resolve(a)) === JSON.stringify(resolve(b));
      }
      case 'Fn::Not':
        return !resolve((arg as unknown[])[0]);
      case 'Fn::And':
        return (arg as unknown[]).every((c) => Boolean(resolve(c)));
      case 'Fn::Or':
        return (arg as unknown[]).some((c) => Boolean(resolve(c)));
      case 'Condition':
        return condition(str(arg));
      default:
        throw new UnresolvableReference(key);
    }
  };

  return resolve(value);
};
