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

/**
 * Over the places a rule's path matches (a path with `*` segments, or a predicate over an
 * array): `all` (default) must hold, `any` one must, `none` may.
 */
export const RULE_MATCHES = ['all', 'any', 'none'] as const;
export type RuleMatch = (typeof RULE_MATCHES)[number];

/** Inclusive bounds of a number; either may be left out. A bound may be a `{{variable}}` string. */
export interface NumberRange {
  readonly min?: number | string;
  readonly max?: number | string;
}

/**
 * One check of a device's configuration (the object inside `tailf-ncs:config`).
 *
 * **Places.** `path` is a JSON Pointer in which a segment `*` stands for every member of an
 * object or every element of an array at that level (a member literally named `*` cannot be
 * named). The path's *matches* are the concrete pointers it expands to (array elements by
 * index: `/interface/GigabitEthernet/2/description`); segments after a `*` are followed even
 * where nothing is (that match's value is absent), but a `*` below an absent place or a
 * scalar expands to nothing. A path without `*` has one match, itself. A predicate (below) over
 * an array tests its elements: the array's elements are the matches, as if the path ended in
 * `/*`.
 *
 * **One match holds** when, with `{{variables}}` substituted:
 * - `required`: its value is present, contains `value` (when given), passes every predicate
 *   given, and with `strict` (array `value` only) has no element that contains no element of
 *   `value` (NSO's `strict`: no list entries besides the expected ones);
 * - `exact`: its value is present, deep-equals `value` (when given) and passes every predicate;
 * - `disallowed`: its value is absent, or does not both contain `value` (when given) and pass
 *   every predicate given.
 *
 * **Predicates** test a scalar (an object never passes one): `pattern` an RE2 regular
 * expression found anywhere in the value's text (strings, numbers and booleans as JSON writes
 * them; a `{{variable}}` inside it matches the variable's text literally); `oneOf` the value
 * deep-equals one of the list; `cidr` the value (a string: an IPv4 or IPv6 address, or a prefix
 * `addr/len`) lies inside one of the listed prefixes; `range` the value (a number, or a string
 * of a decimal number as YANG writes 64-bit integers) lies between the bounds, inclusive.
 *
 * **The rule passes** by `match`: `all` when every match holds and there is at least one (with
 * `allowEmpty`, or in mode `disallowed`, no match at all passes too); `any` when one match holds
 * (no match: passes only with `allowEmpty`); `none` when no match holds. The result lists the
 * failing matches by concrete pointer: for `all` those that do not hold, for `none` those that
 * do, for `any` every match.
 */
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
  /** How many matches must hold (see above); default `all`. Only for a path with `*` or a predicate. */
  readonly match?: RuleMatch;
  /** No match at all passes for `all` and `any` (NSO's `allow-empty`). */
  readonly allowEmpty?: boolean;
  /** RE2 regular expression the value's text must contain a match of. */
  readonly pattern?: string;
  /** Values the value must deep-equal one of. */
  readonly oneOf?: readonly JsonValue[];
  /** IPv4/IPv6 prefixes the value (address or prefix) must lie inside one of. */
  readonly cidr?: readonly string[];
  /** Inclusive numeric bounds. */
  readonly range?: NumberRange;
  /** `required` with an array `value`: no elements besides the expected ones. */
  readonly strict?: boolean;
}

/**
 * Selects devices by what NSO knows of them, resolved through the adapter's NSO when a batch
 * starts. The members given must all hold (at least one is given): `group` the device is in
 * NSO's device group of that name (nested groups included); `namePattern` an RE2 pattern found
 * in the device name; `platform` NSO's `platform/name` of the device (`ios-xr`), compared
 * case-insensitively; `ned` the NED id of the device's type (`cisco-iosxr-cli-7.52`), compared
 * case-insensitively and without its `module:` prefix.
 */
export interface Selector {
  readonly group?: string;
  readonly namePattern?: string;
  readonly platform?: string;
  readonly ned?: string;
}

/** A node of a version: addressed by its path from the root (`base`, `base/wan`, …). */
export interface Node {
  /** Unique among its siblings; the root is always `base`. */
  readonly name: string;
  /** NSO device names assigned to this node; a device is on at most one node of a version. */
  readonly devices: readonly string[];
  /**
   * Devices assigned besides those listed: every device any selector selects, resolved when a
   * batch starts. A device chosen by two nodes (listed or selected) refuses the batch.
   */
  readonly select?: readonly Selector[];
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
