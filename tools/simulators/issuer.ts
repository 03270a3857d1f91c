/**
 * The local token issuer (local mode only): an RS256 key pair kept under `.local/issuer/`,
 * created on first use, whose JWKS the local gateway serves at `/.well-known/jwks.json` and
 * whose tokens carry the local issuer, audience and a `roles` claim — what the authorizer is
 * configured with in local mode (`infra/local-mode.ts`).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, createHash, randomUUID, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MAX_TOKEN_LIFETIME_SECONDS } from '../../functions/authorizer/verify.js';
import { LOCAL_AUDIENCE, LOCAL_DIR, LOCAL_ISSUER } from '../local/config.js';

/** Where the key pair lives unless told otherwise. */
export const ISSUER_DIR = path.join(LOCAL_DIR, 'issuer');
const KEY_FILE = 'private-key.pem';
const ALGORITHM = 'RS256';
/** Default and largest token lifetimes, in seconds: the largest is what the authorizer accepts. */
export const DEFAULT_TTL_SECONDS = 3600;
export const MAX_TTL_SECONDS = MAX_TOKEN_LIFETIME_SECONDS;

interface IssuerKey {
  readonly privateKey: KeyObject;
  readonly publicJwk: Record<string, string>;
  readonly kid: string;
}

/** RFC 7638 thumbprint of an RSA public key: a stable `kid` derived from the key itself. */
const thumbprint = (jwk: Record<string, string>): string =>
  createHash('sha256')
    .update(JSON.stringify({ e: jwk['e'], kty: jwk['kty'], n: jwk['n'] }))
    .digest('base64url');

/**
 * Reads the private key, creating it on first use. Creation is atomic (write a private temp
 * file, then hard-link it into place, which fails if another process got there first), so a
 * concurrent `npm start` and `npm run token` end up with one key.
 */
const readOrCreateKey = (dir: string): KeyObject => {
  const file = path.join(dir, KEY_FILE);
  try {
    return createPrivateKey(fs.readFileSync(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
  const temp = path.join(dir, `.${KEY_FILE}.${process.pid}.${randomUUID()}`);
  fs.writeFileSync(temp, pem, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.unlinkSync(temp);
  }
  return createPrivateKey(fs.readFileSync(file));
};

const keys = new Map<string, IssuerKey>();

/** The issuer's key in `dir` (default `.local/issuer/`), loaded once per process. */
const issuerKey = (dir: string): IssuerKey => {
  const cached = keys.get(dir);
  if (cached) return cached;
  const privateKey = readOrCreateKey(dir);
  const exported = createPublicKey(privateKey).export({ format: 'jwk' }) as Record<string, string>;
  const kid = thumbprint(exported);
  const key: IssuerKey = { privateKey, kid, publicJwk: { kty: 'RSA', n: exported['n']!, e: exported['e']!, kid, alg: ALGORITHM, use: 'sig' } };
  keys.set(dir, key);
  return key;
};

/** A JSON Web Key Set. */
export interface JwksDocument {
  readonly keys: readonly Record<string, string>[];
}

/** The JWKS document the local gateway serves at `/.well-known/jwks.json` (public key only). */
export const localJwks = (dir: string = ISSUER_DIR): JwksDocument => ({ keys: [issuerKey(dir).publicJwk] });

export interface MintOptions {
  /** Role names for the `roles` claim, taken as given: unknown names mint a token that gets 403. */
  readonly roles: readonly string[];
  /** Subject; default `local-user`. */
  readonly sub?: string;
  /** Lifetime in seconds, 1 to {@link MAX_TTL_SECONDS}; default {@link DEFAULT_TTL_SECONDS}. */
  readonly ttlSeconds?: number;
  /** Key directory; default `.local/issuer/`. */
  readonly dir?: string;
  /** More claims (an ID token's `name`, `email`); the registered ones above cannot be overridden. */
  readonly claims?: Readonly<Record<string, string>>;
}

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Mints an RS256 token the local stack's authorizer accepts. */
export const mintToken = ({ roles, sub = 'local-user', ttlSeconds = DEFAULT_TTL_SECONDS, dir = ISSUER_DIR, claims = {} }: MintOptions): string => {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS}`);
  }
  if (sub.length === 0 || sub.length > 256) throw new RangeError('sub must be 1 to 256 characters');
  const key = issuerKey(dir);
  const now = Math.floor(Date.now() / 1000);
  const header = encode({ alg: ALGORITHM, typ: 'JWT', kid: key.kid });
  const payload = encode({
    ...claims,
    iss: LOCAL_ISSUER,
    aud: LOCAL_AUDIENCE,
    sub,
    roles: [...roles],
    iat: now,
    nbf: now,
    exp: now + ttlSeconds,
    jti: randomUUID(),
  });
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), key.privateKey).toString('base64url');
  return `${header}.${payload}.${signature}`;
};
