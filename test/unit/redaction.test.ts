/**
 * The redaction the relay's trace lines rely on, on its own: known secrets in every spelling,
 * members named like secrets at any depth, XML elements and form pairs, truncation after
 * redaction, and the bodies and headers as call-log.ts shows them.
 */
import { describe, expect, it } from 'vitest';
import { TRACE_BODY_LIMIT, callLineLevel, loggedBody, loggedHeaders } from '../../functions/relay/call-log.js';
import { isSecretField, redact, redactText, truncateText } from '../../functions/shared/logger.js';

const SECRET = 'S3cr3t "pw"/+?';

/** A text as a reader could decode it: as is, percent-decoded, entity-decoded, JSON-unescaped, and base64-decoded runs. */
const decodedViews = (text: string): string[] => {
  // URLSearchParams decodes as a form does (+ as space), tolerating stray %.
  const percent = new URLSearchParams(`v=${text.replaceAll('&', '%26')}`).get('v')!;
  const entities = text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e.toLowerCase()]!,
  );
  const json = text.replace(/\\u([0-9a-f]{4})|\\(.)/gi, (_, hex: string | undefined, c: string) => (hex ? String.fromCharCode(parseInt(hex, 16)) : c));
  const base64 = [...text.matchAll(/[A-Za-z0-9+/]{8,}={0,2}/g)].map((m) => Buffer.from(m[0], 'base64').toString('utf8'));
  return [text, percent, entities, json, ...base64];
};

describe('isSecretField', () => {
  it.each(['password', 'remote-password', 'Passphrase', 'clientSecret', 'accessToken', 'Authorization', 'credentials', 'Cookie', 'key', 'apiKey', 'API_KEY', 'private-key', 'ssh_key_data', 'x-api-key', 'community', 'snmp-community', 'ike-psk', 'pskValue'])(
    'treats %s as a secret',
    (name) => expect(isSecretField(name)).toBe(true),
  );
  it.each(['name', 'hostname', 'queryKeys', 'keyboard', 'monkeys', 'address', 'username', 'path'])('does not treat %s as a secret', (name) => expect(isSecretField(name)).toBe(false));
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
    expect(redactText('{"name": "r1", "secret" : "a\\"b", "x": "y"')).toBe('{"name": "r1", "secret" : "[redacted]", "x": "y"');
  });
});

describe('truncateText', () => {
  it('cuts at the limit without splitting a surrogate pair', () => {
    expect(truncateText('abc', 3)).toEqual({ text: 'abc', truncated: false });
    expect(truncateText('ab😀c', 3)).toEqual({ text: 'ab', truncated: true });
    expect(truncateText('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
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
      ['percent-encoded inside a JSON string', 'application/json', JSON.stringify({ query: `a=1&remote=${new URLSearchParams({ x: PW }).toString().slice(2)}` })],
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
