/**
 * The Vault backend against answers the Vault simulator never gives: token leases on an injected
 * clock, standby and odd statuses, bodies that are not KV v2, refused logins, slow answers. A
 * scripted server on loopback answers each request as the test says and records what it received.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CredentialSource } from '../../functions/outbound/secrets/credentials.js';
import { SecretsUnavailable } from '../../functions/outbound/secrets/errors.js';
import { createVaultBackend, vaultAddress, type VaultOptions } from '../../functions/outbound/secrets/vault.js';
import { logger } from '../../functions/platform/logger.js';
import { stdoutDuring } from '../support/stdout.js';

/** What `fn` logs with info lines written too (the suite runs at `warn`). */
const infoLinesDuring = async (fn: () => Promise<unknown>) => {
  logger.setLevel('info');
  try {
    return await stdoutDuring(fn);
  } finally {
    logger.setLevel('warn');
  }
};

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface Answer {
  readonly status: number;
  /** A value is sent as JSON, a string as it is. */
  readonly body?: unknown;
  readonly delayMs?: number;
}

let server: ReturnType<typeof createServer>;
let url: string;
const received: Received[] = [];
let answer: (request: Received) => Answer = () => ({ status: 500 });

const readAll = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void readAll(req).then((body) => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(request);
      const { status, body: out, delayMs = 0 } = answer(request);
      const text = out === undefined ? '' : typeof out === 'string' ? out : JSON.stringify(out);
      setTimeout(() => res.writeHead(status, { 'Content-Type': 'application/json' }).end(text), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
  answer = () => ({ status: 500 });
});

const kv = (data: unknown) => ({ data: { data, metadata: { version: 1 } } });
const isLogin = (r: Received) => r.url === '/v1/auth/approle/login';
const logins = () => received.filter(isLogin).length;

/** A credential that counts its reads and the forced ones. */
const countingCredential = (value = 'cred') => {
  const calls: boolean[] = [];
  const source: CredentialSource = ({ refresh = false } = {}) => {
    calls.push(refresh);
    return Promise.resolve(value);
  };
  return { source, calls };
};

const clock = (start = 1_000_000) => {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
};

const tokenBackend = (extra: Partial<VaultOptions> = {}) =>
  createVaultBackend({ address: url, mount: 'secret', auth: { method: 'token', token: () => Promise.resolve('tok') }, ...extra });

/** AppRole against the scripted server: logins answer `lease` seconds and a numbered token; reads answer with the token's number. */
const appRole = (lease: unknown, now?: () => number, secretId: CredentialSource = () => Promise.resolve('sid')) => {
  let issued = 0;
  answer = (r) => {
    if (isLogin(r)) {
      issued += 1;
      return { status: 200, body: { auth: { client_token: `t${issued}`, lease_duration: lease } } };
    }
    return { status: 200, body: kv({ password: r.headers['x-vault-token'] }) };
  };
  return createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'role', secretId }, ...(now ? { now } : {}) });
};

describe('Vault token leases (AppRole), on an injected clock', () => {
  it('renews a token 30 s before a long lease ends, not a millisecond earlier', async () => {
    const time = clock();
    const backend = appRole(3600, time.now);
    await expect(backend.read('a')).resolves.toEqual({ password: 't1' });
    time.advance(3_570_000 - 1);
    await expect(backend.read('a')).resolves.toEqual({ password: 't1' });
    time.advance(1);
    await expect(backend.read('a')).resolves.toEqual({ password: 't2' });
    expect(logins()).toBe(2);
  });

  it('renews at half of a lease shorter than a minute', async () => {
    const time = clock();
    const backend = appRole(40, time.now);
    await backend.read('a');
    time.advance(19_999);
    await expect(backend.read('a')).resolves.toEqual({ password: 't1' });
    time.advance(1);
    await expect(backend.read('a')).resolves.toEqual({ password: 't2' });
  });

  it('keeps a token without a lease (0, absent, negative or not a number) for good', async () => {
    for (const lease of [0, undefined, -5, '3600']) {
      received.length = 0;
      const time = clock();
      const backend = appRole(lease, time.now);
      await backend.read('a');
      time.advance(10 * 365 * 24 * 3600 * 1000);
      await expect(backend.read('a'), String(lease)).resolves.toEqual({ password: 't1' });
      expect(logins(), String(lease)).toBe(1);
    }
  });

  it('shares one renewal among calls that find the lease ended at once', async () => {
    const time = clock();
    const secretId = countingCredential();
    const backend = appRole(60, time.now, secretId.source);
    await backend.read('a');
    time.advance(60_000);
    const values = await Promise.all(Array.from({ length: 4 }, () => backend.read('a')));
    expect(values).toEqual(Array.from({ length: 4 }, () => ({ password: 't2' })));
    expect(logins()).toBe(2);
    // An ended lease is not a refusal: the secret id is not read again from its store.
    expect(secretId.calls).toEqual([false, false]);
  });

  it('shares one new login among calls refused the same token at once', async () => {
    let issued = 0;
    let revoked = '';
    answer = (r) => {
      if (isLogin(r)) {
        issued += 1;
        return { status: 200, body: { auth: { client_token: `t${issued}`, lease_duration: 0 } } };
      }
      const token = r.headers['x-vault-token'];
      return token === revoked ? { status: 403, body: { errors: ['permission denied'] } } : { status: 200, body: kv({ password: token }) };
    };
    const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'role', secretId: () => Promise.resolve('sid') } });
    await backend.read('a');
    revoked = 't1';
    const values = await Promise.all(Array.from({ length: 3 }, () => backend.read('a')));
    expect(values).toEqual(Array.from({ length: 3 }, () => ({ password: 't2' })));
    expect(logins()).toBe(2);
  });
});

describe('Vault AppRole login answers', () => {
  it('sends the role id and the secret id, to the configured auth mount, without a token', async () => {
    answer = (r) =>
      r.url.endsWith('/login') ? { status: 200, body: { auth: { client_token: 'tok', lease_duration: 0 } } } : { status: 200, body: kv({ password: 'p' }) };
    const backend = createVaultBackend({
      address: url,
      mount: 'secret',
      auth: { method: 'approle', roleId: 'role-1', secretId: () => Promise.resolve('sid-1'), mount: 'team approle' },
    });
    await backend.read('a');
    const login = received[0]!;
    expect(login.url).toBe('/v1/auth/team%20approle/login');
    expect(login.method).toBe('POST');
    expect(JSON.parse(login.body)).toEqual({ role_id: 'role-1', secret_id: 'sid-1' });
    expect(login.headers['content-type']).toBe('application/json');
    expect(login.headers['x-vault-token']).toBeUndefined();
    expect(received[1]!.headers['x-vault-token']).toBe('tok');
  });

  it('reads the secret id again once when the login is refused with 400 or 403, not for other statuses', async () => {
    for (const [status, reads] of [
      [400, [false, true]],
      [403, [false, true]],
      [500, [false]],
      [429, [false]],
    ] as const) {
      answer = () => ({ status, body: { errors: ['no'] } });
      const secretId = countingCredential();
      const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'r', secretId: secretId.source } });
      await expect(backend.read('a'), String(status)).rejects.toBeInstanceOf(SecretsUnavailable);
      expect(secretId.calls, String(status)).toEqual(reads);
    }
  });

  it('logs the status of a refused login, and 503s', async () => {
    answer = () => ({ status: 400, body: { errors: ['invalid role or secret ID'] } });
    const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'r', secretId: () => Promise.resolve('sid') } });
    const out = await stdoutDuring(() => expect(backend.read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toEqual([expect.objectContaining({ level: 'error', message: 'the AppRole login failed', backend: 'vault', status: 400 })]);
    expect(out.raw()).not.toContain('sid');
  });

  it('answers 503 for a login answer that holds no usable token, and logs why', async () => {
    for (const body of ['not json', null, [], {}, { auth: null }, { auth: {} }, { auth: { client_token: '' } }, { auth: { client_token: 42 } }]) {
      received.length = 0;
      answer = () => ({ status: 200, body: body === null ? 'null' : body });
      const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'r', secretId: () => Promise.resolve('sid') } });
      const out = await stdoutDuring(() => expect(backend.read('a'), JSON.stringify(body)).rejects.toBeInstanceOf(SecretsUnavailable));
      expect(out.entries(), JSON.stringify(body)).toContainEqual(
        expect.objectContaining({ level: 'error', message: 'the AppRole login answer holds no token', backend: 'vault' }),
      );
      expect(
        received.filter((r) => !isLogin(r)),
        JSON.stringify(body),
      ).toEqual([]);
    }
  });

  it('logs a successful login', async () => {
    const backend = appRole(0);
    const out = await infoLinesDuring(() => backend.read('a'));
    expect(out.entries()).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'logged in to the secrets store', backend: 'vault', method: 'approle' }),
    );
  });
});

describe('Vault answers to reads, writes, deletes and health checks', () => {
  it('treats 404 and a version without data as no secret', async () => {
    for (const [status, body] of [
      [404, { errors: [] }],
      [200, kv(null)],
      [200, kv([1, 2])],
      [200, kv('text')],
    ] as const) {
      answer = () => ({ status, body });
      await expect(tokenBackend().read('a'), JSON.stringify(body)).resolves.toBeUndefined();
    }
  });

  it('answers 503 for any other status, or a 200 whose body is not KV v2, and logs it', async () => {
    for (const [status, body] of [
      [500, { errors: ['x'] }],
      [201, kv({ password: 'p' })],
      [204, undefined],
      [200, 'null'],
      [200, '[]'],
      [200, { data: null }],
      [200, { data: 'x' }],
      [200, { data: { metadata: {} } }],
      [200, '<html>login</html>'],
    ] as const) {
      answer = () => ({ status, body });
      const out = await stdoutDuring(() => expect(tokenBackend().read('a'), `${status} ${JSON.stringify(body)}`).rejects.toBeInstanceOf(SecretsUnavailable));
      const expected =
        status === 200
          ? { level: 'warn', message: 'the secrets store answered a read with a body that is not KV v2', backend: 'vault' }
          : { level: 'warn', message: 'the secrets store answered with an unexpected status', backend: 'vault', operation: 'read', status };
      expect(out.entries(), `${status} ${JSON.stringify(body)}`).toContainEqual(expect.objectContaining(expected));
    }
  });

  it('answers 503 for a read or login answer nested 100,000 levels deep, never a RangeError, and logs why; 128 levels are read', async () => {
    const deepIn = (depth: number) => `{"data":{"data":{"password":"p","deep":${'['.repeat(depth - 3)}${']'.repeat(depth - 3)}}}}`;
    answer = () => ({ status: 200, body: deepIn(128) });
    await expect(tokenBackend().read('a')).resolves.toMatchObject({ password: 'p' });
    const tooDeep = { level: 'warn', message: 'the secrets store answered with JSON nested too deep', backend: 'vault', maxDepth: 128 };
    for (const depth of [129, 100_000]) {
      answer = () => ({ status: 200, body: deepIn(depth) });
      const out = await stdoutDuring(() => expect(tokenBackend().read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
      expect(out.entries()).toContainEqual(expect.objectContaining(tooDeep));
    }
    answer = () => ({ status: 200, body: `{"auth":{"client_token":"t","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}` });
    const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'r', secretId: () => Promise.resolve('sid') } });
    const out = await stdoutDuring(() => expect(backend.read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toContainEqual(expect.objectContaining(tooDeep));
  });

  it('sends the token, the namespace and X-Vault-Request, and a JSON body only when writing', async () => {
    answer = (r) => (r.method === 'GET' ? { status: 200, body: kv({ password: 'p' }) } : { status: 204 });
    const backend = tokenBackend({ namespace: 'admin/team' });
    await backend.read('a/b c');
    await backend.write('a/b c', { password: 'q' });
    await backend.delete('a/b c');
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/secret/data/a/b%20c',
      'POST /v1/secret/data/a/b%20c',
      'DELETE /v1/secret/data/a/b%20c',
    ]);
    for (const r of received) {
      expect(r.headers['x-vault-token']).toBe('tok');
      expect(r.headers['x-vault-namespace']).toBe('admin/team');
      expect(r.headers['x-vault-request']).toBe('true');
    }
    expect(received[0]!.headers['content-type']).toBeUndefined();
    expect(received[0]!.body).toBe('');
    expect(received[1]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(received[1]!.body)).toEqual({ data: { password: 'q' } });
    expect(received[2]!.headers['content-type']).toBeUndefined();
    expect(received[2]!.body).toBe('');
  });

  it('sends no namespace header when none is configured', async () => {
    answer = () => ({ status: 200, body: kv({ password: 'p' }) });
    await tokenBackend().read('a');
    expect(received[0]!.headers).not.toHaveProperty('x-vault-namespace');
  });

  it('accepts 200 and 204 for a write, and nothing else', async () => {
    for (const status of [200, 204]) {
      answer = () => ({ status });
      await expect(tokenBackend().write('a', { password: 'p' }), String(status)).resolves.toBeUndefined();
    }
    for (const status of [201, 400, 404, 500]) {
      answer = () => ({ status });
      const out = await stdoutDuring(() => expect(tokenBackend().write('a', { password: 'p' }), String(status)).rejects.toBeInstanceOf(SecretsUnavailable));
      expect(out.entries()).toContainEqual(
        expect.objectContaining({ message: 'the secrets store answered with an unexpected status', operation: 'write', status }),
      );
    }
  });

  it('accepts 200, 204 and 404 for a delete, and nothing else', async () => {
    for (const status of [200, 204, 404]) {
      answer = () => ({ status });
      await expect(tokenBackend().delete('a'), String(status)).resolves.toBeUndefined();
    }
    for (const status of [201, 400, 500]) {
      answer = () => ({ status });
      const out = await stdoutDuring(() => expect(tokenBackend().delete('a'), String(status)).rejects.toBeInstanceOf(SecretsUnavailable));
      expect(out.entries()).toContainEqual(expect.objectContaining({ operation: 'delete', status }));
    }
  });

  it('calls healthy an active node and the standbys that serve reads (429, 472, 473), with a valid token', async () => {
    for (const status of [200, 429, 472, 473]) {
      received.length = 0;
      answer = () => ({ status, body: { sealed: false } });
      const token = countingCredential();
      const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'token', token: token.source } });
      await expect(backend.health(), String(status)).resolves.toBeUndefined();
      expect(received.map((r) => r.url)).toEqual(['/v1/sys/health']);
      expect(received[0]!.headers['x-vault-token']).toBeUndefined();
      expect(token.calls).toEqual([false]);
    }
    for (const status of [501, 503, 500, 404]) {
      answer = () => ({ status, body: { sealed: true } });
      const out = await stdoutDuring(() => expect(tokenBackend().health(), String(status)).rejects.toBeInstanceOf(SecretsUnavailable));
      expect(out.entries()).toContainEqual(expect.objectContaining({ level: 'warn', message: 'the secrets store is not healthy', backend: 'vault', status }));
    }
  });

  it('is not healthy when it cannot log in', async () => {
    answer = (r) => (isLogin(r) ? { status: 400, body: { errors: ['no'] } } : { status: 200, body: { sealed: false } });
    const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'approle', roleId: 'r', secretId: () => Promise.resolve('sid') } });
    await expect(backend.health()).rejects.toBeInstanceOf(SecretsUnavailable);
  });

  it('logs the refused renewed token with the method, and 503s', async () => {
    answer = () => ({ status: 403, body: { errors: ['permission denied'] } });
    const token = countingCredential();
    const backend = createVaultBackend({ address: url, mount: 'secret', auth: { method: 'token', token: token.source } });
    const out = await infoLinesDuring(() => expect(backend.write('a', { password: 'p' })).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(token.calls).toEqual([false, true]);
    expect(out.entries()).toEqual([
      expect.objectContaining({ level: 'info', message: 'the secrets store refused the token; renewing it', backend: 'vault' }),
      expect.objectContaining({
        level: 'error',
        message: 'the secrets store refused the renewed token (check the Vault policy)',
        backend: 'vault',
        method: 'POST',
      }),
    ]);
  });
});

describe('Vault address and time limit', () => {
  it('keeps a path prefix of the address and drops its trailing slashes', async () => {
    expect(vaultAddress('https://vault.example.net:8200/')).toBe('https://vault.example.net:8200');
    expect(vaultAddress('http://vault.example.net/proxy/vault//')).toBe('http://vault.example.net/proxy/vault');
    answer = () => ({ status: 200, body: kv({ password: 'p' }) });
    await createVaultBackend({ address: `${url}/proxy/vault/`, mount: '//kv/team//', auth: { method: 'token', token: () => Promise.resolve('t') } }).read('x');
    expect(received[0]!.url).toBe('/proxy/vault/v1/kv/team/data/x');
  });

  it('refuses an address that is not http(s), or carries credentials, a query or a fragment', () => {
    for (const address of ['ftp://vault:8200', 'https://user@vault', 'https://:pw@vault', 'https://vault?x=1', 'https://vault#f', 'not a url']) {
      expect(() => vaultAddress(address), address).toThrow(/^configuration error: VAULT_ADDR /);
    }
    expect(() => vaultAddress('https://vault?x=1')).toThrow('configuration error: VAULT_ADDR must be an http(s) URL without credentials, query or fragment');
    expect(() => vaultAddress('not a url')).toThrow('configuration error: VAULT_ADDR is not a URL');
  });

  it('waits longer than 400 ms by default (3 s), and the configured time otherwise', async () => {
    answer = () => ({ status: 200, body: kv({ password: 'p' }), delayMs: 400 });
    await expect(tokenBackend().read('a')).resolves.toEqual({ password: 'p' });
    const out = await stdoutDuring(() => expect(tokenBackend({ timeoutMs: 150 }).read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'the secrets store did not answer', backend: 'vault', method: 'GET', reason: 'timeout' }),
    );
  });

  it('logs the system error code when the store cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const backend = createVaultBackend({ address, mount: 'secret', auth: { method: 'token', token: () => Promise.resolve('t') } });
    const out = await stdoutDuring(() => expect(backend.read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toContainEqual(expect.objectContaining({ message: 'the secrets store did not answer', reason: 'ECONNREFUSED' }));
  });

  it('answers 503 when a request cannot even be built (a namespace no header can carry)', async () => {
    answer = () => ({ status: 200, body: kv({ password: 'p' }) });
    const out = await stdoutDuring(() => expect(tokenBackend({ namespace: 'team\nX-Injected: 1' }).read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toContainEqual(expect.objectContaining({ message: 'the secrets store did not answer', reason: 'network error' }));
    expect(received).toEqual([]);
  });
});
