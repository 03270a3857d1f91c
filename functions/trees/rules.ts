/**
 * The rule evaluator: checks one device's configuration (the object inside `tailf-ncs:config`
 * as NSO returns it) against the rules a node inherits, with the version's variables. Pure:
 * no I/O, no clock, no exceptions for any input; the same arguments always give the same answer.
 *
 * Semantics (docs/trees.md says the same with examples):
 * - `required` with `value`: the value at `path` *contains* `value`; without: `path` exists.
 * - `exact`: the value at `path` deep-equals `value`; arrays are unordered multisets unless the
 *   rule says `"ordered": true` (then every array, at any depth, compares element by element).
 * - `disallowed` with `value`: the value at `path` is absent or does not contain `value`;
 *   without: `path` does not exist.
 *
 * *Contains*: an object contains another when it has each of its members and each member's value
 * contains the other's (recursively); an array contains another when every element of the other
 * is contained in some element of it; scalars contain only what equals them (`===`, so `"1"` is
 * not `1`). Object members are looked up as own properties only (`__proto__` is a plain key).
 *
 * Wildcard paths, `match`, `allowEmpty`, the predicates (`pattern`, `oneOf`, `cidr`, `range`)
 * and `strict` are as `Rule` (config-model.ts) states; rule-matches.ts expands a path to its
 * matches and judges them, predicates.ts prepares the predicates, compare.ts compares values.
 */
import { ListIndex, containsMismatch, containsValue, exactMismatch, strictMismatch, type ArraySearch, type Mismatch } from './compare.js';
import { RULE_MATCHES, type JsonValue, type Rule, type RuleMode, type Severity } from './config-model.js';
import { formatPointer, parsePointer, resolvePointer } from './pointers.js';
import { PREDICATE_FIELDS, preparePredicates, type Predicate, type PredicateField, type PredicateProblem } from './predicates.js';
import { WILDCARD, expandPlaces, fixedPrefix, judge, type Place } from './rule-matches.js';

export { ARRAY_INDEX, formatPointer, parsePointer, resolvePointer } from './pointers.js';
export { ListIndex, canonical, contains, type ArraySearch } from './compare.js';

/** `pass`: the rule holds; `fail`: it does not; `invalid`: it cannot be evaluated (bad pointer or unknown variable). */
export type RuleStatus = 'pass' | 'fail' | 'invalid';

/** One failing match of a rule (see `Rule`): its concrete pointer and why. */
export interface MatchFailure {
  readonly at: string;
  readonly message: string;
  readonly expected?: JsonValue;
  readonly actual?: JsonValue;
  readonly truncated?: readonly ('expected' | 'actual')[];
}

/** Failing matches a result lists at most (`failuresOmitted` counts the rest). */
export const MAX_LISTED_FAILURES = 50;

/** The outcome of one rule on one device configuration. */
export interface RuleResult {
  readonly id: string;
  readonly path: string;
  readonly mode: RuleMode;
  readonly severity: Severity;
  readonly status: RuleStatus;
  /** One sentence for people: why it passed or failed. */
  readonly message: string;
  /** JSON Pointer of the place the check failed: `path` itself or a place below it (`fail` only). */
  readonly at?: string;
  /** What the rule wanted at `at` (after substitution); absent when it wanted nothing there. */
  readonly expected?: JsonValue;
  /** What the configuration has at `at`; absent when nothing is there. */
  readonly actual?: JsonValue;
  /**
   * Which of `expected`/`actual` were longer than {@link EXCERPT_MAX_CHARS} as JSON: each is
   * then replaced by a string holding the start of its JSON text followed by `…`.
   */
  readonly truncated?: readonly ('expected' | 'actual')[];
  /** Rules over several places (a `*` path, a predicate over an array): how many matches the path had. */
  readonly matches?: number;
  /** `fail` of such a rule: the failing matches, by concrete pointer (the first is also `at`/`expected`/`actual`). */
  readonly failures?: readonly MatchFailure[];
  readonly failuresOmitted?: number;
}

/** The longest excerpt (as JSON text) a result carries for `expected` or `actual`. */
export const EXCERPT_MAX_CHARS = 2048;

/** A variable reference in a rule value: `{{name}}`, spaces inside the braces allowed. */
const VARIABLE_REFERENCE = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** Variable names: what {@link VARIABLE_REFERENCE} can name. */
export const VARIABLE_NAME_PATTERN_SOURCE = '^[A-Za-z0-9_.-]{1,64}$';

const isObject = (v: unknown): v is { readonly [key: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every variable name `value` refers to (in strings and member names), each once, in first-use order. */
export const variablesOf = (value: JsonValue | undefined): string[] => {
  const names = new Set<string>();
  const scan = (s: string): void => {
    for (const match of s.matchAll(VARIABLE_REFERENCE)) names.add(match[1] as string);
  };
  const visit = (v: JsonValue | undefined): void => {
    if (typeof v === 'string') scan(v);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (isObject(v)) {
      for (const [key, member] of Object.entries(v)) {
        scan(key);
        visit(member);
      }
    }
  };
  visit(value);
  return [...names];
};

/** Thrown inside this module only: a reference to a variable the version does not define. */
class UnknownVariable extends Error {
  constructor(readonly variable: string) {
    super(`unknown variable ${variable}`);
  }
}

/** `s` with each `{{name}}` replaced by the variable's value, passed through `quote` when given. */
const substituteString = (s: string, variables: Readonly<Record<string, string>>, quote?: (value: string) => string): string =>
  s.replace(VARIABLE_REFERENCE, (_, name: string) => {
    if (!Object.hasOwn(variables, name)) throw new UnknownVariable(name);
    const value = variables[name] as string;
    return quote ? quote(value) : value;
  });

/**
 * `value` with every `{{name}}` in its strings and member names replaced by `variables[name]`.
 * Throws (inside the module) on an unknown name; {@link evaluateRule} turns that into `invalid`.
 */
const substitute = (value: JsonValue, variables: Readonly<Record<string, string>>): JsonValue => {
  if (typeof value === 'string') return substituteString(value, variables);
  if (Array.isArray(value)) return value.map((v) => substitute(v, variables));
  if (isObject(value)) {
    const out: Record<string, JsonValue> = {};
    for (const [key, member] of Object.entries(value)) {
      // defineProperty: a `__proto__` member stays a member, never the object's prototype.
      Object.defineProperty(out, substituteString(key, variables), {
        value: substitute(member, variables),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
};

/**
 * The rule's value with the variables substituted (`value` is `undefined` when the rule has
 * none), or the first variable it names that `variables` lacks. What the evaluator compares,
 * and what remediation writes.
 */
export const ruleValue = (
  rule: Pick<Rule, 'value'>,
  variables: Readonly<Record<string, string>>,
): { readonly value: JsonValue | undefined } | { readonly unknownVariable: string } => {
  try {
    return { value: rule.value === undefined ? undefined : substitute(rule.value, variables) };
  } catch (error) {
    if (error instanceof UnknownVariable) return { unknownVariable: error.variable };
    throw error;
  }
};

/** The longest excerpt (as JSON text) each listed failing match carries for `expected` or `actual`. */
export const FAILURE_EXCERPT_MAX_CHARS = 256;

/** What every match of one rule is checked with: the rule after substitution. */
interface Prepared {
  readonly mode: RuleMode;
  readonly expected: JsonValue | undefined;
  readonly ordered: boolean;
  readonly predicates: readonly Predicate[];
  readonly strict: boolean;
  readonly lists: ArraySearch;
}

/** The rule's predicates as one `expected` value: `{ "pattern": …, "cidr": … }`. */
const predicatesExpected = (predicates: readonly Predicate[]): JsonValue => Object.assign({}, ...predicates.map((p) => p.expected));

const predicateMismatch = (actual: JsonValue, predicates: readonly Predicate[]): Mismatch | undefined => {
  for (const p of predicates) {
    const message = p.failure(actual);
    if (message !== undefined) return { at: [], expected: p.expected, actual, message };
  }
  return undefined;
};

/** Why the match `actual` (named `label` in messages) does not hold, or `undefined` when it holds. */
const matchMismatch = (actual: JsonValue | undefined, p: Prepared, label: string): Mismatch | undefined => {
  const { mode, expected, predicates, lists } = p;
  if (mode === 'disallowed') {
    if (actual === undefined) return undefined;
    if (expected === undefined && predicates.length === 0) return { at: [], actual, message: `${label} exists but is disallowed` };
    if (expected !== undefined && !containsValue(actual, expected, lists)) return undefined;
    if (predicateMismatch(actual, predicates)) return undefined;
    const passes = predicates.length ? `passes ${predicates.map((q) => q.field).join(', ')}` : '';
    if (expected === undefined)
      return { at: [], expected: predicatesExpected(predicates), actual, message: `the value at ${label} ${passes}, which is disallowed` };
    return { at: [], expected, actual, message: `the value at ${label} contains the disallowed value${passes && ` and ${passes}`}` };
  }
  if (actual === undefined) return { at: [], ...(expected !== undefined ? { expected } : {}), message: `nothing exists at ${label}` };
  const compared =
    expected === undefined ? undefined : mode === 'exact' ? exactMismatch(actual, expected, p.ordered, []) : containsMismatch(actual, expected, [], lists);
  return (
    compared ??
    predicateMismatch(actual, predicates) ??
    // `strict` is checked only with an array `value` (see prepare), which the array contains.
    (p.strict ? strictMismatch(actual as readonly unknown[], expected as readonly JsonValue[], lists) : undefined)
  );
};

/** Today's sentence for a single-place rule that passes. */
const passMessage = (p: Prepared, path: string, actual: JsonValue | undefined): string => {
  if (p.mode === 'disallowed') return actual === undefined ? `nothing exists at ${path}` : `the value at ${path} does not contain the disallowed value`;
  if (p.expected === undefined) return `${path} exists`;
  if (p.mode === 'exact') return `the value at ${path} equals the expected value`;
  return `the value at ${path} contains the required value${p.strict ? ' and no other element (strict)' : ''}`;
};

/** `value`, or the start of its JSON text when that is longer than `max`. */
const excerpt = (value: JsonValue, max: number): { readonly value: JsonValue; readonly cut: boolean } => {
  const text = JSON.stringify(value);
  return text.length <= max ? { value, cut: false } : { value: `${text.slice(0, max)}…`, cut: true };
};

/** `base` with `expected` and `actual` as excerpts of at most `max` characters, saying which were cut. */
const withExcerpts = <T extends object>(base: T, expected: JsonValue | undefined, actual: JsonValue | undefined, max = EXCERPT_MAX_CHARS): T & Excerpts => {
  const truncated: ('expected' | 'actual')[] = [];
  const out: { -readonly [K in keyof Excerpts]?: Excerpts[K] } = {};
  if (expected !== undefined) {
    const e = excerpt(expected, max);
    out.expected = e.value;
    if (e.cut) truncated.push('expected');
  }
  if (actual !== undefined) {
    const a = excerpt(actual, max);
    out.actual = a.value;
    if (a.cut) truncated.push('actual');
  }
  if (truncated.length) out.truncated = truncated;
  return { ...base, ...out };
};

type Excerpts = Pick<RuleResult, 'expected' | 'actual' | 'truncated'>;

/** The rule after substitution, or why it cannot be evaluated. */
const prepare = (rule: Rule, variables: Readonly<Record<string, string>>, lists: ArraySearch): Prepared | { readonly invalid: string } => {
  if (rule.match !== undefined && !RULE_MATCHES.includes(rule.match)) return { invalid: `match must be one of ${RULE_MATCHES.join(', ')}` };
  const resolved = ruleValue(rule, variables);
  if ('unknownVariable' in resolved)
    return { invalid: `value names the variable ${JSON.stringify(resolved.unknownVariable)}, which the version does not define` };
  const predicates = rulePredicates(rule, variables);
  if ('unknownVariable' in predicates)
    return { invalid: `${predicates.field} names the variable ${JSON.stringify(predicates.unknownVariable)}, which the version does not define` };
  if ('problems' in predicates) return { invalid: predicates.problems.map((q) => `${q.place.join('.')} ${q.problem}`).join('; ') };
  const expected = resolved.value;
  if (rule.mode === 'exact' && expected === undefined && predicates.length === 0) return { invalid: 'an exact rule needs a value' };
  const strict = rule.strict === true;
  if (strict && (rule.mode !== 'required' || !Array.isArray(expected))) return { invalid: 'strict needs a required rule with an array value' };
  return { mode: rule.mode, expected, ordered: rule.ordered === true, predicates, strict, lists };
};

/**
 * The rule's predicates prepared with `variables` (see predicates.ts), or why they cannot be:
 * the member naming an unknown variable, or a predicate that is not well formed.
 */
export const rulePredicates = (
  rule: Pick<Rule, PredicateField>,
  variables: Readonly<Record<string, string>>,
): Predicate[] | { readonly problems: readonly PredicateProblem[] } | { readonly field: PredicateField; readonly unknownVariable: string } => {
  for (const field of PREDICATE_FIELDS) {
    const unknown = variablesOf(rule[field] as JsonValue | undefined).find((name) => !Object.hasOwn(variables, name));
    if (unknown !== undefined) return { field, unknownVariable: unknown };
  }
  return preparePredicates(
    rule,
    (text, quote) => substituteString(text, variables, quote),
    (value) => substitute(value, variables),
  );
};

/** A failing match as a result lists it. */
interface Outcome {
  readonly place: Place;
  readonly mismatch: Mismatch | undefined;
  readonly holds: boolean;
}

/** The longest message a listed failing match carries; a longer one (quoting long values) is replaced. */
export const FAILURE_MESSAGE_MAX_CHARS = 512;

/**
 * The failing match `o` as the result lists it: where, why, and excerpts of at most `max`
 * characters. A listed match's message longer than {@link FAILURE_MESSAGE_MAX_CHARS} quotes no
 * value (its excerpts show them), so 50 listed matches stay small and masking stays whole.
 */
const failureOf = (o: Outcome, max: number, listed: boolean): MatchFailure => {
  const m = o.mismatch ?? { at: [], actual: o.place.value, message: `the rule holds at ${o.place.at}, and match "none" allows no match to hold` };
  const message =
    listed && m.message.length > FAILURE_MESSAGE_MAX_CHARS ? 'does not hold; the values are too long to quote here (see expected and actual)' : m.message;
  return withExcerpts({ at: o.place.at + formatPointer(m.at), message }, m.expected, m.actual, max);
};

/** The result of a rule over several places (a `*` path or a predicate). */
const judgeMatches = (rule: Rule, head: Head, tokens: readonly string[], p: Prepared, config: unknown): RuleResult => {
  const match = rule.match ?? 'all';
  const places = expandPlaces(config, tokens, p.predicates.length > 0);
  const outcomes: Outcome[] = places.map((place) => {
    const mismatch = matchMismatch(place.value, p, place.at);
    return { place, mismatch, holds: mismatch === undefined };
  });
  const n = outcomes.length;
  const { pass, failing } = judge(outcomes, match, rule.mode, rule.allowEmpty === true);
  const holding = outcomes.filter((o) => o.holds).length;
  if (pass) {
    const message =
      n === 0
        ? `nothing matches ${rule.path}, which passes`
        : match === 'none'
          ? `none of the ${n} matches of ${rule.path} holds`
          : `${holding} of ${n} matches of ${rule.path} hold`;
    return { ...head, status: 'pass', message, matches: n };
  }
  const first = failing[0];
  if (!first) return { ...head, status: 'fail', message: `nothing matches ${rule.path}`, at: fixedPrefix(tokens), matches: 0, failures: [] };
  const failures = failing.slice(0, MAX_LISTED_FAILURES).map((o) => failureOf(o, FAILURE_EXCERPT_MAX_CHARS, true));
  const lead = failureOf(first, EXCERPT_MAX_CHARS, false);
  const count =
    match === 'none' ? `${failing.length} of ${n} matches of ${rule.path} hold, and none may` : `${failing.length} of ${n} matches of ${rule.path} do not hold`;
  return {
    ...head,
    status: 'fail',
    message: `${count}; first at ${lead.at}: ${lead.message}`,
    at: lead.at,
    ...(lead.expected !== undefined ? { expected: lead.expected } : {}),
    ...(lead.actual !== undefined ? { actual: lead.actual } : {}),
    ...(lead.truncated ? { truncated: lead.truncated } : {}),
    matches: n,
    failures,
    ...(failing.length > MAX_LISTED_FAILURES ? { failuresOmitted: failing.length - MAX_LISTED_FAILURES } : {}),
  };
};

type Head = Pick<RuleResult, 'id' | 'path' | 'mode' | 'severity'>;

/**
 * Evaluates one rule against `config` with `variables`. Never throws: a rule that cannot be
 * evaluated (a path that is no JSON Pointer, an unknown variable, a pattern that does not
 * compile, a `cidr` entry that is no prefix, a `range` bound that is no number) is `invalid`
 * (writes refuse all of them, so this only meets data written around the API).
 *
 * A rule over several places (a path with `*`, a predicate, or a `match`/`allowEmpty`) says
 * how many matches it had and lists the failing ones by concrete pointer; any other rule is
 * judged at its one place, as before wildcards existed.
 */
export const evaluateRule = (config: unknown, variables: Readonly<Record<string, string>>, rule: Rule, lists: ArraySearch = new ListIndex()): RuleResult => {
  const head: Head = { id: rule.id, path: rule.path, mode: rule.mode, severity: rule.severity };
  const tokens = parsePointer(rule.path);
  if (!tokens) return { ...head, status: 'invalid', message: 'path is not a JSON Pointer (RFC 6901)' };
  const p = prepare(rule, variables, lists);
  if ('invalid' in p) return { ...head, status: 'invalid', message: p.invalid };
  if (tokens.includes(WILDCARD) || p.predicates.length > 0 || rule.match !== undefined || rule.allowEmpty !== undefined)
    return judgeMatches(rule, head, tokens, p, config);
  const actual = resolvePointer(config, tokens);
  const m = matchMismatch(actual, p, rule.path);
  if (!m) return { ...head, status: 'pass', message: passMessage(p, rule.path, actual) };
  return withExcerpts({ ...head, status: 'fail', message: m.message, at: formatPointer([...tokens, ...m.at]) }, m.expected, m.actual);
};

/**
 * Evaluates `rules` (in inheritance order: `inheritedRules(root, nodePath)`) against one
 * device's configuration; one result per rule, in the same order. The rules share one
 * {@link ListIndex}: each list of the configuration is indexed at most once.
 */
export const evaluateRules = (
  config: unknown,
  variables: Readonly<Record<string, string>>,
  rules: readonly Rule[],
  lists: ArraySearch = new ListIndex(),
): RuleResult[] => rules.map((rule) => evaluateRule(config, variables, rule, lists));
