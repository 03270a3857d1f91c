/**
 * The OpenAPI 3.1 document of the API, derived from the route table. Removed routes appear
 * as deprecated operations that answer 410.
 */
import type { JsonSchema } from '../../functions/shared/json-schema.js';
import {
  EMPTY_BODY,
  liveRoutes,
  removedRoutes,
  resourcePath,
  type LiveRoute,
  type RemovedRoute,
} from '../../functions/shared/routes.js';
import { goneProblem } from '../removed-routes.js';

const SERVICE_VERSION = '2021.2';
const ANY_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

const problemContent = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };

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

const liveOperation = (route: LiveRoute) => {
  const { body } = route.request;
  const takesBody = body !== undefined && body !== EMPTY_BODY;
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(route.roles === 'public'
      ? { security: [] }
      : { security: [{ bearerAuth: [] }], 'x-roles': [...route.roles] }),
    parameters: [
      ...parameters(route.request.pathParameters, 'path'),
      ...parameters(route.request.queryStringParameters, 'query'),
      ...idempotencyKey(route),
    ],
    ...(takesBody ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: Object.fromEntries(
      Object.entries({
        ...commonResponses(route, takesBody),
        ...route.responses,
        ...(route.roles === 'public' ? {} : { 401: 'No valid bearer token', 403: 'The token’s roles do not allow this route' }),
      }).map(([status, description]) => [
        status,
        Number(status) >= 400
          ? { description, content: problemContent }
          : Number(status) === 204
            ? { description }
            : { description, content: { 'application/json': { schema: {} } } },
      ]),
    ),
  };
};

const removedOperation = (route: RemovedRoute, method: string) => ({
  operationId: `removed_${method}_${resourcePath(route.path).replaceAll(/[^A-Za-z0-9]+/g, '_').replace(/^_/, '')}`,
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
  responses: {
    410: {
      description: 'The route was removed',
      headers: {
        Link: { description: 'The successor routes, as `<path>; rel="successor-version"`', schema: { type: 'string' } },
      },
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example: goneProblem(route) } },
    },
  },
});

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
  return {
    openapi: '3.1.0',
    info: {
      title: 'Network Configuration Management Service',
      version: SERVICE_VERSION,
      description:
        'Relays RESTCONF actions to Cisco NSO through named adapters and serves golden-configuration trees. ' +
        'Paths are relative to the stage base URL. Every error body is application/problem+json (RFC 9457).',
    },
    servers: [{ url: 'https://{apiId}.execute-api.{region}.amazonaws.com/v1', variables: { apiId: { default: 'example' }, region: { default: 'eu-west-1' } } }],
    tags: [
      { name: 'relay' },
      { name: 'trees' },
      { name: 'adapters' },
      { name: 'operations' },
      { name: 'removed', description: 'Routes removed in 2021.1 and 2021.2: each answers 410 with its replacement.' },
    ],
    paths: sorted,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string', format: 'uri-reference' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            requestId: { type: 'string' },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                required: ['in', 'field', 'message'],
                properties: {
                  in: { enum: ['path', 'query', 'header', 'body'] },
                  field: { type: 'string' },
                  message: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
  };
};
