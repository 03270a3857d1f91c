/**
 * The straightforward evaluator, the reference the rule evaluator's property test and the
 * rules benchmark compare it with: the same evaluator (functions/trees/rules.ts) with its list
 * index replaced by asking every element of an array, in order, whether it contains the
 * expected one. Containment here is written out from its definition alone (the module comment
 * of rules.ts), sharing nothing with the indexed search.
 */
import type { Rule } from '../functions/trees/config-model.js';
import { evaluateRule, evaluateRules, type ArraySearch, type RuleResult } from '../functions/trees/rules.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * True when `actual` contains `expected`: each expected array element is contained in some
 * actual element, each expected member in the own member of that name, scalars by `===`.
 */
export const referenceContains = (actual: unknown, expected: unknown): boolean => {
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.every((e) => actual.some((a) => referenceContains(a, e)));
  if (isObject(expected)) return isObject(actual) && Object.entries(expected).every(([k, v]) => Object.hasOwn(actual, k) && referenceContains(actual[k], v));
  return actual === expected;
};

/** Asks every element, in order. */
export const everyElement: ArraySearch = { someContains: (actual, element) => actual.some((a) => referenceContains(a, element)) };

/** `evaluateRule` with the straightforward search. */
export const referenceEvaluateRule = (config: unknown, variables: Readonly<Record<string, string>>, rule: Rule): RuleResult =>
  evaluateRule(config, variables, rule, everyElement);

/** `evaluateRules` with the straightforward search. */
export const referenceEvaluateRules = (config: unknown, variables: Readonly<Record<string, string>>, rules: readonly Rule[]): RuleResult[] =>
  evaluateRules(config, variables, rules, everyElement);
