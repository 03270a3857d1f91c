/**
 * JWKS fetching and caching of the token verifier, against real JWKS servers on 127.0.0.1,
 * with an injected clock so that the refetch interval is exercised without waiting.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AuthorizerConfig } from '../../functions/authorizer/environment.js';
import * as jwksModule from '../../functions/authorizer/jwks.js';
import * as verifyModule from '../../functions/authorizer/verify.js';
import { claims, signJwt, startJwksServer, testKey, type JwksServer, type TestKey } from '../../tools/simulators/jwks.js';

const ISSUER = 'urn:test:issuer';
const AUDIENCE = 'test-audience';

const servers: JwksServer[] = [];
const serve = async (doc: unknown, status?: number): Promise<JwksServer> => {
  const server = await startJwksServer(doc, status);
  servers.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

const { DEFAULT_REFETCH_INTERVAL_MS, MAX_JWKS_BYTES, MIN_RSA_BITS } = jwksModule;
// Each test gets the modules afresh, as a new container would: the JWKS download's HTTP client is
// kept in the module once made, and a client made by an earlier test (or by mutation testing's
// first run) would otherwise serve every later one without the code that makes it running.
let { checkJwksUrl, JwksFetchError, RateLimitedJwksFetcher } = jwksModule;
let { createTokenVerifier, IssuerKeysUnavailable, TokenRejected } = verifyModule;
beforeEach(async () => {
  vi.resetModules();
  ({ checkJwksUrl, JwksFetchError, RateLimitedJwksFetcher } = await import('../../functions/authorizer/jwks.js'));
  ({ createTokenVerifier, IssuerKeysUnavailable, TokenRejected } = await import('../../functions/authorizer/verify.js'));
});

/** A verifier on `url` whose clock the test moves by hand. */
const verifierOn = (url: string) => {
  const clock = { now: 1_000_000 };
  const config: AuthorizerConfig = { issuer: ISSUER, audience: [AUDIENCE], jwksUrl: url, rolesClaim: 'roles' };
  const verifier = createTokenVerifier(config, { now: () => clock.now });
  return { verifier, clock };
};
const tokenFor = (key: TestKey, extra: Record<string, unknown> = {}): string =>
  signJwt({ alg: key.alg, kid: key.kid }, claims(ISSUER, AUDIENCE, { roles: ['apiread'], ...extra }), key);
const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'accepted',
    (err: unknown) => err,
  );
const reasonOf = async (promise: Promise<unknown>): Promise<string> => {
  const err = await rejection(promise);
  return err instanceof TokenRejected ? err.reason : String(err);
};

describe('token verifier: JWKS cache', () => {
  it('fetches once, then verifies every token with a known kid from the cache', async () => {
    const key = testKey('rsa');
    const server = await serve({ keys: [key.jwk] });
    const { verifier, clock } = verifierOn(server.url);
    await expect(verifier.verify(tokenFor(key))).resolves.toEqual({ sub: 'user-1', roles: ['apiread'] });
    for (let i = 0; i < 30; i++) {
      clock.now += 60_000; // a known kid never refetches, however much time passes
      await verifier.verify(tokenFor(key, { sub: `u${i}` }));
    }
    expect(server.fetches()).toBe(1);
    expect(verifier.jwks.fetcher.attempts).toBe(1);
  });

  it('refetches for an unknown kid at most once per interval, and picks up a rotated key', async () => {
    const old = testKey('rsa');
    const rotated = testKey('ec');
    const server = await serve({ keys: [old.jwk] });
    const { verifier, clock } = verifierOn(server.url);
    await verifier.verify(tokenFor(old));
    expect(server.fetches()).toBe(1);

    // The issuer rotates; within the interval of the last fetch, the new kid is not fetched.
    server.setDocument({ keys: [old.jwk, rotated.jwk] });
    clock.now += DEFAULT_REFETCH_INTERVAL_MS - 1;
    for (let i = 0; i < 10; i++) expect(await reasonOf(verifier.verify(tokenFor(rotated)))).toBe('unknown-key');
    expect(server.fetches()).toBe(1);

    // Once the interval has passed, one refetch finds it.
    clock.now += 1;
    await expect(verifier.verify(tokenFor(rotated))).resolves.toMatchObject({ roles: ['apiread'] });
    expect(server.fetches()).toBe(2);

    // A flood of forged kids right after costs nothing; the next window allows one fetch.
    const forger = testKey('rsa');
    const forged = (i: number): string => signJwt({ alg: 'RS256', kid: `forged-${i}` }, claims(ISSUER, AUDIENCE), forger);
    for (let i = 0; i < 20; i++) expect(await reasonOf(verifier.verify(forged(i)))).toBe('unknown-key');
    expect(server.fetches()).toBe(2);
    clock.now += DEFAULT_REFETCH_INTERVAL_MS;
    for (let i = 20; i < 40; i++) expect(await reasonOf(verifier.verify(forged(i)))).toBe('unknown-key');
    expect(server.fetches()).toBe(3);
    // The keys already known still verify throughout.
    await expect(verifier.verify(tokenFor(old))).resolves.toMatchObject({ sub: 'user-1' });
    expect(server.fetches()).toBe(3);
  });

  it('shares one fetch between concurrent first verifications', async () => {
    const key = testKey('ec');
    const server = await serve({ keys: [key.jwk] });
    const { verifier } = verifierOn(server.url);
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => verifier.verify(tokenFor(key, { sub: `c${i}` }))));
    expect(results.map((r) => r.sub)).toEqual(Array.from({ length: 25 }, (_, i) => `c${i}`));
    expect(server.fetches()).toBe(1);
  });

  it('keeps verifying cached keys when the endpoint is down, and refuses unknown kids with 401', async () => {
    const key = testKey('rsa');
    const server = await serve({ keys: [key.jwk] });
    const { verifier, clock } = verifierOn(server.url);
    await verifier.verify(tokenFor(key));
    await server.stop();
    clock.now += DEFAULT_REFETCH_INTERVAL_MS; // the unknown kid below really tries the dead endpoint
    expect(await reasonOf(verifier.verify(signJwt({ alg: 'RS256', kid: 'new' }, claims(ISSUER, AUDIENCE), testKey('rsa'))))).toBe('unknown-key');
    expect(verifier.jwks.fetcher.attempts).toBe(2);
    for (let i = 0; i < 5; i++) await expect(verifier.verify(tokenFor(key, { sub: `d${i}` }))).resolves.toMatchObject({ sub: `d${i}` });
  });

  it('keeps the cached keys when a refetch returns an error status or junk', async () => {
    const key = testKey('rsa');
    const server = await serve({ keys: [key.jwk] });
    const { verifier, clock } = verifierOn(server.url);
    await verifier.verify(tokenFor(key));
    for (const [doc, status] of [
      ['oops', 500],
      ['<html>not json</html>', 200],
      [{ keys: 'none' }, 200],
    ] as const) {
      server.setDocument(doc, status);
      clock.now += DEFAULT_REFETCH_INTERVAL_MS;
      expect(await reasonOf(verifier.verify(signJwt({ alg: 'RS256', kid: 'new' }, claims(ISSUER, AUDIENCE), testKey('rsa'))))).toBe('unknown-key');
      await expect(verifier.verify(tokenFor(key))).resolves.toMatchObject({ sub: 'user-1' });
    }
    expect(server.fetches()).toBe(4);
  });
});

describe('token verifier: which keys of the JWKS are used', () => {
  /** A key pair of any supported kind, with its public JWK (no `alg` unless given). */
  const keyPair = (options: { rsaBits?: number; curve?: string }, jwkExtra: Record<string, unknown> = {}) => {
    const { privateKey, publicKey } =
      options.curve === undefined
        ? generateKeyPairSync('rsa', { modulusLength: options.rsaBits ?? 2048 })
        : generateKeyPairSync('ec', { namedCurve: options.curve });
    const kid = `k-${Math.random().toString(36).slice(2)}`;
    const jwk: Record<string, unknown> = { ...(publicKey.export({ format: 'jwk' }) as Record<string, string>), kid, ...jwkExtra };
    return { kid, privateKey: privateKey as KeyObject, jwk };
  };
  const signed = (alg: string, key: { kid: string; privateKey: KeyObject }, extra: Record<string, unknown> = {}): string =>
    signJwt({ alg, kid: key.kid }, claims(ISSUER, AUDIENCE, { roles: ['admin'], ...extra }), key);

  it.each([
    ['RS256', {}],
    ['RS384', {}],
    ['RS512', { rsaBits: 3072 }],
    ['ES256', { curve: 'P-256' }],
    ['ES384', { curve: 'P-384' }],
    ['ES512', { curve: 'P-521' }],
  ] as const)('verifies %s with a key of its own family', async (alg, options) => {
    const key = keyPair(options);
    const server = await serve({ keys: [key.jwk] });
    const { verifier } = verifierOn(server.url);
    await expect(verifier.verify(signed(alg, key))).resolves.toEqual({ sub: 'user-1', roles: ['admin'] });
  });

  it.each([
    ['an encryption key (use: enc)', keyPair({}, { use: 'enc' })],
    ['a key whose key_ops do not include verify', keyPair({}, { key_ops: ['encrypt'] })],
    [`an RSA key under ${MIN_RSA_BITS} bits`, keyPair({ rsaBits: 1024 })],
    ['an EC key on a curve no ES* algorithm uses', keyPair({ curve: 'secp256k1' })],
  ])('never uses %s (the kid stays unknown)', async (_label, key) => {
    const server = await serve({ keys: [key.jwk] });
    const { verifier } = verifierOn(server.url);
    const alg = key.jwk['kty'] === 'EC' ? 'ES256' : 'RS256';
    expect(await reasonOf(verifier.verify(signed(alg, key)))).toBe('unknown-key');
    expect(verifier.jwks.hasKeys()).toBe(true);
  });

  it('skips unusable entries of a document and uses the rest', async () => {
    const good = keyPair({ curve: 'P-256' });
    const server = await serve({
      keys: [null, 'x', [], { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' }, { kty: 'RSA', kid: 'broken', n: '!!', e: 'AQAB' }, { ...good.jwk, kid: '' }, good.jwk],
    });
    const { verifier } = verifierOn(server.url);
    await expect(verifier.verify(signed('ES256', good))).resolves.toMatchObject({ sub: 'user-1' });
    expect(await reasonOf(verifier.verify(signJwt({ alg: 'RS256', kid: 'broken' }, claims(ISSUER, AUDIENCE), testKey('rsa'))))).toBe('unknown-key');
  });

  it('stops accepting a key the issuer withdrew, once the JWKS is fetched again', async () => {
    const withdrawn = keyPair({});
    const next = keyPair({});
    const server = await serve({ keys: [withdrawn.jwk] });
    const { verifier, clock } = verifierOn(server.url);
    await verifier.verify(signed('RS256', withdrawn));
    server.setDocument({ keys: [next.jwk] });
    clock.now += DEFAULT_REFETCH_INTERVAL_MS;
    await verifier.verify(signed('RS256', next)); // an unknown kid: the JWKS is fetched again
    expect(await reasonOf(verifier.verify(signed('RS256', withdrawn)))).toBe('unknown-key');
    expect(server.fetches()).toBe(2);
  });

  it('refuses alg none in every spelling, with or without a signature, even with the key id of a trusted key', async () => {
    const key = testKey('rsa');
    const server = await serve({ keys: [key.jwk] });
    const { verifier } = verifierOn(server.url);
    const good = tokenFor(key);
    const [, payload, signature] = good.split('.') as [string, string, string];
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      const header = Buffer.from(JSON.stringify({ alg, kid: key.kid })).toString('base64url');
      for (const token of [`${header}.${payload}.`, `${header}.${payload}.${signature}`, `${header}.${payload}`]) {
        expect(await rejection(verifier.verify(token)), `${alg}: ${token.slice(-12)}`).toBeInstanceOf(TokenRejected);
      }
    }
    await expect(verifier.verify(good)).resolves.toMatchObject({ sub: 'user-1' });
  });

  it('refuses an ECDSA signature of the wrong length and one in DER form', async () => {
    const key = keyPair({ curve: 'P-256' });
    const server = await serve({ keys: [key.jwk] });
    const { verifier } = verifierOn(server.url);
    const token = signed('ES256', key);
    const [h, p, sig] = token.split('.') as [string, string, string];
    const raw = Buffer.from(sig, 'base64url');
    expect(await reasonOf(verifier.verify(`${h}.${p}.${Buffer.concat([raw, Buffer.from([0])]).toString('base64url')}`))).toBe('signature');
    const r = raw.subarray(0, 32);
    const s = raw.subarray(32);
    const int = (b: Buffer) => (b[0]! & 0x80 ? Buffer.concat([Buffer.from([0x02, b.length + 1, 0]), b]) : Buffer.concat([Buffer.from([0x02, b.length]), b]));
    const body = Buffer.concat([int(r), int(s)]);
    const der = Buffer.concat([Buffer.from([0x30, body.length]), body]);
    expect(await reasonOf(verifier.verify(`${h}.${p}.${der.toString('base64url')}`))).toBe('signature');
    await expect(verifier.verify(token)).resolves.toMatchObject({ sub: 'user-1' });
  });

  it.each([
    ['an aud array that names the audience', { aud: ['other', AUDIENCE] }, 'accepted'],
    ['an aud array without the audience', { aud: ['other', 'another'] }, 'audience'],
    ['a missing aud', { aud: undefined }, 'audience'],
    ['a missing aud with the audience as client_id', { aud: undefined, client_id: AUDIENCE }, 'audience'],
    ['a missing aud with the audience under another claim', { aud: undefined, azp: AUDIENCE, audience: AUDIENCE }, 'audience'],
    ['an empty aud array', { aud: [] }, 'audience'],
    ['an empty aud', { aud: '' }, 'audience'],
    ['an aud that is null', { aud: null }, 'malformed'],
    ['an aud that is a number', { aud: 42 }, 'malformed'],
    ['an aud array with a number', { aud: [AUDIENCE, 42] }, 'malformed'],
    ['an iat that is a string', { iat: 'yesterday' }, 'malformed'],
    ['an nbf that is a string', { nbf: 'now' }, 'malformed'],
    ['a sub that is a number', { sub: 7 }, 'claims'],
    ['a sub over 256 characters', { sub: 'u'.repeat(257) }, 'claims'],
    ['an exp exactly 30 s ago', { exp: Math.floor(Date.now() / 1000) - 30 }, 'expired'],
  ])('decides %s', async (_label, extra, outcome) => {
    const key = testKey('rsa');
    const server = await serve({ keys: [key.jwk] });
    const { verifier } = verifierOn(server.url);
    const result = await rejection(verifier.verify(tokenFor(key, extra)));
    expect(result instanceof TokenRejected ? result.reason : 'accepted').toBe(outcome);
  });
});

describe('token verifier: issuer keys never obtained', () => {
  it.each([
    ['the endpoint refuses connections', 'down'],
    ['the endpoint answers 503', 503],
    ['the endpoint answers a redirect', 302],
    ['the endpoint answers something that is not a JWKS', 'junk'],
    ['the endpoint answers more than the size cap', 'huge'],
  ] as const)('reports the keys unavailable (not the token) when %s, and retries after the interval', async (_label, mode) => {
    const key = testKey('rsa');
    const server =
      mode === 'junk'
        ? await serve({ notKeys: true })
        : mode === 'huge'
          ? await serve({ keys: [key.jwk], padding: 'x'.repeat(MAX_JWKS_BYTES) })
          : await serve({ keys: [key.jwk] }, typeof mode === 'number' ? mode : 200);
    if (mode === 'down') await server.stop();
    const { verifier, clock } = verifierOn(server.url);
    expect(await rejection(verifier.verify(tokenFor(key)))).toBeInstanceOf(IssuerKeysUnavailable);
    // Within the interval no second attempt is made.
    expect(await rejection(verifier.verify(tokenFor(key)))).toBeInstanceOf(IssuerKeysUnavailable);
    expect(verifier.jwks.fetcher.attempts).toBe(1);
    if (mode === 'down') return;
    server.setDocument({ keys: [key.jwk] });
    clock.now += DEFAULT_REFETCH_INTERVAL_MS;
    await expect(verifier.verify(tokenFor(key))).resolves.toMatchObject({ sub: 'user-1' });
    expect(server.fetches()).toBe(2);
  });

  it('still refuses junk tokens as junk, without touching the endpoint', async () => {
    const server = await serve({ keys: [] });
    const { verifier } = verifierOn(server.url);
    expect(await reasonOf(verifier.verify('aaaa.bbbb.cccc'))).toBe('malformed');
    expect(await reasonOf(verifier.verify(signJwt({ alg: 'HS256', kid: 'k' }, claims(ISSUER, AUDIENCE), { hmacSecret: 's' })))).toBe('algorithm');
    expect(await reasonOf(verifier.verify(signJwt({ alg: 'RS256', kid: 'k' }, claims('urn:other', AUDIENCE), testKey('rsa'))))).toBe('issuer');
    expect(server.fetches()).toBe(0);
  });
});

describe('the download', () => {
  /** A JWKS document of exactly `size` bytes, as the server sends it. */
  const documentOf = (size: number, key: TestKey): Record<string, unknown> => {
    const base = JSON.stringify({ keys: [key.jwk], padding: '' }).length;
    return { keys: [key.jwk], padding: 'x'.repeat(size - base) };
  };

  it(`takes a document of exactly ${MAX_JWKS_BYTES} bytes, and refuses one a byte longer`, async () => {
    const key = testKey('ec');
    const exact = await serve(documentOf(MAX_JWKS_BYTES, key));
    expect(JSON.stringify(documentOf(MAX_JWKS_BYTES, key))).toHaveLength(MAX_JWKS_BYTES);
    await expect(verifierOn(exact.url).verifier.verify(tokenFor(key))).resolves.toMatchObject({ sub: 'user-1' });
    const over = await serve(documentOf(MAX_JWKS_BYTES + 1, key));
    expect(await rejection(verifierOn(over.url).verifier.verify(tokenFor(key)))).toBeInstanceOf(IssuerKeysUnavailable);
  });

  it('says why a download failed: the status, the size, the time-out', async () => {
    const key = testKey('rsa');
    const failure = async (url: string, timeoutMs?: number): Promise<unknown> => rejection(new RateLimitedJwksFetcher({ timeoutMs }).fetch(url));
    const status = await serve({ keys: [key.jwk] }, 503);
    expect(await failure(status.url)).toEqual(new JwksFetchError('status 503'));
    const huge = await serve({ keys: [key.jwk], padding: 'x'.repeat(MAX_JWKS_BYTES) });
    expect(await failure(huge.url)).toEqual(new JwksFetchError('document too large'));
    // A server that takes the request and never answers.
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const err = await failure(`http://127.0.0.1:${port}/.well-known/jwks.json`, 200);
      expect(err).toBeInstanceOf(JwksFetchError);
      expect((err as Error).message).toBe('JWKS could not be fetched: time-out');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('checkJwksUrl', () => {
  it.each([
    'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_X/.well-known/jwks.json',
    'http://127.0.0.1:3000/.well-known/jwks.json',
    'http://localhost:3000/.well-known/jwks.json',
    'http://[::1]:3000/.well-known/jwks.json',
  ])('accepts %s', (url) => {
    expect(checkJwksUrl(url).href).toBe(url);
  });

  it.each([
    'http://issuer.example.com/.well-known/jwks.json',
    'http://127.0.0.2.nip.io/.well-known/jwks.json',
    'https://user:pass@issuer.example.com/jwks.json',
    'file:///etc/passwd',
    'ftp://127.0.0.1/jwks.json',
    'not a url',
  ])('refuses %s at load', (url) => {
    expect(() => checkJwksUrl(url)).toThrow(/configuration error: JWKS_URL/);
  });
});
