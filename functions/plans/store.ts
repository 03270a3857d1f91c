/**
 * Compliance plans in DynamoDB, in the compliance table (env `COMPLIANCE_TABLE`): plans are few,
 * so they share one partition and one Query lists them.
 *
 * - A plan: `pk = "PLANS"`, `sk = "P#<planId>"`, its {@link PlanInput} fields, who made and last
 *   changed it, `revision` (every write is conditional on the one read before it), `lastRun`
 *   (the last run, started or skipped), `lastBatch` (the last batch a run started),
 *   `scheduleSince` (when its schedule was last written: a rate schedule counts from it) and
 *   `schedulePending` (the plan was written but its schedule not yet: see service.ts).
 * - A name claim: `pk = "PLANS"`, `sk = "N#<name folded>"` ({@link nameKey}: NFC, case folded),
 *   `planId`: names are unique among plans without regard to case. It is written and released in
 *   the same transaction as the plan, so two plans can never hold one name. Claims written before
 *   the key was folded (`N#<name in lower case>`) have the same key for every name whose lower
 *   case is its fold; for the few others (`ß`, `ς`, ligatures) a write of the plan releases the
 *   old key too and claims the folded one, so no migration is needed.
 *
 * Every create, replace, delete and run is one transaction with its changelog entry (kind
 * `plan`, name the planId; functions/runtime/changelog.ts): both land, or neither.
 */
import { createHash } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';
import { Conflict, ServiceUnavailable } from '../platform/problem.js';
import { storeCaller } from '../platform/transient.js';
import { changelogPut, changelogTable, diffFields, type ChangeAction } from '../runtime/changelog.js';
import type { Plan, PlanBatch, PlanInput, PlanRun } from './model.js';

export const PLANS_PK = 'PLANS';
const planSk = (planId: string): string => `P#${planId}`;
/**
 * The key a name is unique under: NFC, then folded to one case (upper then lower, so `ß` and
 * `SS`, `ς` and `Σ` meet), then NFC again (folding may decompose).
 */
export const nameKey = (name: string): string => name.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
const claimSk = (name: string): string => `N#${nameKey(name)}`;
/** The claim key of plans written before names were folded. */
const legacyClaimSk = (name: string): string => `N#${name.toLowerCase()}`;

/** A plan as stored: what the routes show but `broken` and `nextRunAt` (computed when read). */
export type StoredPlan = Omit<Plan, 'broken' | 'nextRunAt'> & {
  readonly revision: number;
  /** When the schedule was last written (a rate schedule fires every interval from it). */
  readonly scheduleSince?: string;
};

/** Two plans cannot share a name (case aside): 409 `name-taken`. */
export class PlanNameTaken extends Conflict {
  constructor(name: string) {
    super(`A compliance plan is already named '${name}' (names are unique without regard to case).`, 'name-taken');
  }
}

/** The plan changed between its read and this write: 409 `changed`, read it again. */
export class PlanChanged extends Conflict {
  constructor() {
    super('The compliance plan changed while this request was handled; read it again and retry.', 'changed');
  }
}

const INPUT_FIELDS = ['name', 'treeId', 'version', 'adapterId', 'devices', 'sync', 'schedule', 'timezone', 'enabled'] as const;

/** What runs write: a replace leaves them as they are, so a run recorded meanwhile is kept. */
const RUN_FIELDS = new Set(['lastRun', 'lastBatch', 'scheduleSince']);
/** What a replace never changes. */
const KEPT_FIELDS = new Set(['planId', 'createdAt', 'createdBy', ...RUN_FIELDS]);
/** What a replace removes when the new plan has none. */
const OPTIONAL_FIELDS = ['devices', 'sync', 'schedule', 'timezone', 'schedulePending'] as const;

/**
 * A plan's devices as the changelog keeps them: how many and a digest. The list itself (up to
 * 300 KB of names, functions/plans/schemas.ts) twice in one entry would not fit in a DynamoDB
 * item (400 KB); the plan shows the list.
 */
const devicesDigest = (devices: readonly string[]) => ({ count: devices.length, sha256: createHash('sha256').update(JSON.stringify(devices)).digest('hex') });

/** The user's fields of a plan, for the changelog's diff. */
const inputOf = (plan: PlanInput): Record<string, unknown> =>
  Object.fromEntries(INPUT_FIELDS.map((f) => [f, f === 'devices' && plan.devices ? devicesDigest(plan.devices) : plan[f]]).filter(([, v]) => v !== undefined));

/** The Update of a replace: every field of `after` but those it keeps, the optional ones it lacks removed. */
const replaceUpdate = (after: StoredPlan) => {
  const set = Object.entries(after).filter(([field, value]) => !KEPT_FIELDS.has(field) && value !== undefined);
  const removed = OPTIONAL_FIELDS.filter((field) => after[field] === undefined);
  const names = Object.fromEntries([...set.map(([field]) => field), ...removed].map((field) => [`#${field}`, field]));
  const values = Object.fromEntries(set.map(([field, value]) => [`:${field}`, value]));
  const expression = `SET ${set.map(([field]) => `#${field} = :${field}`).join(', ')}${removed.length ? ` REMOVE ${removed.map((f) => `#${f}`).join(', ')}` : ''}`;
  return { UpdateExpression: expression, ExpressionAttributeNames: names, ExpressionAttributeValues: values };
};

const toPlan = (item: Record<string, unknown>): StoredPlan => {
  const { pk: _pk, sk: _sk, ...plan } = item;
  return plan as unknown as StoredPlan;
};

const cancelled = (error: unknown): readonly string[] | undefined =>
  error instanceof Error && error.name === 'TransactionCanceledException'
    ? ((error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code ?? 'None')
    : undefined;

/** What a run writes ({@link PlanStore.recordRun}): a field left undefined stays as stored, null removes it. */
export interface RunRecord {
  /** The field as read: the record lands only while it is still so. */
  readonly guard: { readonly lastRun: PlanRun | undefined } | { readonly lastBatch: PlanBatch | undefined };
  readonly lastRun?: PlanRun | null;
  readonly lastBatch?: PlanBatch | null;
  /** The run the changelog entry records. */
  readonly run: PlanRun;
}

export interface PlanPage {
  readonly items: readonly StoredPlan[];
  /** The last plan's id when more follow. */
  readonly after?: string;
}

export class PlanStore {
  constructor(
    private readonly client: Pick<DynamoDBDocumentClient, 'send'>,
    private readonly tableName: string,
    private readonly changelog: () => string = changelogTable,
  ) {}

  readonly #send = storeCaller('compliance store');

  #entry(planId: string, action: ChangeAction, at: string, by: string, changes: ReturnType<typeof diffFields>) {
    return changelogPut({ kind: 'plan', name: planId, action, at, by, changes }, this.changelog());
  }

  #claim(name: string, planId: string) {
    return {
      Put: {
        TableName: this.tableName,
        Item: { pk: PLANS_PK, sk: claimSk(name), name, planId },
        ConditionExpression: 'attribute_not_exists(pk) OR planId = :planId',
        ExpressionAttributeValues: { ':planId': planId },
      },
    };
  }

  /** Releases the name's claim, and its claim under the old key when that differs. */
  #release(name: string, planId: string) {
    return [...new Set([claimSk(name), legacyClaimSk(name)])].map((sk) => ({
      Delete: {
        TableName: this.tableName,
        Key: { pk: PLANS_PK, sk },
        ConditionExpression: 'attribute_not_exists(pk) OR planId = :planId',
        ExpressionAttributeValues: { ':planId': planId },
      },
    }));
  }

  /** Runs a transaction whose item `claimAt` (when given) is a name claim: its refusal is {@link PlanNameTaken}, any other {@link PlanChanged}. */
  async #transact(items: readonly object[], name: string, claimAt?: number): Promise<void> {
    try {
      await this.#send(() => this.client.send(new TransactWriteCommand({ TransactItems: items as never })));
    } catch (error) {
      const codes = cancelled(error);
      if (!codes) throw error;
      if (claimAt !== undefined && codes[claimAt] === 'ConditionalCheckFailed') throw new PlanNameTaken(name);
      if (codes.includes('ConditionalCheckFailed')) throw new PlanChanged();
      throw Object.assign(new ServiceUnavailable('The compliance store could not write the plan now; retry later.'), { cause: error });
    }
  }

  /** One plan (strongly consistent); undefined when there is none. */
  async get(planId: string): Promise<StoredPlan | undefined> {
    const out = await this.#send(() =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk: PLANS_PK, sk: planSk(planId) }, ConsistentRead: true })),
    );
    return out.Item ? toPlan(out.Item) : undefined;
  }

  /** Plans by id, `limit` at most, after `after` (exclusive). */
  async list(limit: number, after?: string): Promise<PlanPage> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined = after ? { pk: PLANS_PK, sk: planSk(after) } : undefined;
    do {
      const out = await this.#send(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
            ExpressionAttributeValues: { ':pk': PLANS_PK, ':p': 'P#' },
            Limit: limit + 1 - items.length,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      items.push(...(out.Items ?? []));
      startKey = out.LastEvaluatedKey;
    } while (startKey && items.length <= limit);
    const page = items.slice(0, limit).map(toPlan);
    return { items: page, ...(items.length > limit ? { after: page.at(-1)?.planId } : {}) };
  }

  /** Creates a plan, its name claim and its `created` entry; {@link PlanNameTaken} when the name is held. */
  async create(plan: StoredPlan): Promise<void> {
    await this.#transact(
      [
        {
          Put: {
            TableName: this.tableName,
            Item: { pk: PLANS_PK, sk: planSk(plan.planId), ...plan },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        this.#claim(plan.name, plan.planId),
        this.#entry(plan.planId, 'created', plan.createdAt, plan.createdBy, diffFields(undefined, inputOf(plan))),
      ],
      plan.name,
      1,
    );
  }

  /**
   * Replaces `before` with `after` (its revision one more), moving the name claim when the name
   * changed, with a `replaced` entry. What runs write (`lastRun`, `lastBatch`, `scheduleSince`) is
   * left as stored, so a run recorded since `before` was read is kept.
   */
  async replace(before: StoredPlan, after: StoredPlan): Promise<void> {
    const renamed = claimSk(before.name) !== claimSk(after.name) || legacyClaimSk(before.name) !== claimSk(before.name);
    const update = replaceUpdate(after);
    await this.#transact(
      [
        {
          Update: {
            TableName: this.tableName,
            Key: { pk: PLANS_PK, sk: planSk(after.planId) },
            ...update,
            ConditionExpression: 'revision = :before',
            ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':before': before.revision },
          },
        },
        this.#claim(after.name, after.planId),
        ...(renamed ? this.#release(before.name, before.planId).filter((r) => r.Delete.Key.sk !== claimSk(after.name)) : []),
        this.#entry(after.planId, 'replaced', after.updatedAt, after.updatedBy, diffFields(inputOf(before), inputOf(after))),
      ],
      after.name,
      1,
    );
  }

  /** Deletes `plan` (as read) and its name claim, with a `deleted` entry. */
  async delete(plan: StoredPlan, at: string, by: string): Promise<void> {
    await this.#transact(
      [
        {
          Delete: {
            TableName: this.tableName,
            Key: { pk: PLANS_PK, sk: planSk(plan.planId) },
            ConditionExpression: 'revision = :revision',
            ExpressionAttributeValues: { ':revision': plan.revision },
          },
        },
        ...this.#release(plan.name, plan.planId),
        this.#entry(plan.planId, 'deleted', at, by, diffFields(inputOf(plan), undefined)),
      ],
      plan.name,
    );
  }

  /**
   * Records a run: sets `lastRun` and `lastBatch` as `record` says (null removes), with the
   * changelog entry of `record.run`, if the guarded field is still as read: of two runs that read
   * the same plan, one records. Started runs guard `lastBatch` (the lease), skips `lastRun`.
   */
  async recordRun(planId: string, record: RunRecord, by: string): Promise<void> {
    const fields = { lastRun: record.lastRun, lastBatch: record.lastBatch };
    const set = Object.entries(fields).filter(([, v]) => v);
    const removed = Object.entries(fields).filter(([, v]) => v === null);
    const [field, held] = 'lastBatch' in record.guard ? ['lastBatch', record.guard.lastBatch?.batchId] : ['lastRun', record.guard.lastRun?.at];
    const inner = field === 'lastBatch' ? 'batchId' : 'at';
    const run = record.run;
    await this.#transact(
      [
        {
          Update: {
            TableName: this.tableName,
            Key: { pk: PLANS_PK, sk: planSk(planId) },
            UpdateExpression: [
              set.length ? `SET ${set.map(([f]) => `${f} = :${f}`).join(', ')}` : '',
              removed.length ? `REMOVE ${removed.map(([f]) => f).join(', ')}` : '',
            ].join(' '),
            ConditionExpression: held === undefined ? `attribute_exists(pk) AND attribute_not_exists(${field})` : `${field}.#held = :held`,
            ExpressionAttributeValues: { ...Object.fromEntries(set.map(([f, v]) => [`:${f}`, v])), ...(held === undefined ? {} : { ':held': held }) },
            ...(held === undefined ? {} : { ExpressionAttributeNames: { '#held': inner } }),
          },
        },
        this.#entry(
          planId,
          run.outcome === 'started' ? 'run-started' : 'run-skipped',
          run.at,
          by,
          Object.entries(run).map(([f, to]) => ({ field: f, to })),
        ),
      ],
      planId,
    );
  }

  /**
   * Sets whether the plan's schedule is written (`pending` false: it is, since `since`), if the
   * plan is still at `revision`. Marking it pending (its schedule may be gone) is a change of the
   * plan: the revision goes up, so a write that read the plan before is refused.
   */
  async markSchedule(planId: string, revision: number, pending: boolean, since?: string): Promise<void> {
    try {
      await this.#send(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: PLANS_PK, sk: planSk(planId) },
            UpdateExpression: pending ? 'SET schedulePending = :t, revision = :next' : `REMOVE schedulePending${since ? ' SET scheduleSince = :since' : ''}`,
            ConditionExpression: 'revision = :revision',
            ExpressionAttributeValues: { ':revision': revision, ...(pending ? { ':t': true, ':next': revision + 1 } : since ? { ':since': since } : {}) },
          }),
        ),
      );
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') throw new PlanChanged();
      throw error;
    }
  }
}

/** The container's plan store (table `COMPLIANCE_TABLE`, changelog `CHANGELOG_TABLE`). */
export const createPlanStore = (client: Pick<DynamoDBDocumentClient, 'send'> = documentClient, tableName = requiredEnv('COMPLIANCE_TABLE')): PlanStore =>
  new PlanStore(client, tableName);
