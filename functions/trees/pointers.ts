/**
 * JSON Pointers (RFC 6901) as rule paths and report places use them: parsing, formatting and
 * resolving against a configuration (own properties only, so `__proto__` is a plain key).
 */
import type { JsonValue } from './config-model.js';

const isObject = (v: unknown): v is { readonly [key: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The reference tokens of a JSON Pointer (RFC 6901), or `undefined` when it is not one. */
export const parsePointer = (pointer: string): string[] | undefined => {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  if (tokens.some((t) => /~(?![01])/.test(t))) return undefined;
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
};

/** The JSON Pointer of `tokens`. */
export const formatPointer = (tokens: readonly string[]): string => tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** A JSON Pointer token that names an array element: a plain decimal index. */
export const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** The value one step below `current` (a member, or an array element by plain decimal index), or `undefined`. */
export const stepInto = (current: unknown, token: string): unknown => {
  // "-" (the element after the last) and anything but a plain decimal index point at nothing.
  if (Array.isArray(current)) return ARRAY_INDEX.test(token) ? current[Number(token)] : undefined;
  return isObject(current) && Object.hasOwn(current, token) ? current[token] : undefined;
};

/** The value `tokens` point at in `document`, or `undefined` when there is none. */
export const resolvePointer = (document: unknown, tokens: readonly string[]): JsonValue | undefined => {
  let current: unknown = document;
  for (const token of tokens) {
    current = stepInto(current, token);
    // Mutation: → `false` is equivalent: nothing is below `undefined`, so the walk ends there anyway.
    if (current === undefined) return undefined;
  }
  return current as JsonValue;
};
