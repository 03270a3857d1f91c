import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { charsetOf, isJsonMediaType, parseMediaType } from '../../functions/relay/media-type.js';

describe('parseMediaType', () => {
  it.each([
    ['application/yang-data+json', 'application', 'yang-data+json'],
    ['application/vnd.yang.data+json', 'application', 'vnd.yang.data+json'],
    ['application/vnd.yang.collection+xml', 'application', 'vnd.yang.collection+xml'],
    ['Application/JSON', 'application', 'json'],
    ['*/*', '*', '*'],
    ['  text/plain  ', 'text', 'plain'],
  ])('accepts %s', (value, type, subtype) => {
    expect(parseMediaType(value)).toMatchObject({ type, subtype });
  });

  it('reads parameters, including quoted strings holding ";" and escaped quotes', () => {
    expect(parseMediaType('application/json; charset=UTF-8')?.parameters).toEqual([['charset', 'UTF-8']]);
    expect(parseMediaType('text/plain;a="x;y";b="q\\"r"')?.parameters).toEqual([
      ['a', '"x;y"'],
      ['b', '"q\\"r"'],
    ]);
    expect(parseMediaType('text/plain;;a=b')?.parameters).toEqual([['a', 'b']]);
  });

  it.each([
    ['an empty string', ''],
    ['a bare word', 'json'],
    ['a missing subtype', 'application/'],
    ['two slashes', 'application/json/x'],
    ['a list', 'application/json, text/plain'],
    ['a space inside the type', 'application/yang data+json'],
    ['CR LF (header injection)', 'application/json\r\nX-Injected: 1'],
    ['a lone LF', 'application/json\nx'],
    ['NUL', 'application/json\u0000'],
    ['non-ASCII', 'application/jsön'],
    ['a parameter without value', 'application/json; charset'],
    ['an unterminated quoted string', 'text/plain; a="x'],
    ['a quote inside a token', 'text/plain; a=x"y'],
  ])('refuses %s', (_label, value) => {
    expect(parseMediaType(value)).toBeUndefined();
  });

  it('never accepts a value containing CR or LF', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom('\r', '\n'), fc.string(), (a, crlf, b) => {
        expect(parseMediaType(`${a}${crlf}${b}`)).toBeUndefined();
      }),
    );
  });
});

describe('isJsonMediaType', () => {
  it.each(['application/json', 'application/yang-data+json', 'application/vnd.yang.collection+json; charset=utf-8'])('is true for %s', (value) => {
    expect(isJsonMediaType(parseMediaType(value))).toBe(true);
  });

  it.each(['application/yang-data+xml', 'text/plain', 'application/jsonx', 'application/json-seq'])('is false for %s', (value) => {
    expect(isJsonMediaType(parseMediaType(value))).toBe(false);
  });

  it('is false for no media type', () => {
    expect(isJsonMediaType(undefined)).toBe(false);
  });
});

describe('charsetOf', () => {
  it('reads the charset, unquoted and lower-cased', () => {
    expect(charsetOf(parseMediaType('text/plain; charset="ISO-8859-1"'))).toBe('iso-8859-1');
    expect(charsetOf(parseMediaType('text/plain'))).toBeUndefined();
  });
});

describe('parseMediaType, parsed once per text', () => {
  it('gives the same answer the second time, as a value no caller can change', () => {
    const first = parseMediaType('application/yang-data+json; charset=utf-8')!;
    const again = parseMediaType('application/yang-data+json; charset=utf-8')!;
    expect(again).toEqual({ type: 'application', subtype: 'yang-data+json', parameters: [['charset', 'utf-8']] });
    expect(again).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.parameters) && Object.isFrozen(first.parameters[0])).toBe(true);
    expect(() => ((first as { subtype: string }).subtype = 'xml')).toThrow(TypeError);
  });

  it('answers a refused text the same way every time, and long texts as short ones', () => {
    for (let i = 0; i < 3; i++) expect(parseMediaType('application/json\r\nX-Injected: yes')).toBeUndefined();
    const long = `application/json; p="${'x'.repeat(400)}"`;
    expect(parseMediaType(long)?.parameters).toEqual([['p', `"${'x'.repeat(400)}"`]]);
    expect(parseMediaType(long)).toEqual(parseMediaType(long));
  });

  it('keeps answering correctly after more distinct texts than it remembers', () => {
    for (let i = 0; i < 200; i++) expect(parseMediaType(`application/x-${i}+json`)?.subtype).toBe(`x-${i}+json`);
    expect(parseMediaType('application/x-0+json')?.subtype).toBe('x-0+json');
  });
});
