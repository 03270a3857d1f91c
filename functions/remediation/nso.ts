/**
 * Remediation's NSO client ({@link NsoTransactions}) over the relay: every call goes through
 * `relayRestAction` with the relay's own dependencies, so the SSRF rules, the adapter's
 * secret, its timeout and the body cap apply as they do to `POST /orch_manager/restAction`.
 *
 * - dry-run: `PATCH /restconf/data` with the YANG Patch (`application/yang-patch+json`) and
 *   `dry-run=native`; NSO's `dry-run-result` holds, per device, the native commands it would send.
 * - commit: the same PATCH with `rollback-id=true`, `rollback-label`, `rollback-comment` (and
 *   `commit-queue=sync` when asked); NSO's `tailf-restconf:result` holds the rollback id (and
 *   the commit queue item).
 * - findRollback: `GET /restconf/data/tailf-rollback:rollback-files`, the one file with the label
 *   written by the adapter's user (two or more: `commit-unknown`, never a guess).
 * - applyRollback: `POST …/tailf-rollback:rollback-files/apply-rollback-file` with the fixed number
 *   and `selective`: only that file's changes are undone, never the later commits of others.
 *
 * The commit parameters go in the form the adapter names (`nsoCommitParams`): NSO's separate
 * query parameters (`query`, the default), or NSO 6.7's one `params` query value (`params`).
 *
 * Failures follow compliance's rules (check.ts): what NSO answered about the device (a refused
 * patch, a failed commit, an answer that cannot be read) is a {@link DeviceFailure}; a failure
 * of ours before NSO answered throws. Busy answers (429, 503) are retried with backoff a bounded
 * number of times. No answer is taken for success unless it says so in NSO's own shape: a 2xx
 * commit without a readable rollback id, or one whose answer was lost, is looked up by its label;
 * not found, it is `commit-unconfirmed`, naming the label to look for.
 */
import type { Adapter } from '../adapters/model.js';
import type { HttpProblem } from '../platform/problem.js';
import { fetchFailure, fetchFailureKind, type DeviceFailure } from '../compliance/check.js';
import { backoffMs } from '../compliance/gate.js';
import { nsoText, shownDiff } from '../compliance/sync.js';
import { relayRestAction, type RelayDeps } from '../relay/service.js';
import type { CommitFailure, CommitOptions, DryRunOutput, NsoTransactions, ShownOutput } from './model.js';
import { YANG_PATCH_MEDIA_TYPE, type YangPatch } from './patch.js';

/** How the adapter's NSO takes commit parameters (see the adapter's `nsoCommitParams`). */
export type CommitParamsForm = NonNullable<Adapter['nsoCommitParams']>;
export const DEFAULT_COMMIT_PARAMS: CommitParamsForm = 'query';

const DATA = '/restconf/data';
const ROLLBACK_FILES = `${DATA}/tailf-rollback:rollback-files`;
const YANG_JSON = 'application/yang-data+json';
const BUSY = new Set([429, 503]);
/** Characters of a rollback label or comment sent (NSO keeps them in the rollback file's header). */
export const MAX_COMMIT_TEXT = 256;

export interface NsoClientDeps extends RelayDeps {
  /** Busy answers retried per call (default 5). */
  readonly maxBusyRetries?: number;
  /** Waits out a busy answer's backoff (default: a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
}

type Params = readonly (readonly [string, string])[];

/**
 * A label or comment as it can travel in a query value: control characters, `%` and `\` (which
 * the relay refuses even encoded) and lone surrogates become `_`, cut to {@link MAX_COMMIT_TEXT}.
 * {@link NsoTransactions.findRollback} compares labels in this form too.
 */
export const commitText = (text: string): string =>
  text
    .replace(/[\x00-\x1f\x7f%\\]|\p{Cs}/gu, '_')
    .slice(0, MAX_COMMIT_TEXT)
    .replace(/[\uD800-\uDBFF]$/, '');

/** A query value percent-encoded, `/` left as is (the relay refuses `%2F`; RFC 3986 allows `/` in a query). */
const queryValue = (text: string): string => encodeURIComponent(text).replace(/%2F/gi, '/');

/**
 * The query of a write with `params`: NSO's separate parameters (`?dry-run=native&…`), or
 * NSO 6.7's one `params` value (`?params=dry-run=native,rollback-id=true,…`, each value
 * percent-encoded so that `,` and `=` inside it cannot be misread).
 */
export const commitQuery = (form: CommitParamsForm, params: Params): string => {
  if (params.length === 0) return '';
  const pairs = params.map(([name, value]) => `${name}=${queryValue(value)}`);
  return form === 'params' ? `?params=${pairs.join(',')}` : `?${pairs.join('&')}`;
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A member of an NSO answer, with or without its module prefix. */
const member = (object: unknown, name: string, module = 'tailf-restconf'): unknown =>
  isRecord(object)
    ? Object.hasOwn(object, `${module}:${name}`)
      ? object[`${module}:${name}`]
      : Object.hasOwn(object, name)
        ? object[name]
        : undefined
    : undefined;

/** A rollback file's fixed number: a whole number from 0, as JSON number or digits. */
const rollbackNumber = (value: unknown): number | undefined => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
};

/** The `error-message`s of an `error` list (`ietf-restconf:errors`, or a YANG Patch status's). */
const messagesOf = (errors: unknown): string[] => {
  const list = member(errors, 'error', 'ietf-restconf');
  return Array.isArray(list)
    ? list.map((e) => member(e, 'error-message', 'ietf-restconf')).filter((m): m is string => typeof m === 'string' && m.trim() !== '')
    : [];
};

/**
 * What NSO said went wrong, masked and cut: the messages of `ietf-restconf:errors`, or of an
 * RFC 8072 `yang-patch-status` (global errors and each edit's), else the body itself.
 */
const errorText = (data: unknown): string => {
  const status = member(data, 'yang-patch-status', 'ietf-yang-patch');
  const edits = member(member(status, 'edit-status', 'ietf-yang-patch'), 'edit', 'ietf-yang-patch');
  const messages = [
    ...messagesOf(member(data, 'errors', 'ietf-restconf')),
    ...messagesOf(member(status, 'errors', 'ietf-yang-patch')),
    ...(Array.isArray(edits)
      ? edits.flatMap((edit) =>
          messagesOf(member(edit, 'errors', 'ietf-yang-patch')).map((m) => `edit ${nsoText(member(edit, 'edit-id', 'ietf-yang-patch'))}: ${m}`),
        )
      : []),
  ];
  if (messages.length) return nsoText(messages.join('; '));
  return data === undefined ? 'no details' : nsoText(data);
};

/** An answer NSO gave with `status`, other than the one expected, as the device's failure. */
const statusFailure = (step: string, status: number, data: unknown, retries: number): DeviceFailure => {
  if (BUSY.has(status)) return { kind: 'busy', reason: `NSO answered ${status} to the ${step} after ${retries} retries.` };
  const kind = status >= 400 && status < 500 ? 'refused' : 'failed';
  return { kind, reason: `NSO answered ${status} to the ${step}: ${errorText(data)}` };
};

/**
 * NSO's dry-run output as a run keeps and shows it: masked (`shownDiff`, the rule of reports'
 * diffs) and cut to their bound. The only maker of a {@link ShownOutput}: NSO's text is masked
 * here, once, where it comes in.
 */
export const shownOutput = (text: string): DryRunOutput => {
  const { diff, diffTruncated } = shownDiff(text);
  return { output: diff as ShownOutput, ...(diffTruncated ? { truncated: true } : {}) };
};

/** Creates the client; `deps` are the relay's (one set per invocation: `remainingTimeMs` is the invocation's). */
export const createNsoTransactions = (deps: NsoClientDeps): NsoTransactions => {
  const retries = deps.maxBusyRetries ?? 5;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  /** The adapter's form of commit parameters (the relay refuses an unknown or stopped adapter itself). */
  const formOf = async (adapterId: string): Promise<CommitParamsForm> => (await deps.adapters.get(adapterId))?.nsoCommitParams ?? DEFAULT_COMMIT_PARAMS;
  /** The NSO user the adapter signs in as: the `creator` of the rollback files its commits write. */
  const userOf = async (adapterId: string): Promise<string | undefined> => (await deps.adapters.get(adapterId))?.auth.username;

  /**
   * One call, busy answers retried: NSO's status and body, or the failure it tells of the device
   * (check.ts `fetchFailureKind`); a failure that is no fact about the device throws.
   */
  const call = async (
    adapterId: string,
    params: { method: 'GET' | 'PATCH' | 'POST'; path: string; contentType?: string },
    body: Record<string, unknown>,
  ): Promise<{ readonly status: number; readonly data: unknown } | { readonly failure: DeviceFailure; readonly mayHaveRun: boolean }> => {
    const request = { params: { accept: YANG_JSON, ...params }, body };
    for (let attempt = 1; ; attempt++) {
      let results;
      try {
        results = await relayRestAction({ adapterId, request }, deps);
      } catch (error) {
        const kind = fetchFailureKind(error);
        if (kind === undefined) throw error;
        return { failure: fetchFailure(error as HttpProblem, kind), mayHaveRun: (error as HttpProblem).outcomeUnknown };
      }
      const status = Number(results[0]?.result);
      if (BUSY.has(status) && attempt <= retries) {
        await sleep(backoffMs(attempt));
        continue;
      }
      return { status, data: results[0]?.data };
    }
  };

  const patchOnce = async (adapterId: string, patch: YangPatch, params: Params) =>
    call(
      adapterId,
      { method: 'PATCH', path: `${DATA}${commitQuery(await formOf(adapterId), params)}`, contentType: YANG_PATCH_MEDIA_TYPE },
      patch as unknown as Record<string, unknown>,
    );

  /**
   * The rollback file of the commit made with `label`: the one file with the label whose
   * `creator` (when NSO names one) is the adapter's user; none found is `{}`; two or more is
   * `commit-unknown` (never a guess); a list that cannot be read is a failure.
   */
  const findRollback: NsoTransactions['findRollback'] = async (adapterId, label) => {
    // Only three leaves read: NSO keeps hundreds of files (`history-size`).
    const sent = await call(adapterId, { method: 'GET', path: `${ROLLBACK_FILES}/file?fields=fixed-number;label;creator` }, {});
    if ('failure' in sent) return sent.failure;
    if (sent.status === 404 || sent.status === 204) return {};
    if (sent.status !== 200) return statusFailure('rollback file list', sent.status, sent.data, retries);
    const files = member(sent.data, 'file', 'tailf-rollback');
    if (!Array.isArray(files)) return { kind: 'malformed', reason: 'NSO answered the rollback file list without a list of files.' };
    const wanted = commitText(label);
    const user = await userOf(adapterId);
    const ours = (file: unknown): boolean => {
      const creator = member(file, 'creator', 'tailf-rollback');
      return member(file, 'label', 'tailf-rollback') === wanted && (creator === undefined || user === undefined || creator === user);
    };
    const found = files.filter(ours).map((file) => rollbackNumber(member(file, 'fixed-number', 'tailf-rollback')));
    if (found.length > 1 || found.includes(undefined)) {
      const numbers = found.map((n) => n ?? '?').join(', ');
      return {
        kind: 'commit-unknown',
        reason: `NSO holds ${found.length > 1 ? `${found.length} rollback files` : 'a rollback file without a readable number'} labelled '${wanted}' (${numbers}): which one is the commit cannot be told.`,
      };
    }
    return found[0] === undefined ? {} : { rollbackId: found[0] };
  };

  /**
   * A commit NSO may hold whose answer did not say so (`unconfirmed`): its rollback file by label
   * makes it a success; none leaves `missing` (the failure as it stands); the list unreadable or
   * ambiguous leaves `unconfirmed`.
   */
  const confirmByLabel = async (adapterId: string, label: string, unconfirmed: DeviceFailure, missing: DeviceFailure) => {
    const found = await findRollback(adapterId, label);
    if ('kind' in found) return { ...unconfirmed, reason: `${unconfirmed.reason} (looking it up: ${found.reason})` };
    return found.rollbackId === undefined ? missing : { rollbackId: found.rollbackId };
  };

  /** The rollback id and queue item of a 2xx commit answer; `commit-unconfirmed` when NSO's answer does not say. */
  const commitResult = (data: unknown, label: string): { readonly rollbackId: number; readonly commitQueueId?: string } | CommitFailure => {
    const result = member(data, 'result');
    const rollbackId = rollbackNumber(member(member(result, 'rollback'), 'id'));
    if (rollbackId === undefined) {
      return {
        kind: 'commit-unconfirmed',
        reason: `NSO accepted the commit without a readable rollback id; look for the rollback file labelled '${label}' before committing again.`,
      };
    }
    const queue = member(result, 'commit-queue');
    const queueId = member(queue, 'id');
    const status = member(queue, 'status');
    if (typeof status === 'string' && status !== 'completed') {
      // NSO's database holds the commit: its rollback id goes with the failure, for a rollback to undo it.
      return {
        kind: 'commit-queue-failed',
        reason: `NSO's commit queue item ended ${nsoText(status)}; its rollback file is ${rollbackId} ('${label}').`,
        rollbackId,
      };
    }
    const commitQueueId = typeof queueId === 'number' || typeof queueId === 'string' ? nsoText(String(queueId)) : undefined;
    return { rollbackId, ...(commitQueueId ? { commitQueueId } : {}) };
  };

  return {
    async dryRun(adapterId, patch) {
      const sent = await patchOnce(adapterId, patch, [['dry-run', 'native']]);
      if ('failure' in sent) return sent.failure;
      if (sent.status !== 200) return statusFailure('dry-run', sent.status, sent.data, retries);
      const result = member(sent.data, 'dry-run-result');
      if (!isRecord(result)) return { kind: 'malformed', reason: 'NSO answered the dry-run without a dry-run-result.' };
      const native = member(result, 'native');
      if (native === undefined) return shownOutput('');
      const devices = member(native, 'device');
      if (!Array.isArray(devices) || devices.some((d) => typeof member(d, 'name') !== 'string' || typeof member(d, 'data') !== 'string')) {
        return { kind: 'malformed', reason: "NSO's dry-run-result holds no native output of the form device name and data." };
      }
      const text =
        devices.length === 1 ? (member(devices[0], 'data') as string) : devices.map((d) => `device ${member(d, 'name')}\n${member(d, 'data')}`).join('\n');
      return shownOutput(text);
    },

    async commit(adapterId, patch, options) {
      const label = commitText(options.label);
      const sent = await patchOnce(adapterId, patch, commitParams(options));
      if ('failure' in sent) {
        // Lost after it was sent (a timeout, an answer too large or too deep): it may have landed.
        if (!sent.mayHaveRun) return sent.failure;
        const unconfirmed = {
          kind: 'commit-unconfirmed',
          reason: `${sent.failure.reason} Whether the commit landed is unknown: look for the rollback file labelled '${label}'.`,
        };
        return confirmByLabel(adapterId, label, unconfirmed, sent.failure);
      }
      if (sent.status < 200 || sent.status >= 300) return statusFailure('commit', sent.status, sent.data, retries);
      const result = commitResult(sent.data, label);
      // NSO accepted the commit and did not say its rollback id: its file by label says it.
      return 'kind' in result && result.kind === 'commit-unconfirmed' ? confirmByLabel(adapterId, label, result, result) : result;
    },

    findRollback,

    // NSO refuses query parameters on an action (400), so the commit options (label, comment,
    // commit queue) cannot travel with apply-rollback-file: NSO's new rollback file has no label of ours.
    // `selective` (an empty leaf: `[null]` in JSON) undoes that file's changes only; without it NSO
    // applies every file from the newest back to this one, undoing later commits of others.
    async applyRollback(adapterId, rollbackId) {
      const sent = await call(
        adapterId,
        { method: 'POST', path: `${ROLLBACK_FILES}/apply-rollback-file`, contentType: YANG_JSON },
        { input: { 'fixed-number': rollbackId, selective: [null] } },
      );
      if ('failure' in sent) return sent.failure;
      if (sent.status < 200 || sent.status >= 300) return statusFailure(`apply-rollback-file of ${rollbackId}`, sent.status, sent.data, retries);
      const id = rollbackNumber(member(member(member(sent.data, 'output', 'tailf-rollback'), 'rollback'), 'id'));
      return id === undefined ? {} : { rollbackId: id };
    },
  };
};

/** The commit parameters of a commit with `options`. */
const commitParams = (options: CommitOptions): Params => [
  ['rollback-id', 'true'],
  ['rollback-label', commitText(options.label)],
  ['rollback-comment', commitText(options.comment)],
  ...(options.commitQueue ? [['commit-queue', 'sync'] as const] : []),
];
