/**
 * The authorizer handler against a real JWKS server on 127.0.0.1: valid tokens get the policy
 * of their roles, every token of the attack corpus gets the same bare `Unauthorized`.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RoleAuthorizerResult } from '../../functions/authorizer/service.js';
import type { RejectReason } from '../../functions/authorizer/verify.js';
import { logger } from '../../functions/platform/logger.js';
import { liveRoutes } from '../../functions/api/routes.js';
import {
  authorizerEvent,
  claims,
  methodArn,
  policyAllows,
  signJwt,
  startJwksServer,
  testKey,
  type JwksServer,
  type TestKey,
} from '../../tools/simulators/jwks.js';

const ISSUER = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_TEST';
const AUDIENCE = 'test-client-id';
const TREE = { method: 'GET', path: '/configuration_manager/configs/0123456789abcdef01234567' };
const RELAY_ARN = methodArn('POST', '/orch_manager/restAction/nso-1');

let server: JwksServer;
let evil: JwksServer;
let rsa: TestKey;
let ec: TestKey;
/** An EC key published without `alg`, as many issuers do: only the key's curve pins its algorithm. */
let ecNoAlg: TestKey;
let attacker: TestKey;
let handler: (event: APIGatewayRequestAuthorizerEvent) => Promise<RoleAuthorizerResult>;

const groups = (roles: unknown): Record<string, unknown> => (roles === undefined ? {} : { 'cognito:groups': roles });
const rsaToken = (extra: Record<string, unknown> = {}, header: Record<string, unknown> = {}): string =>
  signJwt({ alg: 'RS256', typ: 'JWT', kid: rsa.kid, ...header }, claims(ISSUER, AUDIENCE, extra), rsa);
const call = (token: string, route = TREE): Promise<RoleAuthorizerResult> => handler(authorizerEvent({ token, method: route.method, path: route.path }));

/** Resolves to the error message of a refusal (or fails the test when the call succeeded). */
const refusal = async (promise: Promise<APIGatewayAuthorizerResult>): Promise<Error> => {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome, 'the authorizer accepted a token it should refuse').toBeInstanceOf(Error);
  return outcome as Error;
};
/** The one answer every refused token gets: the exact error API Gateway maps to 401, nothing more. */
const expectUnauthorized = async (promise: Promise<APIGatewayAuthorizerResult>): Promise<void> => {
  const err = await refusal(promise);
  expect(err.message).toBe('Unauthorized');
  expect(Object.keys(err)).toEqual([]);
};

/** Runs `fn` with the logger at info level and returns the JSON log entries it wrote. */
const capturingLogs = async (fn: () => Promise<void>, lines: string[] = []): Promise<Record<string, unknown>[]> => {
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  logger.setLevel('info');
  try {
    await fn();
  } finally {
    logger.setLevel('warn');
    write.mockRestore();
  }
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
};

beforeAll(async () => {
  rsa = testKey('rsa', 'rsa-key-1');
  ec = testKey('ec', 'ec-key-1');
  ecNoAlg = testKey('ec', 'ec-key-no-alg');
  delete ecNoAlg.jwk['alg'];
  attacker = testKey('rsa', 'attacker-key');
  server = await startJwksServer({ keys: [rsa.jwk, ec.jwk, ecNoAlg.jwk] });
  evil = await startJwksServer({ keys: [attacker.jwk] });
  vi.stubEnv('JWT_ISSUER', ISSUER);
  vi.stubEnv('JWT_AUDIENCE', AUDIENCE);
  vi.stubEnv('JWKS_URL', server.url);
  vi.stubEnv('ROLES_CLAIM', 'cognito:groups');
  ({ handler } = await import('../../functions/authorizer/handlers/authorize.js'));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await server.stop();
  await evil.stop();
});

describe('authorizer handler: JWKS fetching', () => {
  it('fetches the JWKS once for many verifications, concurrent ones included', async () => {
    expect(server.fetches()).toBe(0);
    const tokens = Array.from({ length: 10 }, (_, i) => rsaToken({ sub: `user-${i}`, ...groups(['apiread']) }));
    const first = await Promise.all(tokens.map((t) => call(t)));
    const again = await Promise.all([...tokens, ...tokens].map((t) => call(t)));
    for (const result of [...first, ...again]) expect(result.policyDocument.Statement[0]?.Effect).toBe('Allow');
    expect(server.fetches()).toBe(1);
  });

  it('does not refetch for a burst of unknown kids (at most one refetch per interval)', async () => {
    const before = server.fetches();
    for (let i = 0; i < 20; i++) {
      const token = signJwt({ alg: 'RS256', kid: `rotated-${i}` }, claims(ISSUER, AUDIENCE, groups(['admin'])), attacker);
      await expectUnauthorized(call(token));
    }
    expect(server.fetches() - before).toBeLessThanOrEqual(1);
  });
});

describe('authorizer handler: valid tokens', () => {
  it('returns the principal, flat string context and the policy of every route an admin may call', async () => {
    const result = await call(rsaToken({ sub: 'alice', ...groups(['admin', 'apiread']) }));
    expect(result.principalId).toBe('alice');
    expect(result.context).toEqual({ principal: 'alice', roles: 'admin,apiread' });
    for (const route of liveRoutes) {
      const arn = methodArn(route.method, route.path.replaceAll(/\{[^}]+\}/g, 'x1'));
      expect(policyAllows(result.policyDocument, arn), `${route.method} ${route.path}`).toBe(route.roles !== 'public');
    }
  });

  it('accepts ES256 tokens from P-256 keys of the JWKS, with or without alg in the JWK', async () => {
    for (const key of [ec, ecNoAlg]) {
      const token = signJwt({ alg: 'ES256', kid: key.kid }, claims(ISSUER, AUDIENCE, { sub: 'bob', ...groups(['apiread']) }), key);
      const result = await call(token);
      expect(result.context).toEqual({ principal: 'bob', roles: 'apiread' });
    }
  });

  it('keeps an apiread token, first used on GET tree, from the relay (the policy is cached per token)', async () => {
    const result = await call(rsaToken(groups(['apiread'])), TREE);
    expect(policyAllows(result.policyDocument, methodArn(TREE.method, TREE.path))).toBe(true);
    expect(policyAllows(result.policyDocument, methodArn('GET', '/configuration_manager/configs'))).toBe(true);
    expect(policyAllows(result.policyDocument, RELAY_ARN)).toBe(false);
    expect(policyAllows(result.policyDocument, methodArn('PUT', '/adapters/nso-1'))).toBe(false);
  });

  it('gives an admin token first used on GET tree the relay too', async () => {
    const result = await call(rsaToken(groups(['admin'])), TREE);
    expect(policyAllows(result.policyDocument, RELAY_ARN)).toBe(true);
  });

  it('ignores unknown role names beside a known one', async () => {
    const result = await call(rsaToken(groups(['auditor', 'apiread', 'superuser'])));
    expect(result.context.roles).toBe('apiread');
    expect(policyAllows(result.policyDocument, RELAY_ARN)).toBe(false);
  });

  it.each([
    ['roles as a string', groups('admin')],
    ['roles as a comma string', groups('admin,apiread')],
    ['roles missing', {}],
    ['a near-miss role name', groups(['admins'])],
    ['an empty roles array', groups([])],
    ['roles under another claim', { roles: ['admin'] }],
  ])('returns an explicit Deny (403) for a valid token with %s', async (_label, extra) => {
    const result = await call(rsaToken({ sub: 'carol', ...extra }));
    expect(result.principalId).toBe('carol');
    expect(result.context).toEqual({ principal: 'carol', roles: '' });
    expect(result.policyDocument.Statement).toHaveLength(1);
    expect(result.policyDocument.Statement[0]?.Effect).toBe('Deny');
    expect(policyAllows(result.policyDocument, methodArn(TREE.method, TREE.path))).toBe(false);
  });

  it('reads the header in any case and the scheme in any case', async () => {
    const token = rsaToken(groups(['apiread']));
    const variants: Record<string, string>[] = [{ authorization: `Bearer ${token}` }, { AUTHORIZATION: `bearer ${token}` }];
    for (const headers of variants) {
      const result = await handler(authorizerEvent({ headers }));
      expect(result.context.roles).toBe('apiread');
    }
  });

  it('tolerates 30 s of clock skew on exp and nbf, not more', async () => {
    // Two seconds either side of the edge: `now` is rounded down and the calls take time. The
    // exact edges are tried on a pinned clock in authorizer-boundaries.test.ts.
    const now = Math.floor(Date.now() / 1000);
    await expect(call(rsaToken({ exp: now - 28, ...groups(['admin']) }))).resolves.toMatchObject({ principalId: 'user-1' });
    await expect(call(rsaToken({ nbf: now + 28, ...groups(['admin']) }))).resolves.toMatchObject({ principalId: 'user-1' });
    await expectUnauthorized(call(rsaToken({ exp: now - 32, ...groups(['admin']) })));
    await expectUnauthorized(call(rsaToken({ nbf: now + 32, ...groups(['admin']) })));
  });
});

describe('authorizer handler: attack corpus (all 401, indistinguishable)', () => {
  const now = (): number => Math.floor(Date.now() / 1000);
  const admin = (): Record<string, unknown> => claims(ISSUER, AUDIENCE, groups(['admin']));
  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const pem = (): string => rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  type Input = string | { headers: Record<string, string>; multiValueHeaders?: Record<string, string[]> };
  const withoutExp = (): Record<string, unknown> => {
    const { exp: _exp, ...rest } = admin();
    return rest;
  };
  const tamperedPayload = (): string => {
    const [h, , s] = rsaToken(groups(['apiread'])).split('.');
    return `${h}.${b64(admin())}.${s}`;
  };
  const tamperedSignature = (): string => {
    const token = rsaToken(groups(['admin']));
    return `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  };
  const twoHeaders = (): Input => {
    const token = rsaToken(groups(['admin']));
    return { headers: { Authorization: `Bearer ${token}` }, multiValueHeaders: { Authorization: [`Bearer ${token}`, 'Bearer x.y.z'] } };
  };

  // [what, token or headers, the reason the log must give]
  const corpus: [string, () => Input, RejectReason][] = [
    ['no Authorization header', () => ({ headers: {} }), 'missing'],
    ['an empty bearer', () => ({ headers: { Authorization: 'Bearer ' } }), 'malformed'],
    ['Basic credentials', () => ({ headers: { Authorization: 'Basic dXNlcjpwYXNz' } }), 'malformed'],
    ['a token without the Bearer scheme', () => ({ headers: { Authorization: rsaToken(groups(['admin'])) } }), 'malformed'],
    ['two Authorization headers', twoHeaders, 'malformed'],
    ['garbage', () => 'not-a-jwt', 'malformed'],
    ['base64url junk in three parts', () => 'aaaa.bbbb.cccc', 'malformed'],
    ['a header that is not JSON', () => `${Buffer.from('{alg:RS256').toString('base64url')}.${b64(admin())}.AAAA`, 'malformed'],
    [
      'a payload nested 3,000 levels deep',
      () => `${b64({ alg: 'RS256', kid: rsa.kid })}.${Buffer.from(`{"a":${'['.repeat(3000)}${']'.repeat(3000)}}`).toString('base64url')}.AAAA`,
      'malformed',
    ],
    ['a payload that is a JSON array', () => `${b64({ alg: 'RS256', kid: rsa.kid })}.${b64([admin()])}.AAAA`, 'malformed'],
    ['alg none, empty signature', () => `${b64({ alg: 'none', kid: rsa.kid })}.${b64(admin())}.`, 'malformed'],
    ['alg none with a signature part', () => `${b64({ alg: 'none', kid: rsa.kid })}.${b64(admin())}.AAAA`, 'algorithm'],
    ['alg None spelled otherwise', () => `${b64({ alg: 'None', kid: rsa.kid })}.${b64(admin())}.AAAA`, 'algorithm'],
    ['HS256 signed with the RSA public key (PEM)', () => signJwt({ alg: 'HS256', kid: rsa.kid }, admin(), { hmacSecret: pem() }), 'algorithm'],
    ['HS256 signed with the public JWK', () => signJwt({ alg: 'HS256', kid: rsa.kid }, admin(), { hmacSecret: JSON.stringify(rsa.jwk) }), 'algorithm'],
    ['HS512 signed with the modulus', () => signJwt({ alg: 'HS512', kid: rsa.kid }, admin(), { hmacSecret: rsa.jwk['n']! }), 'algorithm'],
    ['ES384 with a P-256 key (algorithm not bound to the key)', () => signJwt({ alg: 'ES384', kid: ec.kid }, admin(), ec), 'algorithm'],
    ['ES384 with a P-256 key whose JWK names no alg', () => signJwt({ alg: 'ES384', kid: ecNoAlg.kid }, admin(), ecNoAlg), 'algorithm'],
    ['RS256 declared for an EC key', () => signJwt({ alg: 'RS256', kid: ec.kid }, admin(), rsa), 'algorithm'],
    ['a tampered payload (apiread re-labelled admin, signature kept)', tamperedPayload, 'signature'],
    ['a tampered signature', tamperedSignature, 'signature'],
    ['a token signed by another key under a known kid', () => signJwt({ alg: 'RS256', kid: rsa.kid }, admin(), attacker), 'signature'],
    ['an unknown kid', () => signJwt({ alg: 'RS256', kid: 'no-such-key' }, admin(), attacker), 'unknown-key'],
    ['no kid', () => signJwt({ alg: 'RS256' }, admin(), rsa), 'unknown-key'],
    ['a kid that is not a string', () => signJwt({ alg: 'RS256', kid: { $ne: null } }, admin(), attacker), 'unknown-key'],
    ['a path-traversal kid', () => signJwt({ alg: 'RS256', kid: '../../../../etc/passwd' }, admin(), attacker), 'unknown-key'],
    ['a kid that is a URL to an attacker JWKS', () => signJwt({ alg: 'RS256', kid: evil.url }, admin(), attacker), 'unknown-key'],
    ['a jku header to an attacker JWKS', () => signJwt({ alg: 'RS256', kid: attacker.kid, jku: evil.url }, admin(), attacker), 'unknown-key'],
    ['an x5u header to an attacker JWKS', () => signJwt({ alg: 'RS256', kid: attacker.kid, x5u: evil.url }, admin(), attacker), 'unknown-key'],
    ['an embedded jwk header', () => signJwt({ alg: 'RS256', kid: attacker.kid, jwk: attacker.jwk }, admin(), attacker), 'unknown-key'],
    ['a crit header', () => signJwt({ alg: 'RS256', kid: rsa.kid, crit: ['exp'] }, admin(), rsa), 'malformed'],
    ['expired', () => rsaToken({ exp: now() - 3600, ...groups(['admin']) }), 'expired'],
    ['a future nbf', () => rsaToken({ nbf: now() + 3600, ...groups(['admin']) }), 'not-yet-valid'],
    ['a missing exp', () => signJwt({ alg: 'RS256', kid: rsa.kid }, withoutExp(), rsa), 'claims'],
    ['a string exp', () => rsaToken({ exp: String(now() + 3600), ...groups(['admin']) }), 'malformed'],
    ['a wrong iss', () => rsaToken({ iss: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_OTHER', ...groups(['admin']) }), 'issuer'],
    ['an iss with a trailing slash', () => rsaToken({ iss: `${ISSUER}/`, ...groups(['admin']) }), 'issuer'],
    ['a missing iss', () => rsaToken({ iss: undefined, ...groups(['admin']) }), 'issuer'],
    ['a wrong aud', () => rsaToken({ aud: 'another-client', ...groups(['admin']) }), 'audience'],
    ['a missing aud (a Cognito access token)', () => rsaToken({ aud: undefined, client_id: AUDIENCE, token_use: 'access', ...groups(['admin']) }), 'audience'],
    ['a missing sub', () => rsaToken({ sub: undefined, ...groups(['admin']) }), 'claims'],
    ['an empty sub', () => rsaToken({ sub: '', ...groups(['admin']) }), 'claims'],
    ['a 100 KB token', () => rsaToken({ padding: 'x'.repeat(100 * 1024), ...groups(['admin']) }), 'too-large'],
  ];

  for (const [label, make, reason] of corpus) {
    it(`refuses ${label} (logged as ${reason})`, async () => {
      const input = make();
      const event = typeof input === 'string' ? authorizerEvent({ token: input }) : authorizerEvent(input);
      const logged = await capturingLogs(() => expectUnauthorized(handler(event)));
      expect(logged.filter((e) => e['message'] === 'bearer token rejected').map((e) => e['reason'])).toEqual([reason]);
    });
  }

  it('never fetches a JWKS named by the token', () => {
    expect(evil.fetches()).toBe(0);
  });

  it('logs why a token was refused, at info level, without the token', async () => {
    const token = rsaToken({ exp: now() - 3600, ...groups(['admin']) });
    const lines: string[] = [];
    const logged = await capturingLogs(() => expectUnauthorized(call(token)), lines);
    expect(logged).toContainEqual(expect.objectContaining({ level: 'info', message: 'bearer token rejected', reason: 'expired' }));
    const [, payload, signature] = token.split('.');
    for (const line of lines) {
      expect(line).not.toContain(payload);
      expect(line).not.toContain(signature);
    }
  });
});

describe('authorizer handler: JWKS endpoint down', () => {
  it('keeps verifying tokens whose key is cached, and refuses unknown kids with 401', async () => {
    await server.stop();
    const result = await call(rsaToken({ sub: 'dave', ...groups(['admin']) }));
    expect(result.context).toEqual({ principal: 'dave', roles: 'admin' });
    const ecResult = await call(signJwt({ alg: 'ES256', kid: ec.kid }, claims(ISSUER, AUDIENCE, groups(['apiread'])), ec));
    expect(ecResult.context.roles).toBe('apiread');
    await expectUnauthorized(call(signJwt({ alg: 'RS256', kid: 'new-key' }, claims(ISSUER, AUDIENCE, groups(['admin'])), attacker)));
  });

  it('fails with a server error, not 401, in a container that never got the keys', async () => {
    vi.resetModules();
    vi.stubEnv('JWKS_URL', server.url); // stopped: connection refused
    const fresh = await import('../../functions/authorizer/handlers/authorize.js');
    expect(fresh.handler).not.toBe(handler);
    const err = await refusal(fresh.handler(authorizerEvent({ token: rsaToken(groups(['admin'])) })));
    expect(err.message).not.toBe('Unauthorized');
    expect(err.message).not.toContain('127.0.0.1');
    // Junk is still refused as junk, without trying the endpoint.
    await expectUnauthorized(fresh.handler(authorizerEvent({ token: 'aaaa.bbbb.cccc' })));
  });
});
