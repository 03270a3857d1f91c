/**
 * The adapter registry's business rules, free of Lambda: each function takes its store and
 * secrets backend as arguments.
 *
 * Secrets: `auth.password` is either a `$VAULT_` reference, kept (in canonical form, key
 * written out) once it is shown to resolve, or a plain value, written to the secrets store at
 * `netconfig/adapters/<name>` (key `password`) and replaced by
 * `$VAULT_netconfig/adapters/<name>#password` before anything reaches DynamoDB.
 */
import { decodeCursor as decodeFields, encodeCursor as encodeFields, invalidCursor } from '../shared/cursor.js';
import { logger } from '../shared/logger.js';
import { BadRequest, NotFound } from '../shared/problem.js';
import type { SecretsBackend } from '../secrets/backend.js';
import { SecretMissing, SecretReferenceInvalid } from '../secrets/errors.js';
import {
  VAULT_PREFIX,
  adapterSecretReference,
  formatReference,
  isManagedPath,
  isVaultReference,
  parseReference,
} from '../secrets/reference.js';
import { readReference } from '../secrets/resolve.js';
import type { Adapter } from './model.js';
import type { AdapterStore } from './store.js';
import { DEFAULT_TIMEOUT_MS, isAdapterName, normalizeBaseUrl } from './validate.js';

/** The body of `PUT /adapters/{name}` (already schema-checked). */
export interface AdapterInput {
  readonly type: 'nso';
  readonly baseUrl: string;
  readonly auth: { readonly type: 'basic'; readonly username: string; readonly password: string };
  readonly timeoutMs?: number;
}

export interface RegistryDeps {
  readonly store: AdapterStore;
  readonly secrets: SecretsBackend;
  /** Local mode: loopback orchestrators are allowed. */
  readonly localMode: boolean;
  readonly now?: () => Date;
}

const invalid = (field: string, message: string): BadRequest =>
  new BadRequest(`The request is invalid: ${field} ${message}.`, [{ in: 'body', field, message }]);

/** The reference of the secret the service generated for this adapter (its own path). */
export const generatedReference = (name: string): string => formatReference(adapterSecretReference(name));

/** Turns the given password into the reference to store, writing a plain value to the store first. */
const passwordReference = async (deps: RegistryDeps, name: string, password: string): Promise<{ reference: string; generated: boolean }> => {
  if (!isVaultReference(password)) {
    const target = adapterSecretReference(name);
    await deps.secrets.write(target.path, { [target.key]: password });
    return { reference: formatReference(target), generated: true };
  }
  const parsed = parseReference(password);
  if (typeof parsed === 'string') {
    throw invalid('auth.password', `is not a valid ${VAULT_PREFIX} reference: ${parsed} (form: "${VAULT_PREFIX}<path>#<key>")`);
  }
  const reference = formatReference(parsed);
  const own = generatedReference(name);
  if (isManagedPath(parsed.path) && reference !== own) {
    throw invalid('auth.password', `refers to a path the service manages for another adapter; give a path outside netconfig/adapters/ or the plain value`);
  }
  try {
    await readReference(deps.secrets, reference);
  } catch (error) {
    if (error instanceof SecretMissing) throw invalid('auth.password', `refers to a secret that does not exist or is empty (${reference})`);
    if (error instanceof SecretReferenceInvalid) throw invalid('auth.password', 'is not a valid reference');
    throw error;
  }
  return { reference, generated: reference === own };
};

/**
 * Creates or replaces an adapter. The secret is stored (or checked) before DynamoDB is
 * written; when a replaced adapter held the generated secret and the new one does not, that
 * secret is deleted afterwards (best effort: a failure is logged, the adapter is stored).
 */
export const putAdapter = async (deps: RegistryDeps, name: string, input: AdapterInput): Promise<{ created: boolean; adapter: Adapter }> => {
  const baseUrl = normalizeBaseUrl(input.baseUrl, { allowLoopback: deps.localMode });
  if (isVaultReference(input.auth.username)) {
    throw invalid('auth.username', `cannot be a ${VAULT_PREFIX} reference (only auth.password is a secret field)`);
  }
  const { reference, generated } = await passwordReference(deps, name, input.auth.password);
  const now = (deps.now?.() ?? new Date()).toISOString();
  const result = await deps.store.put(
    {
      name,
      type: input.type,
      baseUrl,
      auth: { type: 'basic', username: input.auth.username, password: reference },
      timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    },
    now,
  );
  const own = generatedReference(name);
  if (result.previousPassword === own && reference !== own) await forgetGenerated(deps.secrets, name);
  logger.info('adapter stored', { adapter: name, created: result.created, secretSource: generated ? 'stored by the service' : 'reference' });
  return { created: result.created, adapter: result.adapter };
};

const forgetGenerated = async (secrets: SecretsBackend, name: string): Promise<void> => {
  try {
    await secrets.delete(adapterSecretReference(name).path);
  } catch {
    logger.warn('the generated secret of an adapter could not be deleted; delete it by hand', { adapter: name, path: adapterSecretReference(name).path });
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
export const deleteAdapter = async (deps: Pick<RegistryDeps, 'store' | 'secrets'>, name: string): Promise<void> => {
  const deleted = await deps.store.delete(name);
  if (!deleted) throw new NotFound(`No adapter is named "${name}".`);
  if (deleted.password === generatedReference(name)) await forgetGenerated(deps.secrets, name);
  logger.info('adapter deleted', { adapter: name });
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
): Promise<{ items: readonly Adapter[]; next?: string }> => {
  const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const page = await store.list({ limit, ...(after !== undefined ? { after } : {}) });
  const last = page.items.at(-1);
  return { items: page.items, ...(page.more && last ? { next: encodeCursor(last.name) } : {}) };
};
