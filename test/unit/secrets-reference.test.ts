import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_KEY,
  adapterSecretReference,
  formatReference,
  isEncValue,
  isManagedPath,
  parseReference,
} from '../../functions/secrets/reference.js';

describe('$VAULT_ references', () => {
  it('parses a path and an explicit key', () => {
    expect(parseReference('$VAULT_netconfig/nso/lab#admin-password')).toEqual({ path: 'netconfig/nso/lab', key: 'admin-password' });
  });

  it('uses the default key when none is named', () => {
    expect(parseReference('$VAULT_team/nso')).toEqual({ path: 'team/nso', key: DEFAULT_KEY });
    expect(DEFAULT_KEY).toBe('password');
  });

  it('accepts a path of 512 characters and a key of 128, and refuses one more of either', () => {
    const path = `${'a'.repeat(255)}/${'b'.repeat(256)}`;
    expect(path).toHaveLength(512);
    expect(parseReference(`$VAULT_${path}#${'k'.repeat(128)}`)).toEqual({ path, key: 'k'.repeat(128) });
    expect(parseReference(`$VAULT_${path}c`)).toBe('the path is longer than 512 characters');
    expect(parseReference(`$VAULT_a#${'k'.repeat(129)}`)).toBe('the key after "#" must be 1 to 128 letters, digits, ".", "_" or "-"');
  });

  it('tells each problem of a path by its own reason', () => {
    expect(parseReference('$VAULT_')).toBe('the path is empty');
    expect(parseReference('$VAULT_a//b')).toBe('the path has an empty segment (a leading, trailing or doubled "/")');
    expect(parseReference('$VAULT_a/./b')).toBe('the path has a "." or ".." segment');
    expect(parseReference('$VAULT_a/b~')).toBe('the path may hold only letters, digits, space, ".", "_", "-" and "/"');
    expect(parseReference('plain')).toBe('a reference starts with $VAULT_');
  });

  it('accepts spaces inside segments (adapter names may hold spaces)', () => {
    expect(parseReference('$VAULT_netconfig/adapters/nso lab 1#password')).toEqual({ path: 'netconfig/adapters/nso lab 1', key: 'password' });
  });

  it.each([
    ['$VAULT_', 'empty'],
    ['$VAULT_/abs', 'empty segment'],
    ['$VAULT_a//b', 'empty segment'],
    ['$VAULT_a/', 'empty segment'],
    ['$VAULT_a/../b', '".."'],
    ['$VAULT_./b', '".."'],
    ['$VAULT_a/b?x=1', 'only letters'],
    ['$VAULT_a%2Fb', 'only letters'],
    ['$VAULT_a#', 'key'],
    ['$VAULT_a#k/y', 'key'],
    ['$VAULT_a#b#c', 'key'],
    ['hunter2', 'starts with $VAULT_'],
    ['$vault_a', 'starts with $VAULT_'],
  ])('refuses %s', (value, reason) => {
    const result = parseReference(value);
    expect(typeof result).toBe('string');
    expect(result).toContain(reason);
  });

  it('never echoes the refused value in the reason', () => {
    fc.assert(
      // Prefixed with text that no reason contains, so a hit can only be an echo.
      // Every value is malformed by construction: "~" is in no path segment, and the first form lacks the prefix.
      fc.property(fc.oneof(fc.string().map((s) => `Zq~${s}`), fc.string().map((s) => `$VAULT_Zq~${s}`)), (value) => {
        const result = parseReference(value);
        expect(typeof result).toBe('string');
        expect((result as string).includes(value)).toBe(false);
      }),
    );
  });

  it('formats the canonical form, which parses back to the same reference', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9 ._-]{1,12}$/).filter((s) => s !== '.' && s !== '..');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/), (segments, key) => {
        const reference = { path: segments.join('/'), key };
        expect(parseReference(formatReference(reference))).toEqual(reference);
      }),
    );
  });

  it('accepts every well-formed reference, with the default key when it names none, and refuses it with one bad character', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9 ._-]{1,12}$/).filter((s) => s !== '.' && s !== '..');
    const bad = fc.constantFrom('~', '\\', '"', '\u0000', '\n', 'é', '?', '%', '$', '{', '<', ':', '@', '!');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.nat(), bad, (segments, at, char) => {
        const path = segments.join('/');
        expect(parseReference(`$VAULT_${path}`)).toEqual({ path, key: DEFAULT_KEY });
        const position = at % (path.length + 1);
        const damaged = `${path.slice(0, position)}${char}${path.slice(position)}`;
        expect(typeof parseReference(`$VAULT_${damaged}`)).toBe('string');
        expect(typeof parseReference(`$VAULT_${path}#${char}`)).toBe('string');
      }),
    );
  });

  it('derives the generated path of an adapter under netconfig/adapters', () => {
    const ref = adapterSecretReference('nso lab');
    expect(formatReference(ref)).toBe('$VAULT_netconfig/adapters/nso lab#password');
    expect(isManagedPath(ref.path)).toBe(true);
    expect(isManagedPath('team/nso')).toBe(false);
  });

  it('recognises $ENC values, with or without leading spaces', () => {
    expect(isEncValue('$ENC(abc)')).toBe(true);
    expect(isEncValue('$ENCabc')).toBe(true);
    expect(isEncValue('  $ENC:abc')).toBe(true);
    expect(isEncValue('pa$ENCword')).toBe(false);
    expect(isEncValue('$VAULT_a')).toBe(false);
  });
});
