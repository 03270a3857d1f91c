/**
 * Two things about parsed JSON values that must not recurse on unbounded input: where a string
 * is ill-formed UTF-16, and a canonical text (object members sorted) so that two bodies that
 * differ only in member order are the same request.
 */

import { fieldPath, type FieldPlace } from './problem.js';

/** With the `u` flag a surrogate range matches only a surrogate that is not half of a pair. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where `value` holds an ill-formed UTF-16 string (an unpaired surrogate, which JSON's `\ud800`
 * escape can carry), as a {@link fieldPath} (`''` for the value itself, `params.path`, `items.0`,
 * a member name counts as its member's place); undefined when every string and member name is
 * well formed. Such a string cannot be stored or sent faithfully: DynamoDB and UTF-8 replace
 * the surrogate, so two different strings would become one. Iterative, so any depth is safe.
 */
export const illFormedStringAt = (value: unknown): string | undefined => {
  const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);
  const stack: [unknown, FieldPlace][] = [[value, []]];
  while (stack.length) {
    const [node, at] = stack.pop()!;
    if (typeof node === 'string') {
      if (!wellFormed(node)) return fieldPath(...at);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
    for (const [key, child] of entries) {
      const place = [...at, key];
      if (!wellFormed(key)) return fieldPath(...place);
      stack.push([child, place]);
    }
  }
  return undefined;
};

/**
 * JSON text with object members sorted by name (UTF-16 code units, as `Array.sort` does),
 * arrays in order, no whitespace. Call it only on values within `MAX_JSON_DEPTH`
 * (`parseJson` of bounded-json.ts refuses deeper JSON before any handler runs).
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const members = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${members.join(',')}}`;
};
