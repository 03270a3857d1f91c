/**
 * The NSO simulator's transactions, as remediation uses NSO's (functions/remediation/nso.ts):
 *
 * - `PATCH /restconf/data` with `application/yang-patch+json` (RFC 8072): the edits, grouped by
 *   device, applied with functions/remediation/patch.ts `applyEdits` (its meaning of each
 *   operation; list keys from {@link FLEET_LIST_KEYS}); atomic: one refused edit refuses the
 *   whole patch (400 `ietf-restconf:errors`, the edit named) and nothing changes.
 * - `dry-run=native`: nothing changes; the answer is NSO's `dry-run-result` with, per device
 *   changed, the simulator's native output (a unified diff of the pretty-printed configuration).
 * - a commit changes NSO's copy (CDB) and the device (a device changed behind NSO's back is
 *   refused, as NSO refuses a commit to an out-of-sync device), keeps a numbered rollback file
 *   (fixed number from 10000, label, comment, the devices' configurations before the commit),
 *   and with `rollback-id=true` answers `tailf-restconf:result` with the rollback id;
 *   `commit-queue` (`sync`, `async`, `bypass`) answers the queue item's id.
 * - the commit parameters come as NSO's separate query parameters or as NSO 6.7's one `params`
 *   value (`params=dry-run=native,rollback-label=…`, values percent-encoded); not both.
 * - `GET /restconf/data/tailf-rollback:rollback-files[/file]` lists the files, newest first
 *   (`id` 0 is the newest, as NSO numbers them); `POST …/rollback-files/apply-rollback-file`
 *   (`fixed-number` or `id`) undoes, as a new commit with its own rollback file, answering 204:
 *   with `selective` (an empty leaf, JSON `[null]`) the changes of that one file; without it,
 *   as NSO does, every file from the newest back to that one (the state before its commit).
 *
 * A rollback file keeps each device's configuration before and after its commit; undoing it
 * gives back the value before of every member the commit changed and leaves the others as they
 * are now (a list counts as one member), as NSO's inverse delta does.
 */
import { isDeepStrictEqual } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import { PatchError, YANG_PATCH_MEDIA_TYPE, applyEdits, listKeysFrom, parseTarget, type YangPatchEdit } from '../../functions/remediation/patch.js';
import { FLEET_LIST_KEYS } from './nso-fleet.js';

type Json = null | boolean | number | string | Json[] | { [member: string]: Json };
type JsonObject = { [member: string]: Json };
type Answer = [number, Record<string, string>, string];

/** A refusal, as NSO answers it (`ietf-restconf:errors`). */
export class TransactionRefused extends Error {
  constructor(
    readonly status: number,
    readonly tag: string,
    message: string,
  ) {
    super(message);
  }
}

/** Makes commits fail for named devices (NSO's answer when a device refuses the change). */
export interface CommitFailureKnob {
  readonly devices: readonly string[];
  /** Default 400 (`operation-failed`). */
  readonly status?: number;
  /** Default: the device refused the connection. */
  readonly message?: string;
}

/** One rollback file. */
export interface RollbackFile {
  readonly fixedNumber: number;
  readonly label?: string;
  readonly comment?: string;
  readonly creator: string;
  readonly date: string;
  /** Each device's configuration before the commit. */
  readonly before: ReadonlyMap<string, JsonObject>;
  /** Each device's configuration after the commit. */
  readonly after: ReadonlyMap<string, JsonObject>;
}

/** What the transactions need of the simulator. */
export interface TransactionHost {
  /** NSO's copy of a device's configuration (its `config` object, changed in place), or undefined for a device NSO does not know. */
  config(device: string): JsonObject | undefined;
  /** Replaces NSO's copy of a device's configuration (and the device's, which matches it). */
  setConfig(device: string, config: JsonObject): void;
  /** Whether the device was changed behind NSO's back. */
  outOfSync(device: string): boolean;
  commitFailure(): CommitFailureKnob | undefined;
}

const COMMIT_PARAMS = new Set(['dry-run', 'rollback-id', 'rollback-label', 'rollback-comment', 'commit-queue']);
const FIRST_ROLLBACK = 10000;
const keys = listKeysFrom(FLEET_LIST_KEYS);
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const pretty = (value: Json): string => `${JSON.stringify(value, null, 2)}\n`;
const json = (status: number, value: JsonObject): Answer => [status, { 'Content-Type': 'application/yang-data+json' }, JSON.stringify(value)];

/** The commit parameters of a raw query string, in either form. */
export const commitParameters = (rawQuery: string): Map<string, string> => {
  const pairs = rawQuery.replace(/^\?/, '').split('&').filter(Boolean);
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      throw new TransactionRefused(400, 'invalid-value', 'bad percent-encoding in the query');
    }
  };
  const split = (pair: string): [string, string] => {
    const at = pair.indexOf('=');
    return at < 0 ? [decode(pair), ''] : [decode(pair.slice(0, at)), pair.slice(at + 1)];
  };
  const params = new Map<string, string>();
  const classic = pairs.map(split);
  const grouped = classic.find(([name]) => name === 'params');
  if (grouped && classic.length > 1) throw new TransactionRefused(400, 'invalid-value', 'params cannot be combined with other query parameters');
  for (const [name, raw] of grouped ? grouped[1].split(',').filter(Boolean).map(split) : classic) {
    if (!COMMIT_PARAMS.has(name)) throw new TransactionRefused(400, 'invalid-value', `unknown query parameter ${name}`);
    if (params.has(name)) throw new TransactionRefused(400, 'invalid-value', `${name} given twice`);
    params.set(name, decode(raw));
  }
  return params;
};

/** The edits of a YANG Patch body, by device, in order. */
const editsByDevice = (body: unknown): { patchId: string; devices: Map<string, YangPatchEdit[]> } => {
  const patch = isObject(body) ? body['ietf-yang-patch:yang-patch'] : undefined;
  const edits = isObject(patch) ? patch['edit'] : undefined;
  if (!isObject(patch) || typeof patch['patch-id'] !== 'string' || !Array.isArray(edits) || edits.length === 0) {
    throw new TransactionRefused(400, 'malformed-message', 'the body must be an ietf-yang-patch:yang-patch with a patch-id and edits');
  }
  const devices = new Map<string, YangPatchEdit[]>();
  for (const edit of edits) {
    if (!isObject(edit) || typeof edit['edit-id'] !== 'string' || typeof edit['target'] !== 'string' || typeof edit['operation'] !== 'string') {
      throw new TransactionRefused(400, 'malformed-message', 'each edit needs an edit-id, an operation and a target');
    }
    const typed = edit as unknown as YangPatchEdit;
    try {
      const { device } = parseTarget(typed.target, typed['edit-id']);
      devices.set(device, [...(devices.get(device) ?? []), typed]);
    } catch (error) {
      throw refusal(error);
    }
  }
  return { patchId: patch['patch-id'], devices };
};

const refusal = (error: unknown): Error =>
  error instanceof PatchError ? new TransactionRefused(400, 'invalid-value', `edit ${error.editId}: ${error.message}`) : (error as Error);

/**
 * `current` with what a commit changed from `before` to `after` undone: a member the commit
 * changed gets its value before back (or goes, when it had none); the others keep `current`'s.
 */
const undo = (current: Json | undefined, before: Json | undefined, after: Json | undefined): Json | undefined => {
  if (isObject(current) && isObject(before) && isObject(after)) {
    const out: JsonObject = { ...current };
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const value = undo(current[name], before[name], after[name]);
      if (value === undefined) delete out[name];
      else out[name] = value;
    }
    return out;
  }
  return isDeepStrictEqual(before, after) ? current : structuredClone(before);
};

/** The simulator's transactions over `host`. */
export const createTransactions = (host: TransactionHost) => {
  const files: RollbackFile[] = [];
  let queueItems = 0;

  /** Fails when the commit knob names one of `devices`, or one of them is out of sync. */
  const checkCommit = (devices: Iterable<string>): void => {
    const knob = host.commitFailure();
    for (const device of devices) {
      if (knob?.devices.includes(device)) {
        throw new TransactionRefused(
          knob.status ?? 400,
          'operation-failed',
          knob.message ?? `Failed to connect to device ${device}: connection refused: NEDCOM CONNECT: Connection refused`,
        );
      }
      if (host.outOfSync(device)) throw new TransactionRefused(400, 'operation-failed', `Network Element Driver: device ${device}: out of sync`);
    }
  };

  /** Commits `after` (device configurations) and keeps its rollback file; its fixed number. */
  const commit = (after: ReadonlyMap<string, JsonObject>, user: string, label?: string, comment?: string): number => {
    const before = new Map<string, JsonObject>();
    for (const device of after.keys()) before.set(device, structuredClone(host.config(device) ?? {}));
    for (const [device, config] of after) host.setConfig(device, config);
    const fixedNumber = FIRST_ROLLBACK + files.length;
    const kept = new Map([...after].map(([device, config]) => [device, structuredClone(config)]));
    files.push({
      fixedNumber,
      creator: user,
      date: new Date().toISOString(),
      before,
      after: kept,
      ...(label ? { label } : {}),
      ...(comment ? { comment } : {}),
    });
    return fixedNumber;
  };

  const commitQueue = (mode: string | undefined): JsonObject | undefined => {
    if (mode === undefined || mode === 'bypass') return undefined;
    if (mode !== 'sync' && mode !== 'async') throw new TransactionRefused(400, 'invalid-value', 'commit-queue must be async, sync or bypass');
    queueItems++;
    return { id: 1_700_000_000_000 + queueItems, status: mode === 'sync' ? 'completed' : 'async' };
  };

  /** `PATCH /restconf/data` with a YANG Patch. */
  const yangPatch = (rawQuery: string, body: unknown, user: string): Answer => {
    const params = commitParameters(rawQuery);
    const { devices } = editsByDevice(body);
    const after = new Map<string, JsonObject>();
    for (const [device, edits] of devices) {
      const config = host.config(device);
      if (!config) throw new TransactionRefused(400, 'invalid-value', `edit ${edits[0]!['edit-id']}: illegal reference: device ${device}`);
      try {
        after.set(device, applyEdits(config, edits, keys) as JsonObject);
      } catch (error) {
        throw refusal(error);
      }
    }
    const dryRun = params.get('dry-run');
    if (dryRun !== undefined) {
      if (dryRun !== 'native') throw new TransactionRefused(400, 'invalid-value', 'the simulator answers dry-run=native only');
      const native = [...after]
        .map(([device, config]) => {
          const [a, b] = [pretty(host.config(device)!), pretty(config)];
          return a === b
            ? undefined
            : { name: device, data: createTwoFilesPatch(`nso/${device}`, `nso/${device}`, a, b, undefined, undefined, { context: 2 }) };
        })
        .filter((d) => d !== undefined);
      return json(200, { 'dry-run-result': native.length ? { native: { device: native } } : {} });
    }
    checkCommit(after.keys());
    const queue = commitQueue(params.get('commit-queue'));
    const id = commit(after, user, params.get('rollback-label'), params.get('rollback-comment'));
    if (params.get('rollback-id') !== 'true' && !queue) return [204, {}, ''];
    return json(200, {
      'tailf-restconf:result': { ...(params.get('rollback-id') === 'true' ? { rollback: { id } } : {}), ...(queue ? { 'commit-queue': queue } : {}) },
    });
  };

  /** The files as NSO lists them: newest first, `id` its place. */
  const listed = (): JsonObject[] =>
    [...files].reverse().map((file, id) => ({
      id,
      creator: file.creator,
      date: file.date,
      via: 'rest',
      'fixed-number': file.fixedNumber,
      ...(file.label ? { label: file.label } : {}),
      ...(file.comment ? { comment: file.comment } : {}),
    }));

  /**
   * `POST …/apply-rollback-file`: undoes the file's commit (`selective`), or every commit from the
   * newest back to the file's, newest first, in one new commit.
   */
  const applyRollback = (body: unknown, user: string): Answer => {
    const input = isObject(body) ? (body['input'] ?? body['tailf-rollback:input']) : undefined;
    if (!isObject(input)) throw new TransactionRefused(400, 'malformed-message', 'the input must be an object');
    const fixed = input['fixed-number'];
    const place = input['id'];
    const selective = input['selective'];
    if (selective !== undefined && !isDeepStrictEqual(selective, [null]))
      throw new TransactionRefused(400, 'invalid-value', 'selective is an empty leaf: [null]');
    const file = typeof fixed === 'number' ? files.find((f) => f.fixedNumber === fixed) : typeof place === 'number' ? [...files].reverse()[place] : undefined;
    if (!file) throw new TransactionRefused(400, 'invalid-value', 'rollback file not found');
    const undone = selective ? [file] : files.filter((f) => f.fixedNumber >= file.fixedNumber).reverse();
    const configs = new Map<string, JsonObject>();
    for (const each of undone) {
      for (const [device, before] of each.before) {
        const current = configs.get(device) ?? structuredClone(host.config(device) ?? {});
        configs.set(device, (undo(current, before, each.after.get(device)) ?? {}) as JsonObject);
      }
    }
    checkCommit(configs.keys());
    commit(configs, user, undefined, `rollback of ${file.fixedNumber}${selective ? ' (selective)' : ''}`);
    return [204, {}, ''];
  };

  return {
    /**
     * The answer to a request of the transactions, or undefined when the request is none of
     * theirs (a YANG Patch on the datastore, or the rollback files).
     */
    handle(method: string, pathname: string, rawQuery: string, contentType: string | undefined, rawBody: string, user: string): Answer | undefined {
      const isPatch =
        method === 'PATCH' &&
        pathname.replace(/\/$/, '') === '/restconf/data' &&
        (contentType ?? '').split(';')[0]!.trim().toLowerCase() === YANG_PATCH_MEDIA_TYPE;
      const rollbacks = /^\/restconf\/data\/tailf-rollback:rollback-files(\/file|\/apply-rollback-file)?\/?$/.exec(pathname);
      if (!isPatch && !rollbacks) return undefined;
      let body: unknown;
      try {
        body = rawBody === '' ? {} : JSON.parse(rawBody);
      } catch {
        throw new TransactionRefused(400, 'malformed-message', 'the body is not JSON');
      }
      if (isPatch) return yangPatch(rawQuery, body, user);
      const [, leaf] = rollbacks!;
      if (leaf === '/apply-rollback-file') {
        if (method !== 'POST') throw new TransactionRefused(405, 'operation-not-supported', 'apply-rollback-file is an action (POST)');
        if (rawQuery !== '') throw new TransactionRefused(400, 'invalid-value', 'query parameters are not supported on actions');
        return applyRollback(body, user);
      }
      if (method !== 'GET') throw new TransactionRefused(405, 'operation-not-supported', 'the rollback files are read only');
      // `fields=a;b` (RFC 8040 4.8.3, leaves of each file only): just those members.
      const fields = new URLSearchParams(rawQuery).get('fields')?.split(';');
      const shown = listed().map((file) => (fields ? Object.fromEntries(Object.entries(file).filter(([name]) => fields.includes(name))) : file));
      return json(200, leaf === '/file' ? { 'tailf-rollback:file': shown } : { 'tailf-rollback:rollback-files': { file: shown } });
    },
    /** Commits a YANG Patch as `user` with the raw `query` (tests: another operator's commit). */
    commitAs: (user: string, patch: unknown, query = ''): Answer => yangPatch(query, patch, user),
    /** The rollback files, oldest first (tests). */
    files: (): readonly RollbackFile[] => files,
    /** Forgets every rollback file (the datastore was reset). */
    reset(): void {
      files.length = 0;
      queueItems = 0;
    },
  };
};
