/**
 * The authorizer and an identity provider on a private network: its JWKS served over real TLS
 * on loopback under a CA generated for this run, trusted only when `NETCONFIG_CA_BUNDLE` names
 * it (as the stack ships it with the authorizer of an OIDC issuer); and keys pinned in the
 * deployment (`JWKS_FILE`), verified with, never fetched. Each configuration is a fresh
 * container: the handler module loaded anew with its environment, as Lambda would.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RoleAuthorizerResult } from '../../functions/authorizer/service.js';
import { authorizerEvent, claims, signJwt, testKey, type TestKey } from '../../tools/simulators/jwks.js';
import { createTestCa } from '../support/relay-tls.js';

const ISSUER = 'https://login.corp.example/realms/ops';
const AUDIENCE = 'netconfig';
const privateCa = createTestCa('identity provider CA');
const otherCa = createTestCa('some other CA');
const key = testKey('rsa', 'corp-2026');
const stranger = testKey('rsa', 'not-pinned');

/** Stands in for the function's code directory (`LAMBDA_TASK_ROOT`), with the shipped files in it. */
const taskRoot = mkdtempSync(path.join(tmpdir(), 'authorizer-task-root-'));
writeFileSync(path.join(taskRoot, 'ca-bundle.pem'), privateCa.cert);
writeFileSync(path.join(taskRoot, 'other-ca.pem'), otherCa.cert);
writeFileSync(path.join(taskRoot, 'jwks.json'), JSON.stringify({ keys: [key.jwk] }));
writeFileSync(path.join(taskRoot, 'private.json'), JSON.stringify({ keys: [{ ...key.jwk, kty: 'oct', k: 'c2VjcmV0' }] }));

let server: https.Server;
let jwksUrl: string;
let fetches = 0;

beforeAll(async () => {
  server = https.createServer(privateCa.issue(), (req, res) => {
    if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
    fetches += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  vi.unstubAllEnvs();
});

type Handler = (event: APIGatewayRequestAuthorizerEvent) => Promise<RoleAuthorizerResult>;

/** The authorizer of a fresh container with this environment (besides issuer, audience and roles claim). */
const container = async (env: Record<string, string>): Promise<Handler> => {
  vi.resetModules();
  vi.stubEnv('LAMBDA_TASK_ROOT', taskRoot);
  vi.stubEnv('JWT_ISSUER', ISSUER);
  vi.stubEnv('JWT_AUDIENCE', AUDIENCE);
  vi.stubEnv('ROLES_CLAIM', 'roles');
  for (const name of ['JWKS_URL', 'JWKS_FILE', 'NETCONFIG_CA_BUNDLE']) vi.stubEnv(name, env[name] ?? '');
  return ((await import('../../functions/authorizer/handlers/authorize.js')) as { handler: Handler }).handler;
};

const tokenOf = (signer: TestKey) => signJwt({ alg: signer.alg, kid: signer.kid }, claims(ISSUER, AUDIENCE, { roles: ['apiread'] }), signer);
const outcome = (handler: Handler, signer: TestKey) =>
  handler(authorizerEvent({ token: tokenOf(signer) })).then(
    (result) => `allowed ${result.principalId}`,
    (error: Error) => `${error.name}: ${error.message}`,
  );

describe('an identity provider behind a private CA', () => {
  it('is reached when the CA bundle names its CA, and the token verified with its keys', async () => {
    const before = fetches;
    const handler = await container({ JWKS_URL: jwksUrl, NETCONFIG_CA_BUNDLE: 'ca-bundle.pem' });
    expect(await outcome(handler, key)).toBe('allowed user-1');
    expect(fetches).toBe(before + 1);
  });

  it('is not reached without the bundle, or with another CA: no key, so the gateway answers 500, never an allow', async () => {
    for (const bundle of ['', 'other-ca.pem']) {
      const before = fetches;
      const handler = await container({ JWKS_URL: jwksUrl, NETCONFIG_CA_BUNDLE: bundle });
      expect(await outcome(handler, key), bundle || 'no bundle').toBe('IssuerKeysUnavailable: the issuer keys could not be fetched');
      // The TLS handshake failed: the server never answered a request.
      expect(fetches).toBe(before);
    }
  });
});

describe('keys pinned in the deployment', () => {
  it('verifies a token signed by a pinned key, and refuses an unknown kid, with no fetch at all', async () => {
    const before = fetches;
    const handler = await container({ JWKS_FILE: 'jwks.json' });
    expect(await outcome(handler, key)).toBe('allowed user-1');
    expect(await outcome(handler, stranger)).toBe('Error: Unauthorized');
    expect(fetches).toBe(before);
  });

  it('reads the keys once, in the verifier, with nothing to fetch from', async () => {
    vi.resetModules();
    const { createTokenVerifier } = await import('../../functions/authorizer/verify.js');
    const { pinnedJwksFromEnv, PINNED_JWKS_URI } = await import('../../functions/authorizer/environment.js');
    const pinnedJwks = pinnedJwksFromEnv({ JWKS_FILE: path.join(taskRoot, 'jwks.json') })!;
    const verifier = createTokenVerifier({ issuer: ISSUER, audience: [AUDIENCE], jwksUrl: PINNED_JWKS_URI, rolesClaim: 'roles', pinnedJwks });
    expect(verifier.jwks.hasKeys()).toBe(true);
    await expect(verifier.verify(tokenOf(key))).resolves.toEqual({ sub: 'user-1', roles: ['apiread'] });
    await expect(verifier.verify(tokenOf(stranger))).rejects.toMatchObject({ name: 'TokenRejected', reason: 'unknown-key' });
    expect(verifier.jwks.fetcher.attempts).toBe(0);
  });

  it('stops the container at load for a file it cannot use, or beside a JWKS URL', async () => {
    await expect(container({ JWKS_FILE: 'nowhere.json' })).rejects.toThrow(
      `configuration error: JWKS_FILE names ${path.join(taskRoot, 'nowhere.json')}, which cannot be read (ENOENT)`,
    );
    await expect(container({ JWKS_FILE: 'ca-bundle.pem' })).rejects.toThrow(
      /JWKS_FILE names .*ca-bundle\.pem, which is not usable \(JWKS could not be fetched: the document is not JSON\)/,
    );
    await expect(container({ JWKS_FILE: 'private.json' })).rejects.toThrow(/JWKS_FILE names .*private\.json, which holds no key the authorizer verifies with/);
    await expect(container({ JWKS_FILE: 'jwks.json', JWKS_URL: jwksUrl })).rejects.toThrow('configuration error: JWKS_URL and JWKS_FILE exclude each other');
  });
});
