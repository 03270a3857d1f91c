/**
 * Checks one device: fetch its configuration through the relay (the same client, SSRF rules,
 * timeouts, body cap and secret resolution as `POST /orch_manager/restAction`), evaluate the
 * rules its node inherits, grade it. A device NSO does not know, whose configuration cannot
 * be fetched or used (nested too deep, or any failure on the answer or in its evaluation),
 * gets a report with grade `error` and the reason, and a log line says why; it never stops the
 * batch. Only failures that are no fact about the device (secrets store or database down, any
 * failure before the orchestrator answered) fail the chunk, which the engine retries.
 */
import type { ConfigArchive, ConfigSource } from '../configs/model.js';
import { logger } from '../platform/logger.js';
import { HttpProblem } from '../platform/problem.js';
import { transientReason } from '../platform/transient.js';
import { AnswerTooDeep, type RestActionResult } from '../relay/service.js';
import type { ExemptedRule, FrozenExemption } from '../exemptions/model.js';
import type { JsonValue } from '../trees/config-model.js';
import type { RuleResult } from '../trees/rules.js';
import { boundedExempted, exemptedRule, exemptionsAt } from './exempted.js';
import { backoffMs, type FetchGate } from './gate.js';
import { gradeOf, ruleTotals, score } from './grading.js';
import type { BatchPlan, ChunkDevice, DeviceAssignment, PlanRule, ReportIssue } from './model.js';
import { shownIssue } from './shown.js';
import type { DeviceReport } from './store.js';
import type { SyncStep, SyncVerdict } from './sync.js';

/** The evaluator (functions/trees/rules.ts `evaluateRules`): one result per rule, in order. */
export type EvaluateRules = (config: unknown, variables: Readonly<Record<string, string>>, rules: readonly PlanRule[]) => readonly RuleResult[];

/** Sends one GET through the relay; resolves to its results or throws its problem. */
export type RelayGet = (adapterId: string, path: string) => Promise<RestActionResult[]>;

export interface CheckDeps {
  readonly relayGet: RelayGet;
  readonly evaluate: EvaluateRules;
  /** Sends the fetches: a slot of the adapter's gate, held by the worker checking the device. */
  readonly gate: FetchGate;
  readonly now: () => Date;
  /** Busy answers (429, 503) retried per device before its report says so. */
  readonly maxBusyRetries?: number;
  /** Each config fetch that did not give a configuration, by adapter (metric). */
  readonly onFetchFailure?: (adapterId: string, kind: string) => void;
  /** Asks NSO whether its copy matches the device before grading (sync.ts); absent: nothing is asked. */
  readonly sync?: SyncStep;
  /** Keeps each configuration fetched (absent: none is kept, reports name none). */
  readonly archive?: ConfigArchive;
}

/** What the batch is checking against. */
export interface CheckTarget {
  readonly batchId: string;
  readonly treeId: string;
  readonly version: string;
  readonly adapterId: string;
  readonly plan: BatchPlan;
  /** The batch as the configuration history names it (with `archive`). */
  readonly source?: ConfigSource;
}

/** Orchestrator statuses that mean "not now": back off and ask again. */
const BUSY = new Set([429, 503]);
/** Issues kept in one report, as UTF-8 bytes of JSON: with the rest of the report, inside DynamoDB's 400 KB item. */
export const MAX_ISSUE_BYTES = 300_000;

/** The RESTCONF path of `leaf` (`config`, an action) under a device, or `undefined` when the name cannot be put in one. */
export const devicePath = (device: string, leaf: string): string | undefined => {
  // The relay refuses encoded "/", "." "%" and control characters (traversal), so does this. A
  // lone surrogate has no UTF-8 form, so no percent-encoding (encodeURIComponent would throw).
  if (/[/%\\\x00-\x1f\x7f]/.test(device) || device === '.' || device === '..' || /\p{Cs}/u.test(device)) return undefined;
  return `/restconf/data/tailf-ncs:devices/device=${encodeURIComponent(device).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}/${leaf}`;
};

/** The RESTCONF path of a device's configuration, or `undefined` when the name cannot be put in one. */
export const configPath = (device: string): string | undefined => devicePath(device, 'config');

export type Fetched = { readonly config: unknown } | DeviceFailure;

/** Why a device gets the grade `error`; `fault` is the error behind it when it is a fault of ours (logged, never shown). */
export interface DeviceFailure {
  readonly kind: string;
  readonly reason: string;
  readonly fault?: unknown;
}

/**
 * Sends one relay call in the worker's gate slot: its results, or the failure it tells of the
 * device. A failure that is no fact about the device (before the orchestrator answered) is logged
 * and thrown: the chunk fails and runs again. The gate's own refusals are not caught.
 */
export const sendRelayed = async (
  gate: FetchGate,
  call: () => Promise<RestActionResult[]>,
  device: string,
  target: FetchTarget,
): Promise<{ readonly results: RestActionResult[] } | { readonly failure: DeviceFailure }> => {
  const sent = await gate.run(() =>
    call().then(
      (results) => ({ results }),
      (error: unknown) => ({ error }),
    ),
  );
  if (!('error' in sent)) return sent;
  const kind = fetchFailureKind(sent.error);
  if (kind === undefined) {
    logChunkFailure(device, target, sent.error);
    throw sent.error;
  }
  return { failure: fetchFailure(sent.error as HttpProblem, kind) };
};

/**
 * Why a failed fetch is a fact about the device, as a failure kind; undefined when it is not,
 * which fails the chunk for the engine to retry: a 5xx of our own before anything was sent
 * (secrets store or database down, 500 damaged adapter), and any error that is not a problem.
 * The relay turns every failure once the orchestrator has answered into a problem marked
 * {@link HttpProblem.outcomeUnknown}; what it lets through unchanged (an adapter read that
 * DynamoDB throttled, timed out or refused) happened before the orchestrator answered, and says
 * nothing about the device.
 */
export const fetchFailureKind = (error: unknown): string | undefined => {
  if (!(error instanceof HttpProblem)) return undefined;
  if (error instanceof AnswerTooDeep) return 'too-deep';
  if (error.status === 504) return 'timeout';
  if (error.status === 502) return 'unreachable';
  // The adapter was deleted or stopped while the batch ran: each device left says so.
  if (error.status === 404 || error.slug === 'adapter-stopped') return 'no-adapter';
  // NSO answered, and the relay failed on the answer: retrying would fail the same way.
  if (error.outcomeUnknown) return 'unusable-answer';
  return undefined;
};

/** A fetch that failed with `error` (of kind {@link fetchFailureKind}), as the report and the log tell it. */
export const fetchFailure = (error: HttpProblem, kind: string): DeviceFailure =>
  kind === 'unusable-answer'
    ? { kind, reason: 'The orchestrator answered, and its answer could not be used (an internal error, logged with the batch and device).', fault: error }
    : { kind, reason: error.detail };

/**
 * Logs a failed fetch that is no fact about the device, before the chunk fails with it: kind
 * `before-answer`, and whether a retry may help (`transient`: why) or the fault is ours for good.
 */
const logChunkFailure = (device: string, target: FetchTarget, error: unknown): void => {
  const transient = transientReason(error);
  logger.error('compliance fetch failed before the orchestrator answered; the chunk fails', {
    batchId: target.batchId,
    device,
    kind: 'before-answer',
    ...(transient ? { transient } : { permanent: true }),
    error,
  });
};

/** The batch and adapter a fetch is for. */
export type FetchTarget = Pick<CheckTarget, 'batchId' | 'adapterId'>;

/**
 * Fetches a device's configuration (retrying busy answers), or says why it could not; throws
 * what is no fact about the device (see {@link fetchFailureKind}).
 */
export const fetchConfig = async (device: string, target: FetchTarget, deps: CheckDeps): Promise<Fetched> => {
  const path = configPath(device);
  if (!path) return { kind: 'unaddressable', reason: 'The device name cannot be addressed in a RESTCONF path.' };
  const retries = deps.maxBusyRetries ?? 5;
  for (let attempt = 1; ; attempt++) {
    const sent = await sendRelayed(deps.gate, () => deps.relayGet(target.adapterId, path), device, target);
    if ('failure' in sent) return sent.failure;
    const { results } = sent;
    const status = Number(results[0]?.result);
    const data = results[0]?.data;
    if (status === 200) {
      const config = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['tailf-ncs:config'] : undefined;
      if (typeof config !== 'object' || config === null) return { kind: 'malformed', reason: 'The orchestrator answered without a tailf-ncs:config object.' };
      return { config };
    }
    if (status === 404) return { kind: 'unknown-device', reason: `The orchestrator does not know the device '${device}' (404).` };
    if (BUSY.has(status) && attempt <= retries) {
      deps.gate.pause(backoffMs(attempt));
      continue;
    }
    return { kind: BUSY.has(status) ? 'busy' : 'status', reason: `The orchestrator answered ${status}${BUSY.has(status) ? ` after ${retries} retries` : ''}.` };
  }
};

const issueOf = (rule: PlanRule, verdict: RuleResult): ReportIssue => ({
  ruleId: verdict.id,
  node: rule.node,
  path: verdict.path,
  severity: verdict.severity,
  mode: rule.mode,
  message: verdict.message,
  ...(verdict.at !== undefined ? { at: verdict.at } : {}),
  ...(verdict.expected !== undefined
    ? { expected: verdict.expected }
    : rule.value !== undefined && verdict.status === 'invalid'
      ? { expected: rule.value }
      : {}),
  ...(verdict.actual !== undefined ? { actual: verdict.actual } : {}),
  ...(verdict.truncated ? { truncated: verdict.truncated } : {}),
  ...(verdict.matches !== undefined ? { matches: verdict.matches } : {}),
  ...(verdict.failures ? { failures: verdict.failures } : {}),
  ...(verdict.failuresOmitted ? { failuresOmitted: verdict.failuresOmitted } : {}),
});

/** The last second {@link isoTimestamp} formatted, and its text up to the milliseconds. */
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * `date.toISOString()`, formatting each second once: a batch stamps thousands of reports a
 * second, and `toISOString` takes microseconds each time; the milliseconds are appended.
 */
export const isoTimestamp = (date: Date): string => {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const iso = date.toISOString();
    isoPrefix = iso.slice(0, -4);
    isoSecond = second;
  }
  return `${isoPrefix}${String(ms - second * 1000).padStart(3, '0')}Z`;
};

/** Each plan's rules by node, built once per node (a chunk checks many devices of one node). */
const rulesByPlan = new WeakMap<BatchPlan, Map<string, readonly PlanRule[]>>();

/** The rules a device on `node` is checked against: each node's own, from `base` down. */
export const rulesFor = (plan: BatchPlan, node: string): readonly PlanRule[] => {
  let byNode = rulesByPlan.get(plan);
  if (!byNode) rulesByPlan.set(plan, (byNode = new Map()));
  let rules = byNode.get(node);
  if (!rules) {
    const names = node.split('/');
    rules = names.flatMap((_, i) => plan.rulesByNode[names.slice(0, i + 1).join('/')] ?? []);
    byNode.set(node, rules);
  }
  return rules;
};

/** The report of a device that could not be graded; a log line says why. */
export const errorReport = (head: ReportHead, failure: DeviceFailure, deps: CheckDeps): DeviceReport => {
  const { batchId, device } = head;
  if (failure.fault !== undefined) {
    // A fault of ours: the cause goes to the log, never into the report.
    logger.error('compliance device not graded', { batchId, device, kind: failure.kind, reason: failure.reason, error: failure.fault });
  } else {
    logger.warn('compliance device not graded', { batchId, device, kind: failure.kind, reason: failure.reason });
  }
  return {
    ...head,
    grade: 'error',
    totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
    issues: [],
    reason: failure.reason,
    checkedAt: isoTimestamp(deps.now()),
  };
};

type ReportHead = Pick<DeviceReport, 'batchId' | 'device' | 'treeId' | 'version' | 'node' | 'sync'>;

/** The report of a device whose NSO copy differs from the device: NSO's diff, no score, no rule evaluated. */
const outOfSyncReport = (head: ReportHead, synced: Extract<SyncVerdict, { diff: string }>, deps: CheckDeps): DeviceReport => ({
  ...head,
  grade: 'out-of-sync',
  totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
  issues: [],
  diff: synced.diff,
  ...(synced.diffTruncated ? { diffTruncated: true } : {}),
  checkedAt: isoTimestamp(deps.now()),
});
type Graded = Pick<DeviceReport, 'grade' | 'score' | 'totals' | 'issues' | 'issuesOmitted' | 'exempted' | 'exemptedOmitted'>;

/** Checks one device (with the places of its exemptions in the plan) and returns its report (not yet stored). */
export const checkDevice = async (
  assignment: DeviceAssignment & Pick<ChunkDevice, 'exemptions'>,
  target: CheckTarget,
  deps: CheckDeps,
): Promise<DeviceReport> => {
  const synced = await deps.sync?.before(assignment.device, deps.gate);
  const head: ReportHead = {
    batchId: target.batchId,
    device: assignment.device,
    treeId: target.treeId,
    version: target.version,
    node: assignment.node,
    ...(synced ? { sync: synced.sync } : {}),
  };
  if (synced && 'failure' in synced) {
    deps.onFetchFailure?.(target.adapterId, synced.failure.kind);
    return errorReport(head, synced.failure, deps);
  }
  if (synced && 'diff' in synced) return outOfSyncReport(head, synced, deps);
  const fetched = await fetchConfig(assignment.device, target, deps);
  if (!('config' in fetched)) {
    deps.onFetchFailure?.(target.adapterId, fetched.kind);
    return errorReport(head, fetched, deps);
  }
  // One time for the exemptions and the report: an exemption holds while the check time is before its `until`.
  const checkedAt = deps.now();
  let graded: Graded;
  try {
    const exempt = exemptionsAt(target.plan, assignment.exemptions, checkedAt);
    graded = gradeConfig(fetched.config, rulesFor(target.plan, assignment.node), target.plan.variables, exempt, deps);
  } catch (error) {
    // The same configuration fails the same way every time: this device's report says so, the batch goes on.
    const report = errorReport(
      head,
      { kind: 'evaluation', reason: 'The configuration could not be evaluated (an internal error, logged with the batch and device).', fault: error },
      deps,
    );
    return { ...report, ...(await archived(fetched.config, report.grade, assignment.device, target, deps)) };
  }
  return { ...head, ...graded, ...(await archived(fetched.config, graded.grade, assignment.device, target, deps)), checkedAt: isoTimestamp(checkedAt) };
};

/**
 * Keeps a fetched configuration in the device's history, with the grade it got; the report
 * names it (`configId`). A store that fails is no fact about the device: the error fails the
 * chunk, which the engine retries (the same take then overwrites its entry).
 */
export const archived = async (
  config: unknown,
  grade: string | undefined,
  device: string,
  target: Pick<CheckTarget, 'batchId' | 'adapterId' | 'source'>,
  deps: Pick<CheckDeps, 'archive' | 'now'>,
): Promise<Pick<DeviceReport, 'configId'>> => {
  if (!deps.archive || !target.source) return {};
  try {
    const { configId } = await deps.archive.record({
      adapterId: target.adapterId,
      device,
      config: config as JsonValue,
      source: target.source,
      takenAt: deps.now(),
      ...(grade === undefined ? {} : { grade }),
    });
    return { configId };
  } catch (error) {
    logger.error('configuration history unavailable; the chunk fails', { batchId: target.batchId, device, transient: transientReason(error), error });
    throw error;
  }
};

/**
 * Evaluates a configuration against the device's rules and grades it; a rule `exempt` names is
 * listed as exempted instead, outside the issues, the score and the totals.
 */
const gradeConfig = (
  config: unknown,
  rules: readonly PlanRule[],
  variables: Readonly<Record<string, string>>,
  exempt: ReadonlyMap<string, FrozenExemption>,
  deps: CheckDeps,
): Graded => {
  const verdicts = deps.evaluate(config, variables, rules);
  const outcomes: { severity: RuleResult['severity']; passed: boolean }[] = [];
  const failed: ReportIssue[] = [];
  const exempted: ExemptedRule[] = [];
  verdicts.forEach((verdict, i) => {
    const exemption = exempt.get(verdict.id);
    if (exemption) {
      exempted.push(exemptedRule(rules[i]!, verdict, exemption));
      return;
    }
    // `invalid` (a rule that cannot be evaluated) counts as not passed: it was evaluated, and
    // the device is not shown to comply with it.
    outcomes.push({ severity: verdict.severity, passed: verdict.status === 'pass' });
    // Graded on the real values; stored and shown with secrets masked.
    if (verdict.status !== 'pass') failed.push(shownIssue(issueOf(rules[i]!, verdict)));
  });
  const value = score(outcomes);
  // Kept in order while they fit; one that does not is counted as omitted. When all of them
  // fit together (the JSON of the list is at least the sum of theirs), none is measured alone.
  let issues = failed;
  let omitted = 0;
  if (failed.length && Buffer.byteLength(JSON.stringify(failed), 'utf8') > MAX_ISSUE_BYTES) {
    issues = [];
    let bytes = 0;
    for (const issue of failed) {
      const size = Buffer.byteLength(JSON.stringify(issue), 'utf8');
      if (bytes + size > MAX_ISSUE_BYTES) omitted++;
      else {
        bytes += size;
        issues.push(issue);
      }
    }
  }
  return {
    grade: gradeOf(value),
    score: value,
    totals: ruleTotals(outcomes),
    issues,
    ...(omitted ? { issuesOmitted: omitted } : {}),
    ...boundedExempted(exempted),
  };
};
