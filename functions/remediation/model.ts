/**
 * Remediation runs: what a compliance batch found, fixed through NSO. A run takes a completed
 * batch's failing devices, generates each one's transaction (generate.ts), and sends it to NSO
 * as a dry-run (`dry-run=native`: NSO says what it would send, nothing is committed) or commits
 * it (NSO gives the commit's rollback id, recorded before anything else happens to the device),
 * then fetches the device again and grades it. A rollback run applies the recorded rollback ids.
 *
 * This module is the contract between the routes that start and show runs, the durable engine
 * that runs them, the store that keeps them, and the NSO client that sends transactions.
 */
import type { DeviceFailure } from '../compliance/check.js';
import type { Grade } from '../compliance/grading.js';
import type { RuleRemediation } from './generate.js';
import type { YangPatch } from './patch.js';

declare const shown: unique symbol;
/**
 * NSO's dry-run output as it may be stored and shown: masked (the rule of reports' diffs) and cut
 * to their bound, once, by the NSO client (nso.ts `shownOutput`), the one place NSO's text comes
 * in. The type carries that fact: the engine, the store and the routes keep and show it as it is.
 */
export type ShownOutput = string & { readonly [shown]: true };

/** Remediation ids: 24 lowercase hex digits (96 random bits), as batch ids. */
export const REMEDIATION_ID_PATTERN = '^[0-9a-f]{24}$';

export const REMEDIATION_MODES = ['dry-run', 'apply'] as const;
export type RemediationMode = (typeof REMEDIATION_MODES)[number];

export const REMEDIATION_STATUSES = ['running', 'completed', 'failed'] as const;
export type RemediationStatus = (typeof REMEDIATION_STATUSES)[number];

/**
 * A run's counts. `planned`: devices with a transaction to send. `dryRun`: dry-runs NSO
 * answered. `applied`: commits NSO accepted (a rollback id is recorded for each). `fixed` /
 * `stillFailing`: applied devices graded again (every remediated rule passes / some still
 * fails). `failed`: devices whose step failed (the device's `error` says why).
 * `rolledBack`: devices whose commit a rollback run undid.
 */
export interface RemediationTotals {
  readonly planned: number;
  readonly dryRun: number;
  readonly applied: number;
  readonly fixed: number;
  readonly stillFailing: number;
  readonly failed: number;
  readonly rolledBack: number;
}

export const emptyRemediationTotals = (): RemediationTotals => ({ planned: 0, dryRun: 0, applied: 0, fixed: 0, stillFailing: 0, failed: 0, rolledBack: 0 });

/** Who started a run or its rollback, as the authorizer named them. */
export interface Actor {
  readonly subject: string;
  readonly roles: readonly string[];
}

/** A rollback of an applied run. */
export interface RollbackRun {
  /** 1 for the first rollback of the run; a rollback started again after one that failed is the next. */
  readonly attempt?: number;
  readonly status: RemediationStatus;
  readonly startedBy: Actor;
  readonly started: string;
  readonly finished?: string;
}

/** A run as `GET /configuration_manager/remediations/{remediationId}` shows it. */
export interface Remediation {
  readonly remediationId: string;
  readonly batchId: string;
  readonly adapterId: string;
  readonly treeId: string;
  readonly version: string;
  readonly mode: RemediationMode;
  readonly commitQueue: boolean;
  /** The rules asked for (all failing rules when absent). */
  readonly ruleIds?: readonly string[];
  readonly status: RemediationStatus;
  /** Devices the run takes (the batch's failing devices, or those asked for). */
  readonly devices: number;
  readonly totals: RemediationTotals;
  readonly startedBy: Actor;
  readonly started: string;
  readonly finished?: string;
  /** Why a failed run failed (a sentence for people). */
  readonly reason?: string;
  readonly rollback?: RollbackRun;
}

/**
 * Where a device stands. `pending`: not run yet. `nothing-to-do`: no failing rule could be
 * remediated (its `rules` say why). `dry-run`: NSO answered the dry-run. `committing`: the
 * commit was sent and its outcome is not recorded yet (after a crash the engine finds the
 * commit's rollback file by its label instead of committing again). `applied`: committed,
 * not graded yet. `fixed` / `still-failing`: graded after the commit. `failed`: see `error`.
 * `rolled-back`: a rollback run applied its rollback file.
 */
export const DEVICE_STATES = ['pending', 'nothing-to-do', 'dry-run', 'committing', 'applied', 'fixed', 'still-failing', 'failed', 'rolled-back'] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];

/** One device of a run, as `GET …/remediations/{remediationId}/devices` shows it. */
export interface RemediationDevice {
  readonly device: string;
  readonly state: DeviceState;
  /** The transaction sent (or to be sent): one YANG Patch, secrets masked when shown. */
  readonly patch?: YangPatch;
  /** The patch was too large to keep with the rest of the record (it was sent whole). */
  readonly patchOmitted?: true;
  /** One entry per failing rule: its edits in the patch, or why it has none. */
  readonly rules: readonly RuleRemediation[];
  /** Entries left out of `rules` (from the end) to keep the record inside DynamoDB's item size. */
  readonly rulesOmitted?: number;
  /** NSO's native dry-run output: what it would send to the device (masked, bounded). */
  readonly dryRun?: ShownOutput;
  readonly dryRunTruncated?: true;
  /** The commit's rollback id (NSO's rollback file number). */
  readonly rollbackId?: number;
  /** The commit queue item, when the commit went through the commit queue. */
  readonly commitQueueId?: string;
  /** The grade after the commit. */
  readonly gradeAfter?: Grade;
  /** Why the device's step failed (`kind` as in compliance reports, `reason` for people). */
  readonly error?: { readonly kind: string; readonly reason: string };
  /**
   * What the rollback run did for this device: `applying` while its rollback file is being
   * applied (found so after a crash, it is never applied again: `failed`, kind `rollback-unknown`).
   */
  readonly rollback?: {
    readonly state: 'applying' | 'rolled-back' | 'failed';
    readonly at: string;
    readonly error?: { readonly kind: string; readonly reason: string };
  };
  readonly updatedAt: string;
}

/** A dry-run's output as the NSO client answers it: masked and bounded, `truncated` when cut. */
export interface DryRunOutput {
  readonly output: ShownOutput;
  readonly truncated?: true;
}

/** What the commit was told, so that it can be found again in NSO's rollback files. */
export interface CommitOptions {
  /** Through NSO's commit queue (`commit-queue=sync`). */
  readonly commitQueue: boolean;
  /** The rollback file's label, unique per device of a run (engine.ts `commitLabel`). */
  readonly label: string;
  /** The commit comment (who started the run, and the batch). */
  readonly comment: string;
}

/** A device's result from NSO, or the failure that is a fact about the device (a fault of ours throws). */
export type NsoOutcome<T> = T | DeviceFailure;

/** A commit's failure; `rollbackId` when the commit is in NSO's database all the same (a rollback undoes it). */
export type CommitFailure = DeviceFailure & { readonly rollbackId?: number };

/** Sends remediation's transactions to NSO through the relay (its client, SSRF rules, secrets, timeouts). */
export interface NsoTransactions {
  /** NSO's native dry-run of the patch: the device's own commands or diff, nothing committed (masked; `truncated` when cut). */
  dryRun(adapterId: string, patch: YangPatch): Promise<NsoOutcome<DryRunOutput>>;
  /**
   * Commits the patch; NSO's rollback id of the commit (and the queue item when queued). A
   * failure after the commit landed in NSO's database (a failed commit queue item) carries its
   * rollback id. An answer that does not say (lost, or without a readable id) is looked up by label.
   */
  commit(
    adapterId: string,
    patch: YangPatch,
    options: CommitOptions,
  ): Promise<{ readonly rollbackId: number; readonly commitQueueId?: string } | CommitFailure>;
  /**
   * The rollback id of the commit made with `label`, when NSO has one (recovery after a crash
   * between commit and record): the one file with the label written by the adapter's user;
   * more than one is the failure `commit-unknown`.
   */
  findRollback(adapterId: string, label: string): Promise<NsoOutcome<{ readonly rollbackId?: number }>>;
  /**
   * Applies one rollback file (`apply-rollback-file`, `selective`), undoing that commit and no later one. NSO takes no commit
   * parameters on an action, so the commit it makes has no label of ours: the engine marks the
   * device `applying` before it asks, and never asks twice.
   */
  applyRollback(adapterId: string, rollbackId: number): Promise<NsoOutcome<{ readonly rollbackId?: number }>>;
}

/** What starting a run stores. */
export interface NewRemediation {
  readonly remediationId: string;
  readonly batchId: string;
  readonly adapterId: string;
  readonly treeId: string;
  readonly version: string;
  readonly mode: RemediationMode;
  readonly commitQueue: boolean;
  readonly ruleIds?: readonly string[];
  /** Schema paths of lists to their key names (see patch.ts `listKeysFrom`). */
  readonly listKeys: Readonly<Record<string, readonly string[]>>;
  /** The devices to run, each with the node of the batch's plan it was checked on. */
  readonly devices: readonly { readonly device: string; readonly node: string }[];
  readonly startedBy: Actor;
  readonly started: string;
  /** When the run's items expire (epoch seconds): the batch's own expiry. */
  readonly expiresAt: number;
}

/** A page of a run's devices, by name. */
export interface DevicePage {
  readonly items: readonly RemediationDevice[];
  readonly next?: string;
}

/** Keeps runs and their devices (DynamoDB, the compliance table). */
export interface RemediationStore {
  /**
   * Stores a new run (status `running`), then its devices (`pending`); a failure storing the
   * devices ends the run `failed`. An `apply` run takes its adapter's lease (a 409
   * `remediation-running` while another apply run or rollback holds it).
   */
  create(run: NewRemediation): Promise<void>;
  get(remediationId: string): Promise<Remediation | undefined>;
  /** What the engine needs to run: the run, its list keys and its devices with their nodes. */
  getWork(
    remediationId: string,
  ): Promise<{ readonly run: Remediation; readonly listKeys: NewRemediation['listKeys']; readonly devices: NewRemediation['devices'] } | undefined>;
  listDevices(remediationId: string, page: { readonly limit: number; readonly after?: string }): Promise<DevicePage>;
  /** A device's record (for the engine's recovery). */
  getDevice(remediationId: string, device: string): Promise<RemediationDevice | undefined>;
  /** Replaces a device's record; counts what changed in the run's totals exactly once per state reached. */
  putDevice(remediationId: string, record: RemediationDevice): Promise<void>;
  /** The records of the devices from `first` to `last`, in `getWork`'s order (what a chunk reads once). */
  readDevices(remediationId: string, first: string, last: string): Promise<Map<string, RemediationDevice>>;
  /** Replaces the records of distinct devices together (few requests), counting as `putDevice` does. */
  putDevices(remediationId: string, records: readonly RemediationDevice[]): Promise<void>;
  /**
   * Replaces the final records of a `dry-run` run's devices (each with its node) in plain batch
   * writes, counting nothing: their chunk counts them ({@link RemediationStore.countChunk}).
   */
  putUncounted(remediationId: string, records: readonly UncountedRecord[]): Promise<void>;
  /**
   * Sets chunk `chunk`'s counts on the run from its devices' stored records, `first` to `last`
   * (every device past `pending`, by {@link RemediationStore.putDevice}'s counters): the same
   * records set the same counts, however often it runs, and a count never replaces one of more devices.
   * `stored`: the states of those records when the caller knows them (every write of them
   * acknowledged, nothing else writing them): they are not read again.
   */
  countChunk(remediationId: string, chunk: number, first: string, last: string, stored?: readonly DeviceState[]): Promise<void>;
  /** Ends the run (and releases the adapter's lease it holds). */
  finish(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string, reason?: string): Promise<void>;
  /**
   * Starts the rollback of a finished (`completed` or `failed`) `apply` run and takes its
   * adapter's lease (a 409 `remediation-running` while another run holds it): refused (false)
   * when the run is not a finished apply, or has a rollback that is running, completed, or
   * failed after it reached a device (one that failed before may be started again).
   */
  startRollback(remediationId: string, by: Actor, at: string): Promise<boolean>;
  /** Ends the rollback (and releases the adapter's lease it holds). */
  finishRollback(remediationId: string, status: Exclude<RemediationStatus, 'running'>, at: string): Promise<void>;
}

/** A dry-run device's final record and the node it is graded under (the record replaces the whole item). */
export interface UncountedRecord {
  readonly record: RemediationDevice;
  readonly node: string;
}

/** What starting a rollback reads besides the store's contract: only the devices' rollback ids. */
export interface RollbackIdsReader {
  /** The rollback ids the run's devices recorded that are not rolled back yet, newest commit first. */
  rollbackIds(remediationId: string): Promise<number[]>;
}

/** The event that starts a durable run: small by design. */
export interface RemediationEvent {
  readonly remediationId: string;
  /** `rollback`: apply the run's recorded rollback ids, newest commit first. */
  readonly action: 'run' | 'rollback';
  /** The rollback's attempt (1 when absent): an execution of an earlier attempt does nothing. */
  readonly attempt?: number;
}
