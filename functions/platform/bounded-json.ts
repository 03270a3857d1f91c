/**
 * The one door JSON from outside the service comes in by: request bodies, orchestrator answers,
 * secrets-store answers, token parts, JWKS documents, cursors. `JSON.parse` itself does not
 * recurse, but what comes after does: `JSON.stringify`, redaction, rule evaluation and every
 * other recursive walk die with a `RangeError` on a value a few hundred kilobytes long that
 * nests a hundred thousand levels. {@link parseJson} refuses such a text before it becomes a
 * value, so no walk of a parsed value needs a bound of its own. Breadth needs none: a value has
 * at most as many members as its text has bytes, and every source caps those.
 *
 * Data the service wrote itself (stored versions, reports, plans) was parsed here on its way
 * in and is read back with `JSON.parse`; `test/unit/bounded-json.test.ts` keeps that list short.
 */

/** The deepest nesting the service accepts in JSON from outside (`{}` and `[]` are level 1). */
export const MAX_JSON_DEPTH = 128;

/** Thrown by {@link parseJson} for a text that nests deeper than allowed. */
export class JsonTooDeep extends Error {
  constructor(readonly maxDepth: number) {
    super(`JSON nests deeper than ${maxDepth} levels`);
    this.name = 'JsonTooDeep';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the JSON text opens more than `max` objects or arrays at once. One pass over the
 * characters, no value built: brackets inside strings (escapes included) do not count, and it
 * stops at the first level past `max`. For a text that is valid JSON this is exactly the depth
 * of its value; for any other text the answer only decides which refusal it gets.
 */
export const jsonNestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
};

/**
 * `JSON.parse`, bounded: throws {@link JsonTooDeep} when the text nests deeper than `maxDepth`
 * (checked first, on the text), and `SyntaxError` when it is not JSON. Every recursive walk of
 * the value it returns stays within `maxDepth` levels.
 */
export const parseJson = (text: string, maxDepth = MAX_JSON_DEPTH): unknown => {
  if (jsonNestsDeeperThan(text, maxDepth)) throw new JsonTooDeep(maxDepth);
  return JSON.parse(text) as unknown;
};
