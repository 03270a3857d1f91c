/**
 * The exact edges of token acceptance, against a real JWKS server on 127.0.0.1: expiry and
 * not-before with their 30 s of skew, the lifetime cap, ECDSA signature lengths and EdDSA.
 *
 * The verifier's own checks read the clock it is given; `aws-jwt-verify` takes no clock and
 * reads `Date.now()`, so the system time is pinned too, with fake `Date` only (timers and
 * sockets stay real). The edges are tried on each clock alone, and on both together.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AuthorizerConfig } from '../../functions/authorizer/environment.js';
import { CLOCK_SKEW_SECONDS, createTokenVerifier, MAX_TOKEN_LIFETIME_SECONDS, type TokenVerifier } from '../../functions/authorizer/verify.js';
import { signJwt, startJwksServer, testKey, verifyOutcome, type JwksServer, type TestKey } from '../../tools/simulators/jwks.js';

const ISSUER = 'urn:test:issuer';
const AUDIENCE = 'test-audience';
/** A whole second, so that `Date.now() / 1000` is exactly {@link NOW}. */
const NOW = 2_000_000_000;

let server: JwksServer;
let rsa: TestKey;
let ec: TestKey;
let ed: { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> };
let verifier: TokenVerifier;
/** A verifier on an injected clock, which reads {@link clockMs}. */
let pinned: TokenVerifier;
let clockMs = 0;

beforeAll(async () => {
  rsa = testKey('rsa');
  ec = testKey('ec');
  const pair = generateKeyPairSync('ed25519');
  ed = {
    kid: 'ed-key',
    privateKey: pair.privateKey,
    jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as Record<string, string>), kid: 'ed-key', use: 'sig' },
  };
  server = await startJwksServer({ keys: [rsa.jwk, ec.jwk, ed.jwk] });
  const config: AuthorizerConfig = { issuer: ISSUER, audience: [AUDIENCE], jwksUrl: server.url, rolesClaim: 'roles' };
  verifier = createTokenVerifier(config);
  pinned = createTokenVerifier(config, {}, () => clockMs);
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
const outcome = (jwt: string, on: TokenVerifier = verifier): Promise<string> => verifyOutcome(on, jwt);
/** The outcome at `NOW + offsetMs` (milliseconds, for the instants between two seconds). */
const outcomeAt = async (offsetMs: number, jwt: string): Promise<string> => {
  vi.setSystemTime(NOW * 1000 + offsetMs);
  return outcome(jwt);
};

describe("the verifier's clock: exact edges while the system clock stays at NOW", () => {
  // The library's own checks see NOW and let every token below through: what is refused here,
  // the injected clock refused. Offsets in milliseconds from the token's exp or nbf.
  const at = async (instantMs: number, jwt: string): Promise<string> => {
    clockMs = instantMs;
    return outcome(jwt, pinned);
  };

  it.each([
    ['exactly exp', 0, 'accepted'],
    ['1 s past exp', 1_000, 'accepted'],
    ['1 ms before the end of the skew', 29_999, 'accepted'],
    ['exactly exp + 30 s (RFC 7519: refused "on or after")', 30_000, 'expired'],
    ['1 ms past the skew', 30_001, 'expired'],
    ['1 s past the skew', 31_000, 'expired'],
    ['an hour past exp', 3_600_000, 'expired'],
  ])('exp: %s', async (_label, offsetMs, expected) => {
    expect(await at(NOW * 1000 + offsetMs, token({ exp: NOW, iat: NOW - 3600 }))).toBe(expected);
  });

  it.each([
    ['exactly nbf', 0, 'accepted'],
    ['exactly nbf − 30 s', -30_000, 'accepted'],
    ['1 ms before nbf − 30 s', -30_001, 'not-yet-valid'],
    ['1 s before nbf − 30 s', -31_000, 'not-yet-valid'],
    ['an hour before nbf', -3_600_000, 'not-yet-valid'],
  ])('nbf: %s', async (_label, offsetMs, expected) => {
    expect(await at(NOW * 1000 + offsetMs, token({ nbf: NOW, exp: NOW + 3600 }))).toBe(expected);
  });

  it.each([
    ['24 h + 30 s ahead of the clock', 86_430, 'accepted'],
    ['24 h + 31 s ahead of the clock', 86_431, 'lifetime'],
  ])('exp without iat %s', async (_label, ahead, expected) => {
    // The clock 100 s behind the system: the cap counts from the clock's now, not the system's.
    expect(await at((NOW - 100) * 1000, token({ exp: NOW - 100 + ahead }))).toBe(expected);
  });

  it('reads the clock at each verification, not when the verifier is made', async () => {
    const jwt = token({ exp: NOW, iat: NOW - 3600 });
    expect(await at(NOW * 1000 + 29_000, jwt)).toBe('accepted');
    expect(await at(NOW * 1000 + 30_000, jwt)).toBe('expired');
    expect(await at(NOW * 1000, jwt)).toBe('accepted');
  });

  it('keeps the system clock as a second line: a token its check refuses stays refused', async () => {
    clockMs = NOW * 1000;
    vi.setSystemTime((NOW + 31) * 1000);
    expect(await outcome(token({ exp: NOW, iat: NOW - 3600 }), pinned)).toBe('expired');
    vi.setSystemTime((NOW - 31) * 1000);
    expect(await outcome(token({ nbf: NOW, exp: NOW + 3600 }), pinned)).toBe('not-yet-valid');
  });
});

describe('the default clock, Date.now(), which the library reads too: the same edges', () => {
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
