/**
 * The rules an adapter must meet beyond its JSON Schema: the name, the orchestrator's
 * address (no path, no credentials, never a link-local, metadata or unspecified address,
 * loopback only in local mode), and no `$ENC` value anywhere.
 */
import { isIP } from 'node:net';
import { addressRefusal, hostNameRefusal } from '../outbound/address-policy.js';
import type { CompiledValidator } from '../runtime/http.js';
import { NAME_RULE, decodeSegment, isPathName, pathNameProblem, refuseBadNames } from '../platform/names.js';
import { BadRequest, type FieldError } from '../platform/problem.js';
import { ENC_REMOVED, isEncValue } from '../outbound/secrets/reference.js';

export { NAME_RULE } from '../platform/names.js';

/** True when `name` is a valid adapter name (the shared rule for names in paths). */
export const isAdapterName = isPathName;

/**
 * The adapter name from a path parameter. API Gateway REST APIs pass path parameters still
 * percent-encoded (`nso%20lab`); a valid name has no `%`, so decoding once is always safe.
 * Throws a 400 naming the parameter when the result is not a valid name.
 */
export const adapterNameFromPath = (raw: string | undefined, parameter = 'name'): string => {
  const name = raw === undefined ? undefined : decodeSegment(raw);
  if (name === undefined || !isAdapterName(name)) {
    throw new BadRequest(`The request is invalid: ${parameter} ${NAME_RULE}.`, [{ in: 'path', field: parameter, message: NAME_RULE }]);
  }
  return name;
};

/**
 * Refuses a name a write would store (400 naming `field` in `where`: the rule for path names,
 * so a name stored before it can be read and deleted but not written again). A name that
 * differs only by case from another adapter's is refused by the store's write itself (409
 * `adapter-exists`, see `platform/name-claims.ts`).
 */
export const checkNewAdapterName = (name: string, where: FieldError['in'], field: string): void => {
  refuseBadNames(where, { [field]: name }, pathNameProblem);
};

/** Default per-call timeout of the relay when an adapter names none. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Bounds of `timeoutMs`: the upper one leaves room below API Gateway's 29 s integration limit. */
export const MIN_TIMEOUT_MS = 100;
export const MAX_TIMEOUT_MS = 25_000;

const FORM = 'must be http(s)://host[:port] with nothing after the host but an optional "/" (no path, query, fragment or credentials)';

/** Why a base URL is refused, or its normalized form (the origin: lower-case scheme and host, default port dropped). */
export const checkBaseUrl = (raw: string, options: { readonly allowLoopback: boolean }): { readonly origin: string } | { readonly problem: string } => {
  // Checked on the raw text: the URL parser would silently drop or rewrite these.
  const match = /^(https?):\/\/([^/]*)(\/?)$/i.exec(raw);
  if (!match || /[\s\\@?#\x00-\x1f\x7f]/.test(raw)) return { problem: FORM };
  if (match[2] === '') return { problem: 'has no host' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'is not a valid URL' };
  }
  if (url.port === '0') return { problem: 'has port 0' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refusal = isIP(host) ? addressRefusal(host, options) : hostNameRefusal(host, options.allowLoopback);
  if (refusal) return { problem: `host ${url.hostname} ${refusal}` };
  return { origin: url.origin };
};

/** The base URL to store, or a 400 naming `baseUrl`. */
export const normalizeBaseUrl = (raw: string, options: { readonly allowLoopback: boolean }): string => {
  const result = checkBaseUrl(raw, options);
  if ('origin' in result) return result.origin;
  throw new BadRequest(`The request is invalid: baseUrl ${result.problem}.`, [{ in: 'body', field: 'baseUrl', message: result.problem }]);
};

type ValidatorError = NonNullable<CompiledValidator['errors']>[number];

const pointer = (segment: string): string => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** Every `$ENC…` string in a JSON value, as validator errors (JSON pointers under `base`). */
export const encErrors = (value: unknown, base: string, depth = 0): ValidatorError[] => {
  if (typeof value === 'string') {
    return isEncValue(value) ? [{ instancePath: base, keyword: 'enc', message: `is a $ENC value; ${ENC_REMOVED}`, params: {} }] : [];
  }
  if (value === null || typeof value !== 'object' || depth > 32) return [];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  return entries.flatMap(([k, v]) => encErrors(v, `${base}/${pointer(k)}`, depth + 1));
};

/**
 * Wraps a route's compiled validator so that any `$ENC` value in the body is reported first,
 * whatever else is wrong, with the message that `$ENC` was removed in 2021.2.
 */
export const withEncRejection = (validate: CompiledValidator): CompiledValidator => {
  const wrapped: CompiledValidator = (event: unknown): boolean => {
    const enc = encErrors((event as { body?: unknown } | null)?.body, '/body');
    const valid = validate(event);
    wrapped.errors = enc.length ? [...enc, ...(valid ? [] : (validate.errors ?? []))] : (validate.errors ?? null);
    return valid && enc.length === 0;
  };
  return wrapped;
};
