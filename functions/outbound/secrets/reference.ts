/**
 * `$VAULT_` references: the only form in which a secret appears in configuration.
 *
 * Syntax: `$VAULT_<path>[#<key>]`
 * - `<path>` is the secret's path inside the configured KV v2 mount (`VAULT_MOUNT`), without
 *   the mount and without `data/`: segments of letters, digits, space, `.`, `_`, `-`,
 *   separated by single `/`; no leading or trailing `/`, no `.` or `..` segment; at most
 *   512 characters.
 * - `<key>` picks one key of the secret's data (letters, digits, `.`, `_`, `-`; at most 128);
 *   when omitted it is {@link DEFAULT_KEY}.
 *
 * Example: `$VAULT_netconfig/adapters/nso-lab#password` reads
 * `GET $VAULT_ADDR/v1/<mount>/data/netconfig/adapters/nso-lab` and takes `data.data.password`.
 */

export const VAULT_PREFIX = '$VAULT_';
export const ENC_PREFIX = '$ENC';
/** The key read when a reference names none. */
export const DEFAULT_KEY = 'password';
/** Where the service stores the plain passwords it is given: `<prefix>/<adapter name>`. */
export const ADAPTER_SECRETS_PREFIX = 'netconfig/adapters';

const SEGMENT = /^[A-Za-z0-9 ._-]+$/;
const KEY = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_PATH = 512;

/** A parsed reference. */
export interface SecretReference {
  readonly path: string;
  readonly key: string;
}

/** The sentence every `$ENC` rejection carries: what happened and the form to use instead. */
export const ENC_REMOVED =
  '$ENC was removed in 2021.2 and $ENC values no longer function: give the secret as a $VAULT_ reference ' +
  '("$VAULT_<path>#<key>", e.g. "$VAULT_netconfig/adapters/nso-lab#password") or as the plain value, ' +
  'which the service stores in the secrets store and replaces by its $VAULT_ reference';

/** True for a `$ENC…` value (leading whitespace ignored: it would not save such a value). */
export const isEncValue = (value: string): boolean => value.trimStart().startsWith(ENC_PREFIX);

/**
 * A value that looks like a reference: `$vault` in any case after optional leading whitespace
 * (`$vault_…`, `$Vault_…`, ` $VAULT-…`), in whichever form it could be read as one ({@link
 * readableForms}). Such a value is never taken for a literal password: it is checked as a
 * reference, and refused unless it is one, so a mistyped reference cannot end up stored (and
 * sent to the orchestrator) as the password itself.
 */
const LOOKS_LIKE_REFERENCE = /^\s*\$vault/i;

/** Characters that print as nothing: format (zero-width, bidirectional) and default-ignorable. */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** `value` percent-decoded once; only its ASCII escapes when the whole does not decode as UTF-8. */
const percentDecoded = (value: string): string => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
};

/** As a reader could take `value`: compatibility-normalized (fullwidth `＄ＶＡＵＬＴ`), invisible characters left out. */
const asRead = (value: string): string => value.normalize('NFKC').replace(INVISIBLE, '');

/** The forms of `value` that could be read as a reference: as it is read, and percent-decoded once (`%24VAULT_`, `％24vault`). */
const readableForms = (value: string): readonly string[] => {
  const read = asRead(value);
  return [read, asRead(percentDecoded(read))];
};

/** True when a value is meant as a reference (it may still be malformed: see {@link parseReference}). */
export const isVaultReference = (value: string): boolean => readableForms(value).some((form) => LOOKS_LIKE_REFERENCE.test(form));

/** Why a path is not a valid secret path, or undefined when it is. */
export const pathProblem = (path: string): string | undefined => {
  if (path.length === 0) return 'the path is empty';
  if (path.length > MAX_PATH) return `the path is longer than ${MAX_PATH} characters`;
  for (const segment of path.split('/')) {
    if (segment === '') return 'the path has an empty segment (a leading, trailing or doubled "/")';
    if (segment === '.' || segment === '..') return 'the path has a "." or ".." segment';
    if (!SEGMENT.test(segment)) return 'the path may hold only letters, digits, space, ".", "_", "-" and "/"';
  }
  return undefined;
};

/**
 * Parses `$VAULT_<path>[#<key>]`. Returns the reason as a string when the value is not a
 * well-formed reference (the value itself is never echoed: it might be a password).
 */
export const parseReference = (value: string): SecretReference | string => {
  if (!value.startsWith(VAULT_PREFIX)) return `a reference starts with ${VAULT_PREFIX} exactly (capitals, an underscore, no space before it)`;
  const body = value.slice(VAULT_PREFIX.length);
  const hash = body.indexOf('#');
  const path = hash === -1 ? body : body.slice(0, hash);
  const key = hash === -1 ? DEFAULT_KEY : body.slice(hash + 1);
  const problem = pathProblem(path);
  if (problem) return problem;
  if (!KEY.test(key)) return 'the key after "#" must be 1 to 128 letters, digits, ".", "_" or "-"';
  return { path, key };
};

/** The canonical text of a reference (the key is always written out). */
export const formatReference = (reference: SecretReference): string => `${VAULT_PREFIX}${reference.path}#${reference.key}`;

/** Where the plain password of an adapter is stored. */
export const adapterSecretReference = (adapterName: string): SecretReference => ({
  path: `${ADAPTER_SECRETS_PREFIX}/${adapterName}`,
  key: DEFAULT_KEY,
});

/**
 * A new place for a password the service is given for an adapter:
 * `netconfig/adapters/<name>/<version>`. Every write goes to a new version, so that the one
 * the adapter uses stays unchanged until the adapter record itself switches to the new one.
 */
export const newAdapterSecretReference = (adapterName: string, version: string): SecretReference => ({
  path: `${ADAPTER_SECRETS_PREFIX}/${adapterName}/${version}`,
  key: DEFAULT_KEY,
});

/** True when a path lies in the part of the store the service manages itself. */
export const isManagedPath = (path: string): boolean => path.startsWith(`${ADAPTER_SECRETS_PREFIX}/`);

/** True when a path is one the service manages for this adapter (its first path, or a version under it). */
export const isOwnManagedPath = (adapterName: string, path: string): boolean => {
  const own = adapterSecretReference(adapterName).path;
  return path === own || path.startsWith(`${own}/`);
};

/** The adapter a managed path belongs to (`netconfig/adapters/<name>[/<version>]`); undefined for any other path. */
export const adapterOfManagedPath = (path: string): string | undefined =>
  isManagedPath(path) ? path.slice(ADAPTER_SECRETS_PREFIX.length + 1).split('/')[0] || undefined : undefined;

/** The managed path a stored reference names for this adapter, or undefined when it names anything else. */
export const ownManagedPathOf = (adapterName: string, reference: string | undefined): string | undefined => {
  if (reference === undefined) return undefined;
  const parsed = parseReference(reference);
  return typeof parsed !== 'string' && isOwnManagedPath(adapterName, parsed.path) ? parsed.path : undefined;
};

/**
 * Whether a caller may name `path` for an adapter: only paths under a prefix the deployment
 * lists (`SECRETS_REFERENCE_PREFIXES`), never one the service manages. Naming a reference is
 * using that secret with whatever orchestrator the adapter names: an admin who could name any
 * readable path could send any secret to a server of their own.
 */
export const isNameablePath = (path: string, prefixes: readonly string[]): boolean =>
  !isManagedPath(path) && prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/** Parses `SECRETS_REFERENCE_PREFIXES`: comma-separated secret paths; empty entries ignored. */
export const parseReferencePrefixes = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((p) => p.trim().replace(/\/+$/, ''))
    .filter((p) => p !== '');
