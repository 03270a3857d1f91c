/**
 * A rule's value predicates (`pattern`, `oneOf`, `cidr`, `range`; see `Rule` in config-model.ts),
 * prepared once per evaluation with the version's variables substituted, then asked of each
 * match. A predicate tests a scalar: an object or an array never passes one. Patterns run on
 * RE2 (platform/re2.ts), in time linear in the text whatever the pattern.
 */
import { compilePattern, quotePattern } from '../platform/re2.js';
import { insidePrefix, parsePrefix, prefixProblem, type Prefix } from './addresses.js';
import type { JsonValue, Rule } from './config-model.js';
import { compareDecimals, decimalOf, type Decimal } from './decimals.js';

/** The rule members that hold predicates, in the order they are asked. */
export const PREDICATE_FIELDS = ['pattern', 'oneOf', 'cidr', 'range'] as const;
export type PredicateField = (typeof PREDICATE_FIELDS)[number];

/** True when the rule has at least one predicate. */
export const hasPredicate = (rule: Pick<Rule, PredicateField>): boolean => PREDICATE_FIELDS.some((field) => rule[field] !== undefined);

/** One prepared predicate. */
export interface Predicate {
  readonly field: PredicateField;
  /** What it asks for, as a report shows it under `expected`: `{ "pattern": "^ge-" }`. */
  readonly expected: JsonValue;
  /** Why `value` does not pass (a sentence), or `undefined` when it does. */
  failure(value: unknown): string | undefined;
}

/** Why a rule's predicates cannot be prepared: the place in the rule (`['cidr', 2]`) and the reason. */
export interface PredicateProblem {
  readonly place: readonly [PredicateField, ...(string | number)[]];
  readonly problem: string;
}

type Prepared = Predicate | readonly PredicateProblem[];

/**
 * Substitutes `{{variables}}` in a text, each variable's value passed through `quote` when
 * given. May throw for an unknown variable: the caller catches what it throws.
 */
export type Substitute = (text: string, quote?: (value: string) => string) => string;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value in words, for messages: `the string "x"`, `an object`, `null`. */
export const describeValue = (v: unknown): string =>
  Array.isArray(v) ? 'an array' : isObject(v) ? 'an object' : v === null ? 'null' : `the ${typeof v} ${JSON.stringify(v)}`;

/** Values whose JSON text is longer are described by their length, not quoted (as excerpts are cut: rules.ts). */
export const QUOTE_MAX_CHARS = 2048;

/**
 * {@link describeValue}, but a long string by its length: a message stays short, and quotes no
 * value its excerpt cuts. (No number's JSON text comes near the limit; objects and arrays are
 * never quoted.)
 */
export const describeShort = (v: unknown): string =>
  typeof v === 'string' && JSON.stringify(v).length > QUOTE_MAX_CHARS ? `a string of ${v.length} characters` : describeValue(v);

// Mutation: → `true` is equivalent: a `Set` finds an object or array only by identity, and the
// listed values are copies made by substitution, never a value of the configuration.
const isScalar = (v: unknown): boolean => v === null || typeof v !== 'object';

/** The text a pattern is found in: strings as they are, numbers and booleans as JSON writes them. */
const textOf = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : undefined;

const patternPredicate = (source: string, substitute: Substitute): Prepared => {
  const text = substitute(source, quotePattern);
  const compiled = compilePattern(text);
  if ('problem' in compiled) return [{ place: ['pattern'], problem: `${JSON.stringify(text)} ${compiled.problem}` }];
  return {
    field: 'pattern',
    expected: { pattern: text },
    failure: (v) => {
      const t = textOf(v);
      if (t === undefined) return `${describeShort(v)} has no text to match the pattern ${JSON.stringify(text)}`;
      return compiled.test(t) ? undefined : `${describeShort(v)} does not match the pattern ${JSON.stringify(text)}`;
    },
  };
};

const oneOfPredicate = (values: readonly JsonValue[], substituteValue: (v: JsonValue) => JsonValue): Predicate => {
  const listed = values.map(substituteValue);
  // A scalar deep-equals only an equal scalar: a set answers for any number of values.
  // Mutation: the filter removed is equivalent, as `isScalar` → `true` is (see there).
  const scalars = new Set(listed.filter(isScalar));
  return {
    field: 'oneOf',
    expected: { oneOf: listed },
    failure: (v) => (isScalar(v) && scalars.has(v as JsonValue) ? undefined : `${describeShort(v)} is not one of the ${listed.length} listed values`),
  };
};

const cidrPredicate = (entries: readonly string[], substitute: Substitute): Prepared => {
  const texts: string[] = [];
  const prefixes: Prefix[] = [];
  const problems: PredicateProblem[] = [];
  for (const [i, entry] of entries.entries()) {
    const text = typeof entry === 'string' ? substitute(entry) : undefined;
    const problem = text === undefined ? 'is not a string' : prefixProblem(text);
    if (problem) problems.push({ place: ['cidr', i], problem });
    else {
      texts.push(text as string);
      prefixes.push(parsePrefix(text as string) as Prefix);
    }
  }
  if (problems.length) return problems;
  const listed = texts.length === 1 ? (texts[0] as string) : `any of ${texts.join(', ')}`;
  return {
    field: 'cidr',
    expected: { cidr: texts },
    failure: (v) => {
      const inner = typeof v === 'string' ? parsePrefix(v) : undefined;
      if (!inner) return `${describeShort(v)} is not an IPv4 or IPv6 address or prefix`;
      return prefixes.some((outer) => insidePrefix(inner, outer)) ? undefined : `${describeShort(v)} is not inside ${listed}`;
    },
  };
};

const rangePredicate = (range: NonNullable<Rule['range']>, substitute: Substitute): Prepared => {
  const given: Record<string, JsonValue> = {};
  const bounds: { min?: Decimal; max?: Decimal } = {};
  const problems: PredicateProblem[] = [];
  for (const side of ['min', 'max'] as const) {
    const bound = range[side];
    if (bound === undefined) continue;
    const value = typeof bound === 'string' ? substitute(bound) : bound;
    const decimal = decimalOf(value);
    given[side] = value;
    if (decimal) bounds[side] = decimal;
    else problems.push({ place: ['range', side], problem: `${JSON.stringify(value)} is not a decimal number` });
  }
  if (problems.length) return problems;
  const { min, max } = bounds;
  if (min && max && compareDecimals(min, max) > 0)
    return [{ place: ['range'], problem: `min ${JSON.stringify(given['min'])} is above max ${JSON.stringify(given['max'])}` }];
  return {
    field: 'range',
    expected: { range: given },
    failure: (v) => {
      const d = decimalOf(v);
      if (!d) return `${describeShort(v)} is not a number or a decimal string`;
      if (min && compareDecimals(d, min) < 0) return `${describeShort(v)} is below the minimum ${JSON.stringify(given['min'])}`;
      if (max && compareDecimals(d, max) > 0) return `${describeShort(v)} is above the maximum ${JSON.stringify(given['max'])}`;
      return undefined;
    },
  };
};

/**
 * The rule's predicates prepared with `substitute` (a variable inside a pattern is quoted, so
 * it matches its text literally), or every reason they cannot be: a pattern that does not
 * compile, `cidr` entries that are no prefix, `range` bounds that are no number or a minimum
 * above the maximum. Throws only what `substitute` throws.
 */
export const preparePredicates = (
  rule: Pick<Rule, PredicateField>,
  substitute: Substitute,
  substituteValue: (v: JsonValue) => JsonValue,
): Predicate[] | { readonly problems: readonly PredicateProblem[] } => {
  const { pattern, oneOf, cidr, range } = rule;
  // Stored rules passed the schema; the shape checks guard data written around the API.
  const made: Prepared[] = [];
  const shape = (field: PredicateField, ok: boolean, make: () => Prepared): void => {
    made.push(ok ? make() : [{ place: [field], problem: 'has the wrong type' }]);
  };
  if (pattern !== undefined) shape('pattern', typeof pattern === 'string', () => patternPredicate(pattern, substitute));
  if (oneOf !== undefined) shape('oneOf', Array.isArray(oneOf), () => oneOfPredicate(oneOf, substituteValue));
  if (cidr !== undefined) shape('cidr', Array.isArray(cidr), () => cidrPredicate(cidr, substitute));
  if (range !== undefined) shape('range', isObject(range), () => rangePredicate(range, substitute));
  const problems = made.filter((m): m is readonly PredicateProblem[] => Array.isArray(m)).flat();
  return problems.length ? { problems } : (made as Predicate[]);
};
