/**
 * Which node each device of a batch is checked against, and which exemptions apply to it, fixed
 * when the batch starts: the devices listed on the version's nodes, those the nodes' selectors
 * select from NSO's inventory, and the tree's active exemptions by device. Pure: the start reads
 * the inventory and the exemptions and hands them here.
 */
import type { Exemption, FrozenExemption } from '../exemptions/model.js';
import { logger } from '../platform/logger.js';
import { Conflict } from '../platform/problem.js';
import { walkNodes, type Selector, type Version } from '../trees/config-model.js';
import { deviceNameProblem } from '../trees/config-checks.js';
import { selects, selectsAny, type DeviceFacts } from '../trees/selectors.js';
import type { NodeSelection } from './model.js';

/** Every selector of the version's nodes and of the exemptions: what the inventory is read for. */
export const selectorsOf = (version: Version, exemptions: readonly Exemption[]): Selector[] => [
  ...[...walkNodes(version.root)].flatMap(({ node }) => node.select ?? []),
  ...exemptions.flatMap((e) => (e.selector ? [e.selector] : [])),
];

/** The devices of a version by node path (listed and selected, in node order) and what the selectors chose. */
export interface Targets {
  readonly nodeOf: ReadonlyMap<string, string>;
  readonly selections: readonly NodeSelection[];
}

/**
 * Each device's node: listed devices where they are listed (the first node, as a write keeps a
 * device on one), then each node's selected devices in the inventory's order. A device chosen by
 * two nodes (listed on one and selected by another, or selected by two) is a 409 naming it and
 * both nodes. NSO names a device may not be (see {@link deviceNameProblem}) are left out.
 */
export const resolveTargets = (version: Version, inventory: readonly DeviceFacts[]): Targets => {
  const nodes = [...walkNodes(version.root)].map(({ path, node }) => ({ path: path.join('/'), node }));
  const nodeOf = new Map<string, string>();
  for (const { path, node } of nodes) for (const device of node.devices) if (!nodeOf.has(device)) nodeOf.set(device, path);
  const storable = inventory.filter((facts) => deviceNameProblem(facts.name) === undefined);
  if (storable.length < inventory.length)
    logger.warn('selectors leave out devices whose names cannot be stored', { skipped: inventory.length - storable.length });
  const selections: NodeSelection[] = [];
  const selectedBy = new Map<string, string>();
  for (const { path, node } of nodes) {
    if (!node.select?.length) continue;
    let count = 0;
    for (const facts of storable) {
      if (!selectsAny(node.select, facts)) continue;
      const other = selectedBy.get(facts.name) ?? (nodeOf.has(facts.name) && nodeOf.get(facts.name) !== path ? nodeOf.get(facts.name) : undefined);
      if (other !== undefined) {
        const how = selectedBy.has(facts.name) ? 'selected by' : 'listed on';
        throw new Conflict(
          `Device ${JSON.stringify(facts.name)} is ${how} node ${other} and selected by node ${path}: a device is checked against one node. Narrow a selector, or move the device; no batch was started.`,
          'device-on-two-nodes',
        );
      }
      if (nodeOf.has(facts.name)) continue; // listed on this very node
      selectedBy.set(facts.name, path);
      nodeOf.set(facts.name, path);
      count++;
    }
    selections.push({ node: path, select: node.select, devices: count });
  }
  return { nodeOf, selections };
};

/** The frozen form of an exemption: no device list, who changed it last. */
const frozen = (e: Exemption): FrozenExemption => ({ exemptionId: e.exemptionId, ruleId: e.ruleId, until: e.until, reason: e.reason, by: e.updatedBy });

/** The exemptions a batch freezes, and each device's by place among them. */
export interface FrozenExemptions {
  readonly exemptions: readonly FrozenExemption[];
  readonly placesOf: (device: string) => readonly number[];
}

/**
 * The exemptions that apply to some device of the batch and name a rule of its plan, in their
 * given order, and which apply to each device: those that list it, or whose selector selects it
 * (by what the inventory says of it; a device NSO does not know has only its name).
 */
export const freezeExemptions = (
  active: readonly Exemption[],
  devices: readonly string[],
  ruleIds: ReadonlySet<string>,
  inventory: ReadonlyMap<string, DeviceFacts>,
): FrozenExemptions => {
  const factsOf = (device: string): DeviceFacts => inventory.get(device) ?? { name: device, groups: new Set() };
  const appliesTo = (e: Exemption): ((device: string) => boolean) => {
    if (e.selector) return (device) => selects(e.selector!, factsOf(device));
    const names = new Set(e.devices ?? []);
    return (device) => names.has(device);
  };
  const byDevice = new Map<string, number[]>();
  const kept: FrozenExemption[] = [];
  for (const e of active.filter((x) => ruleIds.has(x.ruleId))) {
    let place: number | undefined;
    for (const device of devices.filter(appliesTo(e))) {
      place ??= kept.push(frozen(e)) - 1;
      byDevice.set(device, [...(byDevice.get(device) ?? []), place]);
    }
  }
  return { exemptions: kept, placesOf: (device) => byDevice.get(device) ?? [] };
};
