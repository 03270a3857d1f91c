/**
 * The local sign-in over HTTP (`tools/simulators/sign-in.ts`, served by the local gateway beside
 * the API): the page, the code with PKCE S256, the exchange and the refresh, and what it refuses
 * (a wrong verifier, a used or expired code, a foreign redirect URI or client). Its ID tokens are
 * accepted by the authorizer configured as in local mode, with the caller's role.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RoleAuthorizerResult } from '../../functions/authorizer/service.js';
import { LOCAL_AUDIENCE, LOCAL_ISSUER } from '../../tools/local/config.js';
import { localJwks } from '../../tools/simulators/issuer.js';
import { authorizerEvent, startJwksServer, type JwksServer } from '../../tools/simulators/jwks.js';
import { CODE_TTL_MS, localSignIn } from '../../tools/simulators/sign-in.js';

let server: Server;
let jwks: JwksServer;
let origin: string;
let consoleUrl: string;
let clock = 1_700_000_000_000;
let authorize: (event: APIGatewayRequestAuthorizerEvent) => Promise<RoleAuthorizerResult>;
const issuerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sign-in-issuer-'));

beforeAll(async () => {
  // The routes as the local gateway serves them: method, path, then the request's query, body and headers.
  let routes: ReturnType<typeof localSignIn>['routes'] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [p, q] = (req.url ?? '').split('?');
      const route = routes.find((r) => r.method === req.method && r.path === p);
      if (!route) return void res.writeHead(404).end();
      const answer = route.handle({ method: req.method ?? '', query: new URLSearchParams(q ?? ''), body: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(answer.statusCode, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  consoleUrl = `${origin}/v1/console`;
  routes = localSignIn({ consoleUrl, clientId: LOCAL_AUDIENCE, issuerDir, ttlSeconds: 120, now: () => clock }).routes;
  jwks = await startJwksServer(localJwks(issuerDir));
  vi.stubEnv('JWT_ISSUER', LOCAL_ISSUER);
  vi.stubEnv('JWT_AUDIENCE', `netconfig-api,${LOCAL_AUDIENCE}`);
  vi.stubEnv('JWKS_URL', jwks.url);
  vi.stubEnv('ROLES_CLAIM', 'roles');
  ({ handler: authorize } = await import('../../functions/authorizer/handlers/authorize.js'));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await jwks.stop();
  vi.unstubAllEnvs();
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const authorizeParams = (challenge: string, overrides: Record<string, string> = {}) =>
  new URLSearchParams({
    response_type: 'code',
    client_id: LOCAL_AUDIENCE,
    redirect_uri: consoleUrl,
    state: 'st-123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'openid email profile',
    ...overrides,
  });

/** Signs in as a user through the page's form: the code the console gets back. */
const signIn = async (user: string, challenge: string): Promise<string> => {
  const form = authorizeParams(challenge);
  form.set('user', user);
  const res = await fetch(`${origin}/oauth2/authorize`, { method: 'POST', body: form, redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(consoleUrl);
  expect(location.searchParams.get('state')).toBe('st-123');
  return location.searchParams.get('code')!;
};

const token = (fields: Record<string, string>) =>
  fetch(`${origin}/oauth2/token`, { method: 'POST', body: new URLSearchParams({ client_id: LOCAL_AUDIENCE, ...fields }) });

const exchange = (code: string, verifier: string, redirectUri = consoleUrl) =>
  token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri });

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('the sign-in page', () => {
  it('offers one button per sample user in a form, without script', async () => {
    const res = await fetch(`${origin}/oauth2/authorize?${authorizeParams(pkce().challenge)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain('<h1>Sign in (local)</h1>');
    expect(html).toContain('<button type="submit" name="user" value="admin">Sign in as admin</button>');
    expect(html).toContain('<button type="submit" name="user" value="apiread">Sign in as apiread</button>');
    expect(html).not.toContain('<script');
  });

  it.each([
    ['a foreign redirect_uri', { redirect_uri: 'https://evil.example.net/v1/console' }],
    ['another path of the gateway', { redirect_uri: 'REPLACE/v1/other' }],
    ['an unknown client', { client_id: 'someone-else' }],
    ['a plain challenge', { code_challenge_method: 'plain' }],
    ['no openid scope', { scope: 'email' }],
  ])('refuses %s with a page, never a redirect', async (_, overrides) => {
    const params = authorizeParams(pkce().challenge, Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, v.replace('REPLACE', origin)])));
    const res = await fetch(`${origin}/oauth2/authorize?${params}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    params.set('user', 'admin');
    const posted = await fetch(`${origin}/oauth2/authorize`, { method: 'POST', body: params, redirect: 'manual' });
    expect(posted.status).toBe(400);
    expect(posted.headers.get('location')).toBeNull();
  });
});

describe('the code exchange', () => {
  it('gives an admin ID token the authorizer accepts, with a refresh token that works', async () => {
    const { verifier, challenge } = pkce();
    const res = await exchange(await signIn('admin', challenge), verifier);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 120, id_token: expect.any(String), refresh_token: expect.any(String) });
    const id = claims(body['id_token'] as string);
    expect(id).toMatchObject({ iss: LOCAL_ISSUER, aud: LOCAL_AUDIENCE, sub: 'admin', roles: ['admin'] });
    expect(Number(id['exp']) - Number(id['iat'])).toBe(120);
    const decision = await authorize(authorizerEvent({ token: body['id_token'] as string }));
    expect(decision.context).toMatchObject({ roles: 'admin' });

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: body['refresh_token'] as string });
    expect(refreshed.status).toBe(200);
    const again = (await refreshed.json()) as Record<string, unknown>;
    expect(claims(again['id_token'] as string)).toMatchObject({ sub: 'admin', roles: ['admin'] });
  });

  it('signs in apiread with its role', async () => {
    const { verifier, challenge } = pkce();
    const body = (await (await exchange(await signIn('apiread', challenge), verifier)).json()) as Record<string, string>;
    const decision = await authorize(authorizerEvent({ token: body['id_token']! }));
    expect(decision.context).toMatchObject({ roles: 'apiread' });
  });

  it('refuses a wrong verifier, and the code is gone after that attempt', async () => {
    const { verifier, challenge } = pkce();
    const code = await signIn('admin', challenge);
    const wrong = await exchange(code, pkce().verifier);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    expect(((await (await exchange(code, verifier)).json()) as Record<string, string>)['error']).toBe('invalid_grant');
  });

  it('takes a code once', async () => {
    const { verifier, challenge } = pkce();
    const code = await signIn('admin', challenge);
    expect((await exchange(code, verifier)).status).toBe(200);
    const reused = await exchange(code, verifier);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a code past its minute, and one sent with another redirect_uri', async () => {
    const late = pkce();
    const code = await signIn('admin', late.challenge);
    clock += CODE_TTL_MS;
    expect(await (await exchange(code, late.verifier)).json()).toMatchObject({ error: 'invalid_grant' });
    const other = pkce();
    const code2 = await signIn('admin', other.challenge);
    expect(await (await exchange(code2, other.verifier, `${origin}/v1/elsewhere`)).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses an unknown refresh token, an unknown client and an unknown grant type', async () => {
    expect(await (await token({ grant_type: 'refresh_token', refresh_token: 'nope' })).json()).toMatchObject({ error: 'invalid_grant' });
    const client = await fetch(`${origin}/oauth2/token`, { method: 'POST', body: new URLSearchParams({ client_id: 'x', grant_type: 'refresh_token' }) });
    expect(client.status).toBe(401);
    expect(await client.json()).toMatchObject({ error: 'invalid_client' });
    expect(await (await token({ grant_type: 'password' })).json()).toMatchObject({ error: 'unsupported_grant_type' });
  });
});
