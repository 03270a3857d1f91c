/**
 * The sync step a batch takes before grading a device: does NSO's copy (CDB) match the device?
 *
 * - `check`: NSO's `check-sync` action, for a group of the chunk's devices in one request
 *   (`POST /restconf/data/tailf-ncs:devices/check-sync` with the `device` leaf-list), so a
 *   batch adds about one request per {@link SYNC_GROUP} devices. A device NSO answers
 *   `out-of-sync` for, or `unsupported` (its NED cannot compare transaction ids), is compared
 *   with `compare-config`: no output is in sync, a diff is the device's report, anything else
 *   (NSO's `info`: it could not compare) is never taken for in sync.
 * - `sync-from`: NSO's `sync-from` action for the group, then the device is graded.
 * - `none`: nothing is asked.
 *
 * An orchestrator without the action (404 or 501 to the grouped request confirmed by one
 * device's own, or 404/501 to a device's own) is graded as `none` would, with a note. An orchestrator that refuses the
 * grouped input (400: an NSO without the `device` leaf-list, or a name it does not know) is
 * asked device by device. The other failures follow the rules of a failed configuration fetch
 * (check.ts): a fact about the device is its report's `error`, a failure of ours before NSO
 * answered fails the chunk.
 */
import { redactCliDiff, redactText } from '../platform/redaction.js';
import type { RestActionResult } from '../relay/service.js';
import { devicePath, sendRelayed, type DeviceFailure, type FetchTarget } from './check.js';
import { backoffMs, type FetchGate } from './gate.js';
import { MAX_DIFF_BYTES, type ReportSync, type SyncMode } from './model.js';

/** Sends one POST (an action, its input as `body`) through the relay; resolves to its results or throws its problem. */
export type RelayPost = (adapterId: string, path: string, body: Record<string, unknown>) => Promise<RestActionResult[]>;

/** Devices asked about in one grouped request. */
export const SYNC_GROUP = 25;

/** What the sync step says of a device: grade it, it is out of sync (its diff), or it could not be asked. */
export type SyncVerdict =
  | { readonly sync: ReportSync }
  | { readonly sync: ReportSync; readonly diff: string; readonly diffTruncated?: true }
  | { readonly sync: ReportSync; readonly failure: DeviceFailure };

/** The sync step of one chunk: `before` is called once per device, with the gate of the worker checking it. */
export interface SyncStep {
  before(device: string, gate: FetchGate): Promise<SyncVerdict>;
}

const DEVICES_PATH = '/restconf/data/tailf-ncs:devices';
const BUSY = new Set([429, 503]);
/** Statuses that say the orchestrator has no such action. */
const ABSENT = new Set([404, 501]);

/** A device's answer in a grouped request (or its own): NSO's `result` and `info`. */
interface Answer {
  readonly result: unknown;
  readonly info?: unknown;
}

/** An action's answer: its status and `tailf-ncs:output` (`{}` for an empty body; `undefined` for a body of another shape). */
interface Answered {
  readonly status: number;
  readonly output: Record<string, unknown> | undefined;
}

/** What one action request came to. */
type Sent = Answered | { readonly failure: DeviceFailure };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const outputOf = (data: unknown): Record<string, unknown> | undefined => {
  if (data === undefined || data === null || data === '' || (isRecord(data) && Object.keys(data).length === 0)) return {};
  const output = isRecord(data) ? data['tailf-ncs:output'] : undefined;
  return isRecord(output) ? output : undefined;
};

/** Characters of an NSO text (check-sync's `result`, an `info`) a report keeps. */
export const MAX_NSO_TEXT = 300;

/**
 * A text NSO sent, as a report's reason shows it: masked (`redactText`, the rule of reports and
 * logs) and cut to {@link MAX_NSO_TEXT} characters (`…` when cut), so that no answer, however
 * large, makes a report outgrow its item. A value that is no string is shown as JSON.
 */
export const nsoText = (value: unknown): string => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  // Only the start is ever shown: masking the whole of a huge answer would cost for nothing.
  const masked = redactText(text.slice(0, MAX_NSO_TEXT * 4));
  if (masked.length <= MAX_NSO_TEXT && text.length <= MAX_NSO_TEXT * 4) return masked;
  return `${masked.slice(0, MAX_NSO_TEXT).replace(/[\uD800-\uDBFF]$/, '')}…`;
};

/**
 * The diff as a report keeps it: secrets masked (`redactCliDiff`: the rule of reports and logs, and by block),
 * then cut to {@link MAX_DIFF_BYTES} of UTF-8 on a character boundary.
 */
export const shownDiff = (diff: string, secrets: readonly string[] = []): { readonly diff: string; readonly diffTruncated?: true } => {
  const masked = redactCliDiff(diff, secrets);
  const bytes = Buffer.from(masked, 'utf8');
  if (bytes.length <= MAX_DIFF_BYTES) return { diff: masked };
  return {
    diff: bytes
      .subarray(0, MAX_DIFF_BYTES)
      .toString('utf8')
      .replace(/\uFFFD+$/, ''),
    diffTruncated: true,
  };
};

const noteAbsent = (action: string, status: number): string =>
  `The orchestrator has no ${action} action (it answered ${status}); the device was graded on NSO's copy, as with sync "none".`;

/**
 * The sync step of a chunk of `devices` (in the order its workers take them) on `target`'s adapter.
 * `maxBusyRetries`: busy answers (429, 503) retried per request, as for a configuration fetch.
 */
export const syncStep = (mode: SyncMode, target: FetchTarget, devices: readonly string[], relayPost: RelayPost | undefined, maxBusyRetries = 5): SyncStep => {
  if (mode === 'none') {
    const verdict: SyncVerdict = { sync: { mode, result: 'not-checked' } };
    return { before: async () => verdict };
  }
  if (!relayPost) throw new Error(`sync mode ${mode} needs the relay's POST`);
  const action = mode === 'check' ? 'check-sync' : 'sync-from';
  const place = new Map(devices.map((d, i) => [d, i]));
  /** Each grouped request, by device; a device absent from its group's answer is asked on its own. */
  const groups = new Map<string, Promise<Map<string, Answer | DeviceFailure>>>();
  /** Set once the orchestrator showed it has no such action: nothing more is asked. */
  let absent: ReportSync | undefined;

  const send = async (path: string, body: Record<string, unknown>, gate: FetchGate, device: string): Promise<Sent> => {
    for (let attempt = 1; ; attempt++) {
      const sent = await sendRelayed(gate, () => relayPost(target.adapterId, path, body), device, target);
      if ('failure' in sent) return sent;
      const status = Number(sent.results[0]?.result);
      if (BUSY.has(status) && attempt <= maxBusyRetries) {
        gate.pause(backoffMs(attempt));
        continue;
      }
      return { status, output: outputOf(sent.results[0]?.data) };
    }
  };

  const statusFailure = (name: string, status: number): DeviceFailure => ({
    kind: BUSY.has(status) ? 'busy' : 'status',
    reason: `The orchestrator answered ${status} to ${name}${BUSY.has(status) ? ` after ${maxBusyRetries} retries` : ''}.`,
  });

  /** A device's own answer to check-sync or sync-from, as the grouped answer gives it. */
  const answerOf = (own: Answered | DeviceFailure): Answer | DeviceFailure =>
    'kind' in own ? own : { result: own.output?.['result'], info: own.output?.['info'] };

  /** One grouped request for the devices from `device` on that no group holds yet. */
  const askGroup = (device: string, gate: FetchGate): Promise<Map<string, Answer | DeviceFailure>> => {
    const start = place.get(device) ?? -1;
    const names = start < 0 ? [device] : [];
    for (let i = start; i >= 0 && i < devices.length && names.length < SYNC_GROUP; i++) if (!groups.has(devices[i]!)) names.push(devices[i]!);
    const asked = (async () => {
      const answers = new Map<string, Answer | DeviceFailure>();
      const sent = await send(`${DEVICES_PATH}/${action}`, { input: { device: names } }, gate, device);
      if ('failure' in sent) {
        for (const name of names) answers.set(name, sent.failure);
      } else if (ABSENT.has(sent.status)) {
        // A 404 may come from a proxy or a name NSO does not know: only the device's own action,
        // absent too, shows that the orchestrator lacks it. Otherwise the group is asked device by device.
        const own = await askOne(device, action, {}, gate);
        if ('absent' in own) absent = { mode, result: 'not-checked', note: noteAbsent(action, own.absent) };
        else answers.set(device, answerOf(own));
      } else if (sent.status === 200) {
        const list = sent.output?.['sync-result'];
        for (const entry of Array.isArray(list) ? (list as Record<string, unknown>[]) : []) {
          if (typeof entry?.['device'] === 'string') answers.set(entry['device'], { result: entry['result'], info: entry['info'] });
        }
      } else if (sent.status !== 400) {
        for (const name of names) answers.set(name, statusFailure(action, sent.status));
      }
      return answers;
    })();
    for (const name of names) groups.set(name, asked);
    return asked;
  };

  /** A device asked on its own: NSO's answer, a failure, or that the action is absent (its status). */
  const askOne = async (
    device: string,
    name: string,
    body: Record<string, unknown>,
    gate: FetchGate,
  ): Promise<Answered | DeviceFailure | { absent: number }> => {
    const path = devicePath(device, name);
    if (!path) return { kind: 'unaddressable', reason: 'The device name cannot be addressed in a RESTCONF path.' };
    const sent = await send(path, body, gate, device);
    if ('failure' in sent) return sent.failure;
    if (ABSENT.has(sent.status)) return { absent: sent.status };
    if (sent.status !== 200 && sent.status !== 204) return statusFailure(name, sent.status);
    return sent;
  };

  /**
   * compare-config decides, after check-sync answered `said`: no output (204, or an empty
   * `diff`) is in sync, a diff is out of sync. Anything else is NSO saying it could not compare
   * (its `info`, answered 200) or an answer of another shape: never taken for "in sync". Where
   * check-sync said `out-of-sync` already, a compare-config that fails or is absent leaves that
   * fact standing: grade `out-of-sync`, without NSO's diff, the note saying why.
   */
  const compare = async (device: string, gate: FetchGate, said: string): Promise<SyncVerdict> => {
    const answer = await askOne(device, 'compare-config', { input: { outformat: 'cli' } }, gate);
    const unread = (why: string): SyncVerdict | undefined =>
      said === 'out-of-sync'
        ? { sync: { mode, result: 'out-of-sync', note: `check-sync answered out-of-sync; NSO's diff could not be read: ${why}` }, diff: '' }
        : undefined;
    if ('absent' in answer)
      return (
        unread(`the orchestrator answered ${answer.absent} to compare-config.`) ?? {
          sync: { mode, result: 'not-checked', note: noteAbsent('compare-config', answer.absent) },
        }
      );
    if ('kind' in answer) return unread(answer.reason) ?? { sync: { mode, result: 'not-checked' }, failure: answer };
    const { output } = answer;
    const diff = output?.['diff'];
    if (typeof diff === 'string' && diff.trim() !== '') return { sync: { mode, result: 'out-of-sync' }, ...shownDiff(diff) };
    const empty = answer.status === 204 || (output !== undefined && Object.keys(output).every((member) => member === 'diff' && typeof diff === 'string'));
    if (empty) return { sync: { mode, result: 'in-sync', note: `compare-config found no difference (check-sync answered ${said}).` } };
    const info = output?.['info'];
    const what = typeof info === 'string' && info.trim() !== '' ? nsoText(info) : `an answer of another shape (${nsoText(output ?? 'not tailf-ncs:output')})`;
    const reason = `NSO could not compare its copy with the device (compare-config): ${what}.`;
    return unread(reason) ?? { sync: { mode, result: 'not-checked' }, failure: { kind: 'sync-failed', reason } };
  };

  const verdictOf = async (device: string, answer: Answer, gate: FetchGate): Promise<SyncVerdict> => {
    const info = typeof answer.info === 'string' && answer.info ? `: ${nsoText(answer.info)}` : '';
    if (mode === 'sync-from') {
      if (answer.result === true || answer.result === 'true') return { sync: { mode, result: 'synced' } };
      return {
        sync: { mode, result: 'not-checked' },
        failure: { kind: 'sync-failed', reason: `NSO could not take the device's configuration (sync-from)${info}.` },
      };
    }
    if (answer.result === 'in-sync') return { sync: { mode, result: 'in-sync' } };
    if (answer.result === 'out-of-sync' || answer.result === 'unsupported') return compare(device, gate, answer.result);
    return {
      sync: { mode, result: 'not-checked' },
      failure: { kind: 'sync-failed', reason: `NSO could not check whether its copy matches the device (check-sync: ${nsoText(answer.result)})${info}.` },
    };
  };

  return {
    async before(device, gate) {
      if (absent) return { sync: absent };
      const answers = await (groups.get(device) ?? askGroup(device, gate));
      if (absent) return { sync: absent };
      let answer = answers.get(device);
      if (answer === undefined) {
        const own = await askOne(device, action, {}, gate);
        if ('absent' in own) return { sync: { mode, result: 'not-checked', note: noteAbsent(action, own.absent) } };
        answer = answerOf(own);
      }
      if ('kind' in answer) return { sync: { mode, result: 'not-checked' }, failure: answer as DeviceFailure };
      return verdictOf(device, answer, gate);
    },
  };
};
