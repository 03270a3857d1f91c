/**
 * Starting remediation runs and their rollbacks, and reading them. A run takes a completed
 * compliance batch's devices with failing rules, records itself (status `running`, its devices
 * `pending`), writes its audit entry and starts its durable execution (`<remediationId>`); the
 * engine does the work. A rollback is refused by the store unless the run is a completed
 * `apply` with no rollback yet, then audited and started the same way (`<remediationId>-rollback`).
 *
 * Which devices a run takes (docs/compliance.md, "Remediation runs"): by default every device
 * the batch graded `fail`; named devices must each have failing rules in their report (a
 * `review` or even `pass` device may have some; `error` and `out-of-sync` devices have none,
 * since nothing was graded). With `ruleIds`, a device must fail one of them (or have failing
 * rules left out of its report). A batch without such a device is a 409, never an empty run.
 */
import { randomBytes } from 'node:crypto';
import { batchAdapter, type AdapterInfo } from '../compliance/service.js';
import { deviceNameProblem } from '../trees/config-checks.js';
import type { Report } from '../compliance/model.js';
import type { ComplianceStore } from '../compliance/store.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { BadRequest, Conflict, NotFound, ServiceUnavailable } from '../platform/problem.js';
import { isSecretField, REDACTED, redact, redactText } from '../platform/redaction.js';
import { recordRemediationStart, recordRollbackStart, type AuditWrite } from './audit.js';
import type { Actor, NewRemediation, Remediation, RemediationDevice, RemediationEvent, RemediationMode, RemediationStore, RollbackIdsReader } from './model.js';
import type { YangPatch } from './patch.js';

/** Devices per page of `GET …/devices`: default and most. */
export const DEVICE_PAGE_LIMIT = { default: 50, max: 200 } as const;
/** Rule ids a start request may name. */
export const MAX_RULE_IDS = 1000;
/**
 * What a start request's `listKeys` may hold: lists (schema paths), a path's characters (node
 * names, ASCII by the schema's pattern), key names per list and a key name's characters. The
 * run's `META` item keeps them (JSON) with the rule ids and the rest of the run: the worst case
 * stays well inside DynamoDB's 400 KB (test/integration/remediation-start.test.ts stores it).
 */
export const LIST_KEY_LIMITS = { paths: 200, pathLength: 512, keys: 8, keyLength: 64 } as const;
/** Names a 400 lists at most (the count says how many there are). */
const NAMED = 5;
/** Reports read per page when a start walks them. */
const WALK_PAGE = 1000;

export interface StartRemediationInput {
  readonly mode: RemediationMode;
  readonly devices?: readonly string[];
  readonly ruleIds?: readonly string[];
  readonly commitQueue?: boolean;
  readonly listKeys?: Readonly<Record<string, readonly string[]>>;
}

export interface StartedRemediation {
  readonly remediationId: string;
  readonly status: 'running';
  readonly devices: number;
}

export interface RemediationDeps {
  readonly compliance: Pick<ComplianceStore, 'getBatch' | 'getWork' | 'getPlan' | 'listReports'>;
  readonly adapters: { get(name: string): Promise<AdapterInfo | undefined> };
  readonly store: RemediationStore & RollbackIdsReader;
  readonly audit: AuditWrite;
  /** Starts the run's durable execution, named after the event (a repeated start runs it once). */
  readonly startExecution: (event: RemediationEvent) => Promise<void>;
  readonly now: () => Date;
  readonly newId?: () => string;
}

/** The durable execution name of a run (`run`) or of its rollback. */
/**
 * The durable execution's name: `<id>` for the run, `<id>-rollback` for its first rollback and
 * `<id>-rollback-<n>` for the n-th (Lambda keeps a name as the idempotency key of its execution
 * for days: a rollback started again needs a name of its own to run at all).
 */
export const remediationExecutionName = (event: RemediationEvent): string =>
  event.action === 'run' ? event.remediationId : `${event.remediationId}-rollback${(event.attempt ?? 1) > 1 ? `-${event.attempt}` : ''}`;

export const newRemediationId = (): string => randomBytes(12).toString('hex');

/** `"a", "b", … (and 3 more)`: the first names of a list, for a problem's detail. */
const someOf = (names: readonly string[]): string =>
  `${names
    .slice(0, NAMED)
    .map((n) => JSON.stringify(n))
    .join(', ')}${names.length > NAMED ? ` and ${names.length - NAMED} more` : ''}`;

const failingRules = (report: Report): number => report.totals.errors + report.totals.warnings + report.totals.infos;

/** Whether a report has something to remediate (of `ruleIds`, when given). */
const remediable = (report: Report, ruleIds: ReadonlySet<string> | undefined): boolean =>
  report.node !== undefined &&
  failingRules(report) > 0 &&
  (!ruleIds || (report.issuesOmitted ?? 0) > 0 || report.issues.some((issue) => ruleIds.has(issue.ruleId)));

/** Every report of a batch (of one grade), a page at a time. */
const allReports = async (compliance: RemediationDeps['compliance'], batchId: string, grade?: 'fail'): Promise<Report[]> => {
  const reports: Report[] = [];
  let from: Awaited<ReturnType<ComplianceStore['listReports']>>['next'];
  do {
    const page = await compliance.listReports(batchId, { limit: WALK_PAGE, ...(grade ? { grade } : {}), ...(from ? { from } : {}) });
    reports.push(...page.items);
    from = page.next;
  } while (from);
  return reports;
};

/** Refuses rule ids the batch's plan does not hold. */
const checkRuleIds = (ruleIds: readonly string[], planned: ReadonlySet<string>): void => {
  const unknown = ruleIds.filter((id) => !planned.has(id));
  if (unknown.length === 0) return;
  throw new BadRequest(`The request is invalid: ${unknown.length} rule id(s) are not in the batch's plan (${someOf(unknown)}).`, [
    { in: 'body', field: 'ruleIds', message: `names rules not in the batch's plan: ${someOf(unknown)}` },
  ]);
};

/** The devices a run takes, with their nodes: the named ones (each checked), or the batch's `fail` devices. */
const runDevices = async (batchId: string, input: StartRemediationInput, deps: RemediationDeps): Promise<NewRemediation['devices']> => {
  const ruleIds = input.ruleIds ? new Set(input.ruleIds) : undefined;
  if (!input.devices) {
    const failing = (await allReports(deps.compliance, batchId, 'fail')).filter((r) => remediable(r, ruleIds));
    if (failing.length === 0) {
      throw new Conflict(
        `Batch '${batchId}' has no device graded \`fail\`${ruleIds ? ' on the rules asked for' : ''}: there is nothing to remediate. Name devices to remediate others with failing rules.`,
        'nothing-to-remediate',
      );
    }
    return failing.map((r) => ({ device: r.device, node: r.node! }));
  }
  const byDevice = new Map((await allReports(deps.compliance, batchId)).map((r) => [r.device, r]));
  const absent = input.devices.filter((d) => !byDevice.has(d));
  const nothing = input.devices.filter((d) => byDevice.has(d) && !remediable(byDevice.get(d)!, ruleIds));
  if (absent.length || nothing.length) {
    const parts = [
      ...(absent.length ? [`${absent.length} device(s) are not in the batch (${someOf(absent)})`] : []),
      ...(nothing.length
        ? [`${nothing.length} device(s) have no failing rule${ruleIds ? ' among those asked for' : ''} in their report (${someOf(nothing)})`]
        : []),
    ];
    throw new BadRequest(`The request is invalid: ${parts.join('; ')}.`, [{ in: 'body', field: 'devices', message: parts.join('; ') }]);
  }
  return input.devices.map((device) => ({ device, node: byDevice.get(device)!.node! }));
};

/**
 * Starts a run on a completed compliance batch: 404 unknown batch (or adapter), 409 a batch not
 * completed, a backup batch, a stopped adapter or nothing to remediate, 400 devices or rules not
 * in the batch. Records the run, audits it, then starts its execution; a run that cannot be
 * started ends `failed` and the caller is told 503.
 */
export const startRemediation = async (batchId: string, input: StartRemediationInput, by: Actor, deps: RemediationDeps): Promise<StartedRemediation> => {
  const batch = await deps.compliance.getBatch(batchId);
  if (!batch) throw new NotFound(`No compliance batch has the id '${batchId}'.`);
  if (batch.kind === 'backup') throw new Conflict(`Batch '${batchId}' is a backup batch: it graded nothing, so there is nothing to remediate.`, 'backup-batch');
  if (batch.status !== 'completed') {
    throw new Conflict(`Batch '${batchId}' is ${batch.status}: only a completed batch can be remediated.`, 'batch-not-completed');
  }
  const adapter = batchAdapter(await deps.adapters.get(batch.adapterId), batch.adapterId, 'a remediation');
  const [work, plan] = await Promise.all([deps.compliance.getWork(batchId), deps.compliance.getPlan(batchId)]);
  if (input.ruleIds) checkRuleIds(input.ruleIds, new Set(Object.values(plan.rulesByNode).flatMap((rules) => rules.map((r) => r.id))));
  const devices = await runDevices(batchId, input, deps);
  const started = deps.now().toISOString();
  const run: NewRemediation = {
    remediationId: (deps.newId ?? newRemediationId)(),
    batchId,
    adapterId: adapter.name,
    treeId: batch.treeId!,
    version: batch.version!,
    mode: input.mode,
    commitQueue: input.commitQueue ?? false,
    ...(input.ruleIds ? { ruleIds: input.ruleIds } : {}),
    listKeys: input.listKeys ?? {},
    devices,
    startedBy: by,
    started,
    expiresAt: work.expiresAt,
  };
  // A failure storing the devices ends the run `failed` in the store (and releases its lease).
  await deps.store.create(run);
  await launch(
    deps,
    { remediationId: run.remediationId, action: 'run' },
    () => recordRemediationStart(deps.audit, run),
    () => deps.store.finish(run.remediationId, 'failed', deps.now().toISOString(), 'The run could not be started.'),
  );
  return { remediationId: run.remediationId, status: 'running', devices: devices.length };
};

/**
 * Audits (reading what the entry lists) and starts an execution; when either fails,
 * `abandon` ends what was recorded (releasing its lease) and the caller gets 503.
 */
const launch = async (deps: RemediationDeps, event: RemediationEvent, audit: () => Promise<void>, abandon: () => Promise<void>): Promise<void> => {
  try {
    await audit();
    await deps.startExecution(event);
  } catch (error) {
    await abandon().catch(() => undefined);
    throw Object.assign(new ServiceUnavailable('The remediation engine could not be started; retry later.'), { cause: error });
  }
};

/** The run, or 404. */
export const readRemediation = async (store: RemediationStore, remediationId: string): Promise<Remediation> => {
  const run = await store.get(remediationId);
  if (!run) throw new NotFound(`No remediation run has the id '${remediationId}'.`);
  return run;
};

/** Why a rollback is refused, for the run as it stands. */
const rollbackRefusal = (run: Remediation): string =>
  run.mode !== 'apply'
    ? `Run '${run.remediationId}' is a dry-run: it committed nothing to roll back.`
    : run.status === 'running'
      ? `Run '${run.remediationId}' is still running: it can be rolled back once it has finished (completed or failed).`
      : run.rollback?.status === 'running'
        ? `Run '${run.remediationId}' already has a rollback running (started ${run.rollback.started}).`
        : `Run '${run.remediationId}' has no device left to roll back: each was rolled back, or its rollback's outcome is unknown (its rollback ${run.rollback?.status}, started ${run.rollback?.started}; see the devices' rollback records).`;

/**
 * Starts the rollback of a finished `apply` run (`completed` or `failed`): 404 unknown run, 409
 * stopped adapter, another apply run or rollback on the adapter (`remediation-running`), or a
 * run the store refuses (a dry-run, still running, a rollback running, or no device left to
 * roll back: an ended rollback that left devices, those NSO refused or never reached, may be
 * started again, as the next attempt). Audits the rollback with the
 * rollback ids recorded, then starts its execution; a rollback that cannot be started ends
 * `failed` (so it can be started again) and the caller is told 503.
 */
export const startRollback = async (remediationId: string, by: Actor, deps: RemediationDeps): Promise<StartedRemediation> => {
  const run = await readRemediation(deps.store, remediationId);
  batchAdapter(await deps.adapters.get(run.adapterId), run.adapterId, 'a rollback');
  const at = deps.now().toISOString();
  if (!(await deps.store.startRollback(remediationId, by, at))) {
    throw new Conflict(rollbackRefusal((await deps.store.get(remediationId)) ?? run), 'rollback-refused');
  }
  const attempt = (await deps.store.get(remediationId))?.rollback?.attempt ?? 1;
  await launch(
    deps,
    { remediationId, action: 'rollback', ...(attempt > 1 ? { attempt } : {}) },
    async () => recordRollbackStart(deps.audit, run, by, at, await deps.store.rollbackIds(remediationId)),
    () => deps.store.finishRollback(remediationId, 'failed', deps.now().toISOString()),
  );
  return { remediationId, status: 'running', devices: run.devices };
};

/**
 * A target as readers see it: the key values of a step named like a secret (`community=public`)
 * masked, and whether some step is named so (then its value is masked whole).
 */
const shownTarget = (target: string): { readonly target: string; readonly secret: boolean } => {
  let secret = false;
  const steps = target.split('/').map((step) => {
    const at = step.indexOf('=');
    const name = at < 0 ? step : step.slice(0, at);
    if (!isSecretField(name)) return step;
    secret = true;
    return at < 0 ? step : `${name}=${REDACTED}`;
  });
  return { target: steps.join('/'), secret };
};

/** A patch as readers see it: under a target named like a secret nothing is shown; elsewhere values are redacted. */
const shownPatch = (patch: YangPatch): YangPatch => {
  const body = patch['ietf-yang-patch:yang-patch'];
  return {
    'ietf-yang-patch:yang-patch': {
      'patch-id': body['patch-id'],
      edit: body.edit.map((edit) => {
        const { target, secret } = shownTarget(edit.target);
        if (edit.value === undefined) return { ...edit, target };
        const value = secret ? Object.fromEntries(Object.keys(edit.value).map((member) => [member, REDACTED])) : (redact(edit.value) as typeof edit.value);
        return { ...edit, target, value };
      }),
    },
  };
};

const shownError = (error: { readonly kind: string; readonly reason: string }) => ({ kind: error.kind, reason: redactText(error.reason) });

/**
 * A device as readers see it: secrets masked in its patch, errors and reasons (the rule of reports
 * and logs). Its dry-run output is shown as stored: the NSO client masked it where it came in (`ShownOutput`).
 */
export const shownDevice = (device: RemediationDevice): RemediationDevice => ({
  ...device,
  ...(device.patch ? { patch: shownPatch(device.patch) } : {}),
  rules: device.rules.map((rule) => ('unremediable' in rule ? { ...rule, unremediable: redactText(rule.unremediable) } : rule)),
  ...(device.error ? { error: shownError(device.error) } : {}),
  ...(device.rollback ? { rollback: { ...device.rollback, ...(device.rollback.error ? { error: shownError(device.rollback.error) } : {}) } } : {}),
});

/**
 * A page of a run's devices, by name, masked. The cursor names the run it was issued for:
 * reused for another run (or not issued by this service) it is a 400.
 */
export const listRemediationDevices = async (
  store: RemediationStore,
  remediationId: string,
  query: { readonly limit: number; readonly cursor?: string },
): Promise<{ items: readonly RemediationDevice[]; next?: string }> => {
  let after: string | undefined;
  if (query.cursor !== undefined) {
    // Only a device name a run can hold: a longer `after` would pass DynamoDB's bound on a key (a 500).
    const fields = decodeCursor(query.cursor, ['m', 'after'], (f) => f.m === remediationId && deviceNameProblem(f.after) === undefined);
    if (!fields) throw invalidCursor();
    after = fields.after;
  }
  await readRemediation(store, remediationId);
  const page = await store.listDevices(remediationId, { limit: query.limit, ...(after !== undefined ? { after } : {}) });
  return {
    items: page.items.map(shownDevice),
    ...(page.next !== undefined ? { next: encodeCursor({ m: remediationId, after: page.next }) } : {}),
  };
};
