/**
 * `POST /configuration_manager/backups`: a batch that keeps the configuration of each device
 * (all the devices the adapter's NSO knows, or the named ones) in the configuration history,
 * grading nothing. It runs on the compliance engine (chunks, caps, retries, status routes) as a
 * batch of kind `backup`; see docs/compliance.md, "Backups".
 */
import { logger } from '../platform/logger.js';
import { BadRequest, UnprocessableContent } from '../platform/problem.js';
import { deviceNameProblem } from '../trees/config-checks.js';
import type { RelayGet } from './check.js';
import { MAX_BATCH_DEVICES } from './model.js';
import { readPagedList, type NsoList } from './nso-lists.js';
import { batchAdapter, launchBatch, type AdapterInfo, type LaunchDeps, type StartedBatch } from './service.js';

export interface StartBackupInput {
  readonly adapterId: string;
  /** Only these devices; default every device the adapter's NSO knows. */
  readonly devices?: readonly string[];
}

export interface BackupStartDeps extends LaunchDeps {
  readonly adapters: { get(name: string): Promise<AdapterInfo | undefined> };
  /** GETs through the relay: how the device list is read from NSO. */
  readonly relayGet: RelayGet;
  /** Devices asked for a page of NSO's device list; default {@link DEVICE_PAGE}. */
  readonly pageSize?: number;
}

/** Names NSO knows that a batch cannot keep: how many, and a few of them (each cut to 64 characters). */
export interface SkippedNames {
  readonly count: number;
  /** Why (the rule the first of them breaks). */
  readonly reason: string;
  readonly examples: readonly string[];
}

/** The names of NSO's device list a backup can keep, and those it leaves out. */
export interface DeviceList {
  readonly names: string[];
  readonly skipped?: SkippedNames;
}

/** A backup's start answer: the batch, and the devices NSO knows that it leaves out. */
export interface StartedBackup extends StartedBatch {
  readonly skipped?: SkippedNames;
}

/** Devices read from NSO per request: a page of names is about 30 KB of JSON. */
export const DEVICE_PAGE = 1000;
/** NSO's device list, names only (RFC 8040 `fields`). */
const DEVICE_LIST: NsoList = { path: '/restconf/data/tailf-ncs:devices/device?fields=name', member: 'tailf-ncs:device', noun: 'device' };

/**
 * Every device name the adapter's NSO knows, read a page at a time ({@link readPagedList}); more
 * than {@link MAX_BATCH_DEVICES} devices is a 400 (name them in `devices`, in several batches).
 */
export const listDevices = async (
  adapterId: string,
  relayGet: RelayGet,
  pageSize: number = DEVICE_PAGE,
  max: number = MAX_BATCH_DEVICES,
): Promise<DeviceList> => {
  const entries = await readPagedList(adapterId, relayGet, DEVICE_LIST, {
    pageSize,
    max,
    nothing: 'no backup was started (name the devices in `devices` instead)',
    tooMany: () =>
      new BadRequest(
        `The orchestrator behind adapter '${adapterId}' knows more than ${max} devices, more than one batch takes: name at most ${max} of them in \`devices\`, in several batches.`,
        [{ in: 'body', field: 'devices', message: `is required when the orchestrator knows more than ${max} devices` }],
      ),
  });
  return storableNames(
    adapterId,
    entries.map((entry) => entry.name),
  );
};

/**
 * The names a batch can keep, the others left out (counted, with a few examples, in the answer
 * and a warning line): a name NSO allows but a device name may not be (longer than 253
 * characters, a `/`, a control character) cannot key a report or a configuration, and would fail
 * its chunk at every retry. The same rule as the names a compliance batch or a backup's `devices`
 * accepts ({@link deviceNameProblem}).
 */
const storableNames = (adapterId: string, names: string[]): DeviceList => {
  const refused = names.filter((name) => deviceNameProblem(name) !== undefined);
  if (refused.length === 0) return { names };
  const skipped: SkippedNames = {
    count: refused.length,
    reason: deviceNameProblem(refused[0]!)!,
    examples: refused.slice(0, 3).map((name) => `${[...name].slice(0, 64).join('')}${[...name].length > 64 ? '…' : ''}`),
  };
  logger.warn('backup leaves out devices whose names cannot be stored', {
    adapterId,
    skipped: skipped.count,
    reason: skipped.reason,
    examples: skipped.examples,
  });
  return { names: names.filter((name) => deviceNameProblem(name) === undefined), skipped };
};

/** Starts a backup batch: 202 at once, the execution fetches and keeps each device's configuration. */
export const startBackup = async (input: StartBackupInput, deps: BackupStartDeps): Promise<StartedBackup> => {
  const adapter = batchAdapter(await deps.adapters.get(input.adapterId), input.adapterId, 'backups');
  const { names: devices, skipped } = input.devices ? { names: [...new Set(input.devices)] } : await listDevices(adapter.name, deps.relayGet, deps.pageSize);
  if (!devices.length)
    throw new UnprocessableContent(
      `The orchestrator behind adapter '${adapter.name}' knows no devices${skipped ? ` whose names can be kept (${skipped.count} left out: ${skipped.reason})` : ''}: there is nothing to back up.`,
      'no-devices',
    );
  const started = await launchBatch(
    { kind: 'backup', sync: 'none' },
    adapter,
    undefined,
    devices.map((device) => ({ device })),
    deps,
  );
  return skipped ? { ...started, skipped } : started;
};
