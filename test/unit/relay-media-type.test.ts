import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as mediaType from '../../functions/relay/media-type.js';

// Each test gets the module afresh: parsed media types are kept in the module, so a text parsed
// by an earlier test (or by mutation testing's first run) would otherwise be answered from that
// memory without the parser running at all.
let { charsetOf, isJsonMediaType, parseMediaType } = mediaType;
beforeEach(async () => {
  vi.resetModules();
  ({ charsetOf, isJsonMediaType, parseMediaType } = await import('../../functions/relay/media-type.js'));
});

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

  it('reads an escaped quote inside a quoted string as part of it, not as its end', () => {
    // Were the escaped quote the end, the ";" after it would start a parameter `y"`, which is not one.
    expect(parseMediaType('text/plain; a="x\\";y"; b=c')?.parameters).toEqual([
      ['a', '"x\\";y"'],
      ['b', 'c'],
    ]);
    expect(parseMediaType('text/plain; a="x\\\\"; b=c')?.parameters).toEqual([
      ['a', '"x\\\\"'],
      ['b', 'c'],
    ]);
  });

  it('refuses a quoted string that ends on its escape character', () => {
    expect(parseMediaType('text/plain; a="x\\')).toBeUndefined();
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
    expect(charsetOf(parseMediaType('text/plain; CharSet=UTF-8'))).toBe('utf-8');
    expect(charsetOf(parseMediaType('text/plain'))).toBeUndefined();
    expect(charsetOf(undefined)).toBeUndefined();
  });

  it('reads the charset parameter wherever it stands, and no other', () => {
    expect(charsetOf(parseMediaType('text/plain; format=flowed; charset=UTF-8; delsp=yes'))).toBe('utf-8');
    expect(charsetOf(parseMediaType('text/plain; format=flowed'))).toBeUndefined();
    expect(charsetOf(parseMediaType('text/plain; charsets=utf-8'))).toBeUndefined();
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

  // What the memory keeps shows in identity alone: a remembered text gives back the very object
  // of its first parse, a forgotten one a fresh (equal) object.
  it('remembers 64 texts, forgetting the oldest first', () => {
    const first = parseMediaType('application/first+json')!;
    for (let i = 0; i < 63; i++) parseMediaType(`application/x-${i}+json`);
    expect(parseMediaType('application/first+json')).toBe(first);
    parseMediaType('application/one-more+json');
    const again = parseMediaType('application/first+json')!;
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('remembers each of a few texts, not only the last', () => {
    const a = parseMediaType('application/a+json');
    const b = parseMediaType('application/b+json');
    expect(parseMediaType('application/a+json')).toBe(a);
    expect(parseMediaType('application/b+json')).toBe(b);
  });

  it('answers a remembered refusal without taking another place in the memory', () => {
    const first = parseMediaType('application/first+json')!;
    for (let i = 0; i < 62; i++) parseMediaType(`application/x-${i}+json`);
    expect(parseMediaType('not a media type')).toBeUndefined();
    // 64 texts remembered; asking for the refused one again must not push the oldest out.
    expect(parseMediaType('not a media type')).toBeUndefined();
    expect(parseMediaType('application/first+json')).toBe(first);
  });

  it('remembers texts of up to 256 characters only', () => {
    const at = (length: number): string => `application/${'x'.repeat(length - 'application/'.length)}`;
    expect(at(256)).toHaveLength(256);
    expect(parseMediaType(at(256))).toBe(parseMediaType(at(256)));
    const long = parseMediaType(at(257));
    expect(long).toEqual({ type: 'application', subtype: 'x'.repeat(257 - 'application/'.length), parameters: [] });
    expect(parseMediaType(at(257))).not.toBe(long);
  });

  it('keeps answering correctly after more distinct texts than it remembers', () => {
    for (let i = 0; i < 200; i++) expect(parseMediaType(`application/x-${i}+json`)?.subtype).toBe(`x-${i}+json`);
    expect(parseMediaType('application/x-0+json')?.subtype).toBe('x-0+json');
  });
});
