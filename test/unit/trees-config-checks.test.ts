/**
 * Write-time checks of the rule language (functions/trees/config-checks.ts): each refusal names
 * the rule member it is about, and what the evaluator would call invalid is refused on write.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_LIMITS, nodeContentProblems, normalizeRule } from '../../functions/trees/config-checks.js';
import type { Rule } from '../../functions/trees/config-model.js';
import { evaluateRule } from '../../functions/trees/rules.js';

const VARIABLES = { site: 'a.b', mgmt: '192.0.2.0/24', max: '9000', bad: 'ten', badnet: '10.0.0.1/8', paren: '(' };
const rule = (r: Partial<Rule>): Rule => ({ id: 'r1', path: '/x', mode: 'required', severity: 'error', ...r });
const problems = (r: Partial<Rule>) => nodeContentProblems({ devices: [], rules: [rule(r)] }, VARIABLES).map((p) => `${p.field}: ${p.message}`);

describe('write-time checks of the rule language', () => {
  it('accepts every form the rule language allows', () => {
    const good: Partial<Rule>[] = [
      { path: '/interface/*/description' },
      { path: '/interface/*/description', match: 'any', allowEmpty: true },
      { pattern: '(?i)^{{site}}-[0-9]+$' },
      { oneOf: ['a', 1, null, '{{site}}'] },
      { cidr: ['10.0.0.0/8', '2001:db8::/32', '{{mgmt}}', '192.0.2.1'] },
      { range: { min: 1, max: '{{max}}' } },
      { range: { min: '-9223372036854775808', max: '9223372036854775807' } },
      { mode: 'exact', pattern: '^up$' },
      { value: [{ name: 'a' }], strict: true },
      { path: '/x', match: 'none', oneOf: ['public'] },
    ];
    for (const r of good) {
      expect(problems(r), JSON.stringify(r)).toEqual([]);
      // What writes accept, the evaluator can evaluate.
      expect(evaluateRule({}, VARIABLES, rule(r)).status, JSON.stringify(r)).not.toBe('invalid');
    }
  });

  it('refuses a pattern RE2 does not compile, after substitution, naming RE2 s reason', () => {
    expect(problems({ pattern: '(a' })).toEqual([expect.stringMatching(/^rules\.0\.pattern: "\(a" is not an RE2 regular expression: .*missing closing \)/)]);
    expect(problems({ pattern: 'a(?=b)' })).toEqual([expect.stringMatching(/^rules\.0\.pattern: .*not an RE2 regular expression/)]);
    // A variable is quoted: its "(" cannot break the pattern.
    expect(problems({ pattern: '^{{paren}}$' })).toEqual([]);
  });

  it('refuses cidr entries that are not prefixes, each by its place', () => {
    expect(problems({ cidr: ['10.0.0.0/8', '10.0.0.0/33', 'host', '10.0.0.1/8', '{{badnet}}'] })).toEqual([
      'rules.0.cidr.1: "10.0.0.0/33" is not an IPv4 or IPv6 address or prefix (address/length)',
      'rules.0.cidr.2: "host" is not an IPv4 or IPv6 address or prefix (address/length)',
      'rules.0.cidr.3: "10.0.0.1/8" has bits set after its prefix length',
      'rules.0.cidr.4: "10.0.0.1/8" has bits set after its prefix length',
    ]);
  });

  it('refuses range bounds that are no numbers, and a minimum above the maximum', () => {
    expect(problems({ range: { min: '{{bad}}', max: 'x' } })).toEqual([
      'rules.0.range.min: "ten" is not a decimal number',
      'rules.0.range.max: "x" is not a decimal number',
    ]);
    expect(problems({ range: { min: 10, max: '9' } })).toEqual(['rules.0.range: min 10 is above max "9"']);
  });

  it('refuses strict off a required rule with an array value, and with a predicate', () => {
    expect(problems({ strict: true })).toEqual(['rules.0.strict: applies only to a required rule whose value is an array']);
    expect(problems({ mode: 'exact', value: ['a'], strict: true })).toEqual(['rules.0.strict: applies only to a required rule whose value is an array']);
    expect(problems({ value: ['a'], strict: true, pattern: 'a' })).toEqual([expect.stringMatching(/^rules\.0\.strict: cannot be combined with a predicate/)]);
  });

  it('refuses match and allowEmpty on a single place without a predicate', () => {
    expect(problems({ match: 'any', allowEmpty: true })).toEqual([
      expect.stringMatching(/^rules\.0\.match: applies only to a path with a "\*" segment/),
      expect.stringMatching(/^rules\.0\.allowEmpty: applies only to a path with a "\*" segment/),
    ]);
  });

  it('lets exact omit value only with a predicate', () => {
    expect(problems({ mode: 'exact' })).toEqual(['rules.0.value: is required for an exact rule without a predicate']);
    expect(problems({ mode: 'exact', oneOf: ['a'] })).toEqual([]);
  });

  it('refuses unknown variables in every predicate, naming the member', () => {
    expect(problems({ pattern: '{{nope}}' })).toEqual(['rules.0.pattern: names the variable "nope", which the version does not define']);
    expect(problems({ oneOf: ['{{nope}}'] })).toEqual(['rules.0.oneOf: names the variable "nope", which the version does not define']);
    expect(problems({ cidr: ['{{nope}}'] })).toEqual(['rules.0.cidr: names the variable "nope", which the version does not define']);
    expect(problems({ range: { max: '{{nope}}' } })).toEqual(['rules.0.range: names the variable "nope", which the version does not define']);
  });

  it('bounds oneOf and cidr', () => {
    const many = Array.from({ length: CONFIG_LIMITS.ruleOneOf + 1 }, (_, i) => i);
    expect(problems({ oneOf: many })).toEqual([`rules.0.oneOf: lists more than ${CONFIG_LIMITS.ruleOneOf} values`]);
    expect(problems({ oneOf: ['x'.repeat(CONFIG_LIMITS.ruleValueBytes)] })).toEqual([
      `rules.0.oneOf: is larger than ${CONFIG_LIMITS.ruleValueBytes} bytes as JSON`,
    ]);
    const prefixes = Array.from({ length: CONFIG_LIMITS.ruleCidr + 1 }, (_, i) => `10.${i}.0.0/16`);
    expect(problems({ cidr: prefixes })).toEqual([`rules.0.cidr: lists more than ${CONFIG_LIMITS.ruleCidr} prefixes`]);
  });

  it('stores the rule language members, and only known members of range', () => {
    const full = rule({ match: 'any', allowEmpty: true, pattern: 'p', oneOf: [1], cidr: ['10.0.0.0/8'], range: { min: 1, extra: 2 } as never, strict: false });
    expect(normalizeRule(full)).toEqual({ ...full, range: { min: 1 } });
  });
});
