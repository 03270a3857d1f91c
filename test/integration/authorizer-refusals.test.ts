/**
 * The algorithm and audience refusals as properties, against a real JWKS server on 127.0.0.1:
 * many header and claim variants, each signed by the trusted key, so that nothing but the
 * varied member can be the reason for a refusal. Every run also verifies its control (the same
 * token with a good `alg`, or with the audience) and the control must be accepted: a verifier
 * that refused everything fails here.
 */
import { sign } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizerConfig } from '../../functions/authorizer/environment.js';
import { ALGORITHM_FAMILIES } from '../../functions/authorizer/jwks.js';
import { createTokenVerifier, type TokenVerifier } from '../../functions/authorizer/verify.js';
import { claims, startJwksServer, testKey, verifyOutcome, type JwksServer, type TestKey } from '../../tools/simulators/jwks.js';

const ISSUER = 'urn:test:issuer';
const AUDIENCE = 'test-audience';
const RUNS = 150;

let server: JwksServer;
let key: TestKey;
let verifier: TokenVerifier;

beforeAll(async () => {
  key = testKey('ec');
  server = await startJwksServer({ keys: [key.jwk] });
  const config: AuthorizerConfig = { issuer: ISSUER, audience: [AUDIENCE], jwksUrl: server.url, rolesClaim: 'roles' };
  verifier = createTokenVerifier(config);
});
afterAll(() => server.stop());

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
/** Header and payload as given, signed by the trusted key (ES256) whatever the header claims. */
const signedAsIs = (header: Record<string, unknown>, payload: Record<string, unknown>): string => {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
};
const outcome = (token: string): Promise<string> => verifyOutcome(verifier, token);

/** Header members that change nothing about the algorithm (no `crit`, no key references). */
const harmless = fc.dictionary(fc.constantFrom('typ', 'cty', 'x-note', 'iss', 'zip'), fc.oneof(fc.string({ maxLength: 12 }), fc.integer()), { maxKeys: 3 });
const acceptedAlg = new Set(Object.keys(ALGORITHM_FAMILIES));
/** Every `alg` the verifier must refuse: none in any spelling, HMAC, EdDSA, near misses, other types, absent. */
const refusedAlg = fc.oneof(
  fc.constantFrom(
    'none',
    'None',
    'NONE',
    'nOnE',
    ' none',
    'none ',
    'none\u0000',
    '',
    'HS256',
    'HS384',
    'HS512',
    'EdDSA',
    'PS256',
    'ES256K',
    'es256',
    'Es256',
    'ES256 ',
    ' ES256',
    'RS256',
    'RSA-OAEP',
    'dir',
  ),
  fc.string({ maxLength: 10 }),
  fc.constantFrom<unknown>(null, 0, 256, true, ['ES256'], { alg: 'ES256' }),
  fc.constant(undefined),
);

describe('alg: everything but the algorithms of the JWKS keys is refused', () => {
  it('refuses the token for its algorithm alone, before its key is looked up, while the same token with ES256 is accepted', async () => {
    let refused = 0;
    let controls = 0;
    await fc.assert(
      fc.asyncProperty(
        // RS256 is an algorithm the verifier knows, but not the one of this EC key: refused too.
        refusedAlg.filter((alg) => typeof alg !== 'string' || alg === 'RS256' || !acceptedAlg.has(alg)),
        harmless,
        fc.constantFrom('signed', 'empty', 'absent'),
        // A kid the JWKS does not hold: an algorithm the verifier does not support is refused first, so no key lookup is due.
        fc.boolean(),
        async (alg, extra, signature, unknownKid) => {
          const payload = claims(ISSUER, AUDIENCE, { roles: ['apiread'] });
          const header = { ...extra, ...(alg === undefined ? {} : { alg }), kid: unknownKid ? 'not-in-the-jwks' : key.kid };
          const control = signedAsIs({ ...extra, alg: 'ES256', kid: key.kid }, payload);
          expect(await outcome(control)).toBe('accepted');
          controls++;
          const full = signedAsIs(header, payload);
          const token = signature === 'signed' ? full : signature === 'empty' ? full.slice(0, full.lastIndexOf('.') + 1) : full.slice(0, full.lastIndexOf('.'));
          // Without a signature part the token is not a JWS at all: malformed before its header is read.
          // RS256 is an algorithm the verifier supports: it is refused for not matching the key's
          // type, so an unknown kid is refused first, as an unknown key.
          const expected = signature !== 'signed' ? 'malformed' : alg === 'RS256' && unknownKid ? 'unknown-key' : 'algorithm';
          expect(await outcome(token), JSON.stringify(header)).toBe(expected);
          refused++;
        },
      ),
      // Always tried, whatever the draw: the supported algorithm that does not match the key, under both kids.
      {
        numRuns: RUNS,
        examples: [
          ['RS256', {}, 'signed', true],
          ['RS256', {}, 'signed', false],
        ],
      },
    );
    expect(controls).toBe(RUNS);
    expect(refused).toBe(RUNS);
  });
});

describe('alg none, every spelling, every kid', () => {
  it.each(
    ['none', 'None', 'NONE', 'nOnE', 'none ', ' none'].flatMap((alg) => [
      [alg, 'the trusted key'],
      [alg, 'an unknown key'],
      [alg, 'no key'],
    ]),
  )('refuses alg %j with the kid of %s as an algorithm, and never fetches the JWKS for it', async (alg, kid) => {
    const header = { alg, ...(kid === 'no key' ? {} : { kid: kid === 'the trusted key' ? key.kid : `unknown-${alg}` }) };
    const payload = claims(ISSUER, AUDIENCE, { roles: ['admin'] });
    const fetches = server.fetches();
    expect(await outcome(signedAsIs(header, payload))).toBe('algorithm');
    expect(await outcome(`${b64(header)}.${b64(payload)}.`)).toBe('malformed');
    expect(server.fetches()).toBe(fetches);
  });
});

/** An `aud` that does not name the audience: near misses, other names, arrays without it, absent. */
const wrongAudience = fc.oneof(
  fc.constantFrom(
    '',
    'TEST-AUDIENCE',
    'Test-Audience',
    ' test-audience',
    'test-audience ',
    'test-audienc',
    'test-audience2',
    'test',
    '*',
    `${AUDIENCE},${AUDIENCE}`,
  ),
  fc.string({ maxLength: 16 }).filter((s) => s !== AUDIENCE),
  fc.array(
    fc.string({ maxLength: 16 }).filter((s) => s !== AUDIENCE),
    { maxLength: 4 },
  ),
  fc.constant(undefined),
);
/** Claims where a lax verifier might look for the audience: none of them counts. */
const elsewhere = fc.subarray(['client_id', 'azp', 'audience', 'aud_', 'Aud']).map((names) => Object.fromEntries(names.map((n) => [n, AUDIENCE])));

describe('aud: the audience must be named in aud itself', () => {
  it('refuses every token whose aud does not name the audience, wherever else it appears, and accepts it once aud does', async () => {
    let refused = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(wrongAudience, elsewhere, fc.nat(4), async (aud, extra, at) => {
        const payload = { ...claims(ISSUER, AUDIENCE, { roles: ['apiread'], ...extra }), aud };
        if (aud === undefined) delete payload['aud'];
        expect(await outcome(signedAsIs({ alg: 'ES256', kid: key.kid }, payload)), JSON.stringify(payload)).toBe('audience');
        refused++;
        // The control: the audience added to aud (as a string, or somewhere in the array).
        const named = Array.isArray(aud) ? [...aud.slice(0, at), AUDIENCE, ...aud.slice(at)] : AUDIENCE;
        expect(await outcome(signedAsIs({ alg: 'ES256', kid: key.kid }, { ...payload, aud: named }))).toBe('accepted');
        accepted++;
      }),
      { numRuns: RUNS },
    );
    expect(refused).toBe(RUNS);
    expect(accepted).toBe(RUNS);
  });

  it.each([
    ['null', null],
    ['a number', 42],
    ['an object naming it', { aud: AUDIENCE }],
    ['an array holding a number beside it', [AUDIENCE, 42]],
    ['an array holding null beside it', [AUDIENCE, null]],
  ])('refuses an aud that is %s as malformed, before any key is used', async (_label, aud) => {
    expect(await outcome(signedAsIs({ alg: 'ES256', kid: key.kid }, { ...claims(ISSUER, AUDIENCE), aud }))).toBe('malformed');
  });
});
