/**
 * The redaction the relay's trace lines rely on, on its own: known secrets in every spelling,
 * members named like secrets at any depth, XML elements and form pairs, truncation after
 * redaction, and the bodies and headers as call-log.ts shows them.
 */
import { describe, expect, it } from 'vitest';
import { TRACE_BODY_LIMIT, callLineLevel, loggedBody, loggedHeaders } from '../../functions/relay/call-log.js';
import { truncateText } from '../../functions/platform/logger.js';
import { holdsSecret, isSecretField, redact, redactText, WITHHELD } from '../../functions/platform/redaction.js';

const SECRET = 'S3cr3t "pw"/+?';

/** A text as a reader could decode it: as is, percent-decoded, entity-decoded, JSON-unescaped, and base64-decoded runs. */
const decodedViews = (text: string): string[] => {
  // URLSearchParams decodes as a form does (+ as space), tolerating stray %.
  const percent = new URLSearchParams(`v=${text.replaceAll('&', '%26')}`).get('v')!;
  const entities = text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)))
      : ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e.toLowerCase()]!,
  );
  const json = text.replace(/\\u([0-9a-f]{4})|\\(.)/gi, (_, hex: string | undefined, c: string) => (hex ? String.fromCharCode(parseInt(hex, 16)) : c));
  const base64 = [...text.matchAll(/[A-Za-z0-9+/]{8,}={0,2}/g)].map((m) => Buffer.from(m[0], 'base64').toString('utf8'));
  return [text, percent, entities, json, ...base64];
};

describe('isSecretField', () => {
  it.each([
    'password',
    'remote-password',
    'Passphrase',
    'authorisation',
    'Proxy-Authorization',
    'clientSecret',
    'accessToken',
    'Authorization',
    'credentials',
    'Cookie',
    'key',
    'apiKey',
    'API_KEY',
    'private-key',
    'ssh_key_data',
    'x-api-key',
    'community',
    'snmp-community',
    'ike-psk',
    'pskValue',
  ])('treats %s as a secret', (name) => expect(isSecretField(name)).toBe(true));
  it.each(['name', 'hostname', 'queryKeys', 'keyboard', 'monkeys', 'address', 'username', 'path'])('does not treat %s as a secret', (name) =>
    expect(isSecretField(name)).toBe(false),
  );
});

describe('redact', () => {
  it('redacts members named like secrets at any depth, and known secrets inside every string', () => {
    let deep: Record<string, unknown> = { password: 'deep-pw', note: `x${SECRET}y` };
    for (let i = 0; i < 20; i++) deep = { level: deep };
    const out = JSON.stringify(redact({ a: [{ apiKey: 'k' }, 'plain'], deep, [`key-with-${SECRET}`]: 1 }, { secrets: [SECRET] }));
    expect(out).not.toContain('deep-pw');
    expect(out).not.toContain('S3cr3t');
    expect(out).toContain('"apiKey":"[redacted]"');
    expect(out).toContain('"note":"x[redacted]y"');
    expect(out).toContain('"plain"');
  });

  it('writes what is nested past maxDepth as a marker, never as it is', () => {
    expect(redact({ a: { b: { password: 'x', c: 'y' } } }, { maxDepth: 2 })).toEqual({ a: { b: '[nested too deep]' } });
  });

  it('ignores an empty secret rather than redacting everything', () => {
    expect(redact({ a: 'text' }, { secrets: [''] })).toEqual({ a: 'text' });
  });
});

describe('redactText', () => {
  it('removes a secret as is, JSON-escaped, percent-encoded and in base64', () => {
    const text = [SECRET, JSON.stringify(SECRET), encodeURIComponent(SECRET), Buffer.from(SECRET).toString('base64')].join(' | ');
    const out = redactText(text, [SECRET]);
    expect(out).not.toContain('S3cr3t');
    expect(out).not.toContain(encodeURIComponent(SECRET));
    expect(out).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  it('redacts XML elements and name=value pairs named like secrets, and leaves the rest', () => {
    const xml = '<config><name>r1</name><remote-password>pw1</remote-password><ncs:secret a="1">pw2</ncs:secret></config>';
    expect(redactText(xml)).toBe('<config><name>r1</name><remote-password>[redacted]</remote-password><ncs:secret a="1">[redacted]</ncs:secret></config>');
    expect(redactText('user=bob&password=pw3&api_key=k&depth=2')).toBe('user=bob&password=[redacted]&api_key=[redacted]&depth=2');
    // A quoted secret followed by more of the value: the whole value goes, not only the quoted part.
    expect(redactText('token="S3cr3t"LEAK&n=1', ['S3cr3t'])).toBe('token=[redacted]&n=1');
    expect(redactText("password='S3cr3t'rest")).toBe('password=[redacted]');
    expect(redactText('token="[redacted]"&n=1')).toBe('token="[redacted]"&n=1');
    expect(redactText('{"name": "r1", "secret" : "a\\"b", "x": "y"')).toBe('{"name": "r1", "secret" : "[redacted]", "x": "y"');
  });
});

describe('truncateText', () => {
  it('cuts at the limit without splitting a surrogate pair', () => {
    expect(truncateText('abc', 3)).toEqual({ text: 'abc', truncated: false });
    expect(truncateText('ab😀c', 3)).toEqual({ text: 'ab', truncated: true });
    expect(truncateText('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
  });

  it('treats the first and the last high surrogate alike, and keeps a pair that ends at the limit', () => {
    expect(truncateText('ab\u{10000}', 3)).toEqual({ text: 'ab', truncated: true }); // high surrogate U+D800
    expect(truncateText(`ab${String.fromCodePoint(0x10fc00)}`, 3)).toEqual({ text: 'ab', truncated: true }); // U+DBFF
    expect(truncateText('a😀b', 3)).toEqual({ text: 'a😀', truncated: true });
    expect(truncateText('ab\uE000c', 3)).toEqual({ text: 'ab\uE000', truncated: true });
  });
});

describe('redactText: each spelling of a known secret rewritten where it stands', () => {
  // Characters a strong password holds that each encoding rewrites: & < > " ' / space ! ( ) ~ and a non-ASCII letter.
  const PW = `Tr0ub&dor<3>x "y" 'z'/!(~)é`;
  const xmlText = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const lowerHex = (text: string) => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  const form = new URLSearchParams({ v: PW }).toString().slice(2);
  const json = JSON.stringify(PW).slice(1, -1);
  // None of these texts names a field like a secret: only the spelling itself can be rewritten, and
  // a spelling the redaction missed would withhold the whole text instead.
  it.each([
    ['as is', `a ${PW} b`, 'a [redacted] b'],
    ['JSON-escaped', `{"v":"${json}"}`, '{"v":"[redacted]"}'],
    ['JSON-escaped with \\/', `{"v":"${json.replaceAll('/', '\\/')}"}`, '{"v":"[redacted]"}'],
    ['percent-encoded', `v=${encodeURIComponent(PW)}&n=1`, 'v=[redacted]&n=1'],
    ['percent-encoded with lower-case hex', `v=${lowerHex(encodeURIComponent(PW))}&n=1`, 'v=[redacted]&n=1'],
    ['form-encoded', `v=${form}&n=1`, 'v=[redacted]&n=1'],
    ['form-encoded with lower-case hex', `v=${lowerHex(form)}&n=1`, 'v=[redacted]&n=1'],
    ['XML text', `<d><v>${xmlText(PW)}</v></d>`, '<d><v>[redacted]</v></d>'],
    ['an XML attribute with &quot; and &apos;', `<d v="${xmlText(PW).replaceAll('"', '&quot;').replaceAll("'", '&apos;')}"/>`, '<d v="[redacted]"/>'],
    ['an XML attribute with &#34; and &#39;', `<d v="${xmlText(PW).replaceAll('"', '&#34;').replaceAll("'", '&#39;')}"/>`, '<d v="[redacted]"/>'],
    ['an XML attribute with &quot; and &#39;', `<d v="${xmlText(PW).replaceAll('"', '&quot;').replaceAll("'", '&#39;')}"/>`, '<d v="[redacted]"/>'],
    ['base64', `basic ${Buffer.from(PW).toString('base64')} end`, 'basic [redacted] end'],
  ])('%s', (_label, text, redacted) => {
    expect(redactText(text, [PW])).toBe(redacted);
  });

  it('removes the longest of two secrets where one holds the other, whatever their order', () => {
    expect(redactText('abcdef abc', ['abc', 'abcdef'])).toBe('[redacted] [redacted]');
    expect(redactText('abcdef abc', ['abcdef', 'abc'])).toBe('[redacted] [redacted]');
  });

  it('ignores an empty secret, beside others and alone', () => {
    expect(redactText('some text', [''])).toBe('some text');
    expect(redactText('some text', ['', 'text'])).toBe('some [redacted]');
  });

  it('removes a secret that has no percent-encoding (a lone surrogate)', () => {
    expect(redactText('x\uD800y', ['\uD800'])).toBe('x[redacted]y');
    expect(redact({ v: 'x\uD800y' }, { secrets: ['\uD800'] })).toEqual({ v: 'x[redacted]y' });
  });

  it('withholds a text that still holds a secret in a spelling it does not rewrite', () => {
    const every = (text: string) => [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    expect(redactText(`v=${every('S3cr3t')}`, ['S3cr3t'])).toBe(WITHHELD);
    expect(redactText(`v=${every('S3cr3t')}`, ['other'])).toBe(`v=${every('S3cr3t')}`);
  });
});

describe('holdsSecret', () => {
  const SECRET = `S3 <cr"e>t`;
  const every = (text: string, hex: (b: number) => string) => [...Buffer.from(text)].map(hex).join('');
  it.each([
    ['as is', `x ${SECRET} y`],
    ['every byte percent-encoded', every(SECRET, (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)],
    ['every byte percent-encoded, lower-case hex', every(SECRET, (b) => `%${b.toString(16).padStart(2, '0')}`)],
    ['form-encoded, + for a space', `v=${every(SECRET, (b) => (b === 0x20 ? '+' : `%${b.toString(16).padStart(2, '0')}`))}`],
    ['percent-encoded after a byte that is not UTF-8', `v=%ff${every(SECRET, (b) => `%${b.toString(16).padStart(2, '0')}`)}`],
    ['as named entities, in either case', 'S3 &LT;cr&quot;e&gt;t'],
    ['as decimal character references', [...SECRET].map((c) => `&#${c.charCodeAt(0)};`).join('')],
    ['as hexadecimal character references', [...SECRET].map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join('')],
    ['as hexadecimal character references with X', [...SECRET].map((c) => `&#X${c.charCodeAt(0).toString(16)};`).join('')],
    ['JSON-escaped', JSON.stringify(SECRET)],
    ['with every character \\u-escaped', [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
    ['inside the base64 of a longer text', Buffer.from(`user:${SECRET}:more`).toString('base64')],
    ['inside the base64url of a longer text', Buffer.from(`user?${SECRET}>>>`).toString('base64url')],
  ])('finds a secret %s', (_label, text) => {
    expect(holdsSecret(text, [SECRET])).toBe(true);
  });

  it('finds a secret whose base64 is the shortest run it decodes (8 characters)', () => {
    expect(Buffer.from('abcdef').toString('base64')).toHaveLength(8);
    expect(holdsSecret('x YWJjZGVm y', ['abcdef'])).toBe(true);
  });

  it('decodes character references up to the last code point, and leaves larger ones as they are', () => {
    expect(holdsSecret('&#x10FFFF;', ['\u{10FFFF}'])).toBe(true);
    expect(holdsSecret('&#1114111;', ['\u{10FFFF}'])).toBe(true);
    expect(holdsSecret('&#x110000;', ['&#x110000;'])).toBe(true);
    expect(holdsSecret('&#1114112;', ['\u{10FFFF}'])).toBe(false);
    expect(holdsSecret('&unknown;', ['&unknown;'])).toBe(true);
  });

  it('finds nothing without a secret, an empty secret included, nor when no view holds it', () => {
    expect(holdsSecret('anything', [])).toBe(false);
    expect(holdsSecret('anything', [''])).toBe(false);
    expect(holdsSecret('S3 cr e t, %53 3, &#83;3', [SECRET])).toBe(false);
  });
});

describe('redactText: values named like secrets', () => {
  it('in XML attributes, quoted either way, spaced or namespaced', () => {
    expect(redactText(`<a password="x" b='1' token = 'y' ns:secret="z" c="2"/>`)).toBe(
      `<a password="[redacted]" b='1' token = '[redacted]' ns:secret="[redacted]" c="2"/>`,
    );
  });

  it('in XML elements up to their own end tag, or to the end of a text cut before it', () => {
    // A mismatched end tag closes nothing: the unclosed element hides the rest of the text.
    expect(redactText('<password>x</password><token>y</secret>')).toBe('<password>[redacted]</password><token>[redacted]</secret>');
    expect(redactText('<password>x</password> ok')).toBe('<password>[redacted]</password> ok');
    expect(redactText('<a:password b="1">x</a:password>')).toBe('<a:password b="1">[redacted]</a:password>');
  });

  it('in name=value pairs after ?, ;, & or a blank, with dotted and bracketed names', () => {
    expect(redactText('?token=a;secret=b c pass=d&x.y[key]=e&ok=f')).toBe('?token=[redacted];secret=[redacted] c pass=[redacted]&x.y[key]=[redacted]&ok=f');
    expect(redactText('token=')).toBe('token=[redacted]');
  });

  it('in a pair whose value was partly a known secret, the rest of the value too', () => {
    expect(redactText('token=SECRETabc&n=1', ['SECRET'])).toBe('token=[redacted]&n=1');
    expect(redactText('token=[redacted]&n=1')).toBe('token=[redacted]&n=1');
  });

  it('in JSON-looking members, whatever the value, up to where it ends', () => {
    expect(redactText('{"secret": {"token": "a", "b": [1, "]"]}, "pw": 1, "token": "x\\"y", "key": true, "password": , "end": 1, "apiKey": ')).toBe(
      '{"secret": [redacted], "pw": 1, "token": "[redacted]", "key": [redacted], "password": , "end": 1, "apiKey": ',
    );
    expect(redactText('{"token": ["a]", {"b": "}"}], "n": 1')).toBe('{"token": [redacted], "n": 1');
    expect(redactText('{"token": 12 , "n": 1')).toBe('{"token": [redacted] , "n": 1');
    expect(redactText('{"token": 12}')).toBe('{"token": [redacted]}');
    expect(redactText('[{"token": 12]')).toBe('[{"token": [redacted]]');
  });

  it('in JSON-looking members cut short, to the end of the text', () => {
    expect(redactText('{"token": "abc')).toBe('{"token": "[redacted]"');
    expect(redactText('{"token": {"a": "b')).toBe('{"token": [redacted]');
    expect(redactText('{"token": [1, 2')).toBe('{"token": [redacted]');
    expect(redactText('{"token": 123')).toBe('{"token": [redacted]');
  });
});

describe('redact: members named like Object.prototype', () => {
  it('keeps a member named `__proto__` as a member, masked when it holds a secret, and sets no prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"password":"hunter2","mtu":1500},"constructor":"x"}') as Record<string, unknown>;
    const shown = redact(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(shown)).toBe(Object.prototype);
    expect(Object.hasOwn(shown, '__proto__')).toBe(true);
    expect(JSON.stringify(shown)).toBe('{"__proto__":{"password":"[redacted]","mtu":1500},"constructor":"x"}');
    expect(JSON.stringify(redact(JSON.parse('{"a":{"__proto__":"$9$abcdefgh"}}')))).not.toContain('abcdefgh');
  });
});

describe('redact: what it walks', () => {
  it('redacts the values a key names like secrets, in the key too', () => {
    expect(redact({ 'token=abc&x=1': 1, nested: { 'user=x&password=y': { a: 1 } } })).toEqual({
      'token=[redacted]&x=1': '[redacted]',
      nested: { 'user=x&password=[redacted]': '[redacted]' },
    });
  });

  it('writes an error as its name and message, redacted', () => {
    expect(redact({ e: new RangeError('token=abc S3') }, { secrets: ['S3'] })).toEqual({ e: { name: 'RangeError', message: 'token=[redacted] [redacted]' } });
  });

  it('counts arrays as levels, and keeps the scalars at the last level walked', () => {
    expect(redact([[['x']]], { maxDepth: 2 })).toEqual([['[nested too deep]']]);
    expect(redact({ a: { s: 'x', n: 1, b: true, z: null, u: undefined } }, { maxDepth: 1 })).toEqual({ a: '[nested too deep]' });
    expect(redact({ s: 'x', n: 1, b: true, z: null, u: undefined }, { maxDepth: 1 })).toEqual({ s: 'x', n: 1, b: true, z: null, u: undefined });
    expect(redact('token=x')).toBe('token=[redacted]');
    expect(redact(42)).toBe(42);
  });
});

describe('loggedBody and loggedHeaders', () => {
  it('redacts a JSON body member by member before cutting it to the limit', () => {
    const body = JSON.stringify({ password: 'p'.repeat(5000), token: { nested: 't' }, data: `${SECRET}`, filler: 'f'.repeat(5000) });
    const logged = loggedBody(body, 'application/yang-data+json', [SECRET]);
    expect(logged.bytes).toBe(Buffer.byteLength(body));
    expect(logged.truncated).toBe(true);
    expect(logged.text).toHaveLength(TRACE_BODY_LIMIT);
    expect(logged.text.startsWith('{"password":"[redacted]","token":"[redacted]","data":"[redacted]","filler":"fff')).toBe(true);
  });

  it('redacts a body that is not JSON (or JSON that does not parse) as text', () => {
    const logged = loggedBody(Buffer.from(`{"password": "pw", broken ${SECRET}`), 'application/json', [SECRET]);
    expect(logged).toEqual({ bytes: expect.any(Number), text: '{"password": "[redacted]", broken [redacted]', truncated: false });
    expect(loggedBody(Buffer.from('<password>x</password>'), 'application/yang-data+xml', []).text).toBe('<password>[redacted]</password>');
  });

  describe('a known secret in the encodings an orchestrator may echo it in', () => {
    // Characters a strong password holds that each encoding rewrites: & < > " ' / space ! ( ) ~ and a non-ASCII letter.
    const PW = `Tr0ub&dor<3>x "y" 'z'/!(~)é`;
    const percentLower = (text: string) => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const xmlText = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
    const unicodeEscaped = [...PW].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    it.each([
      ['form-encoded (URLSearchParams: + for space, %21 for !)', 'application/x-www-form-urlencoded', new URLSearchParams({ remote: PW }).toString()],
      ['percent-encoded with lower-case hex digits', 'text/plain', `x=${percentLower(encodeURIComponent(PW))}`],
      ['XML text with &amp; &lt; &gt;', 'application/yang-data+xml', `<device><remote-pw>${xmlText(PW)}</remote-pw></device>`],
      ['XML attribute with &quot; &apos;', 'application/xml', `<device pw="${xmlText(PW).replaceAll('"', '&quot;').replaceAll("'", '&apos;')}"/>`],
      ['XML numeric character references', 'application/xml', `<pw>${[...PW].map((c) => `&#${c.charCodeAt(0)};`).join('')}</pw>`],
      ['JSON text escaping / as \\/', 'text/plain', JSON.stringify({ v: PW }).replaceAll('/', '\\/')],
      ['JSON text with every character \\u-escaped', 'text/plain', `{"v":"${unicodeEscaped}"`],
      ['base64 of a longer text holding it', 'text/plain', Buffer.from(`user:${PW}`).toString('base64')],
      [
        'percent-encoded inside a JSON string',
        'application/json',
        JSON.stringify({ query: `a=1&remote=${new URLSearchParams({ x: PW }).toString().slice(2)}` }),
      ],
    ])('never shows it %s', (_, contentType, body) => {
      const logged = loggedBody(body, contentType, [PW]);
      for (const view of decodedViews(logged.text)) expect(view).not.toContain(PW);
    });
  });

  it('redacts what is named like a secret inside a JSON string member (JSON, XML or a query string held as text)', () => {
    const body = JSON.stringify({
      payload: JSON.stringify({ device: 'r1', password: 'json-in-string' }),
      xml: '<device><remote-password>xml-in-string</remote-password></device>',
      query: 'user=a&secret=form-in-string',
      list: [JSON.stringify([{ token: 'array-in-string' }])],
    });
    const logged = loggedBody(body, 'application/json', []).text;
    for (const hidden of ['json-in-string', 'xml-in-string', 'form-in-string', 'array-in-string']) expect(logged).not.toContain(hidden);
    expect(JSON.parse(JSON.parse(logged).payload)).toEqual({ device: 'r1', password: '[redacted]' });
  });

  it('redacts members named like secrets whatever their value, and in XML CDATA', () => {
    expect(loggedBody('{"password": 12345, "token": ["a"], "pw": 1', 'text/plain', []).text).toBe('{"password": [redacted], "token": [redacted], "pw": 1');
    expect(loggedBody('<password><![CDATA[hunter2]]></password>', 'application/xml', []).text).toBe('<password>[redacted]</password>');
  });

  it('shows header values except the credentials', () => {
    const token = Buffer.from(`admin:${SECRET}`).toString('base64');
    expect(loggedHeaders({ Accept: 'application/json', Authorization: `Basic ${token}`, 'X-Echo': `x ${token}` }, [token])).toEqual({
      Accept: 'application/json',
      Authorization: '[redacted]',
      'X-Echo': 'x [redacted]',
    });
  });

  it('logs the call line at error for a 5xx, warn for a 4xx, info otherwise', () => {
    expect([200, 404, 409, 502, 504].map(callLineLevel)).toEqual(['info', 'warn', 'warn', 'error', 'error']);
  });
});

describe('holdsSecret and redactText: the cases mutation testing found untried', () => {
  it('finds a non-ASCII secret percent-encoded, its UTF-8 bytes decoded together', () => {
    const every = (text: string) => [...Buffer.from(text)].map((b) => `%${b.toString(16)}`).join('');
    expect(holdsSecret(`v=${every('été')}`, ['été'])).toBe(true);
    expect(holdsSecret(`v=${every('été')}`, ['ete'])).toBe(false);
  });

  it('finds any one of several secrets, not only all of them together', () => {
    expect(holdsSecret('x S3cr3t y', ['S3cr3t', 'other'])).toBe(true);
    expect(holdsSecret('x other y', ['S3cr3t', 'other'])).toBe(true);
    expect(holdsSecret('x y', ['S3cr3t', 'other'])).toBe(false);
  });

  it('redacts a value named like a secret whole, when only part of it is a known secret', () => {
    expect(redactText('token=abc"S3cr3t"&n=1', ['S3cr3t'])).toBe('token=[redacted]&n=1');
    expect(redactText("token=abc'S3cr3t'&n=1", ['S3cr3t'])).toBe('token=[redacted]&n=1');
    // A value that is the redaction marker already stays as it is.
    expect(redactText('token="S3cr3t"&n=1', ['S3cr3t'])).toBe('token="[redacted]"&n=1');
  });
});

describe('redactText on 1 MB adversarial texts', () => {
  // Shapes that make a backtracking or rescanning rule quadratic: the runs each rule starts on,
  // repeated without what would end them. Each completes (no timing is asserted) and still masks.
  const MB = 1 << 20;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const SHAPES: Readonly<Record<string, string>> = {
    'name characters': fill('a'),
    'escaped quotes before a name end': `${fill('\\"')}": 1`,
    'unclosed XML start tags': fill('<password'),
    'nested unclosed secret elements': fill('<password>'),
    'unclosed CDATA sections': `<password>${fill('<![CDATA[')}`,
    'unclosed attribute quotes': fill(' a="'),
    'URL authorities': fill('x://a:b'),
    'CLI statements': fill('password '),
    'positional statements': fill('snmp-server host '),
    'invisible characters in names': fill('pass\u200b'),
    'encoded runs': fill('+%3C'),
    'an unclosed pair quote': `secret=${fill('"')}`,
    'unclosed JSON values': fill('{"password":['),
  };

  it.each(Object.entries(SHAPES))('%s', (_shape, text) => {
    const out = redactText(`${text}\nsecret Adv3rsary`);
    expect(out).not.toContain('Adv3rsary');
  });
});
