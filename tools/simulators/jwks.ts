/**
 * Authorizer test kit: a real JWKS HTTP server on 127.0.0.1 that counts its fetches, key
 * pairs and a signer that can produce well-formed and hostile tokens, REQUEST authorizer
 * events, and IAM resource matching to evaluate a returned policy as API Gateway does.
 */
import type { APIGatewayRequestAuthorizerEvent, PolicyDocument } from 'aws-lambda';
import { createHmac, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenRejected } from '../../functions/authorizer/verify.js';

export const TEST_REGION = 'eu-west-1';
export const TEST_ACCOUNT = '123456789012';
export const TEST_API = 'a1b2c3d4e5';
export const TEST_STAGE = 'v1';

/** The method ARN API Gateway passes for `METHOD /path` (concrete path, no leading slash kept). */
export const methodArn = (method: string, path: string, api = TEST_API, stage = TEST_STAGE): string =>
  `arn:aws:execute-api:${TEST_REGION}:${TEST_ACCOUNT}:${api}/${stage}/${method}${path}`;

export interface JwksServer {
  readonly url: string;
  /** GET requests served on the JWKS path so far. */
  readonly fetches: () => number;
  /** Replaces the served document (key rotation). */
  setDocument(doc: unknown, status?: number): void;
  stop(): Promise<void>;
}

/** Serves `doc` at `/.well-known/jwks.json` on 127.0.0.1 and counts the requests. */
export const startJwksServer = async (doc: unknown, status = 200): Promise<JwksServer> => {
  let body = JSON.stringify(doc);
  let code = status;
  let count = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/jwks.json') {
      count += 1;
      res.writeHead(code, { 'content-type': 'application/json' }).end(body);
      return;
    }
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    fetches: () => count,
    setDocument(next, nextStatus = 200) {
      body = typeof next === 'string' ? next : JSON.stringify(next);
      code = nextStatus;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export interface TestKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256' | 'ES384';
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** The public JWK as an issuer publishes it. */
  readonly jwk: Record<string, string>;
}

/** A fresh RSA (RS256) or P-256 (ES256) key pair with its public JWK. */
export const testKey = (type: 'rsa' | 'ec', kid: string = randomUUID()): TestKey => {
  const { privateKey, publicKey } = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const alg = type === 'rsa' ? 'RS256' : 'ES256';
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as Record<string, string>), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
};

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Signs `header.payload` as the header's `alg` says (RS*, ES*, HS* with a given secret, or none). */
export const signJwt = (
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: { privateKey?: KeyObject; hmacSecret?: string | Buffer },
): string => {
  const input = `${b64(header)}.${b64(payload)}`;
  const alg = String(header['alg']);
  const hash = `sha${alg.slice(2)}`;
  let signature = '';
  if (alg.startsWith('RS')) signature = sign(hash, Buffer.from(input), key.privateKey!).toString('base64url');
  else if (alg.startsWith('ES')) {
    signature = sign(hash, Buffer.from(input), { key: key.privateKey!, dsaEncoding: 'ieee-p1363' }).toString('base64url');
  } else if (alg.startsWith('HS')) signature = createHmac(hash, key.hmacSecret!).update(input).digest('base64url');
  return `${input}.${signature}`;
};

/** The standard claims of a valid token, `exp` one hour ahead. */
export const claims = (issuer: string, audience: string, extra: Record<string, unknown> = {}): Record<string, unknown> => {
  const now = Math.floor(Date.now() / 1000);
  return { iss: issuer, aud: audience, sub: 'user-1', iat: now, exp: now + 3600, ...extra };
};

/** A REQUEST authorizer event as API Gateway sends it. */
export const authorizerEvent = (input: {
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  token?: string;
  method?: string;
  path?: string;
}): APIGatewayRequestAuthorizerEvent => {
  const method = input.method ?? 'GET';
  const path = input.path ?? '/configuration_manager/configs/0123456789abcdef01234567';
  const headers = input.headers ?? (input.token !== undefined ? { Authorization: `Bearer ${input.token}` } : {});
  return {
    type: 'REQUEST',
    methodArn: methodArn(method, path),
    resource: path,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: input.multiValueHeaders ?? Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: { requestId: randomUUID(), stage: TEST_STAGE, apiId: TEST_API } as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
};

/** IAM resource matching: `*` any run of characters (`/` included), `?` one character. */
export const resourceMatches = (pattern: string, arn: string): boolean =>
  new RegExp(
    `^${pattern
      .replaceAll(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
  ).test(arn);

/** Whether API Gateway would let `arn` through this policy (an explicit Deny wins). */
export const policyAllows = (policy: PolicyDocument, arn: string): boolean => {
  const hits = (statement: PolicyDocument['Statement'][number]): boolean => {
    const resource = 'Resource' in statement ? statement.Resource : undefined;
    const list = resource === undefined ? [] : Array.isArray(resource) ? resource : [resource];
    return list.some((pattern) => resourceMatches(pattern, arn));
  };
  if (policy.Statement.some((s) => s.Effect === 'Deny' && hits(s))) return false;
  return policy.Statement.some((s) => s.Effect === 'Allow' && hits(s));
};

/** How a token verifier decides `token`: `accepted`, or the reason it refused it. Any other error is thrown. */
export const verifyOutcome = async (verifier: { verify(token: string): Promise<unknown> }, token: string): Promise<string> => {
  try {
    await verifier.verify(token);
    return 'accepted';
  } catch (err) {
    if (err instanceof TokenRejected) return err.reason;
    throw err;
  }
};
