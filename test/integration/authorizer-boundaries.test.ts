/**
 * The exact edges of token acceptance, against a real JWKS server on 127.0.0.1: expiry and
 * not-before with their 30 s of skew, the lifetime cap, ECDSA signature lengths and EdDSA.
 *
 * `aws-jwt-verify` reads the time from `Date.now()` (it takes no clock), so the time is pinned
 * with fake `Date` only: timers and sockets stay real.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AuthorizerConfig } from '../../functions/authorizer/config.js';
import { CLOCK_SKEW_SECONDS, createTokenVerifier, MAX_TOKEN_LIFETIME_SECONDS, TokenRejected, type TokenVerifier } from '../../functions/authorizer/verify.js';
import { signJwt, startJwksServer, testKey, type JwksServer, type TestKey } from '../support/authorizer.js';

const ISSUER = 'urn:test:issuer';
const AUDIENCE = 'test-audience';
/** A whole second, so that `Date.now() / 1000` is exactly {@link NOW}. */
const NOW = 2_000_000_000;

let server: JwksServer;
let rsa: TestKey;
let ec: TestKey;
let ed: { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> };
let verifier: TokenVerifier;

beforeAll(async () => {
  rsa = testKey('rsa');
  ec = testKey('ec');
  const pair = generateKeyPairSync('ed25519');
  ed = { kid: 'ed-key', privateKey: pair.privateKey, jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as Record<string, string>), kid: 'ed-key', use: 'sig' } };
  server = await startJwksServer({ keys: [rsa.jwk, ec.jwk, ed.jwk] });
  const config: AuthorizerConfig = { issuer: ISSUER, audience: AUDIENCE, jwksUrl: server.url, rolesClaim: 'roles' };
  verifier = createTokenVerifier(config);
});
afterAll(() => server.stop());
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW * 1000);
});
afterEach(() => {
  vi.useRealTimers();
});

const token = (claims: Record<string, unknown>, key: TestKey = rsa): string =>
  signJwt({ alg: key.alg, kid: key.kid }, { iss: ISSUER, aud: AUDIENCE, sub: 'user-1', roles: ['apiread'], ...claims }, key);
const outcome = async (jwt: string): Promise<string> => {
  try {
    await verifier.verify(jwt);
    return 'accepted';
  } catch (err) {
    if (err instanceof TokenRejected) return err.reason;
    throw err;
  }
};
/** The outcome at `NOW + offsetMs` (milliseconds, for the instants between two seconds). */
const outcomeAt = async (offsetMs: number, jwt: string): Promise<string> => {
  vi.setSystemTime(NOW * 1000 + offsetMs);
  return outcome(jwt);
};

describe('expiry and not-before: 30 s of skew, exact edges', () => {
  it('accepts a token until exp + 30 s and refuses it from that instant on (RFC 7519: "on or after")', async () => {
    expect(CLOCK_SKEW_SECONDS).toBe(30);
    const jwt = token({ exp: NOW, iat: NOW - 3600 });
    expect(await outcomeAt(0, jwt)).toBe('accepted'); // exactly exp
    expect(await outcomeAt(29_000, jwt)).toBe('accepted');
    expect(await outcomeAt(29_999, jwt)).toBe('accepted');
    expect(await outcomeAt(30_000, jwt)).toBe('expired');
    expect(await outcomeAt(30_001, jwt)).toBe('expired');
    expect(await outcomeAt(31_000, jwt)).toBe('expired');
  });

  it('accepts a token from nbf − 30 s on and refuses it before', async () => {
    const jwt = token({ nbf: NOW, exp: NOW + 3600 });
    expect(await outcomeAt(-31_000, jwt)).toBe('not-yet-valid');
    expect(await outcomeAt(-30_001, jwt)).toBe('not-yet-valid');
    expect(await outcomeAt(-30_000, jwt)).toBe('accepted');
    expect(await outcomeAt(-29_000, jwt)).toBe('accepted');
    expect(await outcomeAt(0, jwt)).toBe('accepted');
  });

  it('refuses a token without exp, whatever else it carries', async () => {
    expect(await outcome(token({ iat: NOW, nbf: NOW }))).toBe('claims');
  });
});

describe('lifetime cap: a token is good for 24 h at most', () => {
  it('is 24 h', () => {
    expect(MAX_TOKEN_LIFETIME_SECONDS).toBe(86_400);
  });

  it.each([
    ['exp 1e308', { exp: 1e308 }, 'lifetime'],
    ['exp 1e308 with a current iat', { exp: 1e308, iat: NOW }, 'lifetime'],
    ['exp Number.MAX_SAFE_INTEGER', { exp: Number.MAX_SAFE_INTEGER }, 'lifetime'],
    ['exp − iat exactly 24 h', { iat: NOW, exp: NOW + 86_400 }, 'accepted'],
    ['exp − iat 24 h + 1 s', { iat: NOW - 10, exp: NOW - 10 + 86_401 }, 'lifetime'],
    ['exp 24 h + 30 s ahead, no iat (issuer clock 30 s ahead)', { exp: NOW + 86_430 }, 'accepted'],
    ['exp 24 h + 31 s ahead, no iat', { exp: NOW + 86_431 }, 'lifetime'],
    ['exp 24 h + 31 s ahead under an iat that hides it', { iat: NOW + 31, exp: NOW + 86_431 }, 'lifetime'],
    ['a 1 h token issued 23 h ago', { iat: NOW - 23 * 3600, exp: NOW + 3600 - 23 * 3600 }, 'expired'],
  ])('decides %s', async (_label, claims, expected) => {
    expect(await outcome(token(claims))).toBe(expected);
  });
});

describe('signatures the library must never see', () => {
  it.each([
    ['ES256', 64],
    ['RS256', 256],
  ] as const)('refuses every wrong-length %s signature as a bad signature, never an error', async (alg, bytes) => {
    const key = alg === 'ES256' ? ec : rsa;
    const [h, p] = token({ exp: NOW + 60 }, key).split('.') as [string, string];
    for (const length of [1, 2, bytes - 1, bytes + 1, bytes * 2, 132, 512]) {
      const forged = `${h}.${p}.${Buffer.alloc(length, 7).toString('base64url')}`;
      expect(await outcome(forged), `${length} bytes`).toBe('signature');
    }
  });

  it('refuses EdDSA, and never uses the OKP key the JWKS publishes', async () => {
    const header = { alg: 'EdDSA', kid: ed.kid };
    const payload = { iss: ISSUER, aud: AUDIENCE, sub: 'user-1', exp: NOW + 60 };
    const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    const eddsa = `${input}.${sign(null, Buffer.from(input), ed.privateKey).toString('base64url')}`;
    expect(await outcome(eddsa)).toBe('algorithm');
    // The key is dropped when the JWKS arrives: its kid is unknown whatever algorithm is claimed.
    expect(await outcome(signJwt({ alg: 'ES256', kid: ed.kid }, payload, ec))).toBe('unknown-key');
  });
});
