/**
 * The places a rule looks at (its path's matches, see `Rule` in config-model.ts) and how a
 * rule's `match` turns the matches that hold into a pass or a fail. Pure.
 */
import type { JsonValue, RuleMatch, RuleMode } from './config-model.js';
import { formatPointer, stepInto } from './pointers.js';

/** The path segment that stands for every member or element at its level. */
export const WILDCARD = '*';

/** One match of a rule's path: its concrete pointer and what is there (`undefined`: nothing). */
export interface Place {
  readonly at: string;
  readonly value: JsonValue | undefined;
}

const isObject = (v: unknown): v is { readonly [key: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every member or element of `value` as places below `at` (none for a scalar or nothing). */
const children = (place: Place): Place[] => {
  const { at, value } = place;
  if (Array.isArray(value)) return value.map((v, i) => ({ at: `${at}/${i}`, value: v }));
  if (isObject(value)) return Object.keys(value).map((key) => ({ at: at + formatPointer([key]), value: value[key] }));
  return [];
};

/**
 * The matches of the path `tokens` in `document`, in document order: a `*` token expands to
 * every member or element (nothing below an absent place or a scalar); other tokens are
 * followed even where nothing is. With `elements`, a match holding an array is replaced by its
 * elements (a predicate tests the elements of a list). Costs one step per place visited.
 */
export const expandPlaces = (document: unknown, tokens: readonly string[], elements: boolean): Place[] => {
  let places: Place[] = [{ at: '', value: document as JsonValue }];
  for (const token of tokens) {
    if (token === WILDCARD) places = places.flatMap(children);
    else {
      const escaped = formatPointer([token]);
      places = places.map(({ at, value }) => ({ at: at + escaped, value: stepInto(value, token) as JsonValue | undefined }));
    }
  }
  return elements ? places.flatMap((p) => (Array.isArray(p.value) ? children(p) : [p])) : places;
};

/** The concrete pointer of the tokens before the first `*` (where a path with no match stops). */
export const fixedPrefix = (tokens: readonly string[]): string => {
  const star = tokens.indexOf(WILDCARD);
  return formatPointer(star < 0 ? tokens : tokens.slice(0, star));
};

/** How a rule's `match` judges its matches: whether it passes, and which matches to list as failing. */
export interface Verdict<T> {
  readonly pass: boolean;
  readonly failing: readonly T[];
}

/**
 * The rule passes by `match`: `all` when every match holds and there is at least one (no
 * match passes with `allowEmpty` or in mode `disallowed`); `any` when one holds (no match:
 * only with `allowEmpty`); `none` when none holds. Failing: for `all` the matches that do not
 * hold, for `none` those that do, for `any` every match (when it fails).
 */
export const judge = <T extends { readonly holds: boolean }>(outcomes: readonly T[], match: RuleMatch, mode: RuleMode, allowEmpty: boolean): Verdict<T> => {
  switch (match) {
    case 'all': {
      const failing = outcomes.filter((o) => !o.holds);
      return { pass: failing.length === 0 && (outcomes.length > 0 || allowEmpty || mode === 'disallowed'), failing };
    }
    case 'any': {
      const pass = outcomes.some((o) => o.holds) || (outcomes.length === 0 && allowEmpty);
      return { pass, failing: pass ? [] : outcomes };
    }
    case 'none': {
      const failing = outcomes.filter((o) => o.holds);
      return { pass: failing.length === 0, failing };
    }
  }
};
