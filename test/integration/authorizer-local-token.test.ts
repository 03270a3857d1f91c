/**
 * The local issuer and `npm run token`: tokens they mint are accepted by the authorizer
 * configured as in local mode, with the issuer's JWKS served over HTTP on 127.0.0.1.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RoleAuthorizerResult } from '../../functions/authorizer/service.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { LOCAL_AUDIENCE, LOCAL_ISSUER } from '../../tools/local/config.js';
import { ISSUER_DIR, localJwks, mintToken } from '../../tools/simulators/issuer.js';
import { authorizerEvent, methodArn, policyAllows, startJwksServer, type JwksServer } from '../../tools/simulators/jwks.js';
import { HANG_MS } from '../support/timeouts.js';

const run = promisify(execFile);
const RELAY_ARN = methodArn('POST', '/orch_manager/restAction/nso-1');

/** `npm run --silent token -- …args`, as a user types it. */
const tokenCli = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'token', '--', ...args], { cwd: PROJECT_ROOT, timeout: HANG_MS });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
};
const decode = (token: string, part: 0 | 1): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[part]!, 'base64url').toString('utf8')) as Record<string, unknown>;

let server: JwksServer;
let tmp: string;
let handler: (event: APIGatewayRequestAuthorizerEvent) => Promise<RoleAuthorizerResult>;
const authorize = (token: string): Promise<RoleAuthorizerResult> => handler(authorizerEvent({ token }));

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'issuer-test-'));
  // The issuer's own JWKS (default key directory, as `npm start` and `npm run token` use it).
  server = await startJwksServer(localJwks());
  vi.stubEnv('JWT_ISSUER', LOCAL_ISSUER);
  vi.stubEnv('JWT_AUDIENCE', LOCAL_AUDIENCE);
  vi.stubEnv('JWKS_URL', server.url);
  vi.stubEnv('ROLES_CLAIM', 'roles');
  ({ handler } = await import('../../functions/authorizer/handlers/authorize.js'));
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await server.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('local issuer', () => {
  it('creates its key pair on first use, private key file mode 0600, and reuses it', () => {
    const dir = path.join(tmp, 'fresh', 'issuer');
    expect(fs.existsSync(dir)).toBe(false);
    const first = localJwks(dir);
    const file = path.join(dir, 'private-key.pem');
    expect(fs.readdirSync(dir)).toEqual(['private-key.pem']);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o077).toBe(0);
    const pem = fs.readFileSync(file, 'utf8');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    mintToken({ roles: ['admin'], dir });
    expect(fs.readFileSync(file, 'utf8')).toBe(pem);
    expect(localJwks(dir)).toEqual(first);
  });

  it('publishes only the public key, with a kid, RS256 and use sig', () => {
    const { keys } = localJwks(path.join(tmp, 'public-only'));
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
  });

  it('mints tokens the authorizer in local mode accepts, with the local issuer, audience and roles claim', async () => {
    const token = mintToken({ roles: ['admin'], sub: 'alice', ttlSeconds: 600 });
    expect(decode(token, 0)).toMatchObject({ alg: 'RS256', kid: localJwks().keys[0]!['kid'] });
    const claims = decode(token, 1);
    expect(claims).toMatchObject({ iss: LOCAL_ISSUER, aud: LOCAL_AUDIENCE, sub: 'alice', roles: ['admin'] });
    expect(Number(claims['exp']) - Number(claims['iat'])).toBe(600);
    const result = await authorize(token);
    expect(result.context).toEqual({ principal: 'alice', roles: 'admin' });
    expect(policyAllows(result.policyDocument, RELAY_ARN)).toBe(true);
  });

  it('mints tokens a key from another directory cannot stand in for', async () => {
    await expect(authorize(mintToken({ roles: ['admin'], dir: path.join(tmp, 'other') }))).rejects.toThrow(/^Unauthorized$/);
  });

  it('refuses lifetimes outside 1 s to 24 h (the longest the authorizer accepts)', () => {
    for (const ttlSeconds of [0, -1, 1.5, 24 * 3600 + 1]) {
      expect(() => mintToken({ roles: [], ttlSeconds, dir: path.join(tmp, 'ttl') })).toThrow(RangeError);
    }
  });

  it('mints a token of the longest lifetime that the authorizer accepts', async () => {
    const result = await authorize(mintToken({ roles: ['apiread'], ttlSeconds: 24 * 3600 }));
    expect(result.context.roles).toBe('apiread');
  });
});

describe('npm run token', () => {
  it('prints only a token that the local authorizer accepts with the roles given', async () => {
    const [both, unknown, none, ttl] = await Promise.all([
      tokenCli('--roles', 'admin,apiread', '--sub', 'alice'),
      tokenCli('--roles', 'auditor, apiread2'),
      tokenCli('--roles', ''),
      tokenCli('--roles', 'apiread', '--ttl', '120'),
    ]);
    for (const out of [both, unknown, none, ttl]) {
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/);
    }

    const admin = await authorize(both.stdout.trim());
    expect(admin.principalId).toBe('alice');
    expect(admin.context).toEqual({ principal: 'alice', roles: 'admin,apiread' });
    expect(policyAllows(admin.policyDocument, RELAY_ARN)).toBe(true);

    // Unknown names are minted as given, and grant nothing: the 403 path.
    expect(decode(unknown.stdout.trim(), 1)['roles']).toEqual(['auditor', 'apiread2']);
    for (const out of [unknown, none]) {
      const denied = await authorize(out.stdout.trim());
      expect(denied.context).toEqual({ principal: 'local-user', roles: '' });
      expect(denied.policyDocument.Statement[0]?.Effect).toBe('Deny');
    }

    const reader = decode(ttl.stdout.trim(), 1);
    expect(Number(reader['exp']) - Number(reader['iat'])).toBe(120);
    expect((await authorize(ttl.stdout.trim())).context.roles).toBe('apiread');

    // Every process signs with the one key pair under .local/issuer/.
    expect(fs.statSync(path.join(ISSUER_DIR, 'private-key.pem')).mode & 0o777).toBe(0o600);
  });

  it('exits 2 with usage on stderr and nothing on stdout for bad arguments', async () => {
    const results = await Promise.all([
      tokenCli(),
      tokenCli('--roles', 'admin', '--ttl', '0'),
      tokenCli('--roles', 'admin', '--ttl', '1h'),
      tokenCli('--roles', 'admin', '--bogus'),
    ]);
    for (const out of results) {
      expect(out.code).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain('usage: npm run --silent token -- --roles');
    }
  });
});
