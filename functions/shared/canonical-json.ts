/**
 * Two things about parsed JSON values that must not recurse: how deeply they nest (a body a
 * few kilobytes long can nest a hundred thousand levels, which `JSON.stringify` and every
 * recursive walk would die on), and a canonical text (object members sorted) so that two
 * bodies that differ only in member order are the same request.
 */

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
