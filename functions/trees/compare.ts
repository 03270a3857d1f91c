/**
 * How rules compare values: containment (`required`, `disallowed`) and deep equality (`exact`),
 * each also saying where the first difference lies. See rules.ts for the semantics.
 *
 * "Some element of it" is answered from an index of the configuration's arrays
 * ({@link ListIndex}), so a rule expecting k entries of a list of n costs about n + k, not
 * n × k; the answers are those of asking every element (test/unit/trees-rules-index.test.ts).
 */
import type { JsonValue } from './config-model.js';
import { describeShort, describeValue } from './predicates.js';

const isObject = (v: unknown): v is { readonly [key: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One text per value such that two values have the same text exactly when they are deep-equal:
 * members in sorted order, and array elements sorted too unless `ordered`.
 */
export const canonical = (value: JsonValue, ordered: boolean): string => {
  if (Array.isArray(value)) {
    const parts = value.map((v) => canonical(v, ordered));
    if (!ordered) parts.sort();
    return `[${parts.join(',')}]`;
  }
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    // Mutation: `join(',')` → `join('')` is equivalent: each member opens with its quoted name and every
    // JSON text ends where it ends (a number is followed by `"` or `}`), so members never run together.
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k] as JsonValue, ordered)}`).join(',')}}`;
  }
  return JSON.stringify(value);
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
export const containsValue = (actual: unknown, expected: JsonValue, lists: ArraySearch): boolean => {
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
    // Mutation: `<=` searches once more before indexing: slower, within "about twice", same answers.
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
    // No feature at all: only NaN has none, and `===` matches it to nothing.
    if (rarest === false || rarest === undefined) return false;
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
      // Mutation: `- 1` → `+ 1` is equivalent: it skips numbers, yet gives each place its own.
      if (next === undefined) steps.set(s, (next = index.steps.push(undefined) - 1));
      return next;
    };
    // Mutation: not reserving 0 is equivalent in answers: the first place met then shares the
    // element's number, which merges their features, only adding candidates containsValue rules out.
    index.steps.push(undefined);
    const add = (place: number, what: FeatureValue): boolean => {
      const byValue = index.features[place] ?? (index.features[place] = new Map());
      const positions = byValue.get(what);
      if (positions === undefined) byValue.set(what, position);
      else if (typeof positions === 'number') {
        // An element has a feature once however many of its parts have it.
        // Mutation: → `true` is equivalent in answers: an element listed twice is only tried twice.
        if (positions !== position) byValue.set(what, [positions, position]);
        // Mutation: → `true`, or `length + 1`, is equivalent in answers, as above.
      } else if (positions[positions.length - 1] !== position) positions.push(position);
      return true;
    };
    for (const element of actual) {
      eachFeature(element, 0, step, add);
      position++;
    }
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
  // NOWHERE (-1) is no index of either array: nothing is found there or below.
  const step = (place: number, s: Step): number => index.steps[place]?.get(s) ?? NOWHERE;
  const found = eachFeature(element, 0, step, (place, what) => {
    const positions = index.features[place]?.get(what);
    // Mutation: `<` → `<=` is equivalent in answers: of two features as rare, either will do.
    if (positions !== undefined && (rarest === undefined || count(positions) < count(rarest))) rarest = positions;
    return positions !== undefined;
  });
  return found ? rarest : false;
};

const count = (positions: Positions): number => (typeof positions === 'number' ? 1 : positions.length);

/** Where a comparison found a difference, below the rule's path. */
export interface Mismatch {
  readonly at: readonly string[];
  readonly expected?: JsonValue;
  readonly actual?: JsonValue;
  readonly message: string;
}

/** The first place `actual` fails to contain `expected`, or `undefined` when it contains it. */
export const containsMismatch = (actual: unknown, expected: JsonValue, at: readonly string[], lists: ArraySearch): Mismatch | undefined => {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return { at, expected, actual: actual as JsonValue, message: `expected an array, found ${describeValue(actual)}` };
    for (const element of expected) {
      if (!lists.someContains(actual, element)) {
        return { at, expected: element, actual: actual as JsonValue, message: 'no element of the array contains the expected element' };
      }
    }
    return undefined;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return { at, expected, actual: actual as JsonValue, message: `expected an object, found ${describeValue(actual)}` };
    for (const [key, member] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, key)) return { at: [...at, key], expected: member, message: `member ${JSON.stringify(key)} is missing` };
      const inner = containsMismatch(actual[key], member, [...at, key], lists);
      if (inner) return inner;
    }
    return undefined;
  }
  if (actual === expected) return undefined;
  return { at, expected, actual: actual as JsonValue, message: `expected ${describeValue(expected)}, found ${describeValue(actual)}` };
};

/** The first place `actual` differs from `expected`, or `undefined` when they are deep-equal. */
export const exactMismatch = (actual: unknown, expected: JsonValue, ordered: boolean, at: readonly string[]): Mismatch | undefined => {
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
  // Arrays and objects that reach here differ in kind; identical ones are deep-equal.
  if (actual === expected) return undefined;
  return { at, expected, actual: actual as JsonValue, message: `expected ${describeValue(expected)}, found ${describeValue(actual)}` };
};

/**
 * The first element of `actual` that contains no element of `expected` (NSO's `strict`: no
 * list entries besides the expected ones), or `undefined` when there is none. The expected
 * elements are bucketed by one scalar member each (a YANG list entry by its key, usually), so
 * a list of n entries against k expected ones costs about n + k, not n × k.
 */
export const strictMismatch = (actual: readonly unknown[], expected: readonly JsonValue[], lists: ArraySearch): Mismatch | undefined => {
  const scalars = new Set<unknown>();
  const byMember = new Map<string, JsonValue[]>();
  // Mutation: `[]` → `["Stryker was here"]` survives: only an element that is the mutation tool's own words would differ.
  const others: JsonValue[] = [];
  for (const e of expected) {
    const key = isObject(e) ? Object.keys(e).find((k) => isIndexable(e[k])) : undefined;
    // Mutation: → `false` is equivalent in answers: a scalar then goes with `others`, tried by `===` like the set.
    if (isIndexable(e)) scalars.add(e);
    else if (key !== undefined) {
      const bucket = JSON.stringify([key, (e as Record<string, JsonValue>)[key]]);
      const list = byMember.get(bucket);
      if (list) list.push(e);
      else byMember.set(bucket, [e]);
    } else others.push(e);
  }
  // An element contains a scalar only by equalling it, and an object only by having its members.
  const allowed = (a: unknown): boolean => {
    if (isIndexable(a) && scalars.has(a)) return true;
    if (isObject(a)) {
      for (const k of Object.keys(a)) {
        const candidates = isIndexable(a[k]) ? byMember.get(JSON.stringify([k, a[k]])) : undefined;
        if (candidates?.some((e) => containsValue(a, e, lists))) return true;
      }
    }
    return others.some((e) => containsValue(a, e, lists));
  };
  for (const [i, element] of actual.entries()) {
    if (!allowed(element))
      return { at: [String(i)], actual: element as JsonValue, message: `${describeShort(element)} is none of the expected elements (strict)` };
  }
  return undefined;
};
