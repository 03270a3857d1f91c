/**
 * Two things about parsed JSON values that must not recurse: how deeply they nest (a body a
 * few kilobytes long can nest a hundred thousand levels, which `JSON.stringify` and every
 * recursive walk would die on), and a canonical text (object members sorted) so that two
 * bodies that differ only in member order are the same request.
 */

import { fieldPath, type FieldPlace } from './problem.js';

/** The deepest nesting the service accepts in a JSON request body. */
export const MAX_JSON_DEPTH = 128;

/**
 * True when `value` nests objects or arrays deeper than `max` levels (`{}` and `[]` are
 * level 1). Iterative, and stops at the first level past `max`.
 */
export const nestsDeeperThan = (value: unknown, max: number): boolean => {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
};

/** With the `u` flag a surrogate range matches only a surrogate that is not half of a pair. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where `value` holds an ill-formed UTF-16 string (an unpaired surrogate, which JSON's `\ud800`
 * escape can carry), as a {@link fieldPath} (`''` for the value itself, `params.path`, `items.0`,
 * a member name counts as its member's place); undefined when every string and member name is
 * well formed. Such a string cannot be stored or sent faithfully: DynamoDB and UTF-8 replace
 * the surrogate, so two different strings would become one. Iterative, as {@link nestsDeeperThan}.
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
 * arrays in order, no whitespace. Call it only on values within {@link MAX_JSON_DEPTH}
 * (the HTTP stack refuses deeper bodies before any handler runs).
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
