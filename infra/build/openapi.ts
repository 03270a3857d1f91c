/**
 * The OpenAPI 3.1 document of the API, derived from the route table. Removed routes appear
 * as deprecated operations that answer 410.
 */
import type { JsonSchema } from '../../functions/platform/json-schema.js';
import { EMPTY_BODY, resourcePath, routeRequest, type LiveRoute, type RemovedRoute } from '../../functions/platform/route.js';
import { liveRoutes } from '../../functions/api/routes.js';
import { removedRoutes, successorLinks } from '../../functions/api/removed.js';
import { problemType } from '../../functions/platform/problem.js';
import { APPLICATIONS } from '../../functions/platform/applications.js';
import { gatewayProblems } from '../gateway-responses.js';
import { goneProblem } from '../removed-routes.js';
import { responseComponents, responseHeaders, responseMedia, responseSchemas } from './response-schemas.js';

const SERVICE_VERSION = '2021.2';
const ANY_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;
const PROBLEM_JSON = 'application/problem+json';

const ref = (kind: 'schemas' | 'responses', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const problemContent = (schema: JsonSchema, example?: unknown) => ({ [PROBLEM_JSON]: { schema, ...(example === undefined ? {} : { example }) } });

const parameters = (schema: JsonSchema | undefined, where: 'path' | 'query') => {
  const props = (schema?.['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.['required'] ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
    ...(typeof s['description'] === 'string' ? { description: s['description'] } : {}),
  }));
};

/** The `{name}` parameters of a path template, in order. */
const pathParameterNames = (path: string): string[] => [...path.matchAll(/\{(\w+)\+?\}/g)].map((m) => m[1]!);

/** Answers every route can give beside its own: the shared stack's and its dependencies'. */
const commonResponses = (route: LiveRoute, takesBody: boolean): Partial<Record<number, string>> => ({
  400: 'The request is invalid; each offending field is named',
  ...(takesBody ? { 415: 'The body is not JSON' } : {}),
  500: 'The service failed; it is logged under the requestId of the problem',
  ...(route.needs.tables || route.needs.secrets ? { 503: 'A dependency is unavailable; retry after Retry-After' } : {}),
});

/** Routes whose writes are idempotent under a key keep their keys in the idempotency table. */
const idempotencyKey = (route: LiveRoute) =>
  route.needs.tables?.idempotency
    ? [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Retries with the same key and request return the first answer (24 hours); see docs/api.md',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      ]
    : [];

/*
 * API Gateway's own answers. Which routes meet each gateway response type: `every` route, the
 * routes that run a `function` (Lambda proxy), the `authorized` ones, the removed routes' `mock`
 * integrations, or `none` (no route: unknown paths, or a feature this API does not use). A type
 * gateway-responses.ts adds must be placed here, or generation fails.
 */
type GatewayScope = 'every' | 'function' | 'authorized' | 'mock' | 'none';
const GATEWAY_SCOPES: Readonly<Record<string, { scope: GatewayScope; status?: number; when: string }>> = {
  REQUEST_TOO_LARGE: { scope: 'every', when: 'the request is over 10 MB, or over the 6 MB a function accepts' },
  THROTTLED: { scope: 'every', when: 'the stage’s or the account’s request rate limit is exceeded; retry with backoff' },
  API_CONFIGURATION_ERROR: { scope: 'every', when: 'the API is misconfigured' },
  WAF_FILTERED: { scope: 'every', when: 'a web ACL attached to the stage refused the request' },
  INTEGRATION_TIMEOUT: { scope: 'function', when: 'the function did not answer within 29 seconds' },
  // Lambda's own refusals map here, its 429 for a function throttled at its concurrency limit included.
  INTEGRATION_FAILURE: { scope: 'function', when: 'the function could not be invoked (throttled at its concurrency limit, for one): retry with backoff' },
  // Lambda proxy: a function that throws or answers malformed is a 502 under the default 5XX response (no `status` member).
  DEFAULT_5XX: { scope: 'function', status: 502, when: 'the function failed or answered malformed (this body has no `status` member)' },
  UNAUTHORIZED: { scope: 'authorized', when: 'the bearer token is missing, malformed, expired or not accepted' },
  EXPIRED_TOKEN: { scope: 'authorized', when: 'the bearer token has expired' },
  ACCESS_DENIED: { scope: 'authorized', when: 'the token’s roles do not allow this route' },
  AUTHORIZER_FAILURE: { scope: 'authorized', when: 'the authorizer failed' },
  AUTHORIZER_CONFIGURATION_ERROR: { scope: 'authorized', when: 'the authorizer failed' },
  UNSUPPORTED_MEDIA_TYPE: { scope: 'mock', when: 'the request’s Content-Type is not one the 410 answer reads' },
  MISSING_AUTHENTICATION_TOKEN: { scope: 'none', when: 'no route matches the method and path' },
  RESOURCE_NOT_FOUND: { scope: 'none', when: 'no route matches the method and path' },
  QUOTA_EXCEEDED: { scope: 'none', when: 'a usage plan quota is exceeded (this API has no usage plans)' },
  INVALID_API_KEY: { scope: 'none', when: 'the API key is invalid (this API requires none)' },
  INVALID_SIGNATURE: { scope: 'none', when: 'the SigV4 signature is invalid (this API uses no IAM authorization)' },
  BAD_REQUEST_BODY: { scope: 'none', when: 'API Gateway’s request validation failed (this API validates in its functions)' },
  BAD_REQUEST_PARAMETERS: { scope: 'none', when: 'API Gateway’s request validation failed (this API validates in its functions)' },
  DEFAULT_4XX: { scope: 'none', when: 'no other response type applies (none does today)' },
};

interface GatewayAnswer {
  readonly status: number;
  readonly scope: Exclude<GatewayScope, 'none'>;
  readonly when: string;
  readonly headers: Readonly<Record<string, string>>;
}

const gatewayAnswers: readonly GatewayAnswer[] = gatewayProblems.flatMap((p): GatewayAnswer[] => {
  const placed = GATEWAY_SCOPES[p.type.responseType];
  if (!placed) throw new Error(`infra/build/openapi.ts: gateway response ${p.type.responseType} has no scope; add it to GATEWAY_SCOPES`);
  const status = p.status ?? placed.status;
  if (placed.scope === 'none') return [];
  if (status === undefined) throw new Error(`infra/build/openapi.ts: gateway response ${p.type.responseType} needs the status it answers on its routes`);
  return [{ status, scope: placed.scope, when: placed.when, headers: p.headers ?? {} }];
});

const SCOPE_NAMES: Readonly<Record<GatewayAnswer['scope'], string>> = { every: '', function: 'Function', authorized: 'Authorized', mock: 'Removed' };

/**
 * The gateway answers of one route, by status: the shared response's name in `components`
 * (`Gateway<status><scopes>`) and the answers it covers.
 */
const gatewayResponsesOf = (scopes: ReadonlySet<GatewayAnswer['scope']>) => {
  const byStatus = new Map<number, GatewayAnswer[]>();
  for (const a of gatewayAnswers) if (scopes.has(a.scope)) byStatus.set(a.status, [...(byStatus.get(a.status) ?? []), a]);
  return new Map(
    [...byStatus].map(([status, answers]) => {
      const named = [...new Set(answers.map((a) => a.scope))]
        .map((s) => SCOPE_NAMES[s])
        .sort()
        .join('');
      return [status, { name: `Gateway${status}${named}`, answers }] as const;
    }),
  );
};

const gatewayDescription = (answers: readonly GatewayAnswer[]) =>
  `API Gateway answers this itself when ${[...new Set(answers.map((a) => a.when))].join('; or when ')}.`;

/** The headers of gateway answers: required when every answer of the status sends it, with the value it always has. */
const gatewayHeaders = (answers: readonly GatewayAnswer[]) => {
  const names = [...new Set(answers.flatMap((a) => Object.keys(a.headers)))];
  const header = (n: string) => {
    const values = [...new Set(answers.map((a) => a.headers[n]))];
    const always = values.length === 1 && values[0] !== undefined;
    return {
      ...(always ? { required: true } : {}),
      description: `${JSON.stringify(values.find((v) => v !== undefined))}${always ? '' : ' (when it applies)'}`,
      schema: { type: 'string' },
    };
  };
  return names.length ? { headers: Object.fromEntries(names.map((n) => [n, header(n)])) } : {};
};

/** The shared gateway responses the operations refer to (`used`: their names), for `components.responses`. */
const gatewayComponents = (scopeSets: readonly ReadonlySet<GatewayAnswer['scope']>[], used: ReadonlySet<string>) =>
  Object.fromEntries(
    scopeSets
      .flatMap((scopes) => [...gatewayResponsesOf(scopes).values()])
      .filter(({ name }) => used.has(name))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map(({ name, answers }) => [
        name,
        { description: gatewayDescription(answers), ...gatewayHeaders(answers), content: problemContent(ref('schemas', 'GatewayProblem')) },
      ]),
  );

const scopesOfLive = (route: LiveRoute): ReadonlySet<GatewayAnswer['scope']> =>
  new Set(route.roles === 'public' ? ['every', 'function'] : ['every', 'function', 'authorized']);
const REMOVED_SCOPES: ReadonlySet<GatewayAnswer['scope']> = new Set(['every', 'mock']);

/** An application's run state and health, as the application health routes answer them. */
const APPLICATION_RUN: Record<string, JsonSchema> = {
  state: { type: 'string', enum: ['RUNNING', 'STOPPED'] },
  changed: { type: 'string', format: 'date-time' },
  changedBy: { type: 'string' },
  restarted: { type: 'string', format: 'date-time' },
};
const APPLICATION_HEALTH: JsonSchema = {
  type: 'object',
  required: ['name', 'state', 'status', 'checkedAt', 'dependencies'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', enum: [...APPLICATIONS] },
    ...APPLICATION_RUN,
    status: { type: 'string', enum: ['up', 'down', 'stopped'] },
    checkedAt: { type: 'string', format: 'date-time' },
    dependencies: { type: 'object', additionalProperties: { $ref: '#/components/schemas/DependencyCheck' } },
  },
};

/**
 * Problem members beyond RFC 9457's that an operation's answer of a status carries (the
 * handlers' `HttpProblem` extensions); every other problem of the service has none.
 */
const PROBLEM_EXTENSIONS: Readonly<Record<string, Readonly<Record<number, Readonly<Record<string, JsonSchema>>>>>> = {
  getSystemHealth: {
    503: {
      health: { const: 'down' },
      checkedAt: { type: 'string', format: 'date-time' },
      dependencies: { type: 'object', additionalProperties: { $ref: '#/components/schemas/DependencyCheck' } },
    },
  },
  getAdapterHealth: {
    503: {
      health: { const: 'down' },
      checkedAt: { type: 'string', format: 'date-time' },
      adapter: { $ref: '#/components/schemas/AdapterProbe' },
    },
  },
  relayRestAction: {
    429: { adapter: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
  },
  getApplicationsHealth: {
    503: {
      health: { const: 'down' },
      checkedAt: { type: 'string', format: 'date-time' },
      applications: { type: 'array', items: APPLICATION_HEALTH },
    },
  },
  getApplicationHealth: {
    503: {
      name: { type: 'string', enum: [...APPLICATIONS] },
      state: { type: 'string', enum: ['RUNNING', 'STOPPED'] },
      health: { type: 'string', enum: ['down', 'stopped'] },
      checkedAt: { type: 'string', format: 'date-time' },
      dependencies: { type: 'object', additionalProperties: { $ref: '#/components/schemas/DependencyCheck' } },
    },
  },
};

/**
 * Problem members an answer may carry but need not: a route of an application answers its 503
 * `application-stopped` with `application`, its other 503s without; an application's state
 * members are absent until it first changes.
 */
const optionalProblemExtensions = (route: LiveRoute, status: number): Readonly<Record<string, JsonSchema>> => ({
  ...(status === 503 && route.application
    ? { application: { type: 'string', enum: [...APPLICATIONS], description: 'The stopped application (`application-stopped`)' } }
    : {}),
  ...(route.operationId === 'getApplicationHealth' && status === 503
    ? { changed: APPLICATION_RUN['changed']!, changedBy: APPLICATION_RUN['changedBy']!, restarted: APPLICATION_RUN['restarted']! }
    : {}),
});

const PROBLEM_MEMBERS: Record<string, JsonSchema> = {
  type: { type: 'string', format: 'uri-reference', description: 'A URN naming the kind of problem (`urn:netconfig:problem:<slug>`); clients switch on it' },
  title: { type: 'string' },
  status: { type: 'integer', minimum: 400, maximum: 599 },
  detail: { type: 'string' },
  requestId: { type: 'string', description: 'Quote it when reporting a problem: the logs carry it' },
};

/** The problem schema of an operation's own answer of `status` (with its extensions, if any). */
const ownProblemSchema = (route: LiveRoute, status: number): JsonSchema => {
  const extensions = PROBLEM_EXTENSIONS[route.operationId]?.[status] ?? {};
  const optional = optionalProblemExtensions(route, status);
  if (Object.keys(extensions).length === 0 && Object.keys(optional).length === 0) return ref('schemas', 'Problem');
  return {
    type: 'object',
    required: ['type', 'title', 'status', 'detail', ...Object.keys(extensions)],
    additionalProperties: false,
    properties: { ...PROBLEM_MEMBERS, ...optional, ...extensions },
  };
};

const RETRY_AFTER = { 'Retry-After': { required: true, description: 'Seconds to wait before retrying', schema: { type: 'string', pattern: '^[0-9]+$' } } };

/** A success answer's content: its own media types (responseMedia), else JSON with its schema. */
const successContent = (operationId: string, status: number) => {
  const media = responseMedia[operationId]?.[status];
  if (media) return Object.fromEntries(Object.entries(media).map(([type, schema]) => [type, { schema }]));
  return { 'application/json': { schema: responseSchemas[operationId]?.[status] ?? {} } };
};

/** A CSV route's `text/csv` answer: its header row, then one record per item (`platform/csv.ts`). */
const csvContent = (route: LiveRoute) =>
  route.csv
    ? {
        'text/csv': {
          schema: {
            type: 'string',
            description: `RFC 4180 CSV, streamed (no paging): a header row \`${route.csv.columns.join(',')}\`, then one record per item, CRLF line ends. A text cell starting with =, +, -, @, TAB or CR is written with a leading \`'\` so that spreadsheets do not run it as a formula.`,
          },
          example: `${route.csv.columns.join(',')}\r\n`,
        },
      }
    : {};

const liveOperation = (route: LiveRoute) => {
  const { body } = route.request;
  const takesBody = body !== undefined && body !== EMPTY_BODY;
  const own: Partial<Record<number, string>> = { ...commonResponses(route, takesBody), ...route.responses };
  const gateway = gatewayResponsesOf(scopesOfLive(route));
  const statuses = [...new Set([...Object.keys(own).map(Number), ...gateway.keys()])].sort((a, b) => a - b);
  const response = (status: number) => {
    const description = own[status];
    const shared = gateway.get(status);
    if (description === undefined) return ref('responses', shared!.name);
    if (status < 400) {
      const headers = responseHeaders[route.operationId]?.[status];
      return {
        description,
        ...(headers ? { headers } : {}),
        ...(status === 204 ? {} : { content: { ...successContent(route.operationId, status), ...(status === 200 ? csvContent(route) : {}) } }),
      };
    }
    const mine = ownProblemSchema(route, status);
    return {
      description: shared ? `${description}. ${gatewayDescription(shared.answers)}` : description,
      ...(status === 503 ? { headers: RETRY_AFTER } : shared ? gatewayHeaders(shared.answers) : {}),
      content: problemContent(shared ? { anyOf: [mine, ref('schemas', 'GatewayProblem')] } : mine),
    };
  };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(route.roles === 'public' ? { security: [] } : { security: [{ bearerAuth: [] }], 'x-roles': [...route.roles] }),
    parameters: [
      ...parameters(route.request.pathParameters, 'path'),
      ...parameters(routeRequest(route).queryStringParameters, 'query'),
      ...idempotencyKey(route),
    ],
    ...(takesBody ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: Object.fromEntries(statuses.map((status) => [String(status), response(status)])),
  };
};

const removedOperation = (route: RemovedRoute, method: string) => ({
  operationId: `removed_${method}_${resourcePath(route.path)
    .replaceAll(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_/, '')}`,
  summary: `${route.description} (removed in ${route.removedIn})`,
  description: `Deprecated in ${route.deprecatedIn}, removed in ${route.removedIn}. Replacement: ${
    route.replacement.length ? route.replacement.join(' or ') : 'none'
  }.`,
  tags: ['removed'],
  deprecated: true,
  security: [],
  'x-deprecated-in': route.deprecatedIn,
  'x-removed-in': route.removedIn,
  'x-replacement': [...route.replacement],
  // Any value: API Gateway answers 410 whatever the segment holds.
  parameters: pathParameterNames(route.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    description: 'Any value: the route is gone whatever it holds (it fills the successor link)',
    schema: { type: 'string' },
  })),
  responses: {
    410: {
      description: 'The route was removed',
      headers: {
        Link: {
          ...(successorLinks(route).some((path) => !path.includes('{')) ? { required: true } : {}),
          description:
            'Each replacement that is a path, concrete and under the prefix of the request (the stage, or a custom domain\'s base path): `</v1/adapters>; rel="successor-version"`, comma-separated; absent when no replacement is a path. A link whose path parameter is not a plain segment (a dot segment, an encoded separator, characters outside RFC 3986 segments) is left out',
          schema: { type: 'string', pattern: '^<[^>]+>; rel="successor-version"(, <[^>]+>; rel="successor-version")*$' },
        },
      },
      content: problemContent(ref('schemas', 'Gone'), goneProblem(route)),
    },
    ...Object.fromEntries([...gatewayResponsesOf(REMOVED_SCOPES)].map(([status, { name }]) => [String(status), ref('responses', name)])),
  },
});

/** A description for each tag the routes use; a tag missing here is described by its routes' summaries. */
const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  relay: 'RESTCONF actions relayed to the orchestrator behind a named adapter.',
  trees: 'Golden-configuration trees.',
  versions: 'The versions of a tree, their nodes, and whole-tree export and import.',
  adapters: 'Named connections to orchestrators (Cisco NSO): registration and lifecycle.',
  compliance: 'Compliance batches: devices checked against a tree version, and their reports.',
  configurations: 'The history of device configurations the batches fetched: every take, content-addressed, secrets masked when shown.',
  operations: 'Liveness and health of the service, its dependencies and its adapters.',
  console: 'The web console: its page, its content-hashed assets and its sign-in settings (public: the page signs in itself).',
  removed: 'Routes removed in 2021.1 and 2021.2: each answers 410 with its replacement.',
};

const FIELD_ERROR: JsonSchema = {
  type: 'object',
  required: ['in', 'field', 'message'],
  additionalProperties: false,
  properties: {
    in: { enum: ['path', 'query', 'header', 'body'] },
    field: { type: 'string', description: 'A dotted path such as `params.path`, or the parameter name' },
    message: { type: 'string' },
  },
};

const schemas: Record<string, JsonSchema> = {
  Problem: {
    description: 'An error the service answers (RFC 9457). `errors` names each offending field of an invalid or too large request.',
    type: 'object',
    required: ['type', 'title', 'status', 'detail'],
    additionalProperties: false,
    properties: { ...PROBLEM_MEMBERS, errors: { type: 'array', items: FIELD_ERROR } },
  },
  GatewayProblem: {
    description: 'An error API Gateway answers itself (gateway responses, infra/gateway-responses.ts). `status` is absent only under the default 5XX response.',
    type: 'object',
    required: ['type', 'title', 'detail', 'requestId'],
    additionalProperties: false,
    properties: PROBLEM_MEMBERS,
  },
  Gone: {
    description: 'The 410 answer of a removed route: a problem naming the route, when it went and what replaces it.',
    type: 'object',
    required: ['type', 'title', 'status', 'detail', 'route', 'deprecatedIn', 'removedIn', 'replacement'],
    additionalProperties: false,
    properties: {
      type: { const: problemType('route-removed') },
      title: { const: 'Gone' },
      status: { const: 410 },
      detail: { type: 'string' },
      route: { type: 'string', description: 'The removed route, as `METHOD /path` with `:name` parameters (the bare path when every method is gone)' },
      deprecatedIn: { type: 'string', pattern: '^[0-9]{4}\\.[0-9]+$', description: 'The release that deprecated it' },
      removedIn: { type: 'string', pattern: '^[0-9]{4}\\.[0-9]+$', description: 'The release that removed it' },
      replacement: { type: 'array', items: { type: 'string' }, description: 'What to use instead (`METHOD /path`); empty when nothing replaces it' },
    },
  },
  ...responseComponents,
};

const tagFromSummaries = (tag: string) =>
  `${liveRoutes
    .filter((r) => r.tag === tag)
    .map((r) => r.summary)
    .join('; ')}.`;

/** The whole document, as a plain object. */
export const openApiDocument = () => {
  const paths: Record<string, Record<string, unknown>> = {};
  const at = (path: string) => (paths[path] ??= {});
  // OpenAPI has no greedy parameter: `{nodePath+}` is written `{nodePath}`, its description says it spans segments.
  for (const route of liveRoutes) at(route.path.replaceAll('+}', '}'))[route.method.toLowerCase()] = liveOperation(route);
  for (const route of removedRoutes) {
    const methods = route.method === 'ANY' ? ANY_METHODS : [route.method.toLowerCase()];
    for (const method of methods) at(resourcePath(route.path))[method] = removedOperation(route, method);
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  const tags = [...new Set([...liveRoutes.map((r) => r.tag), 'removed'])].sort();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Network Configuration Management Service',
      version: SERVICE_VERSION,
      description:
        'Relays RESTCONF actions to Cisco NSO through named adapters and serves golden-configuration trees. ' +
        'Paths are relative to the stage base URL. Every error body is application/problem+json (RFC 9457), ' +
        'API Gateway’s own answers included (413, 429, 502, 504, 401 and 403…: the `Gateway…` responses). ' +
        'A method and path no route matches answers 404 with a GatewayProblem.',
    },
    servers: [{ url: 'https://{apiId}.execute-api.{region}.amazonaws.com/v1', variables: { apiId: { default: 'example' }, region: { default: 'eu-west-1' } } }],
    tags: tags.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? tagFromSummaries(name) })),
    paths: sorted,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas,
      responses: gatewayComponents(
        [...liveRoutes.map(scopesOfLive), REMOVED_SCOPES],
        new Set([...JSON.stringify(sorted).matchAll(/"#\/components\/responses\/(\w+)"/g)].map((m) => m[1]!)),
      ),
    },
  };
};
