/**
 * Regular expressions that users write (rule `pattern`s, device name selectors), run by RE2JS:
 * the JavaScript port of RE2, which matches in time linear in the input whatever the pattern
 * (no backtracking), so no pattern can stall a batch. RE2 syntax: no backreferences, no
 * lookaround; `(?i)` and the other inline flags work. A pattern matches anywhere in the text
 * (`find`); `^` and `$` anchor it, as in NSO's and most tools' patterns.
 */
import { RE2JS, RE2JSException } from 're2js';

/** The longest pattern source accepted (characters). */
export const MAX_PATTERN_LENGTH = 1024;

/** A compiled pattern. */
export interface Pattern {
  readonly source: string;
  /** True when the pattern matches somewhere in `text`. */
  test(text: string): boolean;
}

/** Compiled patterns by source: a batch tests one rule's pattern against thousands of values. */
const compiled = new Map<string, Pattern | string>();
const CACHE_SIZE = 500;

/**
 * `source` compiled, or why it cannot be (a sentence for the writer of the rule). Compiles are
 * cached (bounded): the same source costs one compile per container.
 */
export const compilePattern = (source: string): Pattern | { readonly problem: string } => {
  let found = compiled.get(source);
  if (found === undefined) {
    found = compile(source);
    if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
    compiled.set(source, found);
  }
  return typeof found === 'string' ? { problem: found } : found;
};

const compile = (source: string): Pattern | string => {
  if ([...source].length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    const re = RE2JS.compile(source);
    return { source, test: (text) => re.test(text) };
  } catch (error) {
    if (error instanceof RE2JSException) return `is not an RE2 regular expression: ${error.message}`;
    throw error;
  }
};

/** `text` as a pattern that matches exactly it (what a `{{variable}}` inside a pattern becomes). */
export const quotePattern = (text: string): string => RE2JS.quote(text);
