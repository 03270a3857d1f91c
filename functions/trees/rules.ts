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
 * "Some element of it" is answered from an index of the configuration's arrays
 * ({@link ListIndex}), so a rule expecting k entries of a list of n costs about n + k, not
 * n × k; the answers are those of asking every element (test/unit/trees-rules-index.test.ts).
 */
import type { JsonValue, Rule, RuleMode, Severity } from './config-model.js';

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

const substituteString = (s: string, variables: Readonly<Record<string, string>>): string =>
  s.replace(VARIABLE_REFERENCE, (_, name: string) => {
    if (!Object.hasOwn(variables, name)) throw new UnknownVariable(name);
    return variables[name] as string;
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

/** The value `tokens` point at in `document`, or `undefined` when there is none. */
export const resolvePointer = (document: unknown, tokens: readonly string[]): JsonValue | undefined => {
  let current: unknown = document;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      // "-" (the element after the last) and anything but a plain decimal index point at nothing.
      if (!ARRAY_INDEX.test(token)) return undefined;
      current = current[Number(token)];
    } else if (isObject(current)) {
      if (!Object.hasOwn(current, token)) return undefined;
      current = current[token];
    } else return undefined;
    if (current === undefined) return undefined;
  }
  return current as JsonValue;
};

/**
 * One text per value such that two values have the same text exactly when they are deep-equal:
 * members in sorted order, and array elements sorted too unless `ordered`.
 */
export const canonical = (value: unknown, ordered: boolean): string => {
  if (Array.isArray(value)) {
    const parts = value.map((v) => canonical(v, ordered));
    if (!ordered) parts.sort();
    return `[${parts.join(',')}]`;
  }
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k], ordered)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

/** True when `actual` contains `expected` (see the module comment). */
export const contains = (actual: unknown, expected: JsonValue): boolean => containsValue(actual, expected, new ListIndex());

/**
 * Answers "does some element of this array contain that one?", the question containment asks
 * once per expected array element. {@link ListIndex} answers it in about constant time per
 * question; the straightforward answer (ask every element) is what the property test compares
 * it with.
 */
export interface ArraySearch {
  someContains(actual: readonly unknown[], element: JsonValue): boolean;
}

/** True when `actual` contains `expected`: {@link containsMismatch} without building the mismatch. */
const containsValue = (actual: unknown, expected: JsonValue, lists: ArraySearch): boolean => {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return false;
    for (const element of expected) if (!lists.someContains(actual, element)) return false;
    return true;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return false;
    for (const key of Object.keys(expected)) {
      if (!Object.hasOwn(actual, key) || !containsValue(actual[key], expected[key] as JsonValue, lists)) return false;
    }
    return true;
  }
  return actual === expected;
};

/** What a feature says is at a place: a scalar (compared by value), or one of these. */
const AN_OBJECT = Symbol('object');
const AN_ARRAY = Symbol('array');
type FeatureValue = string | number | boolean | null | typeof AN_OBJECT | typeof AN_ARRAY;

/** The step from a place to the places of its array's elements, all of them as one. */
const ANY_ELEMENT = Symbol('any element');
/** A step down from a place: a member by name, or any element. */
type Step = string | typeof ANY_ELEMENT;

/**
 * Whether `v` can be looked up by value: a `Map` key is found by SameValueZero, which agrees
 * with `===` on JSON scalars (0 and -0 alike) except NaN, which `===` never matches.
 */
const isIndexable = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && !Number.isNaN(v));

/**
 * Calls `emit` with each feature of `value`, at every depth, stopping when it returns false
 * (then returns false). A feature is a place (a path of {@link Step}s from the element, named
 * by the number `step` gives it) and what is there: a scalar, an object or an array. Whatever
 * contains `value` has every feature `value` has, so an element missing one cannot contain
 * it. Every depth, because list entries often differ only deep down (an interface by its
 * `ip/address/primary/address`); the walk is bounded because JSON from outside is depth-limited
 * where it is parsed, and costs one step per part of `value`.
 */
const eachFeature = (
  value: unknown,
  place: number,
  step: (place: number, s: Step) => number,
  emit: (place: number, what: FeatureValue) => boolean,
): boolean => {
  if (Array.isArray(value)) {
    if (!emit(place, AN_ARRAY)) return false;
    if (value.length === 0) return true;
    const inner = step(place, ANY_ELEMENT);
    for (const element of value) if (!eachFeature(element, inner, step, emit)) return false;
    return true;
  }
  if (isObject(value)) {
    if (!emit(place, AN_OBJECT)) return false;
    for (const key of Object.keys(value)) if (!eachFeature(value[key], step(place, key), step, emit)) return false;
    return true;
  }
  return !isIndexable(value) || emit(place, value);
};

/** Positions of the elements that have a feature: one number until a second element has it. */
type Positions = number | number[];

/**
 * An array's index. Places are numbered as they are first met (0 is the element itself), so a
 * place costs one map entry however deep it lies; a place's features map what is there to the
 * positions of the elements with it.
 */
interface Index {
  readonly steps: (Map<Step, number> | undefined)[];
  readonly features: (Map<FeatureValue, Positions> | undefined)[];
}

/** A place no element of the array has: nothing is found there or below it. */
const NOWHERE = -1;

/**
 * The fast {@link ArraySearch}: an array of the configuration is searched element by element
 * until those searches have looked at as many elements as it holds; then it is indexed, by
 * feature, to the positions of the elements that have it (YANG list entries by their keys or
 * by any leaf deeper down, leaf-lists by their values), and a question tries only the elements
 * that share the expected element's rarest feature. So searches read an array at most about
 * twice before it is indexed, and a rule that finds what it wants near the start builds no
 * index. The answer is the same as asking every element. One instance serves one evaluation
 * of one configuration, which must not change meanwhile.
 */
export class ListIndex implements ArraySearch {
  /** Each array met: its index, or how many elements searches have looked at so far. */
  private readonly arrays = new WeakMap<readonly unknown[], Index | number>();

  someContains(actual: readonly unknown[], element: JsonValue): boolean {
    const seen = this.arrays.get(actual) ?? 0;
    if (typeof seen === 'number' && seen < actual.length) {
      let looked = 0;
      // `some`, as asking every element does: holes of a sparse array are skipped.
      const found = actual.some((a) => {
        looked++;
        return containsValue(a, element, this);
      });
      this.arrays.set(actual, seen + (found ? looked : actual.length));
      return found;
    }
    const index = typeof seen === 'number' ? this.indexOf(actual) : seen;
    const rarest = rarestPositions(index, element);
    if (rarest === false) return false;
    // No feature at all (an expected NaN): every element is a candidate, as it would be unindexed.
    if (rarest === undefined) return actual.some((a) => containsValue(a, element, this));
    if (typeof rarest === 'number') return containsValue(actual[rarest], element, this);
    for (const position of rarest) if (containsValue(actual[position], element, this)) return true;
    return false;
  }

  private indexOf(actual: readonly unknown[]): Index {
    const index: Index = { steps: [], features: [] };
    let position = 0;
    const step = (place: number, s: Step): number => {
      const steps = index.steps[place] ?? (index.steps[place] = new Map());
      let next = steps.get(s);
      if (next === undefined) steps.set(s, (next = index.steps.push(undefined) - 1));
      return next;
    };
    index.steps.push(undefined);
    const add = (place: number, what: FeatureValue): boolean => {
      const byValue = index.features[place] ?? (index.features[place] = new Map());
      const positions = byValue.get(what);
      if (positions === undefined) byValue.set(what, position);
      else if (typeof positions === 'number') {
        // An element has a feature once however many of its parts have it.
        if (positions !== position) byValue.set(what, [positions, position]);
      } else if (positions[positions.length - 1] !== position) positions.push(position);
      return true;
    };
    for (; position < actual.length; position++) eachFeature(actual[position], 0, step, add);
    this.arrays.set(actual, index);
    return index;
  }
}

/**
 * The positions of the elements sharing `element`'s rarest feature in `index`; `false` when
 * some feature of `element` no element has; `undefined` when `element` has no feature.
 */
const rarestPositions = (index: Index, element: JsonValue): Positions | false | undefined => {
  let rarest: Positions | undefined;
  const step = (place: number, s: Step): number => (place === NOWHERE ? NOWHERE : (index.steps[place]?.get(s) ?? NOWHERE));
  const found = eachFeature(element, 0, step, (place, what) => {
    const positions = place === NOWHERE ? undefined : index.features[place]?.get(what);
    if (positions !== undefined && (rarest === undefined || count(positions) < count(rarest))) rarest = positions;
    return positions !== undefined;
  });
  return found ? rarest : false;
};

const count = (positions: Positions): number => (typeof positions === 'number' ? 1 : positions.length);

/** Where a comparison found a difference, below the rule's path. */
interface Mismatch {
  readonly at: readonly string[];
  readonly expected?: JsonValue;
  readonly actual?: JsonValue;
  readonly message: string;
}

const describe = (v: unknown): string =>
  Array.isArray(v) ? 'an array' : isObject(v) ? 'an object' : v === null ? 'null' : `the ${typeof v} ${JSON.stringify(v)}`;

/** The first place `actual` fails to contain `expected`, or `undefined` when it contains it. */
const containsMismatch = (actual: unknown, expected: JsonValue, at: readonly string[], lists: ArraySearch): Mismatch | undefined => {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return { at, expected, actual: actual as JsonValue, message: `expected an array, found ${describe(actual)}` };
    for (const element of expected) {
      if (!lists.someContains(actual, element)) {
        return { at, expected: element, actual: actual as JsonValue, message: 'no element of the array contains the expected element' };
      }
    }
    return undefined;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return { at, expected, actual: actual as JsonValue, message: `expected an object, found ${describe(actual)}` };
    for (const [key, member] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, key)) return { at: [...at, key], expected: member, message: `member ${JSON.stringify(key)} is missing` };
      const inner = containsMismatch(actual[key], member, [...at, key], lists);
      if (inner) return inner;
    }
    return undefined;
  }
  if (actual === expected) return undefined;
  return { at, expected, actual: actual as JsonValue, message: `expected ${describe(expected)}, found ${describe(actual)}` };
};

/** The first place `actual` differs from `expected`, or `undefined` when they are deep-equal. */
const exactMismatch = (actual: unknown, expected: JsonValue, ordered: boolean, at: readonly string[]): Mismatch | undefined => {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (ordered) {
      const shared = Math.min(expected.length, actual.length);
      for (let i = 0; i < shared; i++) {
        const inner = exactMismatch(actual[i], expected[i] as JsonValue, ordered, [...at, String(i)]);
        if (inner) return inner;
      }
      if (expected.length === actual.length) return undefined;
      return { at, expected, actual: actual as JsonValue, message: `expected ${expected.length} elements in order, found ${actual.length}` };
    }
    // Multisets: match equal elements pairwise by their canonical text; what is left over differs.
    const unmatched = new Map<string, JsonValue[]>();
    for (const element of actual as JsonValue[]) {
      const key = canonical(element, false);
      const list = unmatched.get(key);
      if (list) list.push(element);
      else unmatched.set(key, [element]);
    }
    const missing: JsonValue[] = [];
    for (const element of expected) {
      const list = unmatched.get(canonical(element, false));
      if (list?.length) list.pop();
      else missing.push(element);
    }
    const extra = [...unmatched.values()].flat();
    if (missing.length === 0 && extra.length === 0) return undefined;
    return {
      at,
      expected: missing,
      actual: extra,
      message: `${missing.length} expected element(s) missing and ${extra.length} unexpected element(s) present (arrays compared as unordered multisets)`,
    };
  }
  if (isObject(expected) && isObject(actual)) {
    for (const [key, member] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, key)) return { at: [...at, key], expected: member, message: `member ${JSON.stringify(key)} is missing` };
      const inner = exactMismatch(actual[key], member, ordered, [...at, key]);
      if (inner) return inner;
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key))
        return { at: [...at, key], actual: actual[key] as JsonValue, message: `member ${JSON.stringify(key)} is not expected` };
    }
    return undefined;
  }
  if (!Array.isArray(expected) && !isObject(expected) && actual === expected) return undefined;
  return { at, expected, actual: actual as JsonValue, message: `expected ${describe(expected)}, found ${describe(actual)}` };
};

/** `value`, or the start of its JSON text when that is longer than {@link EXCERPT_MAX_CHARS}. */
const excerpt = (value: JsonValue): { readonly value: JsonValue; readonly cut: boolean } => {
  const text = JSON.stringify(value);
  return text.length <= EXCERPT_MAX_CHARS ? { value, cut: false } : { value: `${text.slice(0, EXCERPT_MAX_CHARS)}…`, cut: true };
};

const withExcerpts = (base: Omit<RuleResult, 'expected' | 'actual' | 'truncated'>, expected?: JsonValue, actual?: JsonValue): RuleResult => {
  const truncated: ('expected' | 'actual')[] = [];
  const out: { -readonly [K in keyof RuleResult]?: RuleResult[K] } = { ...base };
  if (expected !== undefined) {
    const e = excerpt(expected);
    out.expected = e.value;
    if (e.cut) truncated.push('expected');
  }
  if (actual !== undefined) {
    const a = excerpt(actual);
    out.actual = a.value;
    if (a.cut) truncated.push('actual');
  }
  if (truncated.length) out.truncated = truncated;
  return out as RuleResult;
};

/**
 * Evaluates one rule against `config` with `variables`. Never throws: a rule whose path is no
 * JSON Pointer or whose value names an unknown variable is `invalid` (writes refuse both, so
 * this only meets data written around the API).
 */
export const evaluateRule = (config: unknown, variables: Readonly<Record<string, string>>, rule: Rule, lists: ArraySearch = new ListIndex()): RuleResult => {
  const head = { id: rule.id, path: rule.path, mode: rule.mode, severity: rule.severity };
  const tokens = parsePointer(rule.path);
  if (!tokens) return { ...head, status: 'invalid', message: 'path is not a JSON Pointer (RFC 6901)' };
  const resolved = ruleValue(rule, variables);
  if ('unknownVariable' in resolved)
    return { ...head, status: 'invalid', message: `value names the variable ${JSON.stringify(resolved.unknownVariable)}, which the version does not define` };
  const expected = resolved.value;
  const actual = resolvePointer(config, tokens);
  const pass = (message: string): RuleResult => ({ ...head, status: 'pass', message });
  const fail = (m: Mismatch): RuleResult =>
    withExcerpts({ ...head, status: 'fail', message: m.message, at: formatPointer([...tokens, ...m.at]) }, m.expected, m.actual);

  switch (rule.mode) {
    case 'required': {
      if (actual === undefined) return fail({ at: [], ...(expected !== undefined ? { expected } : {}), message: `nothing exists at ${rule.path}` });
      if (expected === undefined) return pass(`${rule.path} exists`);
      const m = containsMismatch(actual, expected, [], lists);
      return m ? fail(m) : pass(`the value at ${rule.path} contains the required value`);
    }
    case 'exact': {
      if (expected === undefined) return { ...head, status: 'invalid', message: 'an exact rule needs a value' };
      if (actual === undefined) return fail({ at: [], expected, message: `nothing exists at ${rule.path}` });
      const m = exactMismatch(actual, expected, rule.ordered === true, []);
      return m ? fail(m) : pass(`the value at ${rule.path} equals the expected value`);
    }
    case 'disallowed': {
      if (actual === undefined) return pass(`nothing exists at ${rule.path}`);
      if (expected === undefined) return fail({ at: [], actual, message: `${rule.path} exists but is disallowed` });
      if (!containsValue(actual, expected, lists)) return pass(`the value at ${rule.path} does not contain the disallowed value`);
      return fail({ at: [], expected, actual, message: `the value at ${rule.path} contains the disallowed value` });
    }
  }
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
