/**
 * The indexed list search of the rule evaluator answers exactly as the straightforward one
 * (tools/rules-reference.ts): same results, messages, places and excerpts for every
 * configuration and rule, and it reads each list a bounded number of times, not once per
 * expected entry.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue, Rule } from '../../functions/trees/config-model.js';
import { ListIndex, contains, evaluateRules } from '../../functions/trees/rules.js';
import { referenceContains, referenceEvaluateRules } from '../../tools/rules-reference.js';

// Scalars that `===` tells apart though they look alike (1 and "1", 0 and -0 alike, NaN unlike
// itself), and member names that could confuse a feature's place (quotes, `*`, `#`, `__proto__`).
const scalar = fc.constantFrom<JsonValue>(0, -0, 1, '1', '0', '', 'a', 'b', true, false, null, Number.NaN);
const name = fc.constantFrom('name', 'id', 'a', 'b', '__proto__', '*', '#', '"', 'x.y');

/** Values of few shapes, so that list entries share keys, collide, repeat and nest. */
const { value } = fc.letrec<{ value: JsonValue; object: JsonValue; array: JsonValue }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('object'), tie('array')),
  object: fc.dictionary(name, tie('value'), { maxKeys: 4 }) as fc.Arbitrary<JsonValue>,
  array: fc.array(tie('value'), { maxLength: 24 }) as fc.Arbitrary<JsonValue>,
}));

/**
 * Entries alike down to three levels or more that differ (if at all) only in a leaf below,
 * through objects and arrays: `{"ip":{"address":{"primary":{"address":"10.0.0.1"}}}}`.
 */
const deep: fc.Arbitrary<JsonValue> = fc
  .tuple(fc.array(fc.constantFrom('a', 'b', '*', '[]'), { minLength: 3, maxLength: 7 }), scalar, fc.constantFrom<JsonValue>('shared', 1))
  .map(([steps, leaf, sibling]) => steps.reduceRight<JsonValue>((inner, step) => (step === '[]' ? [inner, sibling] : { [step]: inner, id: sibling }), leaf));

/** A list of entries: mostly objects (YANG list entries), with other values mixed in. */
const list = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: value.filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v)) },
    { weight: 2, arbitrary: deep },
    { weight: 1, arbitrary: value },
  ),
  { maxLength: 40 },
);

/** `v` with parts left out by the bits of `seed`: a value `v` contains (NaN aside), or nearly. */
const trimmed = (v: JsonValue, seed: number): JsonValue => {
  if (Array.isArray(v)) return v.filter((_, i) => (seed >> (i % 16)) & 1).map((x, i) => trimmed(x, seed * 7 + i));
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, JsonValue> = {};
    Object.keys(v).forEach((k, i) => {
      if ((seed >> i) & 1) Object.defineProperty(out, k, { value: trimmed((v as Record<string, JsonValue>)[k] as JsonValue, seed * 3 + i), enumerable: true });
    });
    return out;
  }
  return v;
};

/** Expected entries: trimmed copies of the list's entries, and unrelated values. */
const expectedFor = (entries: readonly JsonValue[]): fc.Arbitrary<JsonValue[]> =>
  fc.array(
    fc.oneof(
      fc.tuple(fc.nat(), fc.nat()).map(([i, seed]) => (entries.length ? trimmed(entries[i % entries.length] as JsonValue, seed) : null)),
      value,
    ),
    { maxLength: 12 },
  );

const MODES = ['required', 'disallowed', 'exact'] as const;

describe('indexed list search', () => {
  it('gives every rule the same result as the straightforward evaluator', () => {
    const cases = list.chain((entries) =>
      fc.tuple(
        fc.constant(entries),
        fc.array(fc.tuple(fc.constantFrom('', '/list', '/list/0', '/other'), fc.constantFrom(...MODES), expectedFor(entries), fc.boolean()), {
          minLength: 1,
          maxLength: 6,
        }),
      ),
    );
    fc.assert(
      fc.property(cases, value, ([entries, specs], other) => {
        const config = { list: entries, other };
        // Several rules share one index, so later rules meet lists already indexed.
        const rules: Rule[] = specs.map(([path, mode, expected, whole], i) => ({
          id: `r${i}`,
          path,
          mode,
          severity: 'error',
          value: whole ? expected : (expected[0] ?? []),
        }));
        expect(evaluateRules(config, {}, rules)).toEqual(referenceEvaluateRules(config, {}, rules));
      }),
      { numRuns: 400 },
    );
  });

  it('answers each element question as asking every element does, once the list is indexed', () => {
    fc.assert(
      fc.property(
        list.chain((entries) => fc.tuple(fc.constant(entries), expectedFor(entries))),
        ([entries, expected]) => {
          const lists = new ListIndex();
          // A question nothing answers reads the whole list: the next one is answered from its index.
          expect(lists.someContains(entries, { '\u0000': '\u0000' })).toBe(false);
          for (const element of expected) expect(lists.someContains(entries, element)).toBe(entries.some((a) => referenceContains(a, element)));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('agrees on containment of whole values', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(contains(a, b)).toBe(referenceContains(a, b));
      }),
    );
    fc.assert(
      fc.property(
        list.chain((entries) => fc.tuple(fc.constant(entries), expectedFor(entries))),
        ([a, b]) => {
          expect(contains(a, b)).toBe(referenceContains(a, b));
        },
      ),
    );
  });

  const address = (i: number): string => `10.0.${i >> 8}.${i & 255}`;
  /**
   * Keyed entries, and entries alike but for one leaf four levels down (as NSO lists
   * interfaces): each an entry by its position, and the part of it a rule expects.
   */
  const SHAPES: Record<string, [(i: number) => JsonValue, (i: number) => JsonValue]> = {
    keyed: [(i) => ({ name: `GigabitEthernet0/${i}`, vlan: i % 4094, mode: 'access' }), (i) => ({ name: `GigabitEthernet0/${i}`, vlan: i % 4094 })],
    deep: [
      (i) => ({ ip: { address: { primary: { address: address(i), mask: '255.255.255.0' } } }, mode: 'access' }),
      (i) => ({ ip: { address: { primary: { address: address(i) } } } }),
    ],
  };

  it.each(Object.entries(SHAPES))('reads a list of %s entries a bounded number of times however many entries a rule expects', (_, [entry, part]) => {
    const reads = (n: number, expected: number): number => {
      const all = Array.from({ length: n }, (_, i) => entry(i));
      let count = 0;
      const counted = new Proxy(all, {
        get: (target, key, receiver) => {
          if (typeof key === 'string' && /^\d+$/.test(key)) count++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
      // The last entries of the list, so that each is found only at the end of a search.
      const value = Array.from({ length: expected }, (_, j) => part(n - 1 - j));
      const [result] = evaluateRules({ list: counted }, {}, [{ id: 'r', path: '/list', mode: 'required', severity: 'error', value }]);
      expect(result?.status).toBe('pass');
      return count;
    };
    // Searching every entry for each of 200 expected entries reads about 200 × n times. Here:
    // searches until they have read the list once (the second one ends past it), the index,
    // then one read per expected entry: at most 3 × n + 200.
    for (const n of [2000, 4000]) expect(reads(n, 200)).toBeLessThanOrEqual(3 * n + 200);
  });
});

describe('index of a list', () => {
  const n = 2000;
  /**
   * Interfaces told apart by a name, a number, a leaf-list, and (the last one only) a false
   * flag, a null description, an empty container and an empty list.
   */
  const entry = (i: number): JsonValue => ({
    name: `GigabitEthernet0/${i}`,
    id: i,
    mode: 'access',
    vlans: [i, 4000],
    enabled: i !== n - 1,
    description: i === n - 1 ? null : 'access port',
    ...(i === n - 1 ? { 'service-policy': {}, trunk: [] } : {}),
  });

  /** A list of the entries that counts how often its elements are read, and the search over it. */
  const counted = () => {
    const reads = { count: 0 };
    const list = new Proxy(
      Array.from({ length: n }, (_, i) => entry(i)),
      {
        get: (target, key, receiver) => {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads.count++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      },
    );
    return { list, reads, lists: new ListIndex() };
  };

  it('finds an entry by whatever it alone holds, reading only that entry', () => {
    const { list, reads, lists } = counted();
    // Nothing has this: the search reads the whole list, and the next question indexes it.
    expect(lists.someContains(list, { name: 'Loopback0' })).toBe(false);
    expect(reads.count).toBe(n);
    const last = n - 1;
    const questions: JsonValue[] = [
      { name: `GigabitEthernet0/${last}`, mode: 'access' },
      { id: last },
      { vlans: [last] },
      { enabled: false },
      { description: null },
      { 'service-policy': {} },
      { trunk: [] },
    ];
    for (const question of questions) expect(lists.someContains(list, question), JSON.stringify(question)).toBe(true);
    // The index reads each entry once; then each question reads only the one entry that has it.
    expect(reads.count).toBeLessThanOrEqual(2 * n + questions.length);
  });

  it('answers a question no entry matches without reading any', () => {
    const { list, reads, lists } = counted();
    expect(lists.someContains(list, { name: 'Loopback0' })).toBe(false);
    const questions: JsonValue[] = [{ name: 'Loopback0', mode: 'access' }, { vlans: [4001] }, { vlans: [4000, 4001] }, { shutdown: {} }, { shutdown: [] }];
    expect(lists.someContains(list, questions[0] as JsonValue)).toBe(false);
    const indexed = reads.count;
    // Each question has a feature no entry has: no entry is a candidate.
    for (const question of questions) expect(lists.someContains(list, question), JSON.stringify(question)).toBe(false);
    expect(reads.count).toBe(indexed);
  });

  it('builds no index for questions answered near the start', () => {
    const { list, reads, lists } = counted();
    for (let i = 0; i < 10; i++) expect(lists.someContains(list, { id: i })).toBe(true);
    // Ten searches that stop at the entry they want, far fewer reads than an index's n.
    expect(reads.count).toBeLessThanOrEqual(55);
  });

  it('checks a strict list of n entries against n expected ones in about n steps', () => {
    let reads = 0;
    const entries = Array.from(
      { length: n },
      (_, i) =>
        new Proxy(entry(i) as Record<string, JsonValue>, {
          get: (target, key, receiver) => {
            reads++;
            return Reflect.get(target, key, receiver) as unknown;
          },
        }),
    );
    const value = Array.from({ length: n }, (_, i) => ({ name: `GigabitEthernet0/${i}`, mode: 'access' }));
    const [result] = evaluateRules({ list: entries }, {}, [{ id: 'r', path: '/list', mode: 'required', severity: 'error', value, strict: true }]);
    expect(result?.status).toBe('pass');
    // Asking each entry against every expected one would read about n × n / 2 members.
    expect(reads).toBeLessThan(40 * n);
  });
});
