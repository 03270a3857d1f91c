/**
 * `POST /configuration_manager/compliance_reports`: freezes what the batch checks (the
 * version's rules by node, its variables, the devices and their nodes, in chunks: those listed
 * and those the nodes' selectors select from NSO's inventory; the tree's exemptions that apply,
 * by device), records the batch, and starts its durable execution. Answers at once; the
 * execution does the work, and needs neither NSO's inventory nor the exemption store again.
 */
import { SETTING_BOUNDS } from '../runtime/profile-model.js';
import { randomBytes } from 'node:crypto';
import { walkNodes, type Version } from '../trees/config-model.js';
import { BadRequest, Conflict, ContentTooLarge, InternalError, NotFound, ServiceUnavailable } from '../platform/problem.js';
import type { Exemption, ExemptionSource } from '../exemptions/model.js';
import type { DeviceFacts } from '../trees/selectors.js';
import type { InventoryReader } from './inventory.js';
import { MAX_BATCH_DEVICES, type BatchPlan, type ChunkDevice, type DeviceAssignment, type PlanRule, type SyncMode } from './model.js';
import { chunkEntries, encodePlan, type ChunkEntry } from './plan.js';
import { freezeExemptions, resolveTargets, selectorsOf } from './targeting.js';
import { MAX_CHUNK_DEVICES, MAX_CHUNKS, type ComplianceStore, type NewBatch } from './store.js';

export interface StartBatchInput {
  readonly treeId: string;
  readonly version: string;
  readonly adapterId: string;
  /** Only these devices of the version; default every device assigned to one of its nodes. */
  readonly devices?: readonly string[];
  /** What NSO is asked before each device is graded; default `check`. */
  readonly sync?: SyncMode;
  /** The compliance plan the batch runs for (its history and trend), if any. */
  readonly planId?: string;
}

export interface StartedBatch {
  readonly batchId: string;
  readonly status: 'running';
  readonly total: number;
}

/** Reads one version of a tree: `undefined` when the tree or the version does not exist. */
export type VersionReader = (treeId: string, label: string) => Promise<{ readonly tree: boolean; readonly version?: Version }>;

/** What the batch needs to know of the adapter; `state` once adapters have a lifecycle. */
export interface AdapterInfo {
  readonly name: string;
  readonly state?: 'RUNNING' | 'STOPPED';
  /** The adapter's own fetch cap, over {@link StartDeps.concurrency}. */
  readonly complianceConcurrency?: number;
}

export interface StartDeps {
  readonly versions: VersionReader;
  readonly adapters: { get(name: string): Promise<AdapterInfo | undefined> };
  readonly store: ComplianceStore;
  /** Starts the durable execution of the batch (named after it: starting twice runs it once). */
  readonly startExecution: (batchId: string) => Promise<void>;
  readonly now: () => Date;
  readonly newId?: () => string;
  /** Days reports and batches are kept (DynamoDB TTL). */
  readonly retentionDays: number;
  /** Days a plan's history (trend point, device points and states) is kept; default 400 (`historyRetentionDays`). */
  readonly historyRetentionDays?: number;
  /** Concurrent config fetches on the adapter, unless the adapter sets its own. */
  readonly concurrency: number;
  /** Devices per chunk at most (one checkpointed step each); default {@link CHUNK_SIZE}. */
  readonly chunkSize?: number;
  /** Reads NSO's inventory when a node or an active exemption has a selector. */
  readonly inventory?: InventoryReader;
  /** The tree's exemptions: those active when the batch starts are frozen in it. */
  readonly exemptions?: ExemptionSource;
}

/**
 * Devices per chunk at most: 50,000 devices make 50 chunks, about 100 durable operations. Each
 * chunk costs a few requests whatever its size (its read, its count, its checkpoints; its
 * reports go in hand-ins of up to the whole chunk), so fewer, larger chunks spend less per device; a chunk
 * that runs again skips the devices it already reported, so its size costs nothing on a retry.
 */
export const CHUNK_SIZE = 1000;

/**
 * A chunk's device list at most, as UTF-8 bytes of the JSON its item stores (DynamoDB: 400 KB
 * an item). An entry is `["<device>",<node's place in the plan>]`: at most 767 bytes (253 UTF-16
 * units of 3 bytes each, the quotes, the place), so a chunk also closes when it would pass this,
 * after about 390 devices of the longest names.
 */
export const CHUNK_BYTES = 300_000;

/**
 * Splits devices into chunks of at most `size` devices and {@link CHUNK_BYTES} of stored JSON, in
 * order; `entry` is how the chunk's item stores a device (see plan.ts).
 */
export const chunkDevices = <D extends ChunkDevice>(devices: readonly D[], entry: (assignment: D) => ChunkEntry | string, size: number = CHUNK_SIZE): D[][] => {
  const chunks: D[][] = [];
  let chunk: D[] = [];
  let bytes = 2; // the list's brackets
  for (const assignment of devices) {
    // After a comma unless first: the item's own encoding (ComplianceStore.create).
    const entryBytes = Buffer.byteLength(JSON.stringify(entry(assignment)), 'utf8');
    if (chunk.length >= size || (chunk.length > 0 && bytes + 1 + entryBytes > CHUNK_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 2;
    }
    bytes += (chunk.length ? 1 : 0) + entryBytes;
    chunk.push(assignment);
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
};

export const newBatchId = (): string => randomBytes(12).toString('hex');

/**
 * The plan and the devices of a version (all, or the named ones). The plan keeps the nodes some
 * device is checked against and their ancestors, in the version's order (parents first), and
 * those nodes' rules. `nodeOf` is each device's node: by default the devices listed on the nodes
 * (the first node that lists one); {@link resolveTargets} adds the selected ones.
 */
export const planBatch = (
  version: Version,
  only?: readonly string[],
  nodeOf: ReadonlyMap<string, string> = resolveTargets(version, []).nodeOf,
): { plan: BatchPlan; devices: DeviceAssignment[] } => {
  const rulesByNode: Record<string, PlanRule[]> = {};
  const paths: string[] = [];
  for (const { path, node } of walkNodes(version.root)) {
    const name = path.join('/');
    paths.push(name);
    if (node.rules.length) rulesByNode[name] = node.rules.map((rule) => ({ ...rule, node: name }));
  }
  let devices: DeviceAssignment[];
  if (only) {
    const unknown = [...new Set(only)].filter((d) => !nodeOf.has(d));
    if (unknown.length) {
      throw new BadRequest(
        `The request is invalid: ${unknown.length} device(s) are not assigned to any node of version '${version.name}' (${unknown
          .slice(0, 5)
          .map((d) => JSON.stringify(d))
          .join(', ')}${unknown.length > 5 ? ', …' : ''}), so there is nothing to check them against.`,
        [{ in: 'body', field: 'devices', message: 'names devices not assigned to a node of the version (listed or selected)' }],
      );
    }
    devices = [...new Set(only)].map((device) => ({ device, node: nodeOf.get(device)! }));
  } else devices = [...nodeOf].map(([device, node]) => ({ device, node }));
  // Only the nodes some device is checked against (their chains) are kept.
  const used = new Set<string>();
  for (const node of new Set(devices.map((d) => d.node))) {
    const names = node.split('/');
    for (let i = 1; i <= names.length; i++) used.add(names.slice(0, i).join('/'));
  }
  for (const name of Object.keys(rulesByNode)) if (!used.has(name)) delete rulesByNode[name];
  return { plan: { variables: version.variables, rulesByNode, nodes: paths.filter((path) => used.has(path)) }, devices };
};

/** The adapter a batch runs through: 404 when there is none, 409 `adapter-stopped` when it is stopped. */
export const batchAdapter = (adapter: AdapterInfo | undefined, name: string, work: string): AdapterInfo => {
  if (!adapter) throw new NotFound(`No adapter is named '${name}'.`);
  if (adapter.state === 'STOPPED') throw new Conflict(`Adapter '${adapter.name}' is stopped; start it before running ${work} through it.`, 'adapter-stopped');
  return adapter;
};

/**
 * The stored plan's bytes at most: with its key and expiry, inside DynamoDB's 400 KB item. A
 * version's plan alone stays under it (see plan.ts); the exemptions a batch freezes add to it.
 */
export const MAX_PLAN_BYTES = 390_000;

export const startBatch = async (input: StartBatchInput, deps: StartDeps): Promise<StartedBatch> => {
  const [found, named] = await Promise.all([deps.versions(input.treeId, input.version), deps.adapters.get(input.adapterId)]);
  if (!found.tree) throw new NotFound(`No tree has the id '${input.treeId}'.`);
  if (!found.version) throw new NotFound(`Tree '${input.treeId}' has no version '${input.version}'.`);
  const adapter = batchAdapter(named, input.adapterId, 'compliance');
  const active = (await deps.exemptions?.active(input.treeId, deps.now())) ?? [];
  const inventory = await readInventory(found.version, active, adapter, deps);
  const { nodeOf, selections } = resolveTargets(found.version, inventory);
  const { plan, devices } = planBatch(found.version, input.devices, nodeOf);
  if (devices.length > MAX_BATCH_DEVICES) {
    throw new BadRequest(
      `Version '${input.version}' assigns ${devices.length} devices (listed and selected), more than one batch takes (${MAX_BATCH_DEVICES}): name at most ${MAX_BATCH_DEVICES} of them in \`devices\`, in several batches.`,
      [{ in: 'body', field: 'devices', message: `is required when the version assigns more than ${MAX_BATCH_DEVICES} devices` }],
    );
  }
  const frozen = withExemptions(plan, devices, active, inventory);
  return launchBatch(
    {
      treeId: input.treeId,
      version: input.version,
      sync: input.sync ?? 'check',
      ...(input.planId ? { planId: input.planId } : {}),
      ...(selections.length ? { selections } : {}),
    },
    adapter,
    frozen.plan,
    frozen.devices,
    deps,
  );
};

/** NSO's inventory when a node or an exemption selects devices; none otherwise (nothing is read). */
const readInventory = async (version: Version, active: readonly Exemption[], adapter: AdapterInfo, deps: StartDeps): Promise<DeviceFacts[]> => {
  const selectors = selectorsOf(version, active);
  if (!selectors.length) return [];
  if (!deps.inventory) throw new InternalError('a batch with device selectors was started without an inventory reader');
  return deps.inventory(adapter.name, selectors);
};

/** The plan with the exemptions that apply frozen in it, and each device with its own; 413 when they do not fit the plan's item. */
const withExemptions = (
  plan: BatchPlan,
  devices: readonly DeviceAssignment[],
  active: readonly Exemption[],
  inventory: readonly DeviceFacts[],
): { plan: BatchPlan; devices: ChunkDevice[] } => {
  if (!active.length) return { plan, devices: [...devices] };
  const ruleIds = new Set(Object.values(plan.rulesByNode).flatMap((rules) => rules.map((r) => r.id)));
  const { exemptions, placesOf } = freezeExemptions(
    active,
    devices.map((d) => d.device),
    ruleIds,
    new Map(inventory.map((facts) => [facts.name, facts])),
  );
  const frozen: BatchPlan = exemptions.length ? { ...plan, exemptions } : plan;
  const bytes = Buffer.byteLength(encodePlan(frozen), 'utf8');
  if (bytes > MAX_PLAN_BYTES) {
    throw new ContentTooLarge(
      `The version's rules with the ${exemptions.length} exemptions that apply to this batch take ${bytes} bytes, more than a batch keeps (${MAX_PLAN_BYTES}): delete exemptions no longer needed, or shorten their reasons.`,
    );
  }
  return {
    plan: frozen,
    devices: devices.map((d) => {
      const places = placesOf(d.device);
      return places.length ? { ...d, exemptions: places } : d;
    }),
  };
};

/** What recording and starting a batch needs. */
export type LaunchDeps = Omit<StartDeps, 'versions' | 'adapters'>;

/**
 * Chunks a batch's devices, records the batch (with its plan: a backup has none) and starts its
 * durable execution; a batch that cannot be started is ended `failed` and the caller told 503.
 */
export const launchBatch = async (
  what: Pick<NewBatch, 'kind' | 'treeId' | 'version' | 'sync' | 'planId' | 'selections'>,
  adapter: AdapterInfo,
  plan: BatchPlan | undefined,
  devices: readonly ChunkDevice[],
  deps: LaunchDeps,
): Promise<StartedBatch> => {
  const size = deps.chunkSize ?? CHUNK_SIZE;
  // Report keys hold a device's position in its chunk in 4 digits, and the batch item the set of counted chunks.
  if (!Number.isInteger(size) || size < 1 || size > MAX_CHUNK_DEVICES) throw new RangeError(`a chunk of ${size} devices is out of range`);
  const chunks = chunkDevices(devices, plan ? chunkEntries(plan) : ({ device }) => device, size);
  if (chunks.length > MAX_CHUNKS) throw new RangeError(`${chunks.length} chunks are more than a batch can count (${MAX_CHUNKS})`);
  const batchId = (deps.newId ?? newBatchId)();
  const started = deps.now();
  await deps.store.create(
    {
      batchId,
      ...what,
      adapterId: adapter.name,
      total: devices.length,
      started: started.toISOString(),
      chunks: chunks.length,
      concurrency: adapter.complianceConcurrency ?? deps.concurrency,
      expiresAt: Math.floor(started.getTime() / 1000) + deps.retentionDays * 86_400,
      ...(what.planId
        ? { historyExpiresAt: Math.floor(started.getTime() / 1000) + (deps.historyRetentionDays ?? SETTING_BOUNDS.historyRetentionDays.default) * 86_400 }
        : {}),
    },
    plan,
    chunks,
  );
  try {
    await deps.startExecution(batchId);
  } catch (error) {
    await deps.store.finish(batchId, 'failed', deps.now().toISOString(), undefined, 'The batch could not be started.').catch(() => undefined);
    throw Object.assign(new ServiceUnavailable('The compliance engine could not be started; retry later.'), { cause: error });
  }
  return { batchId, status: 'running', total: devices.length };
};
