/**
 * Profiles and the applications' run state in DynamoDB (table key `profiles`, env
 * `PROFILES_TABLE`).
 *
 * Items:
 * - `pk = "PROFILE#<id>"`, `kind = "profile"` (the sparse `byId` index lists profiles by id):
 *   the profile's settings, `created(By)`, `lastUpdated(By)`.
 * - `pk = "RUNTIME"`: `activeProfile` (the id of the one active profile) and `applications`
 *   (`<name>: { state, changed, changedBy, restarted? }`). One pointer, so that activating a
 *   profile deactivates the previous one in the same write, and no reader can ever see two
 *   active profiles or none.
 *
 * Before anything is written the table is empty, and every reader sees the built-in `default`
 * profile, active, and every application running: the state a fresh deployment starts in. The
 * first write of any kind stores that state first ({@link ProfileStore.ensure}), conditionally,
 * so concurrent first writes store it once. Read-only functions therefore need read access
 * only, and no deployment step has to seed the table.
 */
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { APPLICATIONS, type ApplicationName } from '../platform/applications.js';
import { changelogPut, diffFields, type ChangeAction } from './changelog.js';
import { documentClient } from '../platform/dynamo.js';
import { caseTwinOf, claimDelete, claimPut, ensureClaims, indexedIdentifiers, type ClaimSpace } from '../platform/name-claims.js';
import { requiredEnv } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import {
  DEFAULT_PROFILE_ID,
  builtInProfile,
  profileSettings,
  type ApplicationSettings,
  type Profile,
  type ProfileLogLevel,
  type ProfileSettings,
} from './profile-model.js';

export type ApplicationState = 'RUNNING' | 'STOPPED';

export interface ApplicationRun {
  readonly state: ApplicationState;
  /** When and by whom the state last changed (absent: never changed). */
  readonly changed?: string;
  readonly changedBy?: string;
  /** The last restart. */
  readonly restarted?: string;
}

export interface RuntimeRecord {
  readonly activeProfile: string;
  readonly applications: Readonly<Record<ApplicationName, ApplicationRun>>;
  /** False while the table holds nothing yet (the built-in state). */
  readonly stored: boolean;
}

/** Who made a change, and when. */
export interface Change {
  readonly now: string;
  readonly by: string;
}

export const PROFILE_KIND = 'profile';
export const BY_ID_INDEX = 'byId';
export const RUNTIME_KEY = { pk: 'RUNTIME' } as const;
export const profileKey = (id: string): { pk: string } => ({ pk: `PROFILE#${id}` });
/** Prefix of the profile ids' claims (`platform/name-claims.ts`): ids are unique without regard to case. */
export const ID_CLAIM_PREFIX = 'PROFILEID#';

const BUILT_IN_RUNTIME: RuntimeRecord = {
  activeProfile: DEFAULT_PROFILE_ID,
  applications: Object.fromEntries(APPLICATIONS.map((name) => [name, { state: 'RUNNING' }])) as Record<ApplicationName, ApplicationRun>,
  stored: false,
};

/** Why a write was refused. */
export class ProfileWriteRefused extends Error {
  constructor(
    readonly reason: 'exists' | 'not-found' | 'active' | 'stopped' | 'contended' | 'case-twin',
    /** With `case-twin`: the stored id that differs from the new one only by case. */
    readonly twin?: string,
  ) {
    super(`profile write refused: ${reason}`);
    this.name = 'ProfileWriteRefused';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const toRun = (v: unknown): ApplicationRun => {
  const r = isRecord(v) ? v : {};
  return {
    state: r['state'] === 'STOPPED' ? 'STOPPED' : 'RUNNING',
    ...(str(r['changed']) ? { changed: str(r['changed'])! } : {}),
    ...(str(r['changedBy']) ? { changedBy: str(r['changedBy'])! } : {}),
    ...(str(r['restarted']) ? { restarted: str(r['restarted'])! } : {}),
  };
};

const toRuntime = (item: Record<string, unknown> | undefined): RuntimeRecord => {
  if (!item) return BUILT_IN_RUNTIME;
  const apps = isRecord(item['applications']) ? item['applications'] : {};
  return {
    activeProfile: str(item['activeProfile']) ?? DEFAULT_PROFILE_ID,
    applications: Object.fromEntries(APPLICATIONS.map((name) => [name, toRun(apps[name])])) as Record<ApplicationName, ApplicationRun>,
    stored: true,
  };
};

const toProfile = (item: Record<string, unknown>, activeId: string): Profile => {
  const id = str(item['id']) ?? String(item['pk']).slice('PROFILE#'.length);
  return {
    id,
    active: id === activeId,
    ...profileSettings(item),
    ...(str(item['created']) ? { created: str(item['created'])! } : {}),
    ...(str(item['createdBy']) ? { createdBy: str(item['createdBy'])! } : {}),
    ...(str(item['lastUpdated']) ? { lastUpdated: str(item['lastUpdated'])! } : {}),
    ...(str(item['lastUpdatedBy']) ? { lastUpdatedBy: str(item['lastUpdatedBy'])! } : {}),
  };
};

const builtInDefault = (): Profile => ({ id: DEFAULT_PROFILE_ID, active: true, ...builtInProfile() });

/** The reasons DynamoDB gave for cancelling a transaction, one per item; undefined for another error. */
const cancellation = (error: unknown): (string | undefined)[] | undefined => {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  return ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map((r) => r.Code);
};

/** The item attributes of a profile's settings (an absent description is removed on replace). */
const settingsItem = (s: ProfileSettings): Record<string, unknown> => ({
  logLevel: s.logLevel,
  applications: s.applications,
  ...(s.description !== undefined ? { description: s.description } : {}),
});

/**
 * The audit entries of a change of what the applications run with, from one profile's settings to
 * another's (the active profile replaced, or another activated): one `replaced` entry per
 * application whose settings, profile, or inherited profile log level change, none for the others.
 */
const applicationEntries = (
  from: { readonly id: string; readonly settings: ProfileSettings },
  to: { readonly id: string; readonly settings: ProfileSettings },
  change: Change,
  tableName: string,
) =>
  APPLICATIONS.flatMap((name) => {
    const view = (side: typeof from) => ({ ...side.settings.applications[name], profile: side.id, profileLogLevel: side.settings.logLevel });
    const changes = diffFields(view(from), view(to));
    return changes.length ? [changelogPut({ kind: 'application', name, at: change.now, by: change.by, action: 'replaced', changes }, tableName)] : [];
  });

export interface ProfilePage {
  readonly items: readonly Profile[];
  readonly more: boolean;
}

export interface ProfileStore {
  /** The run state and the active profile's id (strongly consistent). */
  runtime(signal?: AbortSignal): Promise<RuntimeRecord>;
  /** The active profile and the run state, as the service behaves (strongly consistent). */
  active(signal?: AbortSignal): Promise<{ readonly runtime: RuntimeRecord; readonly profile: Profile }>;
  get(id: string): Promise<Profile | undefined>;
  list(options: { readonly limit: number; readonly after?: string }): Promise<ProfilePage>;
  create(id: string, settings: ProfileSettings, change: Change): Promise<Profile>;
  replace(id: string, settings: ProfileSettings, change: Change): Promise<Profile>;
  /** Deletes a profile that is not active. */
  delete(id: string, change: Change): Promise<void>;
  /** Makes `id` the active profile; the previous one stops being active in the same write. */
  activate(id: string, change: Change): Promise<{ readonly profile: Profile; readonly previous: string }>;
  /** Replaces one application's settings in the active profile. */
  setApplicationSettings<A extends ApplicationName>(name: A, settings: ApplicationSettings[A], change: Change): Promise<Profile>;
  /** Sets one application's log level in the active profile (its other settings untouched). */
  setApplicationLogLevel(name: ApplicationName, level: ProfileLogLevel, change: Change): Promise<Profile>;
  /** Sets an application's run state; `restart` requires it to be running and records the restart. */
  setApplicationState(
    name: ApplicationName,
    action: 'stop' | 'start' | 'restart',
    change: Change,
  ): Promise<{ readonly run: ApplicationRun; readonly changed: boolean }>;
}

/**
 * The store over `tableName`. Application changes (state, settings, log level) are written with
 * their audit entry in the changelog table (`CHANGELOG_TABLE`, read when first needed: functions
 * that only read need not have it).
 *
 * Longer than 80 lines on purpose: a factory whose short methods share its client, table and
 * caches through the closure; each method is its own unit (and is tested as one).
 */
export const createProfileStore = (
  client: DynamoDBDocumentClient = documentClient,
  tableName = requiredEnv('PROFILES_TABLE'),
  changelogTableName: () => string = () => requiredEnv('CHANGELOG_TABLE'),
): ProfileStore => {
  const getItem = async (key: Record<string, string>, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> =>
    (await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }), signal ? { abortSignal: signal } : {})).Item;

  const runtime = async (signal?: AbortSignal): Promise<RuntimeRecord> => toRuntime(await getItem(RUNTIME_KEY, signal));
  const claims: ClaimSpace = { tableName, prefix: ID_CLAIM_PREFIX };

  const storedIds = (): AsyncIterable<string> => indexedIdentifiers(client, tableName, BY_ID_INDEX, PROFILE_KIND, 'id');

  /** Stores the built-in state unless something is stored already; returns the stored run state. */
  const ensure = async (change: Change): Promise<RuntimeRecord> => {
    const current = await runtime();
    if (current.stored) return current;
    const profile = builtInProfile();
    try {
      await client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: { ...RUNTIME_KEY, activeProfile: DEFAULT_PROFILE_ID, applications: BUILT_IN_RUNTIME.applications, created: change.now },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: {
                  ...profileKey(DEFAULT_PROFILE_ID),
                  kind: PROFILE_KIND,
                  id: DEFAULT_PROFILE_ID,
                  ...settingsItem(profile),
                  created: change.now,
                  createdBy: 'service',
                  lastUpdated: change.now,
                  lastUpdatedBy: 'service',
                },
              },
            },
          ],
        }),
      );
    } catch (error) {
      // Another first write stored it meanwhile: what it stored is the same.
      if (cancellation(error)?.[0] !== 'ConditionalCheckFailed') throw error;
    }
    return runtime();
  };

  const get = async (id: string, activeId?: string, signal?: AbortSignal): Promise<Profile | undefined> => {
    const rt = activeId === undefined ? await runtime(signal) : undefined;
    const active = activeId ?? rt!.activeProfile;
    if (rt && !rt.stored) return id === DEFAULT_PROFILE_ID ? builtInDefault() : undefined;
    const item = await getItem(profileKey(id), signal);
    return item ? toProfile(item, active) : undefined;
  };

  /** Updates one application's member of the active profile, checked to be the active one when the write lands. */
  const writeActiveApplication = async <A extends ApplicationName>(
    name: A,
    action: Extract<ChangeAction, 'replaced' | 'loglevel'>,
    next: (current: ApplicationSettings[A]) => ApplicationSettings[A],
    change: Change,
  ): Promise<Profile> => {
    const rt = await ensure(change);
    const id = rt.activeProfile;
    const item = await getItem(profileKey(id));
    if (!item) throw new ProfileWriteRefused('contended');
    // The condition compares with the stored value as is; the diff and the update use it with defaults filled in.
    const stored = isRecord(item['applications']) ? item['applications'][name] : undefined;
    const before = toProfile(item, id).applications[name];
    const after = next(before);
    try {
      await client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: { TableName: tableName, Key: RUNTIME_KEY, ConditionExpression: 'activeProfile = :id', ExpressionAttributeValues: { ':id': id } },
            },
            {
              Update: {
                TableName: tableName,
                Key: profileKey(id),
                UpdateExpression: 'SET applications.#n = :s, lastUpdated = :now, lastUpdatedBy = :by',
                // Written over the settings the change was computed from.
                ConditionExpression: stored === undefined ? 'attribute_not_exists(applications.#n)' : 'applications.#n = :before',
                ExpressionAttributeNames: { '#n': name },
                ExpressionAttributeValues: { ':s': after, ':now': change.now, ':by': change.by, ...(stored === undefined ? {} : { ':before': stored }) },
              },
            },
            // The audit entry lands with the change, or neither does.
            changelogPut(
              { kind: 'application', name, at: change.now, by: change.by, action, changes: diffFields({ ...before, profile: id }, { ...after, profile: id }) },
              changelogTableName(),
            ),
          ],
        }),
      );
    } catch (error) {
      if (cancellation(error) || (error as { name?: string }).name === 'TransactionConflictException') throw new ProfileWriteRefused('contended');
      throw error;
    }
    return (await get(id, id))!;
  };

  /** A check that a profile still exists and is as read (its `lastUpdated` unchanged). */
  const unchangedSince = (id: string, item: Record<string, unknown>) => ({
    TableName: tableName,
    Key: profileKey(id),
    ...(typeof item['lastUpdated'] === 'string'
      ? { ConditionExpression: 'attribute_exists(pk) AND lastUpdated = :seen', ExpressionAttributeValues: { ':seen': item['lastUpdated'] } }
      : { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(lastUpdated)' }),
  });

  return {
    runtime: () => runtime(),

    async active(signal) {
      const rt = await runtime(signal);
      if (!rt.stored) return { runtime: rt, profile: builtInDefault() };
      const profile = await get(rt.activeProfile, rt.activeProfile, signal);
      if (profile) return { runtime: rt, profile };
      // Only a hand-edited table gets here: activation and deletion check each other.
      logger.error('the active profile does not exist; using the built-in settings', { profile: rt.activeProfile });
      return { runtime: rt, profile: { ...builtInDefault(), id: rt.activeProfile } };
    },

    get: (id) => get(id),

    async list({ limit, after }) {
      const rt = await runtime();
      if (!rt.stored) {
        const items = after === undefined || after < DEFAULT_PROFILE_ID ? [builtInDefault()] : [];
        return { items, more: false };
      }
      const items: Profile[] = [];
      let startKey: Record<string, unknown> | undefined;
      do {
        const out = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: BY_ID_INDEX,
            KeyConditionExpression: after === undefined ? '#kind = :kind' : '#kind = :kind AND #id > :after',
            ExpressionAttributeNames: { '#kind': 'kind', ...(after === undefined ? {} : { '#id': 'id' }) },
            ExpressionAttributeValues: { ':kind': PROFILE_KIND, ...(after === undefined ? {} : { ':after': after }) },
            Limit: limit + 1 - items.length,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        );
        for (const item of out.Items ?? []) items.push(toProfile(item, rt.activeProfile));
        startKey = out.LastEvaluatedKey;
      } while (startKey && items.length <= limit);
      return { items: items.slice(0, limit), more: items.length > limit };
    },

    async create(id, settings, change) {
      const rt = await ensure(change);
      const item = {
        ...profileKey(id),
        kind: PROFILE_KIND,
        id,
        ...settingsItem(settings),
        created: change.now,
        createdBy: change.by,
        lastUpdated: change.now,
        lastUpdatedBy: change.by,
      };
      await ensureClaims(client, claims, storedIds);
      try {
        // The id claims its case-folded form with the record: a twin refuses the create.
        await client.send(
          new TransactWriteCommand({
            TransactItems: [{ Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }, claimPut(claims, id)],
          }),
        );
      } catch (error) {
        const codes = cancellation(error);
        if (codes?.[0] === 'ConditionalCheckFailed') throw new ProfileWriteRefused('exists');
        const twin = codes?.[1] === 'ConditionalCheckFailed' ? await caseTwinOf(client, claims, id) : undefined;
        if (twin !== undefined) throw new ProfileWriteRefused('case-twin', twin);
        if (codes || (error as { name?: string }).name === 'TransactionConflictException') throw new ProfileWriteRefused('contended');
        throw error;
      }
      return toProfile(item, rt.activeProfile);
    },

    async replace(id, settings, change) {
      const rt = await ensure(change);
      const item = await getItem(profileKey(id));
      if (!item) throw new ProfileWriteRefused('not-found');
      const active = rt.activeProfile === id;
      const next: Record<string, unknown> = { ...item, ...settingsItem(settings), lastUpdated: change.now, lastUpdatedBy: change.by };
      if (settings.description === undefined) delete next['description'];
      try {
        await client.send(
          new TransactWriteCommand({
            TransactItems: [
              // Active or not as when read: a profile activated meanwhile would change the
              // applications without their audit entries.
              {
                ConditionCheck: {
                  TableName: tableName,
                  Key: RUNTIME_KEY,
                  ConditionExpression: active ? 'activeProfile = :id' : 'activeProfile <> :id',
                  ExpressionAttributeValues: { ':id': id },
                },
              },
              {
                Update: {
                  TableName: tableName,
                  Key: profileKey(id),
                  UpdateExpression: `SET #l = :l, #a = :a, lastUpdated = :now, lastUpdatedBy = :by${settings.description === undefined ? ' REMOVE description' : ', description = :d'}`,
                  // Written over the settings the entries were computed from.
                  ConditionExpression: 'attribute_exists(pk) AND #a = :beforeA AND #l = :beforeL',
                  ExpressionAttributeNames: { '#l': 'logLevel', '#a': 'applications' },
                  ExpressionAttributeValues: {
                    ':l': settings.logLevel,
                    ':a': settings.applications,
                    ':now': change.now,
                    ':by': change.by,
                    ':beforeA': item['applications'],
                    ':beforeL': item['logLevel'],
                    ...(settings.description === undefined ? {} : { ':d': settings.description }),
                  },
                },
              },
              // The applications' audit entries land with the change, or neither does.
              ...(active ? applicationEntries({ id, settings: profileSettings(item) }, { id, settings }, change, changelogTableName()) : []),
            ],
          }),
        );
      } catch (error) {
        const codes = cancellation(error);
        if (codes?.[1] === 'ConditionalCheckFailed' && !(await getItem(profileKey(id)))) throw new ProfileWriteRefused('not-found');
        if (codes || (error as { name?: string }).name === 'TransactionConflictException') throw new ProfileWriteRefused('contended');
        throw error;
      }
      return toProfile(next, rt.activeProfile);
    },

    async delete(id, change) {
      const rt = await ensure(change);
      if (rt.activeProfile === id) throw new ProfileWriteRefused('active');
      try {
        await client.send(
          new TransactWriteCommand({
            TransactItems: [
              // Checked with the deletion, so that no activation can slip in between.
              {
                ConditionCheck: {
                  TableName: tableName,
                  Key: RUNTIME_KEY,
                  ConditionExpression: 'activeProfile <> :id',
                  ExpressionAttributeValues: { ':id': id },
                },
              },
              { Delete: { TableName: tableName, Key: profileKey(id), ConditionExpression: 'attribute_exists(pk)' } },
              claimDelete(claims, id),
            ],
          }),
        );
      } catch (error) {
        const codes = cancellation(error);
        if (codes?.[0] === 'ConditionalCheckFailed') throw new ProfileWriteRefused('active');
        if (codes?.[1] === 'ConditionalCheckFailed') throw new ProfileWriteRefused('not-found');
        throw error;
      }
    },

    async activate(id, change) {
      const rt = await ensure(change);
      const [previousItem, nextItem] = await Promise.all([getItem(profileKey(rt.activeProfile)), getItem(profileKey(id))]);
      if (!nextItem) throw new ProfileWriteRefused('not-found');
      // What each application ran with and will run with: its audit entry lands with the switch.
      const entries =
        id === rt.activeProfile
          ? []
          : applicationEntries(
              { id: rt.activeProfile, settings: previousItem ? profileSettings(previousItem) : builtInProfile() },
              { id, settings: profileSettings(nextItem) },
              change,
              changelogTableName(),
            );
      try {
        await client.send(
          new TransactWriteCommand({
            TransactItems: [
              // The settings the entries were computed from, still those of both profiles.
              { ConditionCheck: unchangedSince(id, nextItem) },
              {
                Update: {
                  TableName: tableName,
                  Key: RUNTIME_KEY,
                  UpdateExpression: 'SET activeProfile = :id, activated = :now, activatedBy = :by',
                  ConditionExpression: 'activeProfile = :previous',
                  ExpressionAttributeValues: { ':id': id, ':now': change.now, ':by': change.by, ':previous': rt.activeProfile },
                },
              },
              ...(entries.length && previousItem ? [{ ConditionCheck: unchangedSince(rt.activeProfile, previousItem) }] : []),
              ...entries,
            ],
          }),
        );
      } catch (error) {
        const codes = cancellation(error);
        if (codes?.[0] === 'ConditionalCheckFailed' && !(await getItem(profileKey(id)))) throw new ProfileWriteRefused('not-found');
        if (codes || (error as { name?: string }).name === 'TransactionConflictException') throw new ProfileWriteRefused('contended');
        throw error;
      }
      const profile = await get(id, id);
      if (!profile) throw new ProfileWriteRefused('contended');
      return { profile, previous: rt.activeProfile };
    },

    setApplicationSettings: (name, settings, change) => writeActiveApplication(name, 'replaced', () => settings, change),
    setApplicationLogLevel: (name, level, change) => writeActiveApplication(name, 'loglevel', (current) => ({ ...current, logLevel: level }), change),

    async setApplicationState(name, action_, change) {
      const rt = await ensure(change);
      const before = rt.applications[name];
      if (action_ === 'restart' && before.state === 'STOPPED') throw new ProfileWriteRefused('stopped');
      const state: ApplicationState = action_ === 'stop' ? 'STOPPED' : 'RUNNING';
      if (action_ !== 'restart' && before.state === state) return { run: before, changed: false };
      const run: ApplicationRun = {
        state,
        changed: action_ === 'restart' ? (before.changed ?? change.now) : change.now,
        changedBy: action_ === 'restart' ? (before.changedBy ?? change.by) : change.by,
        ...(action_ === 'restart' ? { restarted: change.now } : before.restarted ? { restarted: before.restarted } : {}),
      };
      const action: ChangeAction = action_ === 'stop' ? 'stopped' : action_ === 'start' ? 'started' : 'restarted';
      try {
        await client.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName,
                  Key: RUNTIME_KEY,
                  UpdateExpression: 'SET applications.#n = :run',
                  // Written over the state it was decided on: a concurrent change refuses this one.
                  ConditionExpression: 'applications.#n = :before',
                  ExpressionAttributeNames: { '#n': name },
                  ExpressionAttributeValues: { ':run': run, ':before': before },
                },
              },
              // The audit entry lands with the change, or neither does.
              changelogPut(
                { kind: 'application', name, at: change.now, by: change.by, action, changes: diffFields({ ...before }, { ...run }) },
                changelogTableName(),
              ),
            ],
          }),
        );
      } catch (error) {
        if (cancellation(error) || (error as { name?: string }).name === 'TransactionConflictException') throw new ProfileWriteRefused('contended');
        throw error;
      }
      return { run, changed: true };
    },
  };
};
