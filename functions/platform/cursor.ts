/**
 * Opaque continuation tokens for paginated lists: base64url of a small versioned JSON object
 * of string fields naming where the next page starts. Decoding is strict: anything this
 * module did not produce is refused, so a tampered token becomes a 400, never a database error.
 */
import { parseJson } from './bounded-json.js';
import { BadRequest } from './problem.js';

const VERSION = 1;
/**
 * Longer than any token issued: the longest field is a device name (≤ 253 code points ≤ 1,012
 * UTF-8 bytes) next to a few short ones, about 1,060 bytes, base64 ×4/3 about 1,420 characters.
 */
export const CURSOR_MAX_LENGTH = 2048;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export const encodeCursor = (fields: Readonly<Record<string, string>>): string =>
  Buffer.from(JSON.stringify({ v: VERSION, ...fields }), 'utf8').toString('base64url');

/**
 * The fields inside a token, or `undefined` when the token is not one this service issued:
 * exactly `keys`, each a non-empty string, and accepted by `accept`.
 */
export const decodeCursor = <K extends string>(
  token: string,
  keys: readonly K[],
  accept: (fields: Readonly<Record<K, string>>) => boolean,
): Record<K, string> | undefined => {
  if (token.length === 0 || token.length > CURSOR_MAX_LENGTH || !BASE64URL.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  // Node's decoder skips what it cannot read; only the canonical spelling of the bytes is ours.
  if (bytes.toString('base64url') !== token) return undefined;
  let value: unknown;
  try {
    value = parseJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { v, ...rest } = value as Record<string, unknown>;
  if (v !== VERSION || Object.keys(rest).length !== keys.length) return undefined;
  const fields = {} as Record<K, string>;
  for (const key of keys) {
    const field = rest[key];
    if (typeof field !== 'string' || field.length === 0) return undefined;
    fields[key] = field;
  }
  return accept(fields) ? fields : undefined;
};

/** The 400 for a `cursor` query parameter this service did not issue. */
export const invalidCursor = (): BadRequest =>
  new BadRequest('The cursor query parameter is not a continuation token issued by this API; pass the "next" value of the previous page.', [
    { in: 'query', field: 'cursor', message: 'is not a valid continuation token' },
  ]);
