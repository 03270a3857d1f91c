import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deviceAssignments, inheritedRules, nodePathOfDevice, type JsonValue, type Node, type Rule } from '../../functions/trees/config-model.js';
import {
  EXCERPT_MAX_CHARS,
  FAILURE_EXCERPT_MAX_CHARS,
  FAILURE_MESSAGE_MAX_CHARS,
  MAX_LISTED_FAILURES,
  canonical,
  contains,
  evaluateRule,
  evaluateRules,
  formatPointer,
  parsePointer,
  resolvePointer,
  variablesOf,
} from '../../functions/trees/rules.js';

/** A device configuration as NSO returns it inside `tailf-ncs:config` (cisco-ios NED). */
const config = {
  'tailf-ned-cisco-ios:hostname': 'ce0',
  'tailf-ned-cisco-ios:ntp': { server: { 'peer-list': [{ name: '10.0.0.1' }, { name: '10.0.0.2', prefer: [null] }] } },
  'tailf-ned-cisco-ios:logging': { host: { ipv4: [{ host: '10.9.9.9' }] } },
  'tailf-ned-cisco-ios:ip': { 'domain-name': 'example.net', 'http-server': { 'secure-server': true } },
  'tailf-ned-cisco-ios:snmp-server': { community: [{ name: 'private', RW: [null] }] },
  'tailf-ned-cisco-ios:banner': { motd: 'authorised access only' },
};

const rule = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>): Rule => ({ id: 'r', severity: 'error', ...r });
const run = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>, vars: Record<string, string> = {}, cfg: unknown = config) => evaluateRule(cfg, vars, rule(r));

describe('messages', () => {
  const said = (r: Partial<Rule> & Pick<Rule, 'path' | 'mode'>, cfg: unknown) => run(r, {}, cfg).message;

  it('say why a single-place rule passed', () => {
    expect(said({ path: '/a', mode: 'required' }, { a: 1 })).toBe('/a exists');
    expect(said({ path: '/a', mode: 'required', value: [1] }, { a: [1, 2] })).toBe('the value at /a contains the required value');
    expect(said({ path: '/a', mode: 'required', value: [1, 2], strict: true }, { a: [1, 2] })).toBe(
      'the value at /a contains the required value and no other element (strict)',
    );
    expect(said({ path: '/a', mode: 'exact', value: 1 }, { a: 1 })).toBe('the value at /a equals the expected value');
    expect(said({ path: '/a', mode: 'disallowed' }, {})).toBe('nothing exists at /a');
    expect(said({ path: '/a', mode: 'disallowed', value: 1 }, { a: 2 })).toBe('the value at /a does not contain the disallowed value');
  });

  it('say where and why a single-place rule failed', () => {
    expect(said({ path: '/a', mode: 'required' }, {})).toBe('nothing exists at /a');
    expect(said({ path: '/a', mode: 'disallowed' }, { a: 1 })).toBe('/a exists but is disallowed');
    expect(said({ path: '/a', mode: 'disallowed', value: { x: 1 } }, { a: { x: 1, y: 2 } })).toBe('the value at /a contains the disallowed value');
    expect(said({ path: '/a', mode: 'required', value: [1] }, { a: 1 })).toBe('expected an array, found the number 1');
    expect(said({ path: '/a', mode: 'required', value: { x: 1 } }, { a: [] })).toBe('expected an object, found an array');
    expect(said({ path: '/a', mode: 'required', value: { x: 1 } }, { a: {} })).toBe('member "x" is missing');
    expect(said({ path: '/a', mode: 'required', value: [3] }, { a: [1] })).toBe('no element of the array contains the expected element');
    expect(said({ path: '/a', mode: 'required', value: 'x' }, { a: null })).toBe('expected the string "x", found null');
    expect(said({ path: '/a', mode: 'exact', value: { x: 1 } }, { a: { x: 1, y: 2 } })).toBe('member "y" is not expected');
    expect(said({ path: '/a', mode: 'exact', value: { x: 1 } }, { a: {} })).toBe('member "x" is missing');
    expect(said({ path: '/a', mode: 'exact', value: [1, 2] }, { a: [1] })).toBe(
      '1 expected element(s) missing and 0 unexpected element(s) present (arrays compared as unordered multisets)',
    );
    expect(said({ path: '/a', mode: 'exact', value: [1, 2], ordered: true }, { a: [1] })).toBe('expected 2 elements in order, found 1');
    expect(said({ path: '/a', mode: 'exact', value: [1] }, { a: { x: 1 } })).toBe('expected an array, found an object');
    expect(said({ path: '/a', mode: 'required', value: [1], strict: true }, { a: [1, 'x'] })).toBe('the string "x" is none of the expected elements (strict)');
  });

  it('say why a rule cannot be evaluated', () => {
    expect(said({ path: 'a', mode: 'required' }, {})).toBe('path is not a JSON Pointer (RFC 6901)');
    expect(said({ path: '/a', mode: 'exact' }, {})).toBe('an exact rule needs a value');
    expect(said({ path: '/a', mode: 'required', value: '{{x}}' }, {})).toBe('value names the variable "x", which the version does not define');
    expect(said({ path: '/a', mode: 'required', cidr: ['{{x}}'] }, {})).toBe('cidr names the variable "x", which the version does not define');
    expect(said({ path: '/a', mode: 'required', match: 'most' as never }, {})).toBe('match must be one of all, any, none');
    expect(said({ path: '/a', mode: 'disallowed', value: [1], strict: true }, {})).toBe('strict needs a required rule with an array value');
  });

  it('say for a disallowed predicate rule which predicates the value passes', () => {
    const r = run({ path: '/a', mode: 'disallowed', pattern: '^x', oneOf: ['xy'] }, {}, { a: 'xy' });
    expect(r).toMatchObject({ status: 'fail', expected: { pattern: '^x', oneOf: ['xy'] }, actual: 'xy' });
    expect(r.message).toBe('1 of 1 matches of /a do not hold; first at /a: the value at /a passes pattern, oneOf, which is disallowed');
    const v = run({ path: '/a', mode: 'disallowed', value: 'xy', pattern: '^x' }, {}, { a: 'xy' });
    expect(v.message).toBe('1 of 1 matches of /a do not hold; first at /a: the value at /a contains the disallowed value and passes pattern');
    expect(run({ path: '/a', mode: 'disallowed', value: 'xy', pattern: '^z' }, {}, { a: 'xy' }).status).toBe('pass');
    expect(run({ path: '/a', mode: 'disallowed', value: 'xz', pattern: '^x' }, {}, { a: 'xy' }).status).toBe('pass');
  });
});

describe('results over several places', () => {
  it('say for match none which matches hold', () => {
    const r = run({ path: '/a/*', mode: 'exact', value: 1, match: 'none' }, {}, { a: [1, 2, 1] });
    const holds = 'the rule holds at /a/0, and match "none" allows no match to hold';
    expect(r).toMatchObject({
      status: 'fail',
      matches: 3,
      at: '/a/0',
      actual: 1,
      message: `2 of 3 matches of /a/* hold, and none may; first at /a/0: ${holds}`,
    });
    expect(r.failures).toEqual([
      { at: '/a/0', message: holds, actual: 1 },
      { at: '/a/2', message: 'the rule holds at /a/2, and match "none" allows no match to hold', actual: 1 },
    ]);
  });

  it(`count the failing matches beyond the ${MAX_LISTED_FAILURES} listed, and only those`, () => {
    const failing = (n: number) => run({ path: '/a/*', mode: 'exact', value: 0 }, {}, { a: Array.from({ length: n }, (_, i) => i + 1) });
    expect(failing(MAX_LISTED_FAILURES).failures).toHaveLength(MAX_LISTED_FAILURES);
    expect(failing(MAX_LISTED_FAILURES)).not.toHaveProperty('failuresOmitted');
    expect(failing(MAX_LISTED_FAILURES + 1)).toMatchObject({ failuresOmitted: 1 });
  });

  it(`quote a listed failure's message of up to ${FAILURE_MESSAGE_MAX_CHARS} characters, and replace a longer one`, () => {
    const say = (s: string) => `the string ${JSON.stringify(s)} does not match the pattern "^x"`;
    const fits = 'y'.repeat(FAILURE_MESSAGE_MAX_CHARS - say('').length);
    const listed = (s: string) => run({ path: '/a/*', mode: 'required', pattern: '^x' }, {}, { a: [s] }).failures?.[0]?.message;
    expect(say(fits)).toHaveLength(FAILURE_MESSAGE_MAX_CHARS);
    expect(listed(fits)).toBe(say(fits));
    expect(listed(`${fits}y`)).toBe('does not hold; the values are too long to quote here (see expected and actual)');
  });

  it(`cut a listed failure's excerpts longer than ${FAILURE_EXCERPT_MAX_CHARS} characters of JSON`, () => {
    const fits = 'y'.repeat(FAILURE_EXCERPT_MAX_CHARS - 2);
    const listed = (s: string) => run({ path: '/a/*', mode: 'exact', value: 'x' }, {}, { a: [s] }).failures?.[0];
    expect(listed(fits)).toEqual({ at: '/a/0', message: expect.any(String), expected: 'x', actual: fits });
    expect(listed(`${fits}y`)).toMatchObject({ actual: `${JSON.stringify(`${fits}y`).slice(0, FAILURE_EXCERPT_MAX_CHARS)}…`, truncated: ['actual'] });
  });
});

describe('required', () => {
  it('passes when the path exists and no value is given', () => {
    expect(run({ path: '/tailf-ned-cisco-ios:banner/motd', mode: 'required' }).status).toBe('pass');
  });

  it('fails when the path does not exist, naming the place', () => {
    const r = run({ path: '/tailf-ned-cisco-ios:aaa', mode: 'required' });
    expect(r).toMatchObject({ status: 'fail', at: '/tailf-ned-cisco-ios:aaa' });
    expect(r).not.toHaveProperty('actual');
  });

  it('passes when every expected array element is contained in some element, with variables substituted', () => {
    const r = run(
      { path: '/tailf-ned-cisco-ios:ntp/server/peer-list', mode: 'required', value: [{ name: '{{ntp2}}' }, { name: '{{ ntp1 }}' }] },
      { ntp1: '10.0.0.1', ntp2: '10.0.0.2' },
    );
    expect(r.status).toBe('pass');
  });

  it('fails with the missing element and the actual array as excerpt', () => {
    const r = run({ path: '/tailf-ned-cisco-ios:ntp/server/peer-list', mode: 'required', value: [{ name: '{{ntp1}}' }] }, { ntp1: '10.0.0.3' });
    expect(r).toMatchObject({
      status: 'fail',
      at: '/tailf-ned-cisco-ios:ntp/server/peer-list',
      expected: { name: '10.0.0.3' },
      actual: config['tailf-ned-cisco-ios:ntp'].server['peer-list'],
    });
  });

  it('compares object members recursively and reports the deepest differing member', () => {
    const r = run({ path: '/tailf-ned-cisco-ios:ip', mode: 'required', value: { 'http-server': { 'secure-server': false } } });
    expect(r).toMatchObject({ status: 'fail', at: '/tailf-ned-cisco-ios:ip/http-server/secure-server', expected: false, actual: true });
    const missing = run({ path: '/tailf-ned-cisco-ios:ip', mode: 'required', value: { 'name-server': ['1.1.1.1'] } });
    expect(missing).toMatchObject({ status: 'fail', at: '/tailf-ned-cisco-ios:ip/name-server', expected: ['1.1.1.1'] });
    expect(missing).not.toHaveProperty('actual');
  });

  it('checks every expected member, not only the first one found', () => {
    const r = run({ path: '/tailf-ned-cisco-ios:ip', mode: 'required', value: { 'domain-name': 'example.net', 'http-server': { 'secure-server': false } } });
    expect(r).toMatchObject({ status: 'fail', at: '/tailf-ned-cisco-ios:ip/http-server/secure-server', expected: false, actual: true });
  });

  it('compares scalars strictly: the string "1" is not the number 1', () => {
    expect(run({ path: '/a', mode: 'required', value: 1 }, {}, { a: '1' }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'required', value: 1 }, {}, { a: 1 }).status).toBe('pass');
    expect(run({ path: '/a', mode: 'required', value: null }, {}, { a: null }).status).toBe('pass');
  });

  it('treats NSO empty leaves ([null]) as values like any other', () => {
    expect(run({ path: '/tailf-ned-cisco-ios:snmp-server/community', mode: 'required', value: [{ RW: [null] }] }).status).toBe('pass');
  });
});

describe('exact', () => {
  it('compares arrays as unordered multisets by default', () => {
    const value: JsonValue = [{ prefer: [null], name: '10.0.0.2' }, { name: '10.0.0.1' }];
    expect(run({ path: '/tailf-ned-cisco-ios:ntp/server/peer-list', mode: 'exact', value }).status).toBe('pass');
  });

  it('counts repeated elements: a multiset, not a set', () => {
    expect(run({ path: '/a', mode: 'exact', value: [1, 1, 2] }, {}, { a: [1, 2, 2] })).toMatchObject({ status: 'fail', at: '/a', expected: [1], actual: [2] });
  });

  it('tells nested arrays and objects apart however their elements would read run together', () => {
    expect(run({ path: '/a', mode: 'exact', value: [[1, 2]] }, {}, { a: [[12]] }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'exact', value: [[[1], [2]]] }, {}, { a: [[[1, 2]]] }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'exact', value: [{ a: 1, b: 2 }] }, {}, { a: [{ a: 1 }] }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'exact', value: [{ a: 12 }] }, {}, { a: [{ a1: 2 }] }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'exact', value: [[{ a: 1 }, { b: 2 }]] }, {}, { a: [[{ a: 1, b: 2 }]] }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'exact', value: [[{ b: 2, a: 1 }, 3]] }, {}, { a: [[3, { a: 1, b: 2 }]] }).status).toBe('pass');
  });

  it('compares element by element with ordered: true', () => {
    const value: JsonValue = [{ name: '10.0.0.2', prefer: [null] }, { name: '10.0.0.1' }];
    const r = run({ path: '/tailf-ned-cisco-ios:ntp/server/peer-list', mode: 'exact', value, ordered: true });
    expect(r).toMatchObject({ status: 'fail', at: '/tailf-ned-cisco-ios:ntp/server/peer-list/0/name', expected: '10.0.0.2', actual: '10.0.0.1' });
    expect(run({ path: '/a', mode: 'exact', value: [1, 2], ordered: true }, {}, { a: [1, 2, 3] })).toMatchObject({ status: 'fail', at: '/a' });
  });

  it('fails on a member the rule does not expect', () => {
    const r = run({ path: '/tailf-ned-cisco-ios:ip', mode: 'exact', value: { 'domain-name': 'example.net' } });
    expect(r).toMatchObject({ status: 'fail', at: '/tailf-ned-cisco-ios:ip/http-server', actual: { 'secure-server': true } });
    expect(r).not.toHaveProperty('expected');
  });

  it('names the missing member where it is missing, at any depth', () => {
    const r = run({
      path: '/tailf-ned-cisco-ios:ip',
      mode: 'exact',
      value: { 'domain-name': 'example.net', 'http-server': { 'secure-server': true, 'secure-port': 443 } },
    });
    expect(r).toMatchObject({
      status: 'fail',
      at: '/tailf-ned-cisco-ios:ip/http-server/secure-port',
      expected: 443,
      message: 'member "secure-port" is missing',
    });
  });

  it('passes on a deep-equal scalar and fails on a missing path', () => {
    expect(run({ path: '/tailf-ned-cisco-ios:hostname', mode: 'exact', value: 'ce0' }).status).toBe('pass');
    expect(run({ path: '/nothing', mode: 'exact', value: 'x' })).toMatchObject({ status: 'fail', at: '/nothing', expected: 'x' });
  });

  it('is invalid without a value', () => {
    expect(run({ path: '/a', mode: 'exact' }).status).toBe('invalid');
  });
});

describe('disallowed', () => {
  it('passes when the path does not exist, with or without a value', () => {
    expect(run({ path: '/tailf-ned-cisco-ios:ip/http-server/server', mode: 'disallowed' }).status).toBe('pass');
    expect(run({ path: '/tailf-ned-cisco-ios:telnet', mode: 'disallowed', value: true }).status).toBe('pass');
  });

  it('fails when the path exists and no value is given', () => {
    expect(run({ path: '/tailf-ned-cisco-ios:snmp-server/community', mode: 'disallowed' })).toMatchObject({
      status: 'fail',
      at: '/tailf-ned-cisco-ios:snmp-server/community',
      actual: config['tailf-ned-cisco-ios:snmp-server'].community,
    });
  });

  it('fails when the value at the path contains the disallowed value, passes when it does not', () => {
    expect(run({ path: '/tailf-ned-cisco-ios:snmp-server/community', mode: 'disallowed', value: [{ name: 'private' }] }).status).toBe('fail');
    expect(run({ path: '/tailf-ned-cisco-ios:snmp-server/community', mode: 'disallowed', value: [{ name: 'public' }] }).status).toBe('pass');
  });
});

describe('invalid rules and odd input', () => {
  it('is invalid for a path that is not a JSON Pointer', () => {
    expect(run({ path: 'ntp/server', mode: 'required' }).status).toBe('invalid');
    expect(run({ path: '/a~2', mode: 'required' }).status).toBe('invalid');
  });

  it('is invalid for an unknown variable, in values and member names', () => {
    expect(run({ path: '/a', mode: 'required', value: '{{nope}}' }, {}, { a: 'x' })).toMatchObject({ status: 'invalid' });
    expect(run({ path: '/a', mode: 'required', value: { '{{nope}}': 1 } }, {}, { a: {} })).toMatchObject({ status: 'invalid' });
  });

  it('compares a member whose name is substituted like any other', () => {
    expect(run({ path: '/a', mode: 'required', value: { '{{k}}': 1 } }, { k: 'key' }, { a: { key: 2 } }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'required', value: { '{{k}}': 1 } }, { k: 'key' }, { a: { key: 1, x: 2 } }).status).toBe('pass');
    expect(run({ path: '/a', mode: 'exact', value: { '{{k}}': 1 } }, { k: 'key' }, { a: { key: 2 } }).status).toBe('fail');
  });

  it('substitutes in member names and leaves other braces alone', () => {
    expect(run({ path: '/a', mode: 'exact', value: { '{{k}}': '{x} {{ v }}' } }, { k: 'key', v: 'val' }, { a: { key: '{x} val' } }).status).toBe('pass');
  });

  it('never follows the prototype chain', () => {
    expect(run({ path: '/constructor', mode: 'required' }, {}, {}).status).toBe('fail');
    expect(run({ path: '/a/toString', mode: 'disallowed' }, {}, { a: {} }).status).toBe('pass');
    const proto = JSON.parse('{"__proto__":1}') as JsonValue;
    expect(run({ path: '/a', mode: 'required', value: proto }, {}, { a: {} }).status).toBe('fail');
    expect(run({ path: '/a', mode: 'exact', value: proto }, {}, JSON.parse('{"a":{"__proto__":1}}')).status).toBe('pass');
  });

  it('resolves array indexes and RFC 6901 escapes', () => {
    const doc = { 'a/b': { 'm~n': [10, 20] } };
    expect(resolvePointer(doc, parsePointer('/a~1b/m~0n/1') as string[])).toBe(20);
    expect(resolvePointer(doc, parsePointer('/a~1b/m~0n/01') as string[])).toBeUndefined();
    expect(resolvePointer(doc, parsePointer('/a~1b/m~0n/-') as string[])).toBeUndefined();
    expect(resolvePointer(doc, [])).toBe(doc);
  });

  it('steps into objects only: no character of a string, nothing below null, no bad escape in any token', () => {
    expect(resolvePointer({ a: 'abc' }, ['a', '0'])).toBeUndefined();
    expect(resolvePointer({ a: 'abc' }, ['a', 'length'])).toBeUndefined();
    expect(resolvePointer({ a: null }, ['a', 'b'])).toBeUndefined();
    expect(resolvePointer({ a: 5 }, ['a', 'x', 'y'])).toBeUndefined();
    expect(parsePointer('/a/b~2')).toBeUndefined();
    expect(parsePointer('/a~/b')).toBeUndefined();
  });

  it('cuts long excerpts and says which', () => {
    const big = Array.from({ length: 500 }, (_, i) => ({ name: `10.0.${i}.1` }));
    const r = run({ path: '/a', mode: 'required', value: [{ name: 'x' }] }, {}, { a: big });
    expect(r.truncated).toEqual(['actual']);
    expect(typeof r.actual).toBe('string');
    expect((r.actual as string).length).toBe(EXCERPT_MAX_CHARS + 1);
    // The limit counts the JSON text: a value of exactly that many characters is kept whole.
    const fits = 'y'.repeat(EXCERPT_MAX_CHARS - 2);
    expect(run({ path: '/a', mode: 'exact', value: 'x' }, {}, { a: fits })).toEqual(expect.objectContaining({ actual: fits, expected: 'x' }));
    expect(run({ path: '/a', mode: 'exact', value: 'x' }, {}, { a: fits })).not.toHaveProperty('truncated');
    expect(run({ path: '/a', mode: 'exact', value: `${fits}y` }, {}, { a: 1 })).toMatchObject({
      expected: `${JSON.stringify(`${fits}y`).slice(0, EXCERPT_MAX_CHARS)}…`,
      actual: 1,
      truncated: ['expected'],
    });
  });

  it('lists the variables a value names', () => {
    expect(variablesOf([{ name: '{{a}}-{{ b }}' }, { '{{c}}': '{{a}}' }])).toEqual(['a', 'b', 'c']);
    expect(variablesOf(undefined)).toEqual([]);
  });
});

describe('inheritance', () => {
  const r = (id: string): Rule => ({ id, path: `/${id}`, mode: 'required', severity: 'warning' });
  const root: Node = {
    name: 'base',
    devices: ['core1'],
    rules: [r('b1'), r('b2')],
    children: [
      { name: 'wan', devices: [], rules: [r('w1')], children: [{ name: 'pe', devices: ['pe1', 'pe2'], rules: [r('p1')], children: [] }] },
      { name: 'lan', devices: ['sw1'], rules: [r('l1')], children: [] },
    ],
  };

  it('orders rules from base down to the node', () => {
    expect(inheritedRules(root, 'base/wan/pe')?.map((x) => x.id)).toEqual(['b1', 'b2', 'w1', 'p1']);
    expect(inheritedRules(root, ['base', 'lan'])?.map((x) => x.id)).toEqual(['b1', 'b2', 'l1']);
    expect(inheritedRules(root, 'base/wan/nope')).toBeUndefined();
    expect(inheritedRules(root, 'wan')).toBeUndefined();
  });

  it('finds each device with its node and its inherited rules', () => {
    expect(nodePathOfDevice(root, 'pe2')).toBe('base/wan/pe');
    expect(nodePathOfDevice(root, 'zz')).toBeUndefined();
    expect(deviceAssignments(root).map((a) => [a.device, a.nodePath, a.rules.map((x) => x.id).join()])).toEqual([
      ['core1', 'base', 'b1,b2'],
      ['pe1', 'base/wan/pe', 'b1,b2,w1,p1'],
      ['pe2', 'base/wan/pe', 'b1,b2,w1,p1'],
      ['sw1', 'base/lan', 'b1,b2,l1'],
    ]);
  });

  it('returns one result per rule in the given order', () => {
    const results = evaluateRules({ b1: 1, w1: 1 }, {}, inheritedRules(root, 'base/wan/pe') as Rule[]);
    expect(results.map((x) => [x.id, x.status])).toEqual([
      ['b1', 'pass'],
      ['b2', 'fail'],
      ['w1', 'pass'],
      ['p1', 'fail'],
    ]);
  });
});

// ---- properties ----

const json: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>;

/** A value the given one contains: members dropped, array elements dropped, scalars kept. */
const containedIn = (v: JsonValue): fc.Arbitrary<JsonValue> => {
  if (Array.isArray(v)) {
    if (v.length === 0) return fc.constant<JsonValue>([]);
    return fc
      .array(fc.nat(v.length - 1), { maxLength: 4 })
      .chain((idx): fc.Arbitrary<JsonValue> => (idx.length ? fc.tuple(...idx.map((i) => containedIn(v[i] as JsonValue))) : fc.constant([])));
  }
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    return fc
      .subarray(keys)
      .chain((picked) =>
        picked.length
          ? fc
              .tuple(...picked.map((k) => containedIn((v as Record<string, JsonValue>)[k] as JsonValue)))
              .map((vals) => Object.fromEntries(picked.map((k, i) => [k, vals[i]])))
          : fc.constant({}),
      );
  }
  return fc.constant(v);
};

/** The same value with every array's elements shuffled (by a seed). */
const shuffled = (v: JsonValue, seed: number): JsonValue => {
  if (Array.isArray(v)) {
    const items = v.map((x, i) => shuffled(x as JsonValue, seed + i));
    for (let i = items.length - 1; i > 0; i--) {
      const j = (seed * 31 + i * 17) % (i + 1);
      [items[i], items[j]] = [items[j] as JsonValue, items[i] as JsonValue];
    }
    return items;
  }
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, shuffled(x, seed + 1)]),
    );
  return v;
};

describe('properties', () => {
  it('every value contains itself and every value derived from it by dropping parts', () => {
    fc.assert(
      fc.property(
        json.chain((v) => fc.tuple(fc.constant(v), containedIn(v))),
        ([v, part]) => {
          expect(contains(v, v)).toBe(true);
          expect(contains(v, part)).toBe(true);
          expect(evaluateRule({ x: v }, {}, rule({ path: '/x', mode: 'required', value: part })).status).toBe('pass');
          expect(evaluateRule({ x: v }, {}, rule({ path: '/x', mode: 'disallowed', value: part })).status).toBe('fail');
        },
      ),
    );
  });

  it('exact passes on any reordering of arrays and members, and agrees with canonical equality', () => {
    fc.assert(
      fc.property(json, fc.nat(1000), (v, seed) => {
        const s = shuffled(v, seed);
        expect(evaluateRule({ x: s }, {}, rule({ path: '/x', mode: 'exact', value: v })).status).toBe('pass');
        const ordered = evaluateRule({ x: s }, {}, rule({ path: '/x', mode: 'exact', value: v, ordered: true })).status;
        expect(ordered === 'pass').toBe(canonical(s, true) === canonical(v, true));
      }),
    );
  });

  it('exact pass implies required pass; required and disallowed disagree whenever the path exists', () => {
    fc.assert(
      fc.property(json, json, fc.boolean(), (actual, value, ordered) => {
        const exact = evaluateRule({ x: actual }, {}, rule({ path: '/x', mode: 'exact', value, ordered }));
        const required = evaluateRule({ x: actual }, {}, rule({ path: '/x', mode: 'required', value }));
        const disallowed = evaluateRule({ x: actual }, {}, rule({ path: '/x', mode: 'disallowed', value }));
        if (exact.status === 'pass') expect(required.status).toBe('pass');
        expect(exact.status === 'pass').toBe(canonical(actual, ordered) === canonical(value, ordered));
        expect(required.status === 'pass').toBe(disallowed.status === 'fail');
        for (const r of [exact, required]) if (r.status === 'fail') expect(r.at?.startsWith('/x')).toBe(true);
      }),
    );
  });

  it('a failing result points at a place whose content is the reported actual', () => {
    let checked = 0;
    fc.assert(
      fc.property(json, json, (actual, value) => {
        const r = evaluateRule({ x: actual }, {}, rule({ path: '/x', mode: 'required', value }));
        if (r.status !== 'fail' || r.truncated) return;
        const there = resolvePointer({ x: actual }, parsePointer(r.at as string) as string[]);
        if (Array.isArray(there) || r.actual === undefined) return;
        expect(there).toEqual(r.actual);
        checked++;
      }),
      { numRuns: 300 },
    );
    // About half the runs fail the rule at a place that holds a value (150 to 170 of 300): a
    // rule that never failed, or never said where, would leave nothing checked.
    expect(checked).toBeGreaterThan(100);
  });

  it('never throws, whatever the configuration and rule', () => {
    fc.assert(
      fc.property(
        fc.anything(),
        fc.string(),
        fc.constantFrom('required', 'exact', 'disallowed' as const),
        fc.option(json, { nil: undefined }),
        (cfg, path, mode, value) => {
          const r = evaluateRule(cfg, { a: 'b' }, rule({ path, mode, ...(value !== undefined ? { value } : {}) }));
          expect(['pass', 'fail', 'invalid']).toContain(r.status);
        },
      ),
    );
  });

  it('formats and parses pointers as inverses, and resolves to what it names', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 5 }), fc.jsonValue(), (tokens, leaf) => {
        expect(parsePointer(formatPointer(tokens))).toEqual(tokens);
        const doc = tokens.reduceRight<unknown>((inner, t) => Object.defineProperty({}, t, { value: inner, enumerable: true }), leaf);
        expect(resolvePointer(doc, tokens)).toEqual(leaf);
      }),
    );
  });
});
