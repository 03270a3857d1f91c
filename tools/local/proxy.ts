/**
 * The Lambda proxy integration's two halves, as API Gateway REST APIs (v1) do them: the event
 * built from an HTTP request, and the HTTP response read from the function's result (or a 502
 * when the result is not a valid proxy response).
 */
import { randomUUID } from 'node:crypto';

/**
 * An empty map for keys that come from a request (header and query names). It has no
 * prototype: a name such as `constructor`, `hasOwnProperty` or `__proto__` is a key like any
 * other, never an inherited member that `??=` would keep or a setter that `=` would call.
 */
export const requestMap = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/** Request headers in every form the gateway needs. */
export interface RequestHeaders {
  /** First spelling of each name → last value (API Gateway's `headers`). */
  readonly single: Record<string, string>;
  /** First spelling of each name → every value (`multiValueHeaders`). */
  readonly multi: Record<string, string[]>;
  /** Lower-case name → values joined with `,` (for mappings and identity sources). */
  readonly lower: Record<string, string>;
}

// Behind API Gateway's CloudFront front these names arrive capitalised; these two never reach the function.
const CAPITALISED: ReadonlyMap<string, string> = new Map([
  ['authorization', 'Authorization'],
  ['user-agent', 'User-Agent'],
]);
const DROPPED = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding']);

/** Groups Node's raw header list (`[name, value, name, value…]`) as API Gateway does. */
export const groupHeaders = (raw: readonly string[], extra: Readonly<Record<string, string>> = {}): RequestHeaders => {
  const single = requestMap<string>();
  const multi = requestMap<string[]>();
  const lower = requestMap<string>();
  const spelling = new Map<string, string>();
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    if (DROPPED.has(key)) return;
    let spelled = spelling.get(key);
    if (!spelled) {
      spelled = CAPITALISED.get(key) ?? name;
      spelling.set(key, spelled);
    }
    single[spelled] = value;
    (multi[spelled] ??= []).push(value);
    lower[key] = lower[key] === undefined ? value : `${lower[key]},${value}`;
  };
  for (let i = 0; i + 1 < raw.length; i += 2) add(raw[i]!, raw[i + 1]!);
  for (const [name, value] of Object.entries(extra)) if (!spelling.has(name.toLowerCase())) add(name, value);
  return { single, multi, lower };
};

const decode = (s: string): string => {
  const spaced = s.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
};

/** Query string parameters, decoded (API Gateway decodes them; path parameters it does not). */
export const parseQuery = (raw: string): { single: Record<string, string>; multi: Record<string, string[]> } => {
  const single = requestMap<string>();
  const multi = requestMap<string[]>();
  for (const piece of raw.split('&')) {
    if (!piece) continue;
    const eq = piece.indexOf('=');
    const name = decode(eq < 0 ? piece : piece.slice(0, eq));
    const value = eq < 0 ? '' : decode(piece.slice(eq + 1));
    single[name] = value;
    (multi[name] ??= []).push(value);
  }
  return { single, multi };
};

/** Whether a media type is one of the API's binary media types (with `image/*`-style wildcards). */
export const isBinaryMediaType = (contentType: string | undefined, binaryMediaTypes: readonly string[]): boolean => {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return binaryMediaTypes.some((pattern) => {
    const [pt, ps] = pattern.toLowerCase().split('/');
    const [t, s] = type.split('/');
    return (pt === '*' || pt === t) && (ps === '*' || ps === s);
  });
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The event body: text when it is UTF-8 and not a binary media type, base64 otherwise. */
export const eventBody = (
  body: Buffer,
  contentType: string | undefined,
  binaryMediaTypes: readonly string[],
): { body: string | null; isBase64Encoded: boolean } => {
  if (body.length === 0) return { body: null, isBase64Encoded: false };
  if (!isBinaryMediaType(contentType, binaryMediaTypes)) {
    try {
      return { body: utf8.decode(body), isBase64Encoded: false };
    } catch {
      // Not text: base64, so that no byte is lost.
    }
  }
  return { body: body.toString('base64'), isBase64Encoded: true };
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `$context.requestTime`: `09/Apr/2015:12:34:56 +0000`. */
export const requestTime = (epochMs: number): string => {
  const d = new Date(epochMs);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
};

/** What API Gateway knows of a request before the integration runs (its `$context`). */
export interface RequestContext {
  readonly accountId: string;
  readonly apiId: string;
  readonly authorizer?: Readonly<Record<string, unknown>>;
  readonly domainName: string;
  readonly domainPrefix: string;
  readonly extendedRequestId: string;
  readonly httpMethod: string;
  readonly identity: Readonly<Record<string, string | null>>;
  readonly path: string;
  readonly protocol: string;
  readonly requestId: string;
  readonly requestTime: string;
  readonly requestTimeEpoch: number;
  readonly resourceId: string;
  readonly resourcePath: string;
  readonly stage: string;
}

export const newRequestContext = (r: {
  accountId: string;
  apiId: string;
  stage: string;
  httpMethod: string;
  /** Path without stage. */
  path: string;
  host: string;
  sourceIp: string;
  userAgent: string | undefined;
  resourceId: string;
  resourcePath: string;
  now?: number;
  requestId?: string;
}): RequestContext => {
  const epoch = r.now ?? Date.now();
  const requestId = r.requestId ?? randomUUID();
  return {
    accountId: r.accountId,
    apiId: r.apiId,
    domainName: r.host,
    domainPrefix: r.host.split('.')[0]!.split(':')[0]!,
    extendedRequestId: Buffer.from(requestId.replaceAll('-', '').slice(0, 12), 'hex').toString('base64').replaceAll(/[+/=]/g, 'A'),
    httpMethod: r.httpMethod,
    identity: {
      accessKey: null,
      accountId: null,
      caller: null,
      cognitoAuthenticationProvider: null,
      cognitoAuthenticationType: null,
      cognitoIdentityId: null,
      cognitoIdentityPoolId: null,
      principalOrgId: null,
      sourceIp: r.sourceIp,
      user: null,
      userAgent: r.userAgent ?? null,
      userArn: null,
    },
    path: `/${r.stage}${r.path === '/' ? '/' : r.path}`,
    protocol: 'HTTP/1.1',
    requestId,
    requestTime: requestTime(epoch),
    requestTimeEpoch: epoch,
    resourceId: r.resourceId,
    resourcePath: r.resourcePath,
    stage: r.stage,
  };
};

export interface ProxyEventInput {
  readonly resource: string;
  readonly path: string;
  readonly httpMethod: string;
  readonly headers: RequestHeaders;
  readonly query: { single: Record<string, string>; multi: Record<string, string[]> };
  readonly pathParameters: Readonly<Record<string, string>>;
  readonly stageVariables: Readonly<Record<string, string>> | null;
  readonly requestContext: RequestContext;
  readonly body: { body: string | null; isBase64Encoded: boolean };
}

const orNull = <T extends object>(o: T): T | null => (Object.keys(o).length ? o : null);

/** The REST API (v1) proxy event. */
export const proxyEvent = (i: ProxyEventInput) => ({
  resource: i.resource,
  path: i.path,
  httpMethod: i.httpMethod,
  headers: orNull(i.headers.single),
  multiValueHeaders: orNull(i.headers.multi),
  queryStringParameters: orNull(i.query.single),
  multiValueQueryStringParameters: orNull(i.query.multi),
  pathParameters: orNull({ ...i.pathParameters }),
  stageVariables: i.stageVariables,
  requestContext: i.requestContext,
  body: i.body.body,
  isBase64Encoded: i.body.isBase64Encoded,
});

export interface ProxyResponse {
  readonly statusCode: number;
  /** Name/value pairs; a name may repeat. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

const ALLOWED_KEYS = new Set(['statusCode', 'headers', 'multiValueHeaders', 'body', 'isBase64Encoded']);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A header value as API Gateway accepts it (strings; booleans as `true`/`false`), or undefined. */
const headerValue = (v: unknown): string | undefined => {
  const value = typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : undefined;
  return value !== undefined && HEADER_VALUE.test(value) ? value : undefined;
};

/**
 * Reads a function's result as API Gateway does. Undefined when it is not a valid proxy
 * response (API Gateway's "Malformed Lambda proxy response", a 502): not an object, a key
 * other than the five allowed, a status that is not an integer, a body that is not a string,
 * header values that are not strings (booleans pass). `multiValueHeaders` win over `headers`
 * for the same name. Without a `Content-Type`, API Gateway answers `application/json`.
 */
export const readProxyResult = (payload: string, options: { binaryMediaTypes: readonly string[]; accept: string | undefined }): ProxyResponse | undefined => {
  let result: unknown;
  try {
    result = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!result || typeof result !== 'object' || Array.isArray(result)) return undefined;
  const r = result as Record<string, unknown>;
  if (Object.keys(r).some((k) => !ALLOWED_KEYS.has(k))) return undefined;

  let statusCode = 200;
  if (r['statusCode'] !== undefined && r['statusCode'] !== null) {
    const n = typeof r['statusCode'] === 'string' && /^\d+$/.test(r['statusCode']) ? Number(r['statusCode']) : r['statusCode'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 100 || n > 599) return undefined;
    statusCode = n;
  }
  const byName = new Map<string, [string, string[]]>();
  if (r['headers'] !== undefined) {
    if (!r['headers'] || typeof r['headers'] !== 'object' || Array.isArray(r['headers'])) return undefined;
    for (const [name, v] of Object.entries(r['headers'])) {
      const value = headerValue(v);
      if (value === undefined || !HEADER_NAME.test(name)) return undefined;
      byName.set(name.toLowerCase(), [name, [value]]);
    }
  }
  if (r['multiValueHeaders'] !== undefined && r['multiValueHeaders'] !== null) {
    if (typeof r['multiValueHeaders'] !== 'object' || Array.isArray(r['multiValueHeaders'])) return undefined;
    for (const [name, vs] of Object.entries(r['multiValueHeaders'])) {
      const list = Array.isArray(vs) ? vs : [vs];
      const values = list.map(headerValue);
      if (values.some((v) => v === undefined) || !HEADER_NAME.test(name)) return undefined;
      byName.set(name.toLowerCase(), [name, values as string[]]);
    }
  }
  const body = r['body'];
  if (body !== undefined && body !== null && typeof body !== 'string') return undefined;
  if (r['isBase64Encoded'] !== undefined && r['isBase64Encoded'] !== null && typeof r['isBase64Encoded'] !== 'boolean') return undefined;

  if (!byName.has('content-type')) byName.set('content-type', ['Content-Type', ['application/json']]);
  const contentType = byName.get('content-type')![1][0];
  // A base64 body is turned into bytes only for a binary media type (of the answer, or the one the client accepts).
  const binary =
    r['isBase64Encoded'] === true &&
    (isBinaryMediaType(contentType, options.binaryMediaTypes) || isBinaryMediaType(options.accept?.split(',')[0], options.binaryMediaTypes));
  const headers = [...byName.values()].flatMap(([name, values]) => values.map((v) => [name, v] as const));
  return { statusCode, headers, body: body ? (binary ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8')) : Buffer.alloc(0) };
};
