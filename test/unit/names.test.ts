import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { namePatternSource, nameProblem, pathNameProblem } from '../../functions/platform/names.js';

/** Characters a name may not hold: controls (Cc), formats (Cf: zero-width, bidirectional), separators but the space. */
const INVISIBLE = [
  '\u0000',
  '\t',
  '\n',
  '\r',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00ad',
  '\u061c',
  '\u180e',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202e',
  '\u2060',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\u00a0',
  '\u2003',
  '\u3000',
];
/**
 * Characters that are invisible or mean nothing by themselves: surrogates (Cs), private use (Co),
 * unassigned (Cn), non-characters, default-ignorables outside Cf, and the Braille blank.
 */
const MEANINGLESS = [
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ue000',
  '\uf8ff',
  '\u{f0000}',
  '\u{10fffd}',
  '\u0378',
  '\u{e0080}',
  '\u{2fffd}',
  '\ufdd0',
  '\ufdef',
  '\ufffe',
  '\uffff',
  '\u{1fffe}',
  '\u{10ffff}',
  '\u034f',
  '\ufe00',
  '\ufe0f',
  '\u{e0100}',
  '\u3164',
  '\uffa0',
  '\u115f',
  '\u1160',
  '\u17b4',
  '\u17b5',
  '\u180b',
  '\u2800',
];
/** Visible characters, some with a canonical decomposition (so their NFD form differs). */
const VISIBLE = [...'aZ09-_.:/#()@', 'é', 'ü', 'Å', 'ß', 'ñ', '中', '文', 'ж', 'ا', '😀', 'ﬁ'];

const cleanName = fc
  .array(fc.constantFrom(...VISIBLE, ' '), { minLength: 1, maxLength: 40 })
  .map((chars) => chars.join('').trim().normalize('NFC'))
  .filter((name) => name !== '');

describe('the rule for every stored name', () => {
  it('accepts clean names', () => {
    fc.assert(
      fc.property(cleanName, (name) => {
        expect(nameProblem(name), JSON.stringify(name)).toBeUndefined();
      }),
    );
  });

  it('refuses an invisible or control character anywhere, naming it, and accepts the name without it', () => {
    fc.assert(
      fc.property(cleanName, fc.constantFrom(...INVISIBLE), fc.nat(), (name, char, at) => {
        const i = at % (name.length + 1);
        const bad = `${name.slice(0, i)}${char}${name.slice(i)}`;
        expect(nameProblem(bad), JSON.stringify(bad)).toBeDefined();
        expect(nameProblem(name)).toBeUndefined();
      }),
    );
  });

  it('refuses whitespace at either end, and a blank or empty name', () => {
    fc.assert(
      fc.property(cleanName, fc.constantFrom(' ', '  ', '\u00a0', '\t'), fc.boolean(), (name, space, start) => {
        expect(nameProblem(start ? `${space}${name}` : `${name}${space}`)).toBeDefined();
      }),
    );
    expect(nameProblem('')).toBe('is empty');
    expect(nameProblem('   ')).toBe('is blank');
  });

  it('refuses a name not in NFC and accepts its composed form', () => {
    fc.assert(
      fc.property(cleanName, fc.constantFrom('é', 'ü', 'Å', 'ñ'), (name, accented) => {
        const composed = `${name}${accented}`;
        expect(nameProblem(composed)).toBeUndefined();
        expect(nameProblem(composed.normalize('NFD'))).toMatch(/NFC/);
      }),
    );
  });

  it('refuses a surrogate, private-use, unassigned, non-character, ignorable or blank character anywhere, the JSON Schema pattern alike', () => {
    const pattern = new RegExp(namePatternSource(), 'u');
    fc.assert(
      fc.property(cleanName, fc.constantFrom(...MEANINGLESS), fc.nat(), (name, char, at) => {
        // Between code points: a lone surrogate must not pair with half of an emoji.
        const chars = [...name];
        const i = at % (chars.length + 1);
        const bad = [...chars.slice(0, i), char, ...chars.slice(i)].join('');
        expect(nameProblem(bad), JSON.stringify(bad)).toMatch(new RegExp(`U\\+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`));
        expect(pattern.test(bad), JSON.stringify(bad)).toBe(false);
        expect(pattern.test(name)).toBe(true);
      }),
    );
  });

  it('agrees with its JSON Schema pattern on any string, and refuses every string with a lone surrogate', () => {
    const pattern = new RegExp(namePatternSource(), 'u');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), (name) => {
        if (/\p{Cs}/u.test(name)) expect(nameProblem(name), JSON.stringify(name)).toBeDefined();
        // The pattern holds all of the rule but NFC.
        if (name.normalize('NFC') === name) expect(nameProblem(name) === undefined, JSON.stringify(name)).toBe(pattern.test(name));
      }),
      { numRuns: 500 },
    );
  });

  it('names the refused character by its code point', () => {
    expect(nameProblem('core\u200brouter')).toContain('U+200B');
    expect(nameProblem('admin\u202etxt')).toContain('U+202E');
  });
});

describe('path names (adapters, nodes, version labels)', () => {
  it('accept letters, digits, inner spaces, "-", "_", "." and refuse edge spaces, other characters and dot steps', () => {
    for (const name of ['lab', 'nso lab', 'a.b_c-d', 'x'.repeat(128)]) expect(pathNameProblem(name), name).toBeUndefined();
    for (const name of [' lab', 'lab ', ' ', '', '.', '..', 'lab\u200b', 'läb', 'a/b', 'x'.repeat(129)]) expect(pathNameProblem(name), name).toBeDefined();
  });
});
