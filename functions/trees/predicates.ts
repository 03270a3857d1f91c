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

/** Why a rule's predicates cannot be prepared: the member and the reason. */
export interface PredicateProblem {
  readonly field: string;
  readonly problem: string;
}

/**
 * Substitutes `{{variables}}` in a text, each variable's value passed through `quote` when
 * given. May throw for an unknown variable: the caller catches what it throws.
 */
export type Substitute = (text: string, quote?: (value: string) => string) => string;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value in words, for messages: `the string "x"`, `an object`, `null`. */
export const describeValue = (v: unknown): string =>
  Array.isArray(v) ? 'an array' : isObject(v) ? 'an object' : v === null ? 'null' : `the ${typeof v} ${JSON.stringify(v)}`;

const isScalar = (v: unknown): boolean => v === null || typeof v !== 'object';

/** The text a pattern is found in: strings as they are, numbers and booleans as JSON writes them. */
const textOf = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : undefined;

const patternPredicate = (source: string, substitute: Substitute): Predicate | PredicateProblem => {
  const text = substitute(source, quotePattern);
  const compiled = compilePattern(text);
  if ('problem' in compiled) return { field: 'pattern', problem: `${JSON.stringify(text)} ${compiled.problem}` };
  return {
    field: 'pattern',
    expected: { pattern: text },
    failure: (v) => {
      const t = textOf(v);
      if (t === undefined) return `${describeValue(v)} has no text to match the pattern ${JSON.stringify(text)}`;
      return compiled.test(t) ? undefined : `${describeValue(v)} does not match the pattern ${JSON.stringify(text)}`;
    },
  };
};

const oneOfPredicate = (values: readonly JsonValue[], substituteValue: (v: JsonValue) => JsonValue): Predicate => {
  const listed = values.map(substituteValue);
  // A scalar deep-equals only an equal scalar: a set answers for any number of values.
  const scalars = new Set(listed.filter(isScalar));
  return {
    field: 'oneOf',
    expected: { oneOf: listed },
    failure: (v) => (isScalar(v) && scalars.has(v as JsonValue) ? undefined : `${describeValue(v)} is not one of the ${listed.length} listed values`),
  };
};

const cidrPredicate = (entries: readonly string[], substitute: Substitute): Predicate | PredicateProblem => {
  const texts: string[] = [];
  const prefixes: Prefix[] = [];
  for (const [i, entry] of entries.entries()) {
    const text = typeof entry === 'string' ? substitute(entry) : undefined;
    const problem = text === undefined ? 'is not a string' : prefixProblem(text);
    if (problem) return { field: `cidr.${i}`, problem };
    texts.push(text as string);
    prefixes.push(parsePrefix(text as string) as Prefix);
  }
  const listed = texts.length === 1 ? (texts[0] as string) : `any of ${texts.join(', ')}`;
  return {
    field: 'cidr',
    expected: { cidr: texts },
    failure: (v) => {
      const inner = typeof v === 'string' ? parsePrefix(v) : undefined;
      if (!inner) return `${describeValue(v)} is not an IPv4 or IPv6 address or prefix`;
      return prefixes.some((outer) => insidePrefix(inner, outer)) ? undefined : `${describeValue(v)} is not inside ${listed}`;
    },
  };
};

const rangePredicate = (range: NonNullable<Rule['range']>, substitute: Substitute): Predicate | PredicateProblem => {
  const given: Record<string, JsonValue> = {};
  const bounds: { min?: Decimal; max?: Decimal } = {};
  for (const side of ['min', 'max'] as const) {
    const bound = range[side];
    if (bound === undefined) continue;
    const value = typeof bound === 'string' ? substitute(bound) : bound;
    const decimal = decimalOf(value);
    if (!decimal) return { field: `range.${side}`, problem: `${JSON.stringify(value)} is not a decimal number` };
    given[side] = value;
    bounds[side] = decimal;
  }
  const { min, max } = bounds;
  if (min && max && compareDecimals(min, max) > 0) return { field: 'range', problem: 'min is above max' };
  return {
    field: 'range',
    expected: { range: given },
    failure: (v) => {
      const d = decimalOf(v);
      if (!d) return `${describeValue(v)} is not a number or a decimal string`;
      if (min && compareDecimals(d, min) < 0) return `${describeValue(v)} is below the minimum ${JSON.stringify(given['min'])}`;
      if (max && compareDecimals(d, max) > 0) return `${describeValue(v)} is above the maximum ${JSON.stringify(given['max'])}`;
      return undefined;
    },
  };
};

/**
 * The rule's predicates prepared with `substitute` (a variable inside a pattern is quoted, so
 * it matches its text literally), or the first one that cannot be: a pattern that does not
 * compile, a `cidr` entry that is no prefix, a `range` bound that is no number or a minimum
 * above the maximum. Throws only what `substitute` throws.
 */
export const preparePredicates = (
  rule: Pick<Rule, PredicateField>,
  substitute: Substitute,
  substituteValue: (v: JsonValue) => JsonValue,
): Predicate[] | PredicateProblem => {
  const out: Predicate[] = [];
  const add = (p: Predicate | PredicateProblem): PredicateProblem | undefined => {
    if ('problem' in p) return p;
    out.push(p);
    return undefined;
  };
  // Stored rules passed the schema; these shapes guard data written around the API.
  const { pattern, oneOf, cidr, range } = rule;
  const shape = (field: PredicateField, ok: boolean): PredicateProblem | undefined => (ok ? undefined : { field, problem: 'has the wrong type' });
  const problem =
    (pattern === undefined ? undefined : (shape('pattern', typeof pattern === 'string') ?? add(patternPredicate(pattern, substitute)))) ??
    (oneOf === undefined ? undefined : (shape('oneOf', Array.isArray(oneOf)) ?? add(oneOfPredicate(oneOf, substituteValue)))) ??
    (cidr === undefined ? undefined : (shape('cidr', Array.isArray(cidr)) ?? add(cidrPredicate(cidr, substitute)))) ??
    (range === undefined ? undefined : (shape('range', isObject(range)) ?? add(rangePredicate(range, substitute))));
  return problem ?? out;
};
