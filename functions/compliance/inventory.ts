/**
 * What a batch's selectors select on, read from the adapter's NSO when the batch starts: every
 * device's name, `platform/name` and NED id, and the members of the device groups the selectors
 * name (nested groups included), each list read a page at a time. Only what some selector needs
 * is asked for: no platform without a `platform` selector, no groups without a `group` one.
 */
import type { Selector } from '../trees/config-model.js';
import type { DeviceFacts } from '../trees/selectors.js';
import { BadRequest } from '../platform/problem.js';
import type { RelayGet } from './check.js';
import { readPagedList, type NsoEntry, type PagedRead } from './nso-lists.js';

/** Devices read from NSO per request (a name, a platform and a NED id: about 150 bytes each). */
export const INVENTORY_PAGE = 1000;
/** Device groups read per request: a group's entry lists its devices, so a page of groups can be large. */
export const GROUP_PAGE = 50;
/**
 * Devices an inventory holds at most: selectors may choose a part of a fleet larger than one
 * batch (about 100 bytes a device in memory; 80 pages of 1,000 at most).
 */
export const MAX_INVENTORY_DEVICES = 200_000;
/** Device groups read at most. */
export const MAX_INVENTORY_GROUPS = 20_000;

const DEVICES = '/restconf/data/tailf-ncs:devices/device';
const GROUPS = '/restconf/data/tailf-ncs:devices/device-group';
/** Where NSO keeps a device's NED id: under the case of `device-type` the device has. */
const NED_CASES = ['cli', 'netconf', 'generic', 'snmp'] as const;

/** Reads the inventory the selectors need from the adapter's NSO. */
export type InventoryReader = (adapterId: string, selectors: readonly Selector[]) => Promise<DeviceFacts[]>;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const member = (entry: unknown, name: string): unknown => (typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[name] : undefined);

/** The NED id of a device entry's type (`device-type/cli/ned-id` and the other cases). */
const nedOf = (entry: NsoEntry): string | undefined => {
  for (const kind of NED_CASES) {
    const ned = text(member(member(entry['device-type'], kind), 'ned-id'));
    if (ned) return ned;
  }
  return undefined;
};

/**
 * The devices of each group `wanted` names, nested groups included: a group's `device-name`s and
 * `member`s (NSO's flattened view, when it answers it), and those of every group its
 * `device-group` leaf-list names, each group visited once (a cycle ends where it began).
 */
export const groupMembers = (groups: readonly NsoEntry[], wanted: ReadonlySet<string>): Map<string, Set<string>> => {
  const byName = new Map(groups.map((g) => [g.name, g]));
  const out = new Map<string, Set<string>>();
  for (const name of wanted) {
    const devices = new Set<string>();
    const seen = new Set<string>();
    const stack = [name];
    while (stack.length) {
      const group = byName.get(stack.pop()!);
      if (!group || seen.has(group.name)) continue;
      seen.add(group.name);
      for (const device of [...texts(group['device-name']), ...texts(group['member'])]) devices.add(device);
      stack.push(...texts(group['device-group']));
    }
    out.set(name, devices);
  }
  return out;
};

/**
 * Reads the inventory the selectors need through `relayGet`: a 502 names the page NSO answered
 * badly (nothing is started), a 400 says when NSO knows more than {@link MAX_INVENTORY_DEVICES}.
 */
export const inventoryReader =
  (relayGet: RelayGet, pageSize: number = INVENTORY_PAGE, groupPageSize: number = GROUP_PAGE): InventoryReader =>
  async (adapterId, selectors) => {
    const wanted = new Set(selectors.flatMap((s) => (s.group === undefined ? [] : [s.group])));
    const fields = [
      'name',
      ...(selectors.some((s) => s.platform !== undefined) ? ['platform/name'] : []),
      ...(selectors.some((s) => s.ned !== undefined) ? NED_CASES.map((kind) => `device-type/${kind}/ned-id`) : []),
    ];
    const read = (size: number, max: number, what: string): PagedRead => ({
      pageSize: size,
      max,
      nothing: 'no batch was started',
      tooMany: () =>
        new BadRequest(
          `The orchestrator behind adapter '${adapterId}' knows more than ${max} ${what}, more than selectors are resolved over: list the devices on the nodes instead.`,
        ),
    });
    const [devices, groups] = await Promise.all([
      readPagedList(
        adapterId,
        relayGet,
        { path: `${DEVICES}?fields=${fields.join(';')}`, member: 'tailf-ncs:device', noun: 'device' },
        read(pageSize, MAX_INVENTORY_DEVICES, 'devices'),
      ),
      wanted.size
        ? readPagedList(
            adapterId,
            relayGet,
            { path: `${GROUPS}?fields=name;device-name;device-group;member`, member: 'tailf-ncs:device-group', noun: 'device-group' },
            read(groupPageSize, MAX_INVENTORY_GROUPS, 'device groups'),
          )
        : Promise.resolve([]),
    ]);
    // Each device's groups, from each group's members: one step per membership, not devices × groups.
    const groupsOf = new Map<string, Set<string>>();
    for (const [group, names] of groupMembers(groups, wanted)) {
      for (const name of names) {
        const set = groupsOf.get(name);
        if (set) set.add(group);
        else groupsOf.set(name, new Set([group]));
      }
    }
    return devices.map((entry): DeviceFacts => {
      const platform = text(member(entry['platform'], 'name'));
      const ned = nedOf(entry);
      return {
        name: entry.name,
        groups: groupsOf.get(entry.name) ?? new Set(),
        ...(platform ? { platform } : {}),
        ...(ned ? { ned } : {}),
      };
    });
  };
