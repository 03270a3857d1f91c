import { describe, expect, it } from 'vitest';
import { eventBody, groupHeaders, isBinaryMediaType, parseQuery, readProxyResult, requestTime } from '../../tools/local/proxy.js';

const read = (result: unknown, accept?: string, binaryMediaTypes: string[] = []) => readProxyResult(JSON.stringify(result), { binaryMediaTypes, accept });

describe('request headers', () => {
  it('keep the first spelling, the last value in headers, every value in multiValueHeaders', () => {
    const h = groupHeaders(['X-Dup', 'a', 'x-dup', 'b', 'Accept', 'application/json']);
    expect(h.single).toEqual({ 'X-Dup': 'b', Accept: 'application/json' });
    expect(h.multi).toEqual({ 'X-Dup': ['a', 'b'], Accept: ['application/json'] });
    expect(h.lower['x-dup']).toBe('a,b');
  });

  it('capitalise Authorization and User-Agent, drop hop-by-hop headers, and add the gateway headers the client did not send', () => {
    const h = groupHeaders(['authorization', 'Bearer t', 'user-agent', 'curl', 'Connection', 'keep-alive', 'Content-Length', '2'], {
      'X-Forwarded-For': '127.0.0.1',
      authorization: 'ignored',
    });
    expect(h.single).toEqual({ Authorization: 'Bearer t', 'User-Agent': 'curl', 'X-Forwarded-For': '127.0.0.1' });
  });
});

describe('query strings', () => {
  it('are decoded (+ and %XX), keep repeats, and tolerate bad escapes and bare names', () => {
    expect(parseQuery('a=1&a=2&b=h%C3%A9+llo&c&d=%E0%A4%A&&')).toEqual({
      single: { a: '2', b: 'hé llo', c: '', d: '%E0%A4%A' },
      multi: { a: ['1', '2'], b: ['hé llo'], c: [''], d: ['%E0%A4%A'] },
    });
    expect(parseQuery('')).toEqual({ single: {}, multi: {} });
  });
});

describe('event body', () => {
  it('is null when empty, text when UTF-8, base64 for binary media types or bytes that are not UTF-8', () => {
    expect(eventBody(Buffer.alloc(0), 'application/json', [])).toEqual({ body: null, isBase64Encoded: false });
    expect(eventBody(Buffer.from('{"é":1}'), 'application/json', [])).toEqual({ body: '{"é":1}', isBase64Encoded: false });
    expect(eventBody(Buffer.from('abc'), 'image/png', ['image/*'])).toEqual({ body: Buffer.from('abc').toString('base64'), isBase64Encoded: true });
    expect(eventBody(Buffer.from([0xff, 0xfe]), 'text/plain', [])).toEqual({ body: '//4=', isBase64Encoded: true });
  });

  it('matches binary media types with wildcards and without parameters', () => {
    expect(isBinaryMediaType('application/octet-stream; x=1', ['application/octet-stream'])).toBe(true);
    expect(isBinaryMediaType('image/png', ['*/*'])).toBe(true);
    expect(isBinaryMediaType('text/plain', ['image/*'])).toBe(false);
    expect(isBinaryMediaType(undefined, ['*/*'])).toBe(false);
  });
});

describe('proxy results', () => {
  it('give status, headers and body; Content-Type defaults to application/json', () => {
    expect(read({ statusCode: 201, headers: { Location: '/x' }, body: 'hi' })).toEqual({
      statusCode: 201,
      headers: [
        ['Location', '/x'],
        ['Content-Type', 'application/json'],
      ],
      body: Buffer.from('hi'),
    });
    expect(read({})?.statusCode).toBe(200);
    expect(read({ statusCode: '204' })?.statusCode).toBe(204);
    expect(read({ statusCode: 200, body: null })?.body.length).toBe(0);
  });

  it('let multiValueHeaders win over headers of the same name, and turn booleans into text', () => {
    const r = read({ headers: { 'set-cookie': 'x=0', 'X-Flag': true }, multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] } });
    expect(r?.headers).toEqual([
      ['Set-Cookie', 'a=1'],
      ['Set-Cookie', 'b=2'],
      ['X-Flag', 'true'],
      ['Content-Type', 'application/json'],
    ]);
  });

  it.each([
    ['not JSON', undefined, 'not json'],
    ['null', null],
    ['an array', [1]],
    ['an unknown key', { statusCode: 200, cookies: [] }],
    ['a status that is not an integer', { statusCode: 'ok' }],
    ['a status out of range', { statusCode: 99 }],
    ['an object body', { body: { a: 1 } }],
    ['a number header value', { headers: { 'X-N': 1 } }],
    ['a header value with a line break', { headers: { 'X-N': 'a\r\nSet-Cookie: evil' } }],
    ['a header name that is not a token', { headers: { 'Bad Name': 'x' } }],
    ['headers that are null', { headers: null }],
    ['a non-boolean isBase64Encoded', { isBase64Encoded: 'yes' }],
  ])('are malformed (502) with %s', (_, result, raw?: string) => {
    expect(raw !== undefined ? readProxyResult(raw, { binaryMediaTypes: [], accept: undefined }) : read(result)).toBeUndefined();
  });

  it('decode a base64 body only for a binary media type, else pass the base64 text as API Gateway does', () => {
    const b64 = Buffer.from([1, 2, 3]).toString('base64');
    expect(read({ body: b64, isBase64Encoded: true, headers: { 'Content-Type': 'image/png' } }, undefined, ['image/png'])?.body).toEqual(
      Buffer.from([1, 2, 3]),
    );
    expect(read({ body: b64, isBase64Encoded: true, headers: { 'Content-Type': 'text/plain' } }, 'image/png', ['image/png'])?.body).toEqual(
      Buffer.from([1, 2, 3]),
    );
    expect(read({ body: b64, isBase64Encoded: true, headers: { 'Content-Type': 'image/png' } })?.body.toString()).toBe(b64);
  });
});

describe('request time', () => {
  it('is formatted as $context.requestTime', () => {
    expect(requestTime(Date.UTC(2015, 3, 9, 12, 34, 56))).toBe('09/Apr/2015:12:34:56 +0000');
  });
});
