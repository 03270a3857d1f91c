import { describe, expect, it } from 'vitest';
import { algorithmFitsKey, bearerToken, callerOf, MAX_TOKEN_LENGTH, TokenRejected } from '../../functions/authorizer/verify.js';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';

const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof TokenRejected) return err.reason;
    throw err;
  }
  return 'accepted';
};

describe('bearerToken', () => {
  it.each(['Authorization', 'authorization', 'AUTHORIZATION', 'aUtHoRiZaTiOn'])('reads the %s header', (name) => {
    expect(bearerToken({ [name]: `Bearer ${JWT}` })).toBe(JWT);
  });

  it('accepts the scheme in any case and surrounding blanks after it', () => {
    expect(bearerToken({ authorization: `bearer  ${JWT} ` })).toBe(JWT);
    expect(bearerToken({ authorization: `BEARER\t${JWT}` })).toBe(JWT);
  });

  it.each([
    ['no headers', null],
    ['no Authorization header', { Accept: 'application/json' }],
    ['an empty Authorization header', { Authorization: '' }],
  ])('reports a missing token for %s', (_label, headers) => {
    expect(reason(() => bearerToken(headers))).toBe('missing');
  });

  it.each([
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['the scheme alone', 'Bearer'],
    ['the token without scheme', JWT],
    ['two tokens', `Bearer ${JWT} ${JWT}`],
    ['two parts', 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0'],
    ['an empty signature (alg none style)', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
    ['padding', 'Bearer eyJhbGciOiJSUzI1NiJ9=.eyJzdWIiOiJ4In0.c2ln'],
    ['four parts (JWE-like)', `Bearer ${JWT}.x`],
    ['characters outside base64url', 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2l+'],
  ])('reports a malformed header for %s', (_label, value) => {
    expect(reason(() => bearerToken({ Authorization: value }))).toBe('malformed');
  });

  it('refuses two Authorization headers instead of picking one', () => {
    expect(reason(() => bearerToken({ Authorization: `Bearer ${JWT}`, authorization: `Bearer ${JWT}` }))).toBe('malformed');
    expect(reason(() => bearerToken({ Authorization: `Bearer ${JWT}` }, { Authorization: [`Bearer ${JWT}`, 'Bearer other.token.x'] }))).toBe('malformed');
  });

  it('reads one Authorization header beside other repeated headers', () => {
    expect(bearerToken({ Authorization: `Bearer ${JWT}` }, { Accept: ['a', 'b'], Authorization: [`Bearer ${JWT}`] })).toBe(JWT);
  });

  it('takes a token of exactly the limit and refuses one character more', () => {
    const atLimit = `${'a'.repeat(MAX_TOKEN_LENGTH - 4)}.b.c`;
    expect(bearerToken({ Authorization: `Bearer ${atLimit}` })).toBe(atLimit);
    expect(reason(() => bearerToken({ Authorization: `Bearer ${atLimit}a` }))).toBe('too-large');
  });

  it('refuses a header over the limit plus 32 characters before parsing it, even when the token in it is short', () => {
    // Blanks around the token are allowed, so only the header's own cap refuses the longer one.
    const header = (length: number): string => `Bearer ${JWT}${' '.repeat(length - 'Bearer '.length - JWT.length)}`;
    expect(header(MAX_TOKEN_LENGTH + 32)).toHaveLength(MAX_TOKEN_LENGTH + 32);
    expect(bearerToken({ Authorization: header(MAX_TOKEN_LENGTH + 32) })).toBe(JWT);
    expect(reason(() => bearerToken({ Authorization: header(MAX_TOKEN_LENGTH + 33) }))).toBe('too-large');
  });

  it('refuses a token longer than the limit before decoding it', () => {
    const long = `${'a'.repeat(MAX_TOKEN_LENGTH)}.b.c`;
    expect(reason(() => bearerToken({ Authorization: `Bearer ${long}` }))).toBe('too-large');
    expect(reason(() => bearerToken({ Authorization: `Bearer ${'a'.repeat(100 * 1024)}` }))).toBe('too-large');
  });
});

describe('TokenRejected', () => {
  it('names itself and its reason, for any log or stack that shows it', () => {
    const err = new TokenRejected('expired');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('TokenRejected');
    expect(err.message).toBe('token rejected: expired');
    expect(err.reason).toBe('expired');
  });
});

describe('algorithmFitsKey', () => {
  const rsa = { kty: 'RSA', n: 'n', e: 'AQAB' };
  const p256 = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' };
  const p384 = { kty: 'EC', crv: 'P-384', x: 'x', y: 'y' };

  it('binds each algorithm to its key family and curve', () => {
    expect(algorithmFitsKey('RS256', rsa)).toBe(true);
    expect(algorithmFitsKey('RS512', rsa)).toBe(true);
    expect(algorithmFitsKey('ES256', p256)).toBe(true);
    expect(algorithmFitsKey('ES384', p384)).toBe(true);
    expect(algorithmFitsKey('ES256', rsa)).toBe(false);
    expect(algorithmFitsKey('RS256', p256)).toBe(false);
    expect(algorithmFitsKey('ES384', p256)).toBe(false);
  });

  it.each(['none', 'HS256', 'HS512', 'PS256', 'EdDSA', undefined])('never accepts %s', (alg) => {
    expect(algorithmFitsKey(alg, rsa)).toBe(false);
    expect(algorithmFitsKey(alg, p256)).toBe(false);
  });
});

describe('callerOf: the checks after the signature, at the instant it is given', () => {
  const NOW = 2_000_000_000;
  const payload = (claims: Record<string, unknown>) => ({ sub: 'user-1', roles: ['apiread', 'nobody'], ...claims });
  const at = (claims: Record<string, unknown>, nowSeconds: number) => reason(() => callerOf(payload(claims), 'roles', nowSeconds));

  it.each([
    ['exactly exp', { exp: NOW }, NOW, 'accepted'],
    ['exp + 29.999 s', { exp: NOW }, NOW + 29.999, 'accepted'],
    ['exp + 30 s', { exp: NOW }, NOW + 30, 'expired'],
    ['exp + 31 s', { exp: NOW }, NOW + 31, 'expired'],
    ['exactly nbf', { exp: NOW + 60, nbf: NOW }, NOW, 'accepted'],
    ['nbf − 30 s', { exp: NOW + 60, nbf: NOW }, NOW - 30, 'accepted'],
    ['nbf − 30.001 s', { exp: NOW + 60, nbf: NOW }, NOW - 30.001, 'not-yet-valid'],
    ['nbf − 31 s', { exp: NOW + 60, nbf: NOW }, NOW - 31, 'not-yet-valid'],
    ['exp 24 h + 30 s ahead', { exp: NOW + 86_430 }, NOW, 'accepted'],
    ['exp 24 h + 31 s ahead', { exp: NOW + 86_431 }, NOW, 'lifetime'],
    ['exp − iat exactly 24 h', { iat: NOW - 10, exp: NOW - 10 + 86_400 }, NOW, 'accepted'],
    ['exp − iat 24 h + 1 s', { iat: NOW - 10, exp: NOW - 10 + 86_401 }, NOW, 'lifetime'],
    ['no exp', {}, NOW, 'claims'],
    ['an exp that is a string', { exp: String(NOW + 60) }, NOW, 'claims'],
    ['an exp that is not finite', { exp: Number.POSITIVE_INFINITY }, NOW, 'claims'],
    ['an empty sub', { exp: NOW + 60, sub: '' }, NOW, 'claims'],
    ['a sub of 256 characters', { exp: NOW + 60, sub: 's'.repeat(256) }, NOW, 'accepted'],
    ['a sub of 257 characters', { exp: NOW + 60, sub: 's'.repeat(257) }, NOW, 'claims'],
    ['a sub that is a number', { exp: NOW + 60, sub: 7 }, NOW, 'claims'],
  ])('%s', (_label, claims, nowSeconds, expected) => {
    expect(at(claims, nowSeconds)).toBe(expected);
  });

  it('returns the subject and the known roles of the configured claim only', () => {
    expect(callerOf(payload({ exp: NOW + 60, groups: ['admin'] }), 'roles', NOW)).toEqual({ sub: 'user-1', roles: ['apiread'] });
    expect(callerOf(payload({ exp: NOW + 60, groups: ['admin'] }), 'groups', NOW)).toEqual({ sub: 'user-1', roles: ['admin'] });
  });
});
