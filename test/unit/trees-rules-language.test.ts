import { BlockList } from 'node:net';
import { describe, expect, it } from 'vitest';
import { insidePrefix, parsePrefix, prefixProblem } from '../../functions/trees/addresses.js';
import type { JsonValue, Rule, RuleMatch, RuleMode } from '../../functions/trees/config-model.js';
import { compareDecimals, decimalOf, MAX_DECIMAL_CHARS, type Decimal } from '../../functions/trees/decimals.js';
import { QUOTE_MAX_CHARS, hasPredicate } from '../../functions/trees/predicates.js';
import { FAILURE_MESSAGE_MAX_CHARS, MAX_LISTED_FAILURES, evaluateRule } from '../../functions/trees/rules.js';

/** An IOS-XR-like configuration: interfaces as a keyed list, NTP servers, SNMP communities. */
const config = {
  interface: [
    { name: 'Gi0/0/0/0', description: 'uplink to core', ipv4: '10.1.2.3/24', mtu: 9000 },
    { name: 'Gi0/0/0/1', ipv4: '192.168.1.1/24', mtu: '1500' },
    { name: 'Gi0/0/0/2', description: 'spare', ipv6: '2001:db8:1::1/64', mtu: 1514 },
  ],
  ntp: { server: ['10.0.0.1', '10.0.0.2', '2001:db8::123'] },
  snmp: {
    community: [
      { name: 'ops', ro: [null] },
      { name: 'public', ro: [null] },
    ],
  },
  counters: { big: '9223372036854775807', small: '-9223372036854775808' },
  banner: 'Authorised access only',
  empty: [] as string[],
};

const rule = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>): Rule => ({ id: 'r', severity: 'error', ...r });
const run = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>, vars: Record<string, string> = {}, cfg: unknown = config) => evaluateRule(cfg, vars, rule(r));
const status = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>, vars: Record<string, string> = {}, cfg: unknown = config) => run(r, vars, cfg).status;

describe('wildcard paths', () => {
  it('expands * over list entries and lists each failing match by its concrete pointer', () => {
    const r = run({ path: '/interface/*/description', mode: 'required' });
    expect(r).toMatchObject({ status: 'fail', matches: 3, at: '/interface/1/description', failures: [{ at: '/interface/1/description' }] });
    expect(r).not.toHaveProperty('failuresOmitted');
  });

  it('expands * over object members, and below a scalar or nothing to no match', () => {
    expect(run({ path: '/counters/*', mode: 'required' })).toMatchObject({ status: 'pass', matches: 2 });
    expect(run({ path: '/banner/*', mode: 'required' })).toMatchObject({ status: 'fail', matches: 0, at: '/banner', failures: [] });
    expect(run({ path: '/nothing/*/x', mode: 'required' })).toMatchObject({ status: 'fail', matches: 0, at: '/nothing' });
  });

  it('passes no match with allowEmpty, and in mode disallowed', () => {
    expect(status({ path: '/empty/*', mode: 'required', allowEmpty: true })).toBe('pass');
    expect(status({ path: '/empty/*', mode: 'required', match: 'any', allowEmpty: true })).toBe('pass');
    expect(status({ path: '/empty/*', mode: 'required', match: 'any' })).toBe('fail');
    expect(status({ path: '/empty/*', mode: 'disallowed' })).toBe('pass');
    expect(status({ path: '/empty/*', mode: 'required', match: 'none' })).toBe('pass');
  });

  it('judges matches by all, any and none in every mode', () => {
    const cases: [RuleMode, RuleMatch, string][] = [
      ['required', 'all', 'fail'],
      ['required', 'any', 'pass'],
      ['required', 'none', 'fail'],
      ['exact', 'all', 'fail'],
      ['exact', 'any', 'pass'],
      ['exact', 'none', 'fail'],
      ['disallowed', 'all', 'fail'],
      ['disallowed', 'any', 'pass'],
      ['disallowed', 'none', 'fail'],
    ];
    for (const [mode, match, expected] of cases) expect(status({ path: '/interface/*/mtu', mode, match, value: 9000 }), `${mode} ${match}`).toBe(expected);
    // every match holds: all passes, none fails; no match holds: any fails.
    expect(status({ path: '/interface/*/name', mode: 'required', match: 'all', pattern: '^Gi' })).toBe('pass');
    expect(status({ path: '/interface/*/name', mode: 'required', match: 'none', pattern: '^Gi' })).toBe('fail');
    expect(status({ path: '/interface/*/name', mode: 'required', match: 'any', pattern: '^Te' })).toBe('fail');
    expect(status({ path: '/interface/*/name', mode: 'disallowed', match: 'all', pattern: '^Te' })).toBe('pass');
  });

  it('lists for none the matches that hold, for any every match', () => {
    const none = run({ path: '/snmp/community/*/name', mode: 'required', match: 'none', oneOf: ['public', 'private'] });
    expect(none).toMatchObject({ status: 'fail', matches: 2, failures: [{ at: '/snmp/community/1/name', actual: 'public' }] });
    const any = run({ path: '/snmp/community/*/name', mode: 'required', match: 'any', oneOf: ['admin'] });
    expect(any.failures?.map((f) => f.at)).toEqual(['/snmp/community/0/name', '/snmp/community/1/name']);
  });

  it(`lists at most ${MAX_LISTED_FAILURES} failing matches and counts the rest`, () => {
    const many = { port: Array.from({ length: 120 }, (_, i) => ({ id: i, shutdown: i % 2 === 0 })) };
    const r = run({ path: '/port/*/shutdown', mode: 'exact', value: true }, {}, many);
    expect(r).toMatchObject({ status: 'fail', matches: 120, failuresOmitted: 10, at: '/port/1/shutdown' });
    expect(r.failures).toHaveLength(MAX_LISTED_FAILURES);
  });

  it('keeps listed failures short: long values are cut, long messages quote nothing', () => {
    const long = 'x'.repeat(5000);
    const r = run({ path: '/a/*', mode: 'exact', value: 'y' }, {}, { a: [long, long] });
    expect(r.failures?.[1]).toMatchObject({ truncated: ['actual'] });
    expect(r.failures?.[1]?.message.length).toBeLessThanOrEqual(FAILURE_MESSAGE_MAX_CHARS);
    expect(JSON.stringify(r.failures).length).toBeLessThan(2000);
  });
});

describe('predicates', () => {
  it('pattern: found anywhere unless anchored; (?i) ignores case; numbers and booleans as JSON text', () => {
    expect(status({ path: '/banner', mode: 'required', pattern: 'access' })).toBe('pass');
    expect(status({ path: '/banner', mode: 'required', pattern: '^access' })).toBe('fail');
    expect(status({ path: '/banner', mode: 'required', pattern: '^authorised' })).toBe('fail');
    expect(status({ path: '/banner', mode: 'required', pattern: '(?i)^authorised' })).toBe('pass');
    expect(status({ path: '/interface/0/mtu', mode: 'required', pattern: '^9\\d{3}$' })).toBe('pass');
    expect(status({ path: '/f', mode: 'required', pattern: '^false$' }, {}, { f: false })).toBe('pass');
  });

  it('pattern: a {{variable}} matches its text literally', () => {
    expect(status({ path: '/h', mode: 'required', pattern: '^{{site}}-' }, { site: 'a.b' }, { h: 'a.b-r1' })).toBe('pass');
    expect(status({ path: '/h', mode: 'required', pattern: '^{{site}}-' }, { site: 'a.b' }, { h: 'axb-r1' })).toBe('fail');
  });

  it('pattern: answers on a 200 KB value with a pathological pattern', () => {
    const text = `${'a'.repeat(200_000)}!`;
    // What a backtracking engine takes exponential time for: no match, after trying every split.
    expect(status({ path: '/t', mode: 'required', pattern: '(a+)+$' }, {}, { t: text })).toBe('fail');
    expect(status({ path: '/t', mode: 'required', pattern: '^(a+)+!$' }, {}, { t: text })).toBe('pass');
  });

  it('predicates never pass an object, and test the elements of an array', () => {
    expect(run({ path: '/snmp', mode: 'required', pattern: '.' })).toMatchObject({
      status: 'fail',
      failures: [{ message: 'an object has no text to match the pattern "."' }],
    });
    expect(run({ path: '/ntp/server', mode: 'required', cidr: ['10.0.0.0/8'] })).toMatchObject({
      status: 'fail',
      matches: 3,
      failures: [{ at: '/ntp/server/2', actual: '2001:db8::123' }],
    });
    expect(run({ path: '/empty', mode: 'required', pattern: '.' })).toMatchObject({ status: 'fail', matches: 0 });
    expect(status({ path: '/empty', mode: 'required', pattern: '.', allowEmpty: true })).toBe('pass');
  });

  it('oneOf: null is a value like any other', () => {
    expect(status({ path: '/a', mode: 'required', oneOf: ['x', null] }, {}, { a: null })).toBe('pass');
    expect(run({ path: '/a', mode: 'required', oneOf: ['null', 0, false] }, {}, { a: null }).failures?.[0]?.message).toBe(
      'null is not one of the 3 listed values',
    );
  });

  it('oneOf: deep-equals one listed value, strictly typed, with variables', () => {
    expect(status({ path: '/interface/*/mtu', mode: 'required', oneOf: [9000, 1514, '1500'] })).toBe('pass');
    expect(status({ path: '/interface/*/mtu', mode: 'required', oneOf: [9000, 1514, 1500] })).toBe('fail');
    expect(status({ path: '/snmp/community/*/name', mode: 'required', oneOf: ['{{ro}}', 'public'] }, { ro: 'ops' })).toBe('pass');
  });

  it('cidr: IPv4 and IPv6 addresses and prefixes inside listed prefixes', () => {
    expect(status({ path: '/ntp/server', mode: 'required', cidr: ['10.0.0.0/8', '2001:db8::/32'] })).toBe('pass');
    expect(status({ path: '/interface/0/ipv4', mode: 'required', cidr: ['10.1.0.0/16'] })).toBe('pass');
    expect(status({ path: '/interface/0/ipv4', mode: 'required', cidr: ['10.1.2.0/25'] })).toBe('fail');
    expect(status({ path: '/interface/2/ipv6', mode: 'required', cidr: ['2001:db8::/32'] })).toBe('pass');
    expect(status({ path: '/interface/2/ipv6', mode: 'required', cidr: ['2001:db8:2::/48'] })).toBe('fail');
    expect(status({ path: '/a', mode: 'required', cidr: ['{{mgmt}}'] }, { mgmt: '192.0.2.0/24' }, { a: '192.0.2.7' })).toBe('pass');
    expect(status({ path: '/a', mode: 'required', cidr: ['10.0.0.0/8'] }, {}, { a: 'host.example' })).toBe('fail');
  });

  it('cidr: an IPv4-mapped IPv6 address is its IPv4 address', () => {
    expect(status({ path: '/a', mode: 'required', cidr: ['10.0.0.0/8'] }, {}, { a: '::ffff:10.9.8.7' })).toBe('pass');
    expect(status({ path: '/a', mode: 'required', cidr: ['::ffff:10.0.0.0/104'] }, {}, { a: '10.9.8.7' })).toBe('pass');
    expect(status({ path: '/a', mode: 'required', cidr: ['2001:db8::/32'] }, {}, { a: '10.9.8.7' })).toBe('fail');
  });

  it('range: inclusive bounds on numbers and 64-bit decimal strings, bounds from variables', () => {
    expect(status({ path: '/interface/*/mtu', mode: 'required', range: { min: 1500, max: 9000 } })).toBe('pass');
    expect(status({ path: '/interface/*/mtu', mode: 'required', range: { min: 1501 } })).toBe('fail');
    expect(status({ path: '/counters/big', mode: 'required', range: { max: '9223372036854775807' } })).toBe('pass');
    expect(status({ path: '/counters/big', mode: 'required', range: { max: '9223372036854775806' } })).toBe('fail');
    expect(status({ path: '/counters/small', mode: 'required', range: { min: '-9223372036854775808', max: 0 } })).toBe('pass');
    expect(status({ path: '/m', mode: 'required', range: { max: '{{mtu}}' } }, { mtu: '1500.5' }, { m: '1500.25' })).toBe('pass');
    expect(status({ path: '/banner', mode: 'required', range: { min: 0 } })).toBe('fail');
  });

  it('disallowed with a predicate fails exactly the matches that pass it', () => {
    const r = run({ path: '/snmp/community/*/name', mode: 'disallowed', oneOf: ['public', 'private'] });
    expect(r).toMatchObject({ status: 'fail', failures: [{ at: '/snmp/community/1/name', expected: { oneOf: ['public', 'private'] } }] });
    expect(r.failures).toHaveLength(1);
    expect(status({ path: '/interface/*/description', mode: 'disallowed', pattern: '(?i)test' })).toBe('pass');
  });

  it('exact with a predicate and no value: present and passing', () => {
    expect(status({ path: '/interface/*/name', mode: 'exact', pattern: '^Gi0/0/0/\\d$' })).toBe('pass');
    expect(status({ path: '/interface/*/description', mode: 'exact', pattern: '.' })).toBe('fail');
  });
});

describe('predicate messages', () => {
  const first = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>, cfg: unknown, vars: Record<string, string> = {}) => {
    const result = run(r, vars, cfg);
    expect(result.status).toBe('fail');
    return result.failures?.[0];
  };

  it('say what the value is and what it missed', () => {
    expect(first({ path: '/a', mode: 'required', pattern: '^x' }, { a: 'abc' })).toEqual({
      at: '/a',
      message: 'the string "abc" does not match the pattern "^x"',
      expected: { pattern: '^x' },
      actual: 'abc',
    });
    expect(first({ path: '/a', mode: 'required', pattern: '^x' }, { a: null })?.message).toBe('null has no text to match the pattern "^x"');
    expect(first({ path: '/a', mode: 'required', pattern: '^x' }, { a: [[1]] })?.message).toBe('an array has no text to match the pattern "^x"');
    expect(first({ path: '/a', mode: 'required', oneOf: [1, 'b'] }, { a: true })).toMatchObject({
      message: 'the boolean true is not one of the 2 listed values',
      expected: { oneOf: [1, 'b'] },
    });
    expect(first({ path: '/a', mode: 'required', oneOf: [{ x: 1 }] }, { a: { x: 1 } })?.message).toBe('an object is not one of the 1 listed values');
    expect(first({ path: '/a', mode: 'required', cidr: ['10.0.0.0/8'] }, { a: '11.0.0.1' })).toMatchObject({
      message: 'the string "11.0.0.1" is not inside 10.0.0.0/8',
      expected: { cidr: ['10.0.0.0/8'] },
    });
    expect(first({ path: '/a', mode: 'required', cidr: ['10.0.0.0/8', '::1'] }, { a: '11.0.0.1' })?.message).toBe(
      'the string "11.0.0.1" is not inside any of 10.0.0.0/8, ::1',
    );
    expect(first({ path: '/a', mode: 'required', cidr: ['10.0.0.0/8'] }, { a: 10 })?.message).toBe('the number 10 is not an IPv4 or IPv6 address or prefix');
    expect(first({ path: '/a', mode: 'required', range: { min: 2, max: '3' } }, { a: 1 })).toMatchObject({
      message: 'the number 1 is below the minimum 2',
      expected: { range: { min: 2, max: '3' } },
    });
    expect(first({ path: '/a', mode: 'required', range: { min: 2, max: '3' } }, { a: '3.5' })?.message).toBe('the string "3.5" is above the maximum "3"');
    expect(first({ path: '/a', mode: 'required', range: { max: 3 } }, { a: 'x' })?.message).toBe('the string "x" is not a number or a decimal string');
  });

  it('describe a long string by its length, an object or array however long by its kind', () => {
    const long = '9'.repeat(QUOTE_MAX_CHARS + 1);
    expect(first({ path: '/a', mode: 'required', pattern: '.' }, { a: { x: long } })?.message).toBe('an object has no text to match the pattern "."');
    expect(first({ path: '/a', mode: 'required', oneOf: [1] }, { a: [[long]] })?.message).toBe('an array is not one of the 1 listed values');
    expect(first({ path: '/a', mode: 'required', range: { max: 3 } }, { a: long })?.message).toBe(
      `a string of ${QUOTE_MAX_CHARS + 1} characters is not a number or a decimal string`,
    );
    // The limit counts the JSON text, quotes included.
    const fits = 'y'.repeat(QUOTE_MAX_CHARS - 2);
    // (The result's own message quotes the first failure whole; a listed failure's is kept short.)
    const lead = (a: string) => run({ path: '/a', mode: 'required', pattern: '^x' }, {}, { a }).message;
    expect(lead(fits)).toBe(`1 of 1 matches of /a do not hold; first at /a: the string "${fits}" does not match the pattern "^x"`);
    expect(lead(`${fits}y`)).toBe(
      `1 of 1 matches of /a do not hold; first at /a: a string of ${QUOTE_MAX_CHARS - 1} characters does not match the pattern "^x"`,
    );
  });

  it('say why a rule cannot be evaluated, naming the place in the rule', () => {
    const invalid = (r: Partial<Rule>, vars: Record<string, string> = {}) => run({ path: '/a', mode: 'required', ...r }, vars, { a: 1 }).message;
    expect(invalid({ pattern: '{{p}}(' }, { p: 'x' })).toMatch(/^pattern "x\(" /);
    expect(invalid({ cidr: ['10.0.0.0/8', 7 as never, 'x'] })).toBe(
      'cidr.1 is not a string; cidr.2 "x" is not an IPv4 or IPv6 address or prefix (address/length)',
    );
    expect(invalid({ range: { min: 'ten', max: [] as never } })).toBe('range.min "ten" is not a decimal number; range.max [] is not a decimal number');
    expect(invalid({ range: { min: 5, max: '{{m}}' } }, { m: '4.5' })).toBe('range min 5 is above max "4.5"');
    expect(invalid({ pattern: 1 as never, oneOf: 'x' as never, cidr: {} as never, range: [] as never })).toBe(
      'pattern has the wrong type; oneOf has the wrong type; cidr has the wrong type; range has the wrong type',
    );
  });

  it('accept a range of one value, and no predicate makes no predicate rule', () => {
    expect(status({ path: '/a', mode: 'required', range: { min: 5, max: '5.0' } }, {}, { a: 5 })).toBe('pass');
    expect(hasPredicate({})).toBe(false);
    expect(hasPredicate({ range: {} })).toBe(true);
    expect(hasPredicate({ cidr: [] })).toBe(true);
  });
});

describe('matches', () => {
  it('name each match by its concrete pointer, escaping member names', () => {
    const r = run({ path: '/a/*', mode: 'exact', value: 1 }, {}, { a: { 'x/y': 2, 'm~n': 1, z: [3] } });
    expect(r.failures?.map((f) => f.at)).toEqual(['/a/x~1y', '/a/z']);
    expect(run({ path: '/a~1b/*/c', mode: 'required' }, {}, { 'a/b': [{ c: 1 }, {}] }).failures?.map((f) => f.at)).toEqual(['/a~1b/1/c']);
  });

  it('stop where the path stops matching: before the first *, or at the path itself', () => {
    expect(run({ path: '/*/x', mode: 'required' }, {}, {})).toMatchObject({ status: 'fail', at: '', matches: 0 });
    expect(run({ path: '/a/*/b/*', mode: 'required' }, {}, { a: [] })).toMatchObject({ status: 'fail', at: '/a', matches: 0 });
    expect(run({ path: '/empty', mode: 'required', pattern: '.' })).toMatchObject({ status: 'fail', at: '/empty', matches: 0 });
    expect(run({ path: '/empty', mode: 'required', pattern: '.' }).message).toBe('nothing matches /empty');
  });

  it('test the elements of an array only under a predicate', () => {
    expect(run({ path: '/a', mode: 'required', match: 'all' }, {}, { a: [] })).toMatchObject({ status: 'pass', matches: 1 });
    expect(run({ path: '/a', mode: 'required', oneOf: [1] }, {}, { a: [1, [1]] })).toMatchObject({ status: 'fail', matches: 2, failures: [{ at: '/a/1' }] });
  });

  it('say how many matches held', () => {
    expect(run({ path: '/interface/*/mtu', mode: 'required', match: 'any', value: 9000 }).message).toBe('1 of 3 matches of /interface/*/mtu hold');
    expect(run({ path: '/interface/*/mtu', mode: 'required', match: 'none', value: 1 }).message).toBe('none of the 3 matches of /interface/*/mtu holds');
    expect(run({ path: '/empty/*', mode: 'disallowed' }).message).toBe('nothing matches /empty/*, which passes');
  });
});

describe('strict', () => {
  const communities = [{ name: 'ops' }, { name: 'public' }];
  it('passes when every element is one of the expected ones, fails naming the extra element', () => {
    expect(status({ path: '/snmp/community', mode: 'required', value: communities, strict: true })).toBe('pass');
    const r = run({ path: '/snmp/community', mode: 'required', value: [{ name: 'ops' }], strict: true });
    expect(r).toMatchObject({ status: 'fail', at: '/snmp/community/1', actual: { name: 'public', ro: [null] } });
    expect(status({ path: '/ntp/server', mode: 'required', value: ['10.0.0.1', '10.0.0.2', '2001:db8::123'], strict: true })).toBe('pass');
    expect(status({ path: '/ntp/server', mode: 'required', value: ['10.0.0.1', '10.0.0.2'], strict: true })).toBe('fail');
  });

  it('allows every expected entry, also entries alike in their key', () => {
    const cfg = { user: [{ name: 'a', role: 'ro' }, { name: 'a', role: 'rw' }, { role: 'ro', name: 'b' }, 'c'] };
    const value: JsonValue[] = [{ name: 'a', role: 'rw' }, { name: 'a', role: 'ro' }, { role: 'ro' }, 'c'];
    expect(status({ path: '/user', mode: 'required', value, strict: true }, {}, cfg)).toBe('pass');
    expect(run({ path: '/user', mode: 'required', value: value.slice(0, 2), strict: true }, {}, { user: cfg.user.slice(0, 3) })).toMatchObject({
      status: 'fail',
      at: '/user/2',
      message: 'an object is none of the expected elements (strict)',
    });
    expect(run({ path: '/user', mode: 'required', value: [{ name: 'a' }], strict: true }, {}, { user: [{ name: 'a', x: [1] }, 7] })).toMatchObject({
      status: 'fail',
      at: '/user/1',
      message: 'the number 7 is none of the expected elements (strict)',
    });
  });

  it('allows entries expected by containers and lists alone, with no scalar member', () => {
    const cfg = { vrf: [{ rd: { asn: 65000 } }, { 'route-target': ['1:1'] }, ['x', 'y'], {}] };
    const value: JsonValue[] = [{ rd: { asn: 65000 } }, { 'route-target': ['1:1'] }, ['x'], {}];
    expect(status({ path: '/vrf', mode: 'required', value, strict: true }, {}, cfg)).toBe('pass');
    expect(run({ path: '/vrf', mode: 'required', value: [{ rd: {} }, {}], strict: true }, {}, cfg)).toMatchObject({ status: 'fail', at: '/vrf/2' });
    expect(run({ path: '/vrf', mode: 'required', value: [{ rd: {} }, ['y']], strict: true }, {}, cfg)).toMatchObject({ status: 'fail', at: '/vrf/1' });
  });

  it('applies to every match of a wildcard path', () => {
    const cfg = { vrf: { a: { rt: ['1:1'] }, b: { rt: ['1:1', '9:9'] } } };
    expect(run({ path: '/vrf/*/rt', mode: 'required', value: ['1:1'], strict: true }, {}, cfg)).toMatchObject({
      status: 'fail',
      failures: [{ at: '/vrf/b/rt/1', actual: '9:9' }],
    });
  });

  it('is invalid off a required rule with an array value', () => {
    expect(status({ path: '/ntp/server', mode: 'exact', value: ['x'], strict: true })).toBe('invalid');
    expect(status({ path: '/ntp/server', mode: 'required', value: 'x', strict: true })).toBe('invalid');
  });
});

describe('rules that cannot be evaluated', () => {
  it('are invalid, never thrown', () => {
    expect(run({ path: '/banner', mode: 'required', pattern: '(' })).toMatchObject({ status: 'invalid', message: expect.stringContaining('pattern') });
    expect(run({ path: '/banner', mode: 'required', pattern: '{{nope}}' })).toMatchObject({ status: 'invalid', message: expect.stringContaining('"nope"') });
    expect(status({ path: '/banner', mode: 'required', cidr: ['10.0.0.0/33'] })).toBe('invalid');
    expect(status({ path: '/banner', mode: 'required', range: { min: '{{x}}' } }, { x: 'ten' })).toBe('invalid');
    expect(status({ path: '/banner', mode: 'required', range: { min: 5, max: 1 } })).toBe('invalid');
    expect(status({ path: '/banner', mode: 'required', oneOf: ['{{nope}}'] })).toBe('invalid');
    expect(status({ path: '/banner', mode: 'required', match: 'most' as RuleMatch })).toBe('invalid');
    expect(status({ path: '/banner', mode: 'required', oneOf: 'x' as never })).toBe('invalid');
  });
});

describe('addresses', () => {
  it('reads strict text forms only', () => {
    for (const bad of ['010.0.0.1', '1.2.3', '256.0.0.1', '1::2::3', '1:2:3:4:5:6:7:8:9', 'fe80::1%eth0', '10.0.0.0/08', '10.0.0.0/', '::/129', 'g::1'])
      expect(parsePrefix(bad), bad).toBeUndefined();
    for (const good of ['0.0.0.0/0', '::', '::/0', '1:2:3:4:5:6:7:8', '1::', '::1.2.3.4', 'FE80::A/10', '2001:db8::/32'])
      expect(parsePrefix(good), good).toBeDefined();
  });

  it('reads a dotted quad only as the last two groups, and :: only once, for one group or more', () => {
    // A dotted quad before `::` or before another group is no IPv6 text.
    for (const bad of ['1.2.3.4::', '1.2.3.4::1', '::1.2.3.4:5', '1.2.3.4:1:2:3:4:5:6', '1:2:3:4:5:6:7:8::', '1:2:3:4:5:6:7:8::1::', '/::1', '/8'])
      expect(parsePrefix(bad), bad).toBeUndefined();
    expect(parsePrefix('1:2:3:4:5:6:1.2.3.4')).toEqual(parsePrefix('1:2:3:4:5:6:102:304'));
    expect(parsePrefix('1:2:3:4:5:6:7::')).toEqual(parsePrefix('1:2:3:4:5:6:7:0'));
    expect(parsePrefix('1::8')).toEqual({ bits: (1n << 112n) | 8n, length: 128 });
  });

  it('reads prefix lengths up to the full width of the family', () => {
    expect(parsePrefix('10.0.0.1/32')).toEqual(parsePrefix('10.0.0.1'));
    expect(parsePrefix('10.0.0.1/33')).toBeUndefined();
    expect(parsePrefix('::1/128')).toEqual(parsePrefix('::1'));
    expect(parsePrefix('10.0.0.0/8')?.length).toBe(104);
  });

  it('holds a prefix inside itself, and an address inside its own /32 or /128', () => {
    const p = (text: string) => parsePrefix(text)!;
    expect(insidePrefix(p('10.0.0.0/8'), p('10.0.0.0/8'))).toBe(true);
    expect(insidePrefix(p('10.0.0.1'), p('10.0.0.1/32'))).toBe(true);
    expect(insidePrefix(p('2001:db8::1'), p('2001:db8::1'))).toBe(true);
    expect(insidePrefix(p('10.0.0.0/8'), p('10.0.0.0/9'))).toBe(false);
    expect(status({ path: '/a', mode: 'required', cidr: ['10.1.0.0/16'] }, {}, { a: '10.1.0.0/16' })).toBe('pass');
  });
});

describe('decimals', () => {
  const d = (v: unknown): Decimal => decimalOf(v)!;
  it('reads a number as the decimal JSON writes, exponents included', () => {
    expect(compareDecimals(d(1e21), d('1000000000000000000000'))).toBe(0);
    expect(compareDecimals(d(1.5e-7), d('0.00000015'))).toBe(0);
    expect(compareDecimals(d(-2.5e-7), d('-0.00000025'))).toBe(0);
    expect(decimalOf(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(decimalOf(Number.NaN)).toBeUndefined();
  });

  it(`reads decimal strings of at most ${MAX_DECIMAL_CHARS} characters`, () => {
    expect(decimalOf('1'.repeat(MAX_DECIMAL_CHARS))).toBeDefined();
    expect(decimalOf('1'.repeat(MAX_DECIMAL_CHARS + 1))).toBeUndefined();
    expect(decimalOf('1e3')).toBeUndefined();
  });

  it('compares across scales, either side the finer one', () => {
    expect(compareDecimals(d(2), d('1.5'))).toBe(1);
    expect(compareDecimals(d('1.5'), d(2))).toBe(-1);
    expect(compareDecimals(d('1.75'), d('1.5'))).toBe(1);
    expect(compareDecimals(d('1.5'), d('1.75'))).toBe(-1);
    expect(compareDecimals(d('1.50'), d(1.5))).toBe(0);
  });

  it('refuses listed prefixes with bits after their length', () => {
    expect(prefixProblem('10.0.0.1/8')).toMatch(/bits set/);
    expect(prefixProblem('10.0.0.0/8')).toBeUndefined();
    expect(prefixProblem('2001:db8::1')).toBeUndefined();
  });

  it('agrees with node:net BlockList on addresses inside prefixes of the same family', () => {
    const prefixes: [string, number, 'ipv4' | 'ipv6'][] = [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.0.2.128', 25, 'ipv4'],
      ['2001:db8::', 32, 'ipv6'],
      ['fe80::', 10, 'ipv6'],
      ['2001:db8:abcd:12::', 64, 'ipv6'],
    ];
    const addresses: [string, 'ipv4' | 'ipv6'][] = [];
    for (let i = 0; i < 256; i += 7) addresses.push([`10.${i}.${255 - i}.1`, 'ipv4'], [`172.${i % 40}.0.1`, 'ipv4'], [`192.0.2.${i}`, 'ipv4']);
    for (let i = 0; i < 65536; i += 4099)
      addresses.push([`2001:db8:${i.toString(16)}::1`, 'ipv6'], [`fe${(0x70 + (i % 32)).toString(16)}::${i.toString(16)}`, 'ipv6']);
    addresses.push(['2001:db8:abcd:12:ffff::1', 'ipv6'], ['2001:db8:abcd:13::1', 'ipv6']);
    for (const [network, length, family] of prefixes) {
      const list = new BlockList();
      list.addSubnet(network, length, family);
      const outer = parsePrefix(`${network}/${length}`)!;
      for (const [address, af] of addresses) {
        if (af !== family) continue;
        expect(insidePrefix(parsePrefix(address)!, outer), `${address} in ${network}/${length}`).toBe(list.check(address, family));
      }
    }
  });
});
