/**
 * The JWKS parsing of the authorizer on its own: which JWK is a usable verification key (and
 * what of it is kept), which documents are a JWKS at all, the key families, and the errors the
 * fetching raises. The download and the cache are tried against real servers in
 * test/integration/authorizer-jwks.test.ts.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  JwkFamilyMismatch,
  JwksFetchError,
  JwksRateLimitedError,
  keyFamily,
  MAX_KID_LENGTH,
  parseJwks,
  SignatureLengthMismatch,
  usableJwk,
} from '../../functions/authorizer/jwks.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as Record<string, string>;
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as Record<string, string>;
const RSA_JWK = { kty: 'RSA', n: rsa['n']!, e: rsa['e']!, kid: 'r1' };
const EC_JWK = { kty: 'EC', crv: 'P-256', x: ec['x']!, y: ec['y']!, kid: 'e1' };
const bytes = (text: string | Buffer): ArrayBuffer => {
  const buffer = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
};

describe('usableJwk', () => {
  it('keeps the public members of an RSA or EC signature key, its kid, use sig, and alg only when the JWK names one', () => {
    const rsaKey = usableJwk({ ...RSA_JWK, d: 'private', x5c: ['cert'], use: 'sig' });
    expect(rsaKey).toEqual({ kty: 'RSA', n: RSA_JWK.n, e: RSA_JWK.e, kid: 'r1', use: 'sig' });
    expect(Object.keys(rsaKey!)).not.toContain('alg');
    expect(usableJwk({ ...EC_JWK, alg: 'ES256' })).toEqual({ kty: 'EC', crv: 'P-256', x: EC_JWK.x, y: EC_JWK.y, kid: 'e1', use: 'sig', alg: 'ES256' });
  });

  it.each([[['verify']], [['sign', 'verify']]])('uses a key whose key_ops are %j', (ops) => {
    expect(usableJwk({ ...RSA_JWK, key_ops: ops })).toMatchObject({ kid: 'r1' });
  });

  it(`accepts a kid of ${MAX_KID_LENGTH} characters`, () => {
    expect(usableJwk({ ...EC_JWK, kid: 'k'.repeat(MAX_KID_LENGTH) })).toMatchObject({ kty: 'EC' });
  });

  it.each([
    ['null', null],
    ['an array', [RSA_JWK]],
    ['a string', 'RSA'],
    ['without a kid', { ...RSA_JWK, kid: undefined }],
    ['with an empty kid', { ...RSA_JWK, kid: '' }],
    ['with a kid that is an array', { ...RSA_JWK, kid: ['r1'] }],
    [`with a kid of ${MAX_KID_LENGTH + 1} characters`, { ...RSA_JWK, kid: 'k'.repeat(MAX_KID_LENGTH + 1) }],
    ['for encryption', { ...RSA_JWK, use: 'enc' }],
    ['with key_ops without verify', { ...RSA_JWK, key_ops: ['encrypt'] }],
    ['with key_ops that are not a list', { ...RSA_JWK, key_ops: 'verify' }],
    ['with an alg that is not a string', { ...RSA_JWK, alg: 256 }],
    ['of another type (oct)', { kty: 'oct', k: 'c2VjcmV0', kid: 'h' }],
    ['of type OKP', { kty: 'OKP', crv: 'Ed25519', x: EC_JWK.x, kid: 'o' }],
    ['on a curve no ES* uses', { ...EC_JWK, crv: 'secp256k1' }],
    ['with an empty exponent (which Node would take)', { ...RSA_JWK, e: '' }],
    ['without its exponent', { kty: 'RSA', n: RSA_JWK.n, kid: 'r1' }],
    ['whose point is not on its curve', { ...EC_JWK, x: EC_JWK.y }],
    ['of an RSA modulus under 2048 bits', { kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'r1' }],
  ])('refuses a JWK %s, without throwing', (_label, jwk) => {
    expect(usableJwk(jwk)).toBeUndefined();
  });
});

describe('keyFamily', () => {
  it.each([
    [{ kty: 'RSA' }, 'RSA'],
    [{ kty: 'EC', crv: 'P-256' }, 'P-256'],
    [{ kty: 'EC', crv: 'P-384' }, 'P-384'],
    [{ kty: 'EC', crv: 'P-521' }, 'P-521'],
    [{ kty: 'EC', crv: 'secp256k1' }, undefined],
    [{ kty: 'EC' }, undefined],
    [{ kty: 'OKP', crv: 'P-256' }, undefined],
    [{ kty: 'oct', crv: 'P-256' }, undefined],
    [{ crv: 'P-256' }, undefined],
  ])('of %j is %s', (jwk, family) => {
    expect(keyFamily(jwk)).toBe(family);
  });
});

describe('parseJwks', () => {
  it('keeps the usable keys of a document and drops the rest', () => {
    const doc = { keys: [RSA_JWK, { kty: 'oct', k: 'c2VjcmV0', kid: 'h' }, null, EC_JWK] };
    expect(parseJwks(bytes(JSON.stringify(doc))).keys.map((k) => k.kid)).toEqual(['r1', 'e1']);
    expect(parseJwks(bytes('{"keys":[]}'))).toEqual({ keys: [] });
  });

  it.each([
    ['text that is not JSON', bytes('<html>not json</html>'), 'the document is not JSON'],
    ['a document nested 100,000 levels deep', bytes(`{"keys":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}`), 'the document nests deeper than 128 levels'],
    [
      'invalid UTF-8 (a byte no decoder may replace)',
      bytes(Buffer.concat([Buffer.from(`{"keys":[${JSON.stringify({ ...EC_JWK, kid: 'e' }).slice(0, -2)}`), Buffer.from([0xff]), Buffer.from('"}]}')])),
      'the document is not JSON',
    ],
    ['JSON null', bytes('null'), 'the document is not a JWKS'],
    ['a JSON number', bytes('5'), 'the document is not a JWKS'],
    ['an object without keys', bytes('{"notKeys":[]}'), 'the document is not a JWKS'],
    ['keys that are not a list', bytes('{"keys":{"0":{}}}'), 'the document is not a JWKS'],
  ])('refuses %s as a failed download (the cached keys stay)', (_label, body, reason) => {
    expect(() => parseJwks(body)).toThrow(new JwksFetchError(reason));
    expect(() => parseJwks(body)).toThrow(JwksFetchError);
  });
});

describe('the errors of the key lookup', () => {
  // Each made inside its test, where mutation testing's coverage sees the constructor run.
  it.each([
    ['JwksRateLimitedError', () => new JwksRateLimitedError(), 'JWKS refetch suppressed: the last attempt is too recent'],
    ['JwksFetchError', () => new JwksFetchError('status 503'), 'JWKS could not be fetched: status 503'],
    ['SignatureLengthMismatch', () => new SignatureLengthMismatch(), 'the signature length does not fit the algorithm'],
    ['JwkFamilyMismatch', () => new JwkFamilyMismatch(), 'the token algorithm does not fit the key'],
  ])('%s names itself and says what happened', (name, make, message) => {
    const err = make();
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe(name);
    expect(err.message).toBe(message);
  });
});
