/**
 * The adapter registry's business rules, free of Lambda: each function takes its store and
 * secrets backend as arguments.
 *
 * Secrets: `auth.password` is either a plain value, written to the secrets store at a new
 * version `netconfig/adapters/<name>/<version>` (key `password`) and replaced by its `$VAULT_`
 * reference before anything reaches DynamoDB, or a `$VAULT_` reference the caller may name
 * (see {@link putAdapter} for the rule), kept in canonical form once it is shown to resolve.
 */
import { randomBytes } from 'node:crypto';
import { decodeCursor as decodeFields, encodeCursor as encodeFields, invalidCursor } from '../platform/cursor.js';
import { SYSTEM_ACTOR } from '../runtime/changelog.js';
import { logger } from '../platform/logger.js';
import { BadRequest, Conflict, NotFound, type HttpProblem } from '../platform/problem.js';
import type { SecretsBackend } from '../outbound/secrets/backend.js';
import { SecretMissing, SecretReferenceInvalid } from '../outbound/secrets/errors.js';
import {
  VAULT_PREFIX,
  adapterOfManagedPath,
  adapterSecretReference,
  formatReference,
  isManagedPath,
  isNameablePath,
  isOwnManagedPath,
  isVaultReference,
  newAdapterSecretReference,
  ownManagedPathOf,
  parseReference,
} from '../outbound/secrets/reference.js';
import { readReference } from '../outbound/secrets/resolve.js';
import { DEFAULT_ADAPTER_LOG_LEVEL, type Adapter, type AdapterLogLevel, type NsoCommitParams } from './model.js';
import {
  AdapterWriteRefused,
  WriteOutcomeUnknown,
  parsePendingSecret,
  pendingSecret,
  type AdapterStore,
  type DamagedAdapter,
  type PendingSecret,
  type PutResult,
  type StoredState,
} from './store.js';
import { isAdapterName, normalizeBaseUrl } from './validate.js';

/** The body of `PUT /adapters/{name}` (already schema-checked). */
export interface AdapterInput {
  readonly type: 'nso';
  readonly baseUrl: string;
  readonly auth: { readonly type: 'basic'; readonly username: string; readonly password: string };
  readonly timeoutMs?: number;
  readonly complianceConcurrency?: number;
  readonly nsoCommitParams?: NsoCommitParams;
}

export interface RegistryDeps {
  readonly store: AdapterStore;
  readonly secrets: SecretsBackend;
  /** Local mode: loopback orchestrators are allowed. */
  readonly localMode: boolean;
  /** Secret paths (prefixes) a caller may name as `$VAULT_` references; default none. */
  readonly referencePrefixes?: readonly string[];
  readonly now?: () => Date;
  /** Version labels of stored secrets (tests); default time-ordered and random. */
  readonly newVersion?: () => string;
}

const invalid = (field: string, message: string): BadRequest =>
  new BadRequest(`The request is invalid: ${field} ${message}.`, [{ in: 'body', field, message }]);

/** The reference of the first secret the service stored for this adapter (its own path, before versions). */
export const generatedReference = (name: string): string => formatReference(adapterSecretReference(name));

const PASSWORD_AGAIN =
  'must be given again (the plain value) when baseUrl or auth.username changes: a stored secret never follows an adapter to another orchestrator or user';

/**
 * The secret rule, checked for a `$VAULT_` reference the caller names. A caller may name:
 * - the reference the adapter already holds, to keep it, as long as `baseUrl` and
 *   `auth.username` stay what they are (a stored secret never moves to another origin or
 *   user: otherwise an admin could send it to a server of their own);
 * - a path under a prefix the deployment lists in `SECRETS_REFERENCE_PREFIXES` (secrets the
 *   operator lets admins use with any orchestrator), never a path the service manages.
 * Anything else is a 400; the plain value is always accepted.
 */
const checkNamedReference = (
  name: string,
  reference: string,
  path: string,
  next: { baseUrl: string; username: string },
  previous: StoredState | null,
  prefixes: readonly string[],
): void => {
  if (isOwnManagedPath(name, path)) {
    const keeps = previous?.password === reference;
    if (!keeps) throw invalid('auth.password', 'refers to a secret the service manages that this adapter does not hold; give the plain value');
    if (previous.baseUrl !== next.baseUrl || previous.username !== next.username) throw invalid('auth.password', PASSWORD_AGAIN);
    return;
  }
  if (isManagedPath(path)) {
    throw invalid('auth.password', 'refers to a path the service manages for another adapter; give the plain value');
  }
  if (!isNameablePath(path, prefixes)) {
    throw invalid(
      'auth.password',
      prefixes.length
        ? `refers to a secret outside the paths this deployment lets adapters name (${prefixes.join(', ')}); give the plain value`
        : 'refers to a secret this deployment does not let adapters name (no SECRETS_REFERENCE_PREFIXES); give the plain value',
    );
  }
};

/** A reference the caller named, checked by the secret rule and shown to resolve; canonical form. */
const namedReference = async (
  deps: RegistryDeps,
  name: string,
  password: string,
  next: { baseUrl: string; username: string },
  previous: StoredState | null,
): Promise<string> => {
  const parsed = parseReference(password);
  if (typeof parsed === 'string') {
    throw invalid('auth.password', `is not a valid ${VAULT_PREFIX} reference: ${parsed} (form: "${VAULT_PREFIX}<path>#<key>")`);
  }
  const reference = formatReference(parsed);
  checkNamedReference(name, reference, parsed.path, next, previous, deps.referencePrefixes ?? []);
  try {
    await readReference(deps.secrets, reference);
  } catch (error) {
    if (error instanceof SecretMissing) throw invalid('auth.password', `refers to a secret that does not exist or is empty (${reference})`);
    // Mutation: this branch (→ `false`, its strings uncovered) is equivalent: `readReference` is given the reference
    // just parsed and formatted, which it never refuses.
    if (error instanceof SecretReferenceInvalid) throw invalid('auth.password', 'is not a valid reference');
    throw error;
  }
  return reference;
};

/**
 * How old a pending secret must be before a sweep may settle it: longer than any function runs
 * (Lambda's limit is 15 minutes), so that no write that listed it can still be in flight.
 */
export const PENDING_SECRET_GRACE_MS = 15 * 60 * 1000;

/**
 * Deletes secrets the service stored for adapters and that no record names any more, then takes
 * them off the pending list. A failure leaves them listed (and is logged): the next sweep retries.
 */
const forgetSecrets = async (deps: Pick<RegistryDeps, 'store' | 'secrets'>, entries: readonly PendingSecret[]): Promise<void> => {
  const forgotten: PendingSecret[] = [];
  for (const entry of entries) {
    const { path } = parsePendingSecret(entry);
    try {
      await deps.secrets.delete(path);
      forgotten.push(entry);
    } catch {
      logger.warn('a secret no record names could not be deleted yet; the next adapter write retries', { adapter: adapterOfManagedPath(path), path });
    }
  }
  await settle(deps.store, forgotten);
};

/** Takes entries off the pending list; a failure is logged (a later sweep takes them off). */
const settle = async (store: AdapterStore, entries: readonly PendingSecret[]): Promise<void> => {
  try {
    await store.markPending(entries, 'clear');
  } catch {
    logger.warn('pending secrets could not be cleared; the next adapter write does', { paths: entries.map((e) => parsePendingSecret(e).path) });
  }
};

/**
 * Settles what earlier writes of any adapter left pending (a crash, a write whose outcome stayed
 * unknown, a delete that failed), so that nothing waits for its own adapter to be written again:
 * each entry older than {@link PENDING_SECRET_GRACE_MS} is deleted unless its adapter's record
 * names it, and taken off the list. One read of the list; one record read per adapter with a
 * due entry. Best effort: a failure never fails the write that sweeps.
 */
const sweepPending = async (deps: Pick<RegistryDeps, 'store' | 'secrets' | 'now'>): Promise<void> => {
  try {
    const due = (deps.now?.() ?? new Date()).getTime() - PENDING_SECRET_GRACE_MS;
    const old = (await deps.store.pendingSecrets()).filter((entry) => Date.parse(parsePendingSecret(entry).at) <= due);
    const byAdapter = new Map<string | undefined, PendingSecret[]>();
    for (const entry of old) {
      const name = adapterOfManagedPath(parsePendingSecret(entry).path);
      byAdapter.set(name, [...(byAdapter.get(name) ?? []), entry]);
    }
    for (const [name, entries] of byAdapter) {
      // Only paths the service manages are ever listed; anything else is taken off, never deleted.
      const named = name === undefined ? undefined : ownManagedPathOf(name, (await deps.store.current(name))?.password);
      const kept = entries.filter((entry) => name === undefined || parsePendingSecret(entry).path === named);
      await settle(deps.store, kept);
      await forgetSecrets(
        deps,
        entries.filter((entry) => !kept.includes(entry)),
      );
    }
  } catch {
    logger.warn('pending secrets could not be swept; the next adapter write retries');
  }
};

const refusedWrite = (error: AdapterWriteRefused, name = ''): HttpProblem => {
  if (error.reason === 'secret-moved') return invalid('auth.password', PASSWORD_AGAIN);
  if (error.reason === 'case-twin') {
    return new Conflict(
      `An adapter is already named "${error.twin}", which differs from "${name}" only by case; adapter names are unique without regard to case.`,
      'adapter-exists',
    );
  }
  return new Conflict('The adapter was changed by another request while this one ran; read it again and retry.', 'adapter-changed');
};

/**
 * Creates or replaces an adapter: the one write path of the registry (every route that writes
 * an adapter calls it). All or nothing, as the client sees it:
 * 1. the record is read (what the write will be checked against);
 * 2. a plain password is written to a new version of the adapter's secret; the one in use is
 *    not touched;
 * 3. the record switches to the new reference in one conditional update (refused if the record
 *    changed since step 1, or if it would move a stored secret to another origin or user);
 * 4. if that fails, the new version is deleted and the old record, with its old password,
 *    stays live; if it succeeds, the version it replaced is deleted.
 * A failure to delete (steps 4) is logged; it never changes the answer.
 */
export const putAdapter = async (
  deps: RegistryDeps,
  name: string,
  input: AdapterInput,
  /** `create`: only a new adapter (409 `adapter-exists` when one has the name), as `POST /adapters`. */
  mode: 'upsert' | 'create' = 'upsert',
  /** Who asks (the token subject), for the changelog. */
  by: string = SYSTEM_ACTOR,
): Promise<{ created: boolean; adapter: Adapter }> => {
  const baseUrl = normalizeBaseUrl(input.baseUrl, { allowLoopback: deps.localMode });
  if (isVaultReference(input.auth.username)) {
    throw invalid('auth.username', `cannot be a ${VAULT_PREFIX} reference (only auth.password is a secret field)`);
  }
  const next = { baseUrl, username: input.auth.username };
  const previous = await deps.store.current(name);
  const exists = (): HttpProblem => new Conflict(`An adapter is already named "${name}"; replace it with PUT /adapters/{name}.`, 'adapter-exists');
  if (mode === 'create' && previous !== null) throw exists();
  // Early, before any secret is checked or written; the write's own claim settles a race.
  const twin = previous === null ? await deps.store.caseTwin(name) : undefined;
  if (twin !== undefined) throw refusedWrite(new AdapterWriteRefused('case-twin', twin), name);
  const at = (deps.now?.() ?? new Date()).toISOString();
  await sweepPending(deps);
  const target = isVaultReference(input.auth.password) ? undefined : newAdapterSecretReference(name, (deps.newVersion ?? secretVersion)());
  const reference = target ? formatReference(target) : await namedReference(deps, name, input.auth.password, next, previous);
  const written = target ? pendingSecret(at, target.path) : undefined;
  // The version the switch would replace, listed with the new one before anything is written: a
  // crash or an unknown outcome leaves both to a sweep, which keeps whichever the record names.
  const own = ownManagedPathOf(name, previous?.password);
  const retiring = own && previous?.password !== reference ? pendingSecret(at, own) : undefined;
  await deps.store.markPending(
    [written, retiring].filter((e) => e !== undefined),
    'add',
  );
  if (target && written) {
    try {
      await deps.secrets.write(target.path, { [target.key]: input.auth.password });
    } catch (error) {
      // The write may have landed all the same (a timeout): delete it, or leave it to a sweep.
      await forgetSecrets(deps, [written]);
      throw error;
    }
  }
  let result: PutResult;
  try {
    result = await deps.store.put(
      {
        name,
        type: input.type,
        baseUrl,
        auth: { type: 'basic', username: input.auth.username, password: reference },
        // No stored default: an adapter without its own timeout follows the active profile's.
        ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
        ...(input.complianceConcurrency !== undefined ? { complianceConcurrency: input.complianceConcurrency } : {}),
        ...(input.nsoCommitParams !== undefined ? { nsoCommitParams: input.nsoCommitParams } : {}),
      },
      at,
      previous,
      by,
    );
  } catch (error) {
    // Unknown: the record may name either version; both stay pending for a sweep to settle.
    if (error instanceof WriteOutcomeUnknown) throw error;
    // The store read the record back: nothing switched, so the new version goes (no orphan).
    if (written) await forgetSecrets(deps, [written]);
    if (retiring) await settle(deps.store, [retiring]);
    if (error instanceof AdapterWriteRefused) throw mode === 'create' && error.reason === 'changed' ? exists() : refusedWrite(error, name);
    throw error;
  }
  if (written) await settle(deps.store, [written]);
  if (retiring) await forgetSecrets(deps, [retiring]);
  // Where the password came from; not under a name the logger redacts (`secret…`, `pass…`).
  logger.info('adapter stored', { adapter: name, created: result.created, source: written ? 'stored by the service' : 'reference' });
  return { created: result.created, adapter: result.adapter };
};

/** A new version label for a stored secret: time-ordered, unique, a valid path segment. */
const secretVersion = (): string => `v${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;

/** What the lifecycle routes do: `start` and `stop` set the state (a no-op when it is already so), `restart` re-reads a running adapter. */
export type LifecycleAction = 'start' | 'stop' | 'restart';

/**
 * `PUT /adapters/{name}/{start|stop|restart}`. Every change is a new revision of the record, so
 * each warm relay re-reads it (and drops the password it cached for it) within its adapter
 * cache period (`ADAPTER_CACHE_TTL_SECONDS`, default 5 s). Restart on a stopped adapter is 409.
 */
export const changeAdapterState = async (
  deps: Pick<RegistryDeps, 'store' | 'now'>,
  name: string,
  action: LifecycleAction,
  by: string = SYSTEM_ACTOR,
): Promise<Adapter> => {
  const adapter = await getAdapter(deps.store, name);
  const state = adapter.state ?? 'RUNNING';
  if (action === 'restart' && state === 'STOPPED') {
    throw new Conflict(`Adapter '${name}' is stopped: start it (PUT /adapters/${encodeURIComponent(name)}/start) rather than restart it.`, 'adapter-stopped');
  }
  const target = action === 'stop' ? 'STOPPED' : 'RUNNING';
  // A no-op changes nothing and records nothing.
  if (action !== 'restart' && state === target) return adapter;
  const recorded = action === 'stop' ? 'stopped' : action === 'start' ? 'started' : 'restarted';
  const changed = await writing(() => deps.store.setState(name, target, (deps.now?.() ?? new Date()).toISOString(), by, recorded));
  if (!changed) throw new NotFound(`No adapter is named "${name}".`);
  logger.info('adapter state changed', { adapter: name, action, state: target });
  return changed;
};

/**
 * `PUT /adapters/{name}/loglevel`: how much the relay logs of the calls through the adapter. A
 * new revision of the record, so every warm relay uses it within its adapter cache period
 * (`ADAPTER_CACHE_TTL_SECONDS`, default 5 s). Setting the level it has changes and records nothing.
 */
export const setAdapterLogLevel = async (
  deps: Pick<RegistryDeps, 'store' | 'now'>,
  name: string,
  level: AdapterLogLevel,
  by: string = SYSTEM_ACTOR,
): Promise<Adapter> => {
  const adapter = await getAdapter(deps.store, name);
  if ((adapter.logLevel ?? DEFAULT_ADAPTER_LOG_LEVEL) === level) return adapter;
  const changed = await writing(() => deps.store.setLogLevel(name, level, (deps.now?.() ?? new Date()).toISOString(), by));
  if (!changed) throw new NotFound(`No adapter is named "${name}".`);
  logger.info('adapter log level changed', { adapter: name, logLevel: level });
  return changed;
};

/** Runs a store write, turning a lost race into the 409 `adapter-changed`. */
const writing = async <T>(write: () => Promise<T>): Promise<T> => {
  try {
    return await write();
  } catch (error) {
    throw error instanceof AdapterWriteRefused ? refusedWrite(error) : error;
  }
};

export const getAdapter = async (store: AdapterStore, name: string): Promise<Adapter> => {
  const adapter = await store.get(name);
  if (!adapter) throw new NotFound(`No adapter is named "${name}".`);
  return adapter;
};

/**
 * Deletes an adapter, then the secret the service generated for it (if it used one). A secret
 * the user referenced is theirs and is left alone.
 */
export const deleteAdapter = async (deps: Pick<RegistryDeps, 'store' | 'secrets' | 'now'>, name: string, by: string = SYSTEM_ACTOR): Promise<void> => {
  const before = await deps.store.current(name);
  await sweepPending(deps);
  const own = ownManagedPathOf(name, before?.password);
  const at = (deps.now?.() ?? new Date()).toISOString();
  // Listed first: should the secret not be deleted below, a later sweep deletes it.
  const entry = own ? pendingSecret(at, own) : undefined;
  if (entry) await deps.store.markPending([entry], 'add');
  const deleted = await writing(() => deps.store.delete(name, by));
  if (!deleted) {
    if (entry) await settle(deps.store, [entry]);
    throw new NotFound(`No adapter is named "${name}".`);
  }
  const gone = ownManagedPathOf(name, deleted.password);
  if (gone) await dropSecret(deps, name, gone, at);
  // The record read first was replaced before the delete: its secret is still named, or gone.
  if (entry && gone !== own) await settle(deps.store, [entry]);
  logger.info('adapter deleted', { adapter: name });
};

/** Deletes a secret no record names any more (listed as pending first, so that a failure is swept later). */
const dropSecret = async (deps: Pick<RegistryDeps, 'store' | 'secrets'>, name: string, path: string, at: string): Promise<void> => {
  const entry = pendingSecret(at, path);
  try {
    await deps.store.markPending([entry], 'add');
  } catch {
    logger.warn('a secret no record names could not be listed as pending; it is deleted now', { adapter: name, path });
  }
  await forgetSecrets(deps, [entry]);
};

/** Default and largest page size of `GET /adapters`. */
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 100;

/** The continuation token of the adapter list: the last name of a page. */
export const encodeCursor = (name: string): string => encodeFields({ after: name });

const decodeCursor = (cursor: string): string => {
  const fields = decodeFields(cursor, ['after'], ({ after }) => isAdapterName(after));
  if (!fields) throw invalidCursor();
  return fields.after;
};

export const listAdapters = async (
  store: AdapterStore,
  query: { readonly limit?: string; readonly cursor?: string },
): Promise<{ items: readonly (Adapter | DamagedAdapter)[]; next?: string }> => {
  const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const page = await store.list({ limit, ...(after !== undefined ? { after } : {}) });
  const last = page.items.at(-1);
  // Mutation: `page.more && last` → `page.more && true` is equivalent: the store says `more` only after a page of at
  // least one item.
  return { items: page.items, ...(page.more && last ? { next: encodeCursor(last.name) } : {}) };
};
