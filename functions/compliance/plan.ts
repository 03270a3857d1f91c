/**
 * How a batch's frozen plan and its chunks are written in DynamoDB items, and read back.
 *
 * The plan is stored as a list of nodes, each once: its name, the place of its parent in the
 * list (parents come first) and its own rules as the version holds them. A chunk names each
 * device's node by its place in that list. So nothing is repeated per rule or per device, and
 * the stored plan is never larger than the version's own JSON (`{ variables, root }`, which
 * `CONFIG_LIMITS.versionBytes` bounds): a node's entry `{"name":…,"parent":N,"rules":…}` is its
 * version entry `{"name":…,"devices":…,"rules":…,"children":…}` less at least 14 bytes (`parent`
 * is at most 3 digits while `nodesPerVersion` is 200), which pays for the list's own punctuation.
 *
 * The tree's exemptions the batch froze are kept once in the plan; a chunk entry names those of
 * its device by their places (`[device, node, [places]]`).
 *
 * Plans and chunks stored by earlier releases (rules by node path, each rule carrying its
 * node's path; chunks of `[device, node path]`; no exemptions) are still read.
 */
import type { FrozenExemption } from '../exemptions/model.js';
import type { Rule } from '../trees/config-model.js';
import type { BatchPlan, ChunkDevice, PlanRule } from './model.js';

/** A node as the stored plan holds it: no path, no devices, no children. */
interface StoredNode {
  readonly name: string;
  /** The parent's place in the list; absent for `base`. */
  readonly parent?: number;
  readonly rules: readonly Rule[];
}

/** The plan as its item's `plan` attribute holds it (JSON). */
interface StoredPlan {
  readonly variables: Readonly<Record<string, string>>;
  readonly nodes: readonly StoredNode[];
  /** Absent when no exemption applied (and in plans stored before exemptions). */
  readonly exemptions?: readonly FrozenExemption[];
}

/** A plan as releases before node lists stored it. */
interface LegacyPlan {
  readonly variables: Readonly<Record<string, string>>;
  readonly rulesByNode: Readonly<Record<string, readonly PlanRule[]>>;
}

const withoutNode = ({ node: _node, ...rule }: PlanRule): Rule => rule;

/** Each node's place in the plan's list (`plan.nodes`), by path. */
const placesOf = (plan: BatchPlan): Map<string, number> => new Map(plan.nodes.map((path, i) => [path, i]));

/** The JSON of the plan's item: each node once, its rules without their node's path. */
export const encodePlan = (plan: BatchPlan): string => {
  const places = placesOf(plan);
  const nodes = plan.nodes.map((path): StoredNode => {
    const cut = path.lastIndexOf('/');
    const parent = cut < 0 ? undefined : places.get(path.slice(0, cut));
    if (cut >= 0 && (parent === undefined || parent >= places.get(path)!)) throw new RangeError(`the plan lists node ${path} before its parent`);
    return { name: path.slice(cut + 1), ...(parent === undefined ? {} : { parent }), rules: (plan.rulesByNode[path] ?? []).map(withoutNode) };
  });
  return JSON.stringify({ variables: plan.variables, nodes, ...(plan.exemptions?.length ? { exemptions: plan.exemptions } : {}) } satisfies StoredPlan);
};

/** The plan an item holds, in either stored form. */
export const decodePlan = (json: string): BatchPlan => {
  const stored = JSON.parse(json) as StoredPlan | LegacyPlan;
  // Its chunks name nodes by path: no list to refer to.
  if ('rulesByNode' in stored) return { variables: stored.variables, rulesByNode: stored.rulesByNode, nodes: [] };
  const paths: string[] = [];
  const rulesByNode: Record<string, PlanRule[]> = {};
  for (const { name, parent, rules } of stored.nodes) {
    const path = parent === undefined ? name : `${paths[parent]!}/${name}`;
    paths.push(path);
    if (rules.length) rulesByNode[path] = rules.map((rule) => ({ ...rule, node: path }));
  }
  return { variables: stored.variables, rulesByNode, nodes: paths, ...(stored.exemptions?.length ? { exemptions: stored.exemptions } : {}) };
};

/**
 * A device as a chunk stores it: its name, its node's place in the plan's list, and the places in
 * the plan's `exemptions` of those that apply to it (left out when none does).
 */
export type ChunkEntry = readonly [device: string, node: number] | readonly [device: string, node: number, exemptions: readonly number[]];

/** Makes the chunk entries of devices assigned to the plan's nodes. */
export const chunkEntries = (plan: BatchPlan): ((assignment: ChunkDevice) => ChunkEntry) => {
  const places = placesOf(plan);
  const exemptions = plan.exemptions?.length ?? 0;
  return ({ device, node, exemptions: applying }) => {
    const place = node === undefined ? undefined : places.get(node);
    if (place === undefined) throw new RangeError(`device ${device} is on node ${node}, which the plan does not list`);
    if (!applying?.length) return [device, place];
    if (applying.some((i) => !Number.isInteger(i) || i < 0 || i >= exemptions))
      throw new RangeError(`device ${device} names an exemption the plan does not hold`);
    return [device, place, applying];
  };
};

/**
 * The devices of a chunk's JSON: entries of node places in `plan`, or (earlier releases) of node
 * paths; or, in a backup batch (no plan), device names.
 */
export const decodeChunk = (json: string, plan?: BatchPlan): ChunkDevice[] =>
  (JSON.parse(json) as ([string, number | string] | [string, number, number[]] | string)[]).map((entry) => {
    if (typeof entry === 'string') return { device: entry };
    const [device, node, exemptions] = entry;
    const path = typeof node === 'string' ? node : plan?.nodes[node];
    if (path === undefined) throw new RangeError(`a chunk names node ${node}, which the plan does not list`);
    return exemptions?.length ? { device, node: path, exemptions } : { device, node: path };
  });
