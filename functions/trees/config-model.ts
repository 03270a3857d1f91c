/**
 * What a golden-configuration tree holds: versions, each a hierarchy of nodes under `base`,
 * each node the devices assigned to it and the rules they must meet. Plain data and the pure
 * functions that walk it (inheritance, lookup by path or device); nothing here reads storage.
 */

/** A JSON value as rules carry it. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/**
 * `required`: the value at `path` contains `value` (without `value`: `path` exists).
 * `exact`: the value at `path` deep-equals `value`. `disallowed`: the value at `path` does not
 * contain `value` (without `value`: `path` does not exist).
 */
export const RULE_MODES = ['required', 'exact', 'disallowed'] as const;
export type RuleMode = (typeof RULE_MODES)[number];

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One check of a device's configuration (the object inside `tailf-ncs:config`). */
export interface Rule {
  /** Unique along any root-to-node path, so that an inherited rule is never shadowed. */
  readonly id: string;
  /** JSON Pointer (RFC 6901) into the device configuration; `""` is the whole object. */
  readonly path: string;
  readonly mode: RuleMode;
  readonly severity: Severity;
  /** What to look for; `{{name}}` in any string is replaced by the version's variable `name`. */
  readonly value?: JsonValue;
  /** `exact` only: arrays compare element by element instead of as unordered multisets. */
  readonly ordered?: boolean;
  readonly description?: string;
}

/** A node of a version: addressed by its path from the root (`base`, `base/wan`, …). */
export interface Node {
  /** Unique among its siblings; the root is always `base`. */
  readonly name: string;
  /** NSO device names assigned to this node; a device is on at most one node of a version. */
  readonly devices: readonly string[];
  readonly rules: readonly Rule[];
  readonly children: readonly Node[];
}

/** One version of a tree with its whole node hierarchy. */
export interface Version {
  /** The version's label, as listed in the tree summary's `versions`. */
  readonly name: string;
  /** Substituted for `{{name}}` in rule values. */
  readonly variables: Readonly<Record<string, string>>;
  readonly root: Node;
  readonly created: string;
  readonly createdBy: string;
  readonly lastUpdated: string;
  readonly lastUpdatedBy: string;
}

/** The name of every version's root node. */
export const ROOT_NODE = 'base';

/** An empty root: what a new tree's first version holds. */
export const emptyRoot = (): Node => ({ name: ROOT_NODE, devices: [], rules: [], children: [] });

/** `base/wan/pe` → `['base', 'wan', 'pe']`. */
export const splitNodePath = (path: string): string[] => path.split('/');

/**
 * The nodes from the root down to the node at `path` (root first), or `undefined` when some
 * node on the way does not exist.
 */
export const nodeChain = (root: Node, path: string | readonly string[]): Node[] | undefined => {
  const names = typeof path === 'string' ? splitNodePath(path) : path;
  if (names[0] !== root.name) return undefined;
  const chain = [root];
  let node = root;
  for (const name of names.slice(1)) {
    const child = node.children.find((c) => c.name === name);
    if (!child) return undefined;
    chain.push(child);
    node = child;
  }
  return chain;
};

/** The node at `path`, or `undefined`. */
export const findNode = (root: Node, path: string | readonly string[]): Node | undefined => nodeChain(root, path)?.at(-1);

/**
 * The rules a device on the node at `path` is checked against, in inheritance order: the
 * root's rules first, then each node's down to the node itself. `undefined` for an unknown path.
 */
export const inheritedRules = (root: Node, path: string | readonly string[]): Rule[] | undefined => nodeChain(root, path)?.flatMap((node) => node.rules);

/** Every node with its path, parents before children (depth first, in stored order). */
export const walkNodes = function* (root: Node, prefix: readonly string[] = []): Generator<{ readonly path: string[]; readonly node: Node }> {
  const path = [...prefix, root.name];
  yield { path, node: root };
  for (const child of root.children) yield* walkNodes(child, path);
};

/** The path (`base/…`) of the node `device` is assigned to, or `undefined` when it is on none. */
export const nodePathOfDevice = (root: Node, device: string): string | undefined => {
  for (const { path, node } of walkNodes(root)) if (node.devices.includes(device)) return path.join('/');
  return undefined;
};

/** Every device of the version with the path of its node and the rules it is checked against. */
export const deviceAssignments = (root: Node): { readonly device: string; readonly nodePath: string; readonly rules: readonly Rule[] }[] => {
  const out: { device: string; nodePath: string; rules: Rule[] }[] = [];
  const visit = (node: Node, path: string, inherited: readonly Rule[]): void => {
    const rules = [...inherited, ...node.rules];
    for (const device of node.devices) out.push({ device, nodePath: path, rules });
    for (const child of node.children) visit(child, `${path}/${child.name}`, rules);
  };
  visit(root, root.name, []);
  return out;
};
