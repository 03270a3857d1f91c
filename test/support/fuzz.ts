/**
 * Arbitraries for property-based bad input (`fast-check`): API Gateway proxy events with
 * arbitrary headers, path and query parameters, and bodies from the plausible to the absurd
 * (deeply nested, megabytes long, not JSON, base64). Sizes are bounded so that a run stays fast.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import fc from 'fast-check';
import type { LiveRoute } from '../../functions/platform/route.js';
import { apiEvent } from '../../tools/simulators/api-events.js';

/** What one fuzzed request is made of, before it becomes an event. */
export interface FuzzInput {
  readonly pathParameters: Record<string, string> | null;
  readonly query: Record<string, string> | null;
  readonly headers: Record<string, string>;
  /** Body text, or undefined for none. */
  readonly body: string | undefined;
  readonly base64: boolean;
}

const headerName = fc.stringMatching(/^[A-Za-z0-9-]{1,30}$/);
/** Header values as API Gateway passes them: printable ASCII. */
const headerValue = fc.string({ unit: 'grapheme-ascii', maxLength: 120 });

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/yang-data+json',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  '',
  ';;;',
];

export const headersArb: fc.Arbitrary<Record<string, string>> = fc
  .record({
    extra: fc.dictionary(headerName, headerValue, { maxKeys: 6 }),
    // Mostly absent (the event then says application/json when a body is sent).
    contentType: fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: fc.oneof(fc.constantFrom(...CONTENT_TYPES), headerValue) }),
    key: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.uuid() }, { weight: 1, arbitrary: headerValue }),
  })
  .map(({ extra, contentType, key }) => ({
    ...extra,
    ...(contentType !== undefined ? { 'Content-Type': contentType } : {}),
    ...(key !== undefined ? { 'Idempotency-Key': key } : {}),
  }));

/** Path parameter values: unicode, percent-encoded (well and badly), dot segments, huge. */
export const pathValueArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map(encodeURIComponent),
  fc.stringMatching(/^(?:%[0-9A-Fa-f]{0,2}|%u[0-9a-f]{0,4}|[a-z0-9 ._~-]){0,24}$/),
  fc.string({ unit: 'grapheme-ascii', minLength: 200, maxLength: 4000 }),
  fc.string({ unit: 'grapheme', minLength: 129, maxLength: 400 }).map(encodeURIComponent),
  fc.constantFrom(
    'lab',
    'ghost',
    '..',
    '.',
    '%2e%2e',
    '%2E',
    'lab%20x',
    '',
    ' ',
    'a'.repeat(129),
    '000000000000000000000000',
    'ffffffffffffffffffffffff',
    'FFFFFFFFFFFFFFFFFFFFFFFF',
    '%00',
    '%ff',
    '%C0%AF',
    'lab%2Fx',
  ),
);

const queryArb: fc.Arbitrary<Record<string, string> | null> = fc.option(
  fc.dictionary(
    fc.oneof(fc.constantFrom('limit', 'cursor', 'next', 'depth'), headerName),
    fc.oneof(headerValue, fc.string({ unit: 'grapheme', maxLength: 60 }), fc.integer().map(String)),
    {
      maxKeys: 4,
    },
  ),
  { nil: null },
);

/** JSON nested `depth` levels deep (objects, arrays or both). */
export const deepJson = (depth: number, kind: 'object' | 'array' | 'mixed'): string => {
  if (kind === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  if (kind === 'array') return `${'['.repeat(depth)}${']'.repeat(depth)}`;
  return `${'{"a":['.repeat(Math.ceil(depth / 2))}1${']}'.repeat(Math.ceil(depth / 2))}`;
};

/** Valid request shapes with a slot for any JSON value. */
const DEEP_TEMPLATES: readonly ((value: string) => string)[] = [
  (v) => `{"params":{"method":"PATCH","path":"/restconf/data","accept":"application/yang-data+json"},"body":{"tailf-ncs:devices":${v}}}`,
  (v) => `{"params":{"path":"/restconf/data/tailf-ncs:devices/device=ce0/sync-from","accept":"application/yang-data+json"},"body":${v}}`,
];

/** Absurd bodies: deeply nested, megabytes long, very many members. */
export const absurdBodyArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({ depth: fc.integer({ min: 100, max: 60_000 }), kind: fc.constantFrom('object' as const, 'array' as const, 'mixed' as const) })
    .map(({ depth, kind }) => deepJson(depth, kind)),
  fc
    .record({ depth: fc.integer({ min: 1_000, max: 20_000 }), field: fc.constantFrom('params', 'body', 'name', 'auth') })
    .map(({ depth, field }) => `{"${field}":${deepJson(depth, 'object')}}`),
  // Deep values where a route's schema accepts any object: only a depth limit stops them.
  fc
    .record({ depth: fc.integer({ min: 200, max: 20_000 }), wrap: fc.constantFrom(...DEEP_TEMPLATES) })
    .map(({ depth, wrap }) => wrap(deepJson(depth, 'object'))),
  fc
    .integer({ min: 100_000, max: 2_000_000 })
    .map((n) => JSON.stringify({ name: 'x'.repeat(n), deviceType: 'x', params: { path: `/${'y'.repeat(n)}`, accept: 'a/b' }, body: {} })),
  fc.integer({ min: 1_000, max: 30_000 }).map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`),
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => JSON.stringify(Array.from({ length: n }, (_, i) => i))),
);

export interface FuzzOptions {
  /** Plausible bodies for the route (shaped like its schema, with arbitrary values). */
  readonly shapedBody?: fc.Arbitrary<unknown>;
  /** Values for a path parameter, mixed with {@link pathValueArb} (e.g. names that exist). */
  readonly pathValues?: Readonly<Record<string, fc.Arbitrary<string>>>;
}

/** Arbitrary request parts for a route. */
export const fuzzInputArb = (route: LiveRoute, options: FuzzOptions = {}): fc.Arbitrary<FuzzInput> => {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const pathParameters: fc.Arbitrary<Record<string, string> | null> =
    names.length === 0
      ? fc.constant(null)
      : fc.oneof(
          {
            weight: 9,
            arbitrary: fc
              .tuple(...names.map((n) => (options.pathValues?.[n] ? fc.oneof(options.pathValues[n], pathValueArb) : pathValueArb)))
              .map((values) => Object.fromEntries(names.map((n, i) => [n, values[i]!]))),
          },
          { weight: 1, arbitrary: fc.constantFrom<Record<string, string> | null>(null, {}) },
        );
  const body: fc.Arbitrary<string | undefined> = fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('', '{}', 'null', '[]', '"x"', '0', 'true') },
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
    ...(options.shapedBody ? [{ weight: 14, arbitrary: options.shapedBody.map((v) => JSON.stringify(v)) }] : []),
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }) },
    { weight: 1, arbitrary: absurdBodyArb },
  );
  return fc.record({ pathParameters, query: queryArb, headers: headersArb, body, base64: fc.integer({ min: 0, max: 9 }).map((n) => n === 0) });
};

/** The proxy event API Gateway would send for the input (path parameters passed raw, as it does). */
export const fuzzEvent = (
  route: LiveRoute,
  input: FuzzInput,
  authorizer = { principalId: 'fuzzer', principal: 'fuzzer', roles: 'admin' },
): APIGatewayProxyEvent => {
  const event = apiEvent({ method: route.method, resource: route.path, authorizer });
  const headers: Record<string, string> = { Accept: '*/*', ...(input.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...input.headers };
  event.headers = headers;
  event.multiValueHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]));
  event.pathParameters = input.pathParameters;
  event.path = route.path.replaceAll(/\{(\w+)\}/g, (_, name: string) => input.pathParameters?.[name] ?? '');
  event.queryStringParameters = input.query;
  event.multiValueQueryStringParameters = input.query ? Object.fromEntries(Object.entries(input.query).map(([k, v]) => [k, [v]])) : null;
  event.body = input.body === undefined ? null : input.base64 ? Buffer.from(input.body, 'utf8').toString('base64') : input.body;
  event.isBase64Encoded = input.body !== undefined && input.base64;
  return event;
};

/** One member of a problem's `errors` list. */
export interface FieldErrorMember {
  readonly in: string;
  readonly field: string;
  readonly message: string;
}

/**
 * True when `field` names a place of `value` in the API's one field notation: member names and
 * array indexes joined by dots (`rules.0.path`), `''` for the value itself. The place exists, or
 * its last step is a member the message says is required (a member cannot be named where it is
 * missing otherwise). Member names may hold dots themselves: every split is tried.
 */
export const namesPlaceIn = (value: unknown, field: string, message: string): boolean => {
  if (field === '') return true;
  if (value === null || typeof value !== 'object') return false;
  // Each split at a dot names a member (or index) to look up: as many lookups as the field has
  // dots, whatever the size of the value.
  for (let dot = field.indexOf('.'); ; dot = field.indexOf('.', dot + 1)) {
    const key = dot < 0 ? field : field.slice(0, dot);
    if (Object.hasOwn(value, key) && (!Array.isArray(value) || /^(?:0|[1-9]\d*)$/.test(key))) {
      if (dot < 0) return true;
      if (namesPlaceIn((value as Record<string, unknown>)[key], field.slice(dot + 1), message)) return true;
    }
    if (dot < 0) break;
  }
  return !Array.isArray(value) && message.startsWith('is required') && !field.includes('.');
};

/** What a request holds in each place a field error may point into (its `in`), the body parsed. */
export type RequestParts = Readonly<Record<'body' | 'path' | 'query' | 'header', unknown>>;

/** The {@link RequestParts} of an event; take them before a handler runs (it parses the body in place). */
export const requestParts = (event: APIGatewayProxyEvent): RequestParts => {
  let body: unknown;
  try {
    const text = event.body ?? '';
    body = JSON.parse(event.isBase64Encoded ? Buffer.from(text, 'base64').toString('utf8') : text);
  } catch {
    body = undefined;
  }
  return { body, path: event.pathParameters ?? {}, query: event.queryStringParameters ?? {}, header: event.headers ?? {} };
};

/**
 * The members of `errors` whose `field` does not name a place of the request (or whose `in` is
 * no part of a request) in the one
 * notation (see {@link namesPlaceIn}); empty when all do. Header names are compared without
 * case, as HTTP does.
 */
export const misplacedFields = (parts: RequestParts, errors: readonly FieldErrorMember[]): FieldErrorMember[] =>
  errors.filter((e) => {
    if (e.in === 'header')
      return !e.message.startsWith('is required') && !Object.keys(parts.header as object).some((name) => name.toLowerCase() === e.field.toLowerCase());
    return !(e.in in parts) || !namesPlaceIn(parts[e.in as keyof RequestParts], e.field, e.message);
  });
