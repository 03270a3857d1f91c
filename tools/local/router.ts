/**
 * API Gateway's resource matching: a request path is matched segment by segment against the
 * resource tree, a literal segment before a `{param}`, a `{param}` before a greedy `{proxy+}`;
 * a trailing slash is ignored. Then the method: the exact HTTP method, else `ANY`.
 * Path parameter values are passed as the client sent them (API Gateway does not decode them).
 */
import type { MethodSpec } from './template.js';

export interface RouteMatch {
  readonly method: MethodSpec;
  /** The resource path template, e.g. `/adapters/{name}`. */
  readonly resourcePath: string;
  readonly pathParameters: Readonly<Record<string, string>>;
}

interface Node {
  readonly literals: Map<string, Node>;
  param?: { readonly name: string; readonly node: Node };
  greedy?: { readonly name: string; readonly node: Node };
  /** HTTP method (or ANY) → method, when this node is a resource with methods. */
  readonly methods: Map<string, MethodSpec>;
  resourcePath?: string;
}

const node = (): Node => ({ literals: new Map(), methods: new Map() });

const PARAM = /^\{([^{}+]+)\}$/;
const GREEDY = /^\{([^{}+]+)\+\}$/;

/** Splits a path into segments: `/a/b/` → `['a', 'b']`, `/` → `[]`. `undefined` for `//` inside. */
export const segments = (path: string): string[] | undefined => {
  const trimmed = path.replace(/^\//, '').replace(/\/$/, '');
  if (trimmed === '') return [];
  const parts = trimmed.split('/');
  return parts.some((p) => p === '') ? undefined : parts;
};

export class Router {
  readonly #root = node();

  constructor(methods: readonly MethodSpec[]) {
    for (const method of methods) this.#add(method);
  }

  #add(method: MethodSpec): void {
    let current = this.#root;
    const parts = segments(method.resourcePath) ?? [];
    parts.forEach((part, i) => {
      const greedy = GREEDY.exec(part);
      const param = PARAM.exec(part);
      if (greedy) {
        if (i !== parts.length - 1) throw new Error(`${method.resourcePath}: a greedy parameter must be the last segment`);
        current.greedy ??= { name: greedy[1]!, node: node() };
        current = current.greedy.node;
      } else if (param) {
        if (current.param && current.param.name !== param[1]) {
          throw new Error(`${method.resourcePath}: two parameters at one level ({${current.param.name}} and {${param[1]}})`);
        }
        current.param ??= { name: param[1]!, node: node() };
        current = current.param.node;
      } else {
        let next = current.literals.get(part);
        if (!next) current.literals.set(part, (next = node()));
        current = next;
      }
    });
    current.resourcePath = method.resourcePath;
    current.methods.set(method.httpMethod, method);
  }

  /**
   * The resource the path selects (the most specific one that has methods), or undefined.
   * Backtracks: `/a/b/d` reaches `/a/{x}/d` when `/a/b` has no `d` below it.
   */
  #resource(parts: readonly string[]): { node: Node; params: Record<string, string> } | undefined {
    const walk = (current: Node, i: number, params: Record<string, string>): { node: Node; params: Record<string, string> } | undefined => {
      if (i === parts.length) return current.methods.size ? { node: current, params } : undefined;
      const part = parts[i]!;
      const literal = current.literals.get(part);
      const viaLiteral = literal && walk(literal, i + 1, params);
      if (viaLiteral) return viaLiteral;
      if (current.param) {
        const viaParam = walk(current.param.node, i + 1, Object.assign(Object.create(null) as Record<string, string>, params, { [current.param.name]: part }));
        if (viaParam) return viaParam;
      }
      if (current.greedy?.node.methods.size) {
        return {
          node: current.greedy.node,
          params: Object.assign(Object.create(null) as Record<string, string>, params, { [current.greedy.name]: parts.slice(i).join('/') }),
        };
      }
      return undefined;
    };
    return walk(this.#root, 0, Object.create(null) as Record<string, string>);
  }

  /** The method serving `httpMethod path` (path without stage and query), or undefined (API Gateway's 403/404). */
  match(httpMethod: string, path: string): RouteMatch | undefined {
    const parts = segments(path);
    if (!parts) return undefined;
    const found = this.#resource(parts);
    if (!found) return undefined;
    const method = found.node.methods.get(httpMethod.toUpperCase()) ?? found.node.methods.get('ANY');
    if (!method) return undefined;
    return { method, resourcePath: found.node.resourcePath!, pathParameters: found.params };
  }
}
