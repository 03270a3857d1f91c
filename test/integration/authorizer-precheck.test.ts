/**
 * What the token verifier decides before any key lookup (shape, header, `kid`, the claims' types),
 * and how it names the library's own refusals, against a real JWKS server on 127.0.0.1. Junk must
 * cost no JWKS download: each refusal here is checked on a fresh verifier whose endpoint must not
 * have been asked, beside a control the same verifier accepts.
 */
import { sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizerConfig } from '../../functions/authorizer/environment.js';
import { MAX_KID_LENGTH } from '../../functions/authorizer/jwks.js';
import { createTokenVerifier, MAX_TOKEN_LENGTH } from '../../functions/authorizer/verify.js';
import { claims, startJwksServer, testKey, verifyOutcome, type JwksServer, type TestKey } from '../../tools/simulators/jwks.js';

const ISSUER = 'urn:test:issuer';
const AUDIENCE = 'test-audience';

let server: JwksServer;
let key: TestKey;
/** A key whose `kid` is exactly {@link MAX_KID_LENGTH} characters long. */
let longKid: TestKey;

beforeAll(async () => {
  key = testKey('rsa', 'precheck-key');
  longKid = testKey('ec', 'k'.repeat(MAX_KID_LENGTH));
  server = await startJwksServer({ keys: [key.jwk, longKid.jwk] });
});
afterAll(() => server.stop());

const config: () => AuthorizerConfig = () => ({ issuer: ISSUER, audience: [AUDIENCE], jwksUrl: server.url, rolesClaim: 'roles' });
const b64 = (text: string): string => Buffer.from(text).toString('base64url');
/** `header.payload` given as JSON text (so that values JSON.stringify cannot write stay possible), signed by `signer`. */
const signedText = (header: string, payload: string, signer: TestKey = key): string => {
  const input = `${b64(header)}.${b64(payload)}`;
  const alg = (JSON.parse(header) as { alg?: unknown }).alg;
  const hash = `sha${String(alg).slice(2)}`;
  const signature = String(alg).startsWith('ES')
    ? sign(hash, Buffer.from(input), { key: signer.privateKey, dsaEncoding: 'ieee-p1363' })
    : sign(hash, Buffer.from(input), signer.privateKey);
  return `${input}.${signature.toString('base64url')}`;
};
const validPayload = (extra: Record<string, unknown> = {}): string => JSON.stringify(claims(ISSUER, AUDIENCE, { roles: ['apiread'], ...extra }));
const header = (extra: Record<string, unknown> = {}): string => JSON.stringify({ alg: 'RS256', kid: key.kid, ...extra });

const outcome = verifyOutcome;
/** The outcome of `token` on a fresh verifier, and whether it made the verifier download the JWKS. */
const firstOutcome = async (token: string): Promise<{ reason: string; fetched: boolean }> => {
  const before = server.fetches();
  const reason = await outcome(createTokenVerifier(config()), token);
  return { reason, fetched: server.fetches() > before };
};

describe('refused before any key lookup', () => {
  it('accepts the control: a well-formed token costs one download on a fresh verifier', async () => {
    expect(await firstOutcome(signedText(header(), validPayload()))).toEqual({ reason: 'accepted', fetched: true });
  });

  it.each([
    ['null', 'null'],
    ['a number', '5'],
    ['a string', '"RS256"'],
    ['true', 'true'],
    ['an array', JSON.stringify([{ alg: 'RS256', kid: 'precheck-key' }])],
  ])('refuses a header that is JSON %s as malformed', async (_label, text) => {
    expect(await firstOutcome(signedText(header(), validPayload()).replace(/^[^.]+/, b64(text)))).toEqual({ reason: 'malformed', fetched: false });
  });

  it.each([
    ['null', 'null'],
    ['a number', '5'],
    ['a string', JSON.stringify(validPayload())],
    ['true', 'true'],
    ['an array', `[${validPayload()}]`],
  ])('refuses a payload that is JSON %s as malformed', async (_label, text) => {
    expect(await firstOutcome(signedText(header(), text))).toEqual({ reason: 'malformed', fetched: false });
  });

  it.each([
    ['empty', ''],
    [`of ${MAX_KID_LENGTH + 1} characters`, 'k'.repeat(MAX_KID_LENGTH + 1)],
  ])('refuses a kid that is %s as an unknown key, without asking the endpoint', async (_label, kid) => {
    expect(await firstOutcome(signedText(header({ kid }), validPayload()))).toEqual({ reason: 'unknown-key', fetched: false });
  });

  it(`accepts a kid of exactly ${MAX_KID_LENGTH} characters`, async () => {
    const token = signedText(JSON.stringify({ alg: 'ES256', kid: longKid.kid }), validPayload(), longKid);
    expect(await firstOutcome(token)).toEqual({ reason: 'accepted', fetched: true });
  });

  it.each(['exp', 'nbf', 'iat'])('refuses a token whose %s overflows to Infinity (1e400) as malformed, not as a time outside the window', async (claim) => {
    // JSON.parse reads 1e400 as Infinity: a number, but no date.
    const payload = validPayload().replace(/}$/, `,"${claim}":1e400}`);
    expect(JSON.parse(payload)[claim]).toBe(Number.POSITIVE_INFINITY);
    expect(await firstOutcome(signedText(header(), payload))).toEqual({ reason: 'malformed', fetched: false });
  });
});

describe('token length on the verifier itself (a token that did not come through bearerToken)', () => {
  /** A token signed by `key` and padded by a claim to exactly `length` characters. */
  const tokenOfLength = (length: number): string => {
    // The signature's length is fixed by the key; base64url of n bytes is ⌈4n/3⌉ characters,
    // which never ends on 1 modulo 4, hence the two header spellings.
    const signatureLength = signedText(header(), validPayload()).split('.')[2]!.length;
    const encoded = (bytes: number): number => Math.ceil((4 * bytes) / 3);
    for (const typ of ['JWT', 'JWTx']) {
      const head = header({ typ });
      for (let pad = 0; pad < length; pad++) {
        const payload = validPayload({ pad: 'p'.repeat(pad) });
        const total = encoded(Buffer.byteLength(head)) + encoded(Buffer.byteLength(payload)) + signatureLength + 2;
        if (total === length) return signedText(head, payload);
        if (total > length) break;
      }
    }
    throw new Error(`no token of ${length} characters`);
  };

  it(`accepts a token of exactly ${MAX_TOKEN_LENGTH} characters and refuses one of a character more`, async () => {
    const verifier = createTokenVerifier(config());
    const atLimit = tokenOfLength(MAX_TOKEN_LENGTH);
    expect(atLimit).toHaveLength(MAX_TOKEN_LENGTH);
    expect(await outcome(verifier, atLimit)).toBe('accepted');
    expect(await outcome(verifier, tokenOfLength(MAX_TOKEN_LENGTH + 1))).toBe('too-large');
  });

  it('refuses a token far over the limit as too large, not as whatever its parts would decode to', async () => {
    expect(await firstOutcome(`${'a'.repeat(MAX_TOKEN_LENGTH)}.b.c`)).toEqual({ reason: 'too-large', fetched: false });
  });
});

describe("the library's own refusals, named", () => {
  it.each([
    ['jti', 7],
    ['scope', ['read']],
  ])('refuses a %s of the wrong type (RFC 7519 and RFC 8693 make it a string) as malformed', async (claim, value) => {
    expect(await outcome(createTokenVerifier(config()), signedText(header(), validPayload({ [claim]: value })))).toBe('malformed');
  });

  it('refuses an algorithm of the key family other than the one the JWK names as an algorithm refusal', async () => {
    // RS384 fits an RSA key, but this JWK says RS256: the library refuses the pair.
    expect(key.jwk['alg']).toBe('RS256');
    const verifier = createTokenVerifier(config());
    expect(await outcome(verifier, signedText(header({ alg: 'RS384' }), validPayload()))).toBe('algorithm');
    expect(await outcome(verifier, signedText(header(), validPayload()))).toBe('accepted');
  });

  it("lets an error of the verifier's own (its clock failing) through as it is, never as a refused token", async () => {
    const failure = new Error('clock unavailable');
    const verifier = createTokenVerifier(config(), {}, () => {
      throw failure;
    });
    await expect(verifier.verify(signedText(header(), validPayload()))).rejects.toBe(failure);
  });
});
