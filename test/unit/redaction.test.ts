/**
 * The redaction the relay's trace lines rely on, on its own: known secrets in every spelling,
 * members named like secrets at any depth, XML elements and form pairs, truncation after
 * redaction, and the bodies and headers as call-log.ts shows them.
 */
import { describe, expect, it } from 'vitest';
import { TRACE_BODY_LIMIT, callLineLevel, loggedBody, loggedHeaders } from '../../functions/relay/call-log.js';
import { isSecretField, redact, redactText, truncateText } from '../../functions/shared/logger.js';

const SECRET = 'S3cr3t "pw"/+?';

describe('isSecretField', () => {
  it.each(['password', 'remote-password', 'Passphrase', 'clientSecret', 'accessToken', 'Authorization', 'credentials', 'Cookie', 'key', 'apiKey', 'API_KEY', 'private-key', 'ssh_key_data', 'x-api-key'])(
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
