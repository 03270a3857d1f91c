/**
 * The rule evaluator (functions/trees/rules.ts) against a reference written here plainly from
 * the semantics `Rule` states (functions/trees/config-model.ts): expand the path by recursion,
 * decide per match whether it holds (containment by asking every element, equality by pairing
 * elements, patterns on JavaScript's RegExp, prefixes on node:net's BlockList, bounds on BigInt),
 * then apply the rule's `match`. Generated configurations and rules over a small alphabet, so
 * paths hit; both must give the same status and, for a rule over several places, the same
 * failing matches in the same order.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue, Rule, RuleMatch, RuleMode } from '../../functions/trees/config-model.js';
import { MAX_LISTED_FAILURES, evaluateRule, formatPointer } from '../../functions/trees/rules.js';

type Obj = { readonly [key: string]: JsonValue };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const VARIABLES = { v: 'a.', w: 'B2', n: '42', net: '10.0.0.0/8' };

// ---- the reference ---------------------------------------------------------------------------

interface RefPlace {
  readonly at: string;
  readonly value: JsonValue | undefined;
}

const refChildren = ({ at, value }: RefPlace): RefPlace[] => {
  if (Array.isArray(value)) return value.map((v, i) => ({ at: `${at}/${i}`, value: v }));
  if (isObj(value)) return Object.keys(value).map((k) => ({ at: `${at}${formatPointer([k])}`, value: value[k] }));
  return [];
};

const refStep = (value: JsonValue | undefined, token: string): JsonValue | undefined => {
  if (Array.isArray(value)) return /^(0|[1-9][0-9]*)$/.test(token) ? value[Number(token)] : undefined;
  return isObj(value) && Object.hasOwn(value, token) ? value[token] : undefined;
};

const refExpand = (place: RefPlace, tokens: readonly string[]): RefPlace[] => {
  if (tokens.length === 0) return [place];
  const [token, ...rest] = tokens as [string, ...string[]];
  if (token === '*') return refChildren(place).flatMap((child) => refExpand(child, rest));
  return refExpand({ at: `${place.at}${formatPointer([token])}`, value: refStep(place.value, token) }, rest);
};

const refContains = (a: unknown, e: JsonValue): boolean => {
  if (Array.isArray(e)) return Array.isArray(a) && e.every((x) => a.some((y) => refContains(y, x)));
  if (isObj(e)) return isObj(a) && Object.keys(e).every((k) => Object.hasOwn(a, k) && refContains(a[k], e[k] as JsonValue));
  return a === e;
};

const refEqual = (a: unknown, e: JsonValue): boolean => {
  if (Array.isArray(e)) {
    if (!Array.isArray(a) || a.length !== e.length) return false;
    const used = a.map(() => false);
    return e.every((x) => {
      const j = a.findIndex((y, i) => !used[i] && refEqual(y, x));
      if (j < 0) return false;
      used[j] = true;
      return true;
    });
  }
  if (isObj(e)) {
    if (!isObj(a) || Object.keys(a).length !== Object.keys(e).length) return false;
    return Object.keys(e).every((k) => Object.hasOwn(a, k) && refEqual(a[k], e[k] as JsonValue));
  }
  return a === e;
};

const sub = (s: string): string => s.replace(/\{\{(\w+)\}\}/g, (_, name: string) => VARIABLES[name as keyof typeof VARIABLES]);
const subValue = (v: JsonValue): JsonValue => (typeof v === 'string' ? sub(v) : Array.isArray(v) ? v.map(subValue) : v);
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const refPredicate = (rule: Rule, v: unknown): boolean => {
  if (v !== null && typeof v === 'object') return false;
  if (rule.pattern !== undefined) {
    const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : undefined;
    const caseless = rule.pattern.startsWith('(?i)');
    const source = (caseless ? rule.pattern.slice(4) : rule.pattern).replace(/\{\{(\w+)\}\}/g, (_, n: string) =>
      escapeRegExp(VARIABLES[n as keyof typeof VARIABLES]),
    );
    if (text === undefined || !new RegExp(source, caseless ? 'i' : '').test(text)) return false;
  }
  if (rule.oneOf !== undefined && !rule.oneOf.map(subValue).some((x) => x === v)) return false;
  if (rule.cidr !== undefined) {
    if (typeof v !== 'string') return false;
    const family = isIPv4(v) ? 'ipv4' : isIPv6(v) ? 'ipv6' : undefined;
    if (!family) return false;
    const list = new BlockList();
    for (const entry of rule.cidr.map(sub)) {
      const [address, length] = entry.split('/') as [string, string];
      list.addSubnet(address, Number(length), isIPv4(address) ? 'ipv4' : 'ipv6');
    }
    if (!list.check(v, family)) return false;
  }
  if (rule.range !== undefined) {
    const big = (x: unknown): bigint | undefined =>
      typeof x === 'number' && Number.isInteger(x) ? BigInt(x) : typeof x === 'string' && /^-?[0-9]+$/.test(x) ? BigInt(x) : undefined;
    const n = big(v);
    const bound = (b: number | string | undefined): bigint | undefined => (b === undefined ? undefined : big(typeof b === 'string' ? sub(b) : b));
    const min = bound(rule.range.min);
    const max = bound(rule.range.max);
    if (n === undefined || (min !== undefined && n < min) || (max !== undefined && n > max)) return false;
  }
  return true;
};

const hasPredicate = (rule: Rule): boolean => [rule.pattern, rule.oneOf, rule.cidr, rule.range].some((p) => p !== undefined);

const refHolds = (rule: Rule, actual: JsonValue | undefined): boolean => {
  const expected = rule.value === undefined ? undefined : subValue(rule.value);
  const predicates = hasPredicate(rule);
  if (rule.mode === 'disallowed') {
    if (actual === undefined) return true;
    // Present: it holds unless it both contains the value and passes the predicates (vacuously with neither).
    const contained = expected === undefined || refContains(actual, expected);
    return !(contained && (!predicates || refPredicate(rule, actual)));
  }
  if (actual === undefined) return false;
  if (expected !== undefined && !(rule.mode === 'exact' ? refEqual(actual, expected) : refContains(actual, expected))) return false;
  if (predicates && !refPredicate(rule, actual)) return false;
  if (rule.strict && Array.isArray(expected)) return (actual as JsonValue[]).every((a) => expected.some((e) => refContains(a, e)));
  return true;
};

interface RefResult {
  readonly status: 'pass' | 'fail' | 'invalid';
  readonly multi: boolean;
  readonly failing: readonly string[];
}

const refEvaluate = (config: JsonValue, rule: Rule): RefResult => {
  const tokens = rule.path === '' ? [] : rule.path.slice(1).split('/');
  const multi = tokens.includes('*') || hasPredicate(rule) || rule.match !== undefined || rule.allowEmpty !== undefined;
  if (rule.mode === 'exact' && rule.value === undefined && !hasPredicate(rule)) return { status: 'invalid', multi, failing: [] };
  let places = refExpand({ at: '', value: config }, tokens);
  if (hasPredicate(rule)) places = places.flatMap((p) => (Array.isArray(p.value) ? refChildren(p) : [p]));
  const holds = places.map((p) => ({ at: p.at, holds: refHolds(rule, p.value) }));
  const empty = holds.length === 0;
  switch (rule.match ?? 'all') {
    case 'all': {
      const failing = holds.filter((h) => !h.holds).map((h) => h.at);
      const pass = failing.length === 0 && (!empty || rule.allowEmpty === true || rule.mode === 'disallowed');
      return { status: pass ? 'pass' : 'fail', multi, failing };
    }
    case 'any': {
      const pass = holds.some((h) => h.holds) || (empty && rule.allowEmpty === true);
      return { status: pass ? 'pass' : 'fail', multi, failing: pass ? [] : holds.map((h) => h.at) };
    }
    case 'none': {
      const failing = holds.filter((h) => h.holds).map((h) => h.at);
      return { status: failing.length ? 'fail' : 'pass', multi, failing };
    }
  }
};

// ---- generated configurations and rules ------------------------------------------------------

const KEYS = ['a', 'b', 'c'];
const SCALARS: JsonValue[] = ['a1', 'a.', 'ax', 'B2', 'b2', '10.1.2.3', '10.200.0.1', '192.168.1.1', '2001:db8::1', '2001:db8:1::5', 'fe80::1'];
const scalar = fc.oneof(
  fc.constantFrom(...SCALARS),
  fc.constantFrom<JsonValue>('42', '-7', '9223372036854775807', '-9223372036854775808', 'x42', true, false, null),
  fc.integer({ min: -100, max: 100 }),
  // The bounds the rules use, so that "inclusive" is tested at the edge.
  fc.constantFrom<JsonValue>(-10, 0, 5, 10, 50, 42, '50', '-10'),
);

const { value: configValue } = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 3 }).map((entries) => Object.fromEntries(entries) as JsonValue),
  ),
}));
const config = fc.array(fc.tuple(fc.constantFrom(...KEYS), configValue), { maxLength: 3 }).map((e) => Object.fromEntries(e) as JsonValue);

const path = fc.array(fc.constantFrom('a', 'b', 'c', '*', '*', '0', '1'), { minLength: 0, maxLength: 3 }).map((t) => formatPointer(t));
const smallValue = fc.oneof(scalar, fc.array(scalar, { maxLength: 2 }), fc.dictionary(fc.constantFrom(...KEYS), scalar, { maxKeys: 2 }));

const predicate = fc.oneof(
  fc.constant({}),
  fc.record({ pattern: fc.constantFrom('^a', '2$', '(?i)^b', '^{{v}}$', 'a|x', '[0-9]+', '^1', '(a+)+$') }),
  fc.record({ oneOf: fc.array(fc.oneof(scalar, fc.constant('{{w}}')), { minLength: 1, maxLength: 4 }) }),
  fc.record({
    cidr: fc.array(fc.constantFrom('10.0.0.0/8', '10.1.0.0/16', '{{net}}', '2001:db8::/32', '2001:db8:1::/48', 'fe80::/10', '192.168.1.1/32'), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
  fc
    .record(
      {
        min: fc.constantFrom<number | string>(-10, 0, 5, '-9223372036854775808'),
        max: fc.constantFrom<number | string>(10, 50, '{{n}}', '9223372036854775807'),
      },
      { requiredKeys: [] },
    )
    .map((range) => ({ range })),
);

interface RuleParts {
  readonly path: string;
  readonly mode: RuleMode;
  readonly value: JsonValue | undefined;
  readonly match: RuleMatch | undefined;
  readonly allowEmpty: boolean | undefined;
  readonly strict: boolean;
  readonly predicate: Partial<Pick<Rule, 'pattern' | 'oneOf' | 'cidr' | 'range'>>;
}

const rule = fc
  .record({
    path,
    mode: fc.constantFrom<RuleMode>('required', 'exact', 'disallowed'),
    value: fc.option(smallValue, { nil: undefined }),
    match: fc.option(fc.constantFrom<RuleMatch>('all', 'any', 'none'), { nil: undefined }),
    allowEmpty: fc.option(fc.boolean(), { nil: undefined }),
    strict: fc.boolean(),
    predicate,
  })
  .map(ruleOf);

/** A rule from its generated parts; `strict` as writes allow it: a required rule with an array value and no predicate. */
function ruleOf({ path, mode, value, match, allowEmpty, strict, predicate }: RuleParts): Rule {
  const r: Rule = {
    id: 'r',
    severity: 'error',
    path,
    mode,
    ...(value !== undefined ? { value } : {}),
    ...(match !== undefined ? { match } : {}),
    ...(allowEmpty !== undefined ? { allowEmpty } : {}),
    ...predicate,
  };
  return strict && mode === 'required' && Array.isArray(value) && !hasPredicate(r) ? { ...r, strict: true } : r;
}

/** Lists of few distinct scalars and keyed entries: wildcards, predicates and `strict` hit often. */
const FEW: JsonValue[] = ['a1', 'B2', '10.1.2.3', '2001:db8::1', 10, 42, '50', 5];
const few = fc.constantFrom(...FEW);
const listConfig = fc.record({ a: fc.array(few, { maxLength: 5 }), b: fc.array(fc.record({ a: few }), { maxLength: 4 }) }, { requiredKeys: [] });
const listRule = fc
  .record({
    path: fc.constantFrom('/a', '/a/*', '/b', '/b/*/a', '/*', '/*/*'),
    mode: fc.constantFrom<RuleMode>('required', 'exact', 'disallowed'),
    value: fc.option(fc.oneof(fc.array(few, { maxLength: 3 }), fc.array(fc.record({ a: few }), { maxLength: 3 }), few), { nil: undefined }),
    match: fc.option(fc.constantFrom<RuleMatch>('all', 'any', 'none'), { nil: undefined }),
    allowEmpty: fc.option(fc.boolean(), { nil: undefined }),
    strict: fc.boolean(),
    predicate: fc.oneof(fc.constant({}), predicate),
  })
  .map(ruleOf);

/** Compares one evaluation with the reference; counts what it saw. */
const agrees = (cfg: JsonValue, r: Rule, seen: Record<'pass' | 'fail' | 'invalid' | 'multi' | 'listedFailures' | 'strict', number>): void => {
  const got = evaluateRule(cfg, VARIABLES, r);
  const want = refEvaluate(cfg, r);
  seen[want.status]++;
  if (r.strict) seen.strict++;
  expect(got.status).toBe(want.status);
  if (!want.multi || want.status !== 'fail') return;
  seen.multi++;
  seen.listedFailures += want.failing.length;
  expect(got.matches).toBeGreaterThanOrEqual(want.failing.length);
  // Each listed failure lies at (or below) the failing match it stands for, in order.
  const listed = got.failures ?? [];
  expect(listed.length + (got.failuresOmitted ?? 0)).toBe(want.failing.length);
  expect(listed.length).toBe(Math.min(want.failing.length, MAX_LISTED_FAILURES));
  listed.forEach((f, i) => {
    const place = want.failing[i] as string;
    expect(f.at === place || f.at.startsWith(`${place}/`)).toBe(true);
  });
  if (listed[0]) expect(got.at).toBe(listed[0].at);
};

describe('the rule evaluator against a plain reference', () => {
  it('gives the same status and the same failing matches on generated configurations and rules', () => {
    const seen = { pass: 0, fail: 0, invalid: 0, multi: 0, listedFailures: 0, strict: 0 };
    fc.assert(
      fc.property(config, rule, (cfg, r) => agrees(cfg, r, seen)),
      { numRuns: 3000 },
    );
    // The generators reach every outcome, and rules over several places that fail.
    expect(seen.pass).toBeGreaterThan(300);
    expect(seen.fail).toBeGreaterThan(300);
    expect(seen.invalid).toBeGreaterThan(10);
    expect(seen.multi).toBeGreaterThan(300);
    expect(seen.listedFailures).toBeGreaterThan(seen.multi);
  });

  it('agrees on lists of few distinct values, where predicates, bounds and strict decide', () => {
    const seen = { pass: 0, fail: 0, invalid: 0, multi: 0, listedFailures: 0, strict: 0 };
    fc.assert(
      fc.property(listConfig, listRule, (cfg, r) => agrees(cfg, r, seen)),
      { numRuns: 3000 },
    );
    expect(seen.pass).toBeGreaterThan(300);
    expect(seen.fail).toBeGreaterThan(300);
    expect(seen.multi).toBeGreaterThan(300);
    expect(seen.strict).toBeGreaterThan(100);
  });

  it('agrees on the places of a wildcard path with as many members as the listing bound allows and more', () => {
    const many = { a: Array.from({ length: MAX_LISTED_FAILURES + 7 }, (_, i) => ({ b: i })) };
    const r: Rule = { id: 'r', severity: 'error', path: '/a/*/b', mode: 'required', range: { min: 1000 } };
    const got = evaluateRule(many, {}, r);
    const want = refEvaluate(many, r);
    expect(got).toMatchObject({ status: 'fail', matches: MAX_LISTED_FAILURES + 7, failuresOmitted: 7 });
    expect(got.failures?.map((f) => f.at)).toEqual(want.failing.slice(0, MAX_LISTED_FAILURES));
  });
});
