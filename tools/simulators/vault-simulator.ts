/**
 * A HashiCorp Vault compatible HTTP (with `tls`, HTTPS) server for tests, on loopback: the
 * KV v2 secrets engine (versions, soft delete, undelete, destroy, metadata), token and AppRole
 * authentication (`POST /v1/auth/approle/login`), `sys/health`, and knobs to revoke tokens,
 * deny paths, seal the server or fail the next requests. Answers are shaped as Vault's own.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

interface Version {
  data: Record<string, unknown> | null;
  created_time: string;
  deletion_time: string;
  destroyed: boolean;
}

interface Secret {
  versions: Version[]; // index = version - 1
}

interface Token {
  expiresAt: number;
  role?: string;
}

export interface VaultRequest {
  readonly method: string;
  /** Decoded path after `/v1/`, e.g. `secret/data/netconfig/adapters/a b`. */
  readonly path: string;
  readonly token?: string;
  readonly namespace?: string;
  readonly status: number;
}

export interface VaultSimulatorOptions {
  /** KV v2 mounts; default `['secret']`. */
  readonly mounts?: readonly string[];
  /** TTL of tokens issued by AppRole login, seconds; default 3600. */
  readonly tokenTtlSeconds?: number;
  /** Serve HTTPS with this key and certificate (PEM), as a production Vault does. */
  readonly tls?: { readonly key: string; readonly cert: string };
}

export interface VaultSimulator {
  readonly url: string;
  /** A token that never expires (until revoked). */
  readonly rootToken: string;
  /** Every request answered, in order. */
  readonly requests: VaultRequest[];
  /** Registers an AppRole role id and its secret id. */
  addAppRole(roleId: string, secretId: string): void;
  /** Issues a token directly (as `vault token create` would). */
  issueToken(ttlSeconds?: number): string;
  revokeToken(token: string): void;
  /** Revokes every token, the root token included (as after a token expiry or a Vault restart). */
  revokeAllTokens(): void;
  /** Paths (after `/v1/`, decoded) answered 403 whatever the token (a policy that denies them). */
  readonly deniedPaths: Set<string>;
  /** Writes a new version directly; returns the version number. */
  put(path: string, data: Record<string, unknown>, mount?: string): number;
  /** The data of the latest live version, or undefined. */
  read(path: string, mount?: string): Record<string, unknown> | undefined;
  /** Soft-deletes the latest version. */
  deleteLatest(path: string, mount?: string): void;
  /** Destroys every version. */
  destroyAll(path: string, mount?: string): void;
  /** All paths holding a live latest version. */
  paths(mount?: string): string[];
  /** The next `count` requests (other than sys/health) answer `status`. */
  failNext(status: number, count?: number): void;
  sealed: boolean;
  close(): Promise<void>;
}

const errors = (res: ServerResponse, status: number, messages: string[]): void => json(res, status, { errors: messages });

const json = (res: ServerResponse, status: number, body: unknown): void => {
  if (status === 204) {
    res.writeHead(204).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
};

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  return JSON.parse(text);
};

const response = (data: unknown, extra: Record<string, unknown> = {}) => ({
  request_id: randomUUID(),
  lease_id: '',
  renewable: false,
  lease_duration: 0,
  data,
  wrap_info: null,
  warnings: null,
  auth: null,
  ...extra,
});

export const startVaultSimulator = async (options: VaultSimulatorOptions = {}): Promise<VaultSimulator> => {
  const mounts = new Map<string, Map<string, Secret>>((options.mounts ?? ['secret']).map((m) => [m, new Map()]));
  const tokenTtl = options.tokenTtlSeconds ?? 3600;
  const tokens = new Map<string, Token>();
  const roles = new Map<string, string>();
  const requests: VaultRequest[] = [];
  const deniedPaths = new Set<string>();
  let failures: { status: number; count: number } | undefined;

  const newToken = (ttlSeconds: number, role?: string): string => {
    const token = `hvs.${randomUUID().replaceAll('-', '')}`;
    tokens.set(token, { expiresAt: ttlSeconds > 0 ? Date.now() + ttlSeconds * 1000 : Infinity, ...(role ? { role } : {}) });
    return token;
  };
  let rootToken = newToken(0);

  const store = (mount = 'secret'): Map<string, Secret> => {
    const m = mounts.get(mount);
    if (!m) throw new Error(`no KV mount ${mount}`);
    return m;
  };

  const write = (secrets: Map<string, Secret>, path: string, data: Record<string, unknown>): Version & { version: number } => {
    const secret = secrets.get(path) ?? { versions: [] };
    secrets.set(path, secret);
    const version: Version = { data, created_time: new Date().toISOString(), deletion_time: '', destroyed: false };
    secret.versions.push(version);
    return { ...version, version: secret.versions.length };
  };

  const latest = (secrets: Map<string, Secret>, path: string): { version: Version; number: number } | undefined => {
    const secret = secrets.get(path);
    if (!secret || secret.versions.length === 0) return undefined;
    return { version: secret.versions.at(-1)!, number: secret.versions.length };
  };

  const live = (v: Version): boolean => !v.destroyed && v.deletion_time === '' && v.data !== null;

  const metadataOf = (v: Version, number: number) => ({
    created_time: v.created_time,
    custom_metadata: null,
    deletion_time: v.deletion_time,
    destroyed: v.destroyed,
    version: number,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<number> => {
    const method = req.method ?? 'GET';
    if (path === 'sys/health') {
      const status = simulator.sealed ? 503 : 200;
      json(res, status, { initialized: true, sealed: simulator.sealed, standby: false, version: '1.17.0-sim', cluster_name: 'sim' });
      return status;
    }
    if (failures && failures.count > 0) {
      failures.count -= 1;
      const status = failures.status;
      errors(res, status, ['simulated failure']);
      return status;
    }
    if (simulator.sealed) {
      errors(res, 503, ['Vault is sealed']);
      return 503;
    }
    if (path === 'auth/approle/login' && method === 'POST') {
      const body = (await readBody(req)) as { role_id?: unknown; secret_id?: unknown };
      const expected = typeof body.role_id === 'string' ? roles.get(body.role_id) : undefined;
      if (expected === undefined || body.secret_id !== expected) {
        errors(res, 400, ['invalid role or secret ID']);
        return 400;
      }
      const token = newToken(tokenTtl, body.role_id as string);
      json(
        res,
        200,
        response(null, {
          auth: {
            client_token: token,
            accessor: randomUUID(),
            policies: ['default', 'netconfig'],
            token_policies: ['default', 'netconfig'],
            metadata: { role_name: 'netconfig' },
            lease_duration: tokenTtl,
            renewable: true,
            entity_id: randomUUID(),
            token_type: 'service',
            orphan: true,
          },
        }),
      );
      return 200;
    }

    const token = req.headers['x-vault-token'];
    const known = typeof token === 'string' ? tokens.get(token) : undefined;
    if (!known || known.expiresAt <= Date.now() || deniedPaths.has(path)) {
      errors(res, 403, ['permission denied']);
      return 403;
    }

    // Mounts may be nested (`kv/team`): the longest one that prefixes the path wins.
    const mount = [...mounts.keys()].sort((a, b) => b.length - a.length).find((m) => path.startsWith(`${m}/`));
    const [operation, ...rest] = mount ? path.slice(mount.length + 1).split('/') : [];
    const secrets = mount ? mounts.get(mount) : undefined;
    const secretPath = rest.join('/');
    if (!secrets || !operation || !secretPath) {
      errors(res, 404, [`no handler for route "${path}"`]);
      return 404;
    }

    if (operation === 'data') {
      if (method === 'GET') {
        const secret = secrets.get(secretPath);
        const wanted = query.get('version');
        const number = wanted && wanted !== '0' ? Number(wanted) : (secret?.versions.length ?? 0);
        const version = secret?.versions[number - 1];
        if (!version) {
          errors(res, 404, []);
          return 404;
        }
        if (!live(version)) {
          json(res, 404, response({ data: null, metadata: metadataOf(version, number) }));
          return 404;
        }
        json(res, 200, response({ data: version.data, metadata: metadataOf(version, number) }));
        return 200;
      }
      if (method === 'POST' || method === 'PUT') {
        const body = (await readBody(req)) as { data?: unknown; options?: { cas?: unknown } };
        if (body.data === null || typeof body.data !== 'object' || Array.isArray(body.data)) {
          errors(res, 400, ['no data provided']);
          return 400;
        }
        const cas = body.options?.cas;
        if (typeof cas === 'number' && cas !== (secrets.get(secretPath)?.versions.length ?? 0)) {
          errors(res, 400, ['check-and-set parameter did not match the current version']);
          return 400;
        }
        const written = write(secrets, secretPath, body.data as Record<string, unknown>);
        json(res, 200, response(metadataOf(written, written.version)));
        return 200;
      }
      if (method === 'DELETE') {
        const last = latest(secrets, secretPath);
        if (last && live(last.version)) last.version.deletion_time = new Date().toISOString();
        json(res, 204, undefined);
        return 204;
      }
    }
    if ((operation === 'delete' || operation === 'undelete' || operation === 'destroy') && (method === 'POST' || method === 'PUT')) {
      const body = (await readBody(req)) as { versions?: unknown };
      const versions = Array.isArray(body.versions) ? body.versions.filter((v): v is number => typeof v === 'number') : [];
      const secret = secrets.get(secretPath);
      for (const n of versions) {
        const v = secret?.versions[n - 1];
        if (!v || v.destroyed) continue;
        if (operation === 'delete') v.deletion_time = new Date().toISOString();
        if (operation === 'undelete') v.deletion_time = '';
        if (operation === 'destroy') (v.destroyed = true), (v.data = null);
      }
      json(res, 204, undefined);
      return 204;
    }
    if (operation === 'metadata') {
      const secret = secrets.get(secretPath);
      if (method === 'DELETE') {
        secrets.delete(secretPath);
        json(res, 204, undefined);
        return 204;
      }
      if (method === 'GET') {
        if (!secret) {
          errors(res, 404, []);
          return 404;
        }
        json(
          res,
          200,
          response({
            current_version: secret.versions.length,
            versions: Object.fromEntries(
              secret.versions.map((v, i) => [String(i + 1), { created_time: v.created_time, deletion_time: v.deletion_time, destroyed: v.destroyed }]),
            ),
          }),
        );
        return 200;
      }
    }
    errors(res, 405, ['unsupported operation']);
    return 405;
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = url.pathname.startsWith('/v1/') ? url.pathname.slice(4) : '';
    let path: string;
    try {
      path = raw.split('/').map(decodeURIComponent).join('/');
    } catch {
      path = raw;
    }
    const token = typeof req.headers['x-vault-token'] === 'string' ? req.headers['x-vault-token'] : undefined;
    const namespace = typeof req.headers['x-vault-namespace'] === 'string' ? req.headers['x-vault-namespace'] : undefined;
    handle(req, res, path, url.searchParams).then(
      (status) => requests.push({ method: req.method ?? 'GET', path, ...(token ? { token } : {}), ...(namespace ? { namespace } : {}), status }),
      () => {
        if (!res.headersSent) errors(res, 500, ['internal error']);
        requests.push({ method: req.method ?? 'GET', path, status: 500 });
      },
    );
  };
  const server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener) : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const simulator: VaultSimulator = {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    get rootToken() {
      return rootToken;
    },
    requests,
    deniedPaths,
    sealed: false,
    addAppRole: (roleId, secretId) => void roles.set(roleId, secretId),
    issueToken: (ttlSeconds = 0) => newToken(ttlSeconds),
    revokeToken: (token) => void tokens.delete(token),
    revokeAllTokens: () => {
      tokens.clear();
      rootToken = `hvs.revoked-${randomUUID()}`;
    },
    put: (path, data, mount) => write(store(mount), path, data).version,
    read: (path, mount) => {
      const last = latest(store(mount), path);
      return last && live(last.version) ? (last.version.data ?? undefined) : undefined;
    },
    deleteLatest: (path, mount) => {
      const last = latest(store(mount), path);
      if (last) last.version.deletion_time = new Date().toISOString();
    },
    destroyAll: (path, mount) => {
      for (const v of store(mount).get(path)?.versions ?? []) (v.destroyed = true), (v.data = null);
    },
    paths: (mount) => [...store(mount).entries()].filter(([, s]) => s.versions.length && live(s.versions.at(-1)!)).map(([p]) => p),
    failNext: (status, count = 1) => {
      failures = { status, count };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return simulator;
};
