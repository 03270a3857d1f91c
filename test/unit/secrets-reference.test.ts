import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_KEY,
  adapterSecretReference,
  formatReference,
  isEncValue,
  isManagedPath,
  isNameablePath,
  isOwnManagedPath,
  isVaultReference,
  newAdapterSecretReference,
  ownManagedPathOf,
  parseReference,
  parseReferencePrefixes,
} from '../../functions/outbound/secrets/reference.js';

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
    expect(parseReference('plain')).toBe('a reference starts with $VAULT_ exactly (capitals, an underscore, no space before it)');
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
      fc.property(
        fc.oneof(
          fc.string().map((s) => `Zq~${s}`),
          fc.string().map((s) => `$VAULT_Zq~${s}`),
        ),
        (value) => {
          const result = parseReference(value);
          expect(typeof result).toBe('string');
          expect((result as string).includes(value)).toBe(false);
        },
      ),
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

describe('the paths an adapter may name, and the ones the service manages', () => {
  it('takes anything that starts like a reference, in any case, for one (to be checked, never stored as a password)', () => {
    for (const value of ['$VAULT_a', '$VAULT_', ' $VAULT_a', '\t$vault_a', '$Vault_a', '$vAuLt-a', '$VAULTa', '$vault'])
      expect(isVaultReference(value), value).toBe(true);
    for (const value of ['x$VAULT_a', 'VAULT_a', '$vaul', 'hunter2', '$ENCabc']) expect(isVaultReference(value), value).toBe(false);
    // As a reader could take it: invisible characters left out, fullwidth forms, percent-decoded once.
    for (const value of [
      '\u200b$vault_x',
      '$\u200dVAULT_x',
      '\uff04\uff36\uff21\uff35\uff2c\uff34_x',
      '\ufe69vault_x',
      '%24VAULT_x',
      '%24vault',
      '\uff0524VAULT_x',
      '%EF%BC%84VAULT_x',
      '%e2%80%8b%24vault_x',
      '%24VAULT_x%ff',
    ])
      expect(isVaultReference(value), value).toBe(true);
    // Passwords that hold such characters but do not read as a reference (escapes that do not decode as UTF-8 among them).
    for (const value of ['pa\u200bss$vault', 'x%24VAULT_a', '%2524VAULT_x', '100%\uff04vault', '%E0%A4%A$vault', '%ff%24VAULT_x'])
      expect(isVaultReference(value), value).toBe(false);
  });

  it('never throws, whatever the value', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (value) => void isVaultReference(value)));
    // Only the exact prefix parses.
    expect(typeof parseReference(' $VAULT_a')).toBe('string');
    expect(typeof parseReference('$vault_a')).toBe('string');
  });

  it('puts each new password of an adapter under its own managed path, by version', () => {
    expect(newAdapterSecretReference('nso lab', 'v7')).toEqual({ path: 'netconfig/adapters/nso lab/v7', key: DEFAULT_KEY });
    expect(isOwnManagedPath('nso lab', newAdapterSecretReference('nso lab', 'v7').path)).toBe(true);
  });

  it('counts only what lies under netconfig/adapters/ as managed', () => {
    expect(isManagedPath('netconfig/adapters/x')).toBe(true);
    expect(isManagedPath('netconfig/adapters')).toBe(false);
    expect(isManagedPath('netconfig/adaptersx/y')).toBe(false);
    expect(isManagedPath('team/netconfig/adapters/x')).toBe(false);
  });

  it.each([
    ['netconfig/adapters/nso', true],
    ['netconfig/adapters/nso/v1', true],
    ['netconfig/adapters/nso/v1/deeper', true],
    ['netconfig/adapters/nso2', false],
    ['netconfig/adapters/nso2/v1', false],
    ['netconfig/adapters/ns', false],
    ['netconfig/adapters', false],
    ['team/netconfig/adapters/nso/', false],
    ['other/nso', false],
  ])('for adapter nso, %s is its own managed path: %s', (path, own) => {
    expect(isOwnManagedPath('nso', path)).toBe(own);
  });

  it('reads the own managed path out of a stored reference, and nothing else', () => {
    expect(ownManagedPathOf('nso', '$VAULT_netconfig/adapters/nso/v1#password')).toBe('netconfig/adapters/nso/v1');
    expect(ownManagedPathOf('nso', '$VAULT_netconfig/adapters/nso')).toBe('netconfig/adapters/nso');
    expect(ownManagedPathOf('nso', undefined)).toBeUndefined();
    expect(ownManagedPathOf('nso', '$VAULT_netconfig/adapters/other/v1#password')).toBeUndefined();
    expect(ownManagedPathOf('nso', '$VAULT_team/nso#password')).toBeUndefined();
    // Malformed: never a path, even one that starts like the adapter's own.
    expect(ownManagedPathOf('nso', '$VAULT_netconfig/adapters/nso//v1')).toBeUndefined();
    expect(ownManagedPathOf('nso', 'netconfig/adapters/nso')).toBeUndefined();
    expect(ownManagedPathOf('nso', 'hunter2')).toBeUndefined();
  });

  it.each([
    ['team/nso', ['team/nso'], true],
    ['team/nso/lab', ['team/nso'], true],
    ['team/nso/lab/admin', ['team/nso'], true],
    ['team/nsox', ['team/nso'], false],
    ['team/ns', ['team/nso'], false],
    ['team', ['team/nso'], false],
    ['x/team/nso', ['team/nso'], false],
    ['x/team/nso/', ['team/nso'], false],
    ['shared/b', ['team', 'shared'], true],
    ['team/a', ['team', 'shared'], true],
    ['other/a', ['team', 'shared'], false],
    ['team/a', [], false],
    // Never a managed path, even under a listed prefix.
    ['netconfig/adapters/nso', ['netconfig'], false],
    ['netconfig/adapters/nso/v1', ['netconfig/adapters'], false],
    ['netconfig/other', ['netconfig'], true],
  ])('%s with the prefixes %j may be named: %s', (path, prefixes, nameable) => {
    expect(isNameablePath(path, prefixes)).toBe(nameable);
  });

  it('parses SECRETS_REFERENCE_PREFIXES: trimmed, trailing slashes dropped, empty entries ignored', () => {
    expect(parseReferencePrefixes(undefined)).toEqual([]);
    expect(parseReferencePrefixes('')).toEqual([]);
    expect(parseReferencePrefixes(' , ,, ')).toEqual([]);
    expect(parseReferencePrefixes('team')).toEqual(['team']);
    expect(parseReferencePrefixes('team,shared/nso')).toEqual(['team', 'shared/nso']);
    expect(parseReferencePrefixes(' team/nso/ , ,other//,  ')).toEqual(['team/nso', 'other']);
    expect(parseReferencePrefixes('/,//')).toEqual([]);
    // Only trailing slashes go: one in the middle or at the start stays.
    expect(parseReferencePrefixes('a/b,/c')).toEqual(['a/b', '/c']);
  });
});
