/**
 * The one middleware stack every HTTP function uses: correlation id → the caller's roles
 * against the route's (`route-authorization.ts`) → (the active profile, see `http.ts`) → header normalizer → JSON body → validator (schemas compiled at build time) →
 * handler; one error middleware renders every failure as `application/problem+json`.
 *
 * Functions import `http.ts`, which adds the active profile. Only a function that reads no table
 * and serves no application's route imports this module directly ({@link staticHttpHandler}),
 * so that its bundle carries no profile store and no DynamoDB client (`GET /status`).
 */
import middy, { type PluginExecutionMode } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import validator from '@middy/validator';
import type { Readable } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { MAX_JSON_DEPTH, JsonTooDeep, parseJson } from './bounded-json.js';
import { requestCaller } from './caller.js';
import { illFormedStringAt } from './canonical-json.js';
import { logger } from './logger.js';
import { metrics, recordValidationFailure } from './metrics.js';
import {
  BadRequest,
  GatewayTimeout,
  HttpProblem,
  InternalError,
  ServiceUnavailable,
  UnsupportedMediaType,
  describeFieldErrors,
  fieldPath,
  problemResponse,
  type FieldError,
} from './problem.js';
import { transientReason } from './transient.js';
import { applicationOf } from './applications.js';
import { routeAuthorization } from './route-authorization.js';

type ValidatorSchema = NonNullable<NonNullable<Parameters<typeof validator>[0]>['eventSchema']>;

/** An Ajv validate function as the build step emits it. */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** The proxy event after the stack ran: headers lower-cased, body parsed JSON (or undefined). */
export type HttpEvent<TBody = unknown> = Omit<APIGatewayProxyEvent, 'body'> & { body: TBody };

export interface HandlerOptions {
  /** Operation id, for logs. */
  readonly operation: string;
  readonly validate?: CompiledValidator;
  /** Answer 504 this long before Lambda's own deadline (0 disables, as in tests). */
  readonly timeoutEarlyInMillis?: number;
  /**
   * Honour `Idempotency-Key`: `idempotent({ store })` from `idempotency.ts`, under which
   * retries with a key run at most once. Passed in rather than imported here, so that only the
   * functions that opt in carry it in their bundles.
   */
  readonly idempotency?: RunWrapper;
  /**
   * middy's streaming execution mode (`@middy/core/StreamifyResponse`, Lambda's
   * `awslambda.streamifyResponse`), for the function of a route whose integration streams (a CSV
   * route): its run may answer a {@link StreamedResult}; every other answer (JSON, problems) is
   * written whole, as before. Passed in, so that only the functions that stream carry it.
   */
  readonly streaming?: PluginExecutionMode;
}

export type HttpRun<TBody, TResult = APIGatewayProxyResult> = (event: HttpEvent<TBody>, context: Context, options: { signal: AbortSignal }) => Promise<TResult>;

/** An answer whose body may be a stream, written to the client as it is read. */
export type StreamedResult = Omit<APIGatewayProxyResult, 'body'> & { body: string | Readable };

/** Wraps an operation's business function in more behaviour (as `idempotent(…)` does). */
export type RunWrapper = <TBody>(operation: string, run: HttpRun<TBody>) => HttpRun<TBody>;

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Normalizes the proxy event for validation: absent path and query parameters become `{}`,
 * a JSON body is parsed, and an absent or empty body becomes `undefined`.
 */
const proxyEvent = (): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: (request) => {
    // Request data becomes keys here: maps without a prototype, so that a parameter named
    // `constructor` or `__proto__` is a parameter like any other, never an inherited member.
    request.event.pathParameters = requestMap(request.event.pathParameters);
    request.event.queryStringParameters = requestMap(request.event.queryStringParameters);
    if (request.event.multiValueQueryStringParameters) {
      request.event.multiValueQueryStringParameters = requestMap(request.event.multiValueQueryStringParameters);
    }
    refuseIllFormed('path', request.event.pathParameters);
    refuseIllFormed('query', request.event.queryStringParameters);
    const event = request.event as { body: unknown; headers: Record<string, string | undefined>; isBase64Encoded?: boolean };
    const raw = event.body;
    if (raw === null || raw === undefined || raw === '') {
      event.body = undefined;
      return;
    }
    if (typeof raw !== 'string') return;
    const contentType = event.headers?.['content-type'] ?? '';
    if (!JSON_MEDIA_TYPE.test(contentType)) {
      throw new UnsupportedMediaType('The request body must be JSON (Content-Type: application/json).');
    }
    const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    try {
      event.body = parseJson(text);
    } catch (error) {
      // Deeper values would overflow the stack of whatever walks them next (JSON.stringify included).
      if (error instanceof JsonTooDeep) {
        throw new BadRequest(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, [
          { in: 'body', field: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
        ]);
      }
      throw new BadRequest('The request body is not valid JSON.', [{ in: 'body', field: '', message: 'is not valid JSON' }]);
    }
    refuseIllFormed('body', event.body);
  },
});

/** A copy of a request map (path or query parameters) without a prototype; `{}` when absent. */
const requestMap = <T>(from: Readonly<Record<string, T>> | null | undefined): Record<string, T> =>
  Object.assign(Object.create(null) as Record<string, T>, from ?? {});

const ILL_FORMED = 'is not well-formed Unicode (it holds an unpaired UTF-16 surrogate)';

/**
 * Refuses a request part holding an unpaired surrogate, wherever it is: one check for every
 * route, before validation, since such a string would be stored or sent as another string.
 */
const refuseIllFormed = (where: FieldError['in'], value: unknown): void => {
  const at = illFormedStringAt(value);
  if (at === undefined) return;
  throw new BadRequest(`The request is invalid: ${at || where} ${ILL_FORMED}.`, [{ in: where, field: at, message: ILL_FORMED }]);
};

const LOCATIONS: Record<string, FieldError['in']> = {
  pathParameters: 'path',
  queryStringParameters: 'query',
  headers: 'header',
  body: 'body',
};

/** Turns Ajv errors on the event into field errors: `/body/params` + missing `path` → body `params.path`. */
export const fieldErrors = (errors: readonly AjvError[]): FieldError[] => {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors) {
    const segments = error.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    const extra = error.params['missingProperty'] ?? error.params['additionalProperty'];
    if (typeof extra === 'string') segments.push(extra);
    const [part = 'body', ...rest] = segments;
    const location = LOCATIONS[part] ?? 'body';
    const field = fieldPath(...rest);
    const message =
      error.keyword === 'required'
        ? 'is required'
        : error.keyword === 'additionalProperties'
          ? 'is not allowed'
          : error.keyword === 'false schema'
            ? location === 'body' && field === ''
              ? 'no request body is allowed'
              : 'is not allowed'
            : (error.message ?? 'is invalid');
    const key = `${location}:${field}:${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ in: location, field, message });
  }
  return out;
};

const isValidatorError = (error: unknown): error is Error & { cause: { package: string; data: AjvError[] } } =>
  error instanceof Error && typeof error.cause === 'object' && error.cause !== null && (error.cause as { package?: unknown }).package === '@middy/validator';

/** Maps any thrown value to an HttpProblem; logs what the client must not see. */
export const toProblem = (error: unknown): HttpProblem => {
  if (error instanceof InternalError) {
    logger.error(error.logDetail, { ...error.logFields });
    return error;
  }
  if (error instanceof HttpProblem) return error;
  if (isValidatorError(error)) {
    const errors = fieldErrors(error.cause.data ?? []);
    return new BadRequest(`The request is invalid: ${describeFieldErrors(errors)}.`, errors);
  }
  // A dependency that is down, timed out or throttling: worth a retry, not a 500.
  const reason = transientReason(error);
  if (reason) {
    logger.warn('dependency unavailable', { reason, error });
    return new ServiceUnavailable('A service this request depends on is unavailable at the moment; try again shortly.');
  }
  logger.error('unhandled error', { error });
  return new InternalError('unhandled error');
};

const problems = (operation: string): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const problem = toProblem(request.error);
    if (problem instanceof BadRequest) recordValidationFailure(operation);
    if (problem.status >= 500) logger.warn('request failed', { status: problem.status, slug: problem.slug });
    request.response = problemResponse(problem, request.event.requestContext?.requestId);
  },
});

/**
 * The fields every line of the request carries: its correlation id (API Gateway's request id),
 * the operation and, on a route behind the authorizer, the caller (`{ subject, roles }`), so
 * that each line, the relay's call line included, says who asked.
 */
const correlation = (operation: string): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: (request) => {
    const caller = requestCaller(request.event);
    logger.setContext({ correlationId: request.event.requestContext?.requestId, operation, ...(caller ? { caller } : {}) });
    metrics.setContext({ correlationId: request.event.requestContext?.requestId });
  },
});

/** Writes the invocation's metrics (EMF) once the response is decided, success or failure. */
const flushMetrics = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  after: () => metrics.flush(),
  onError: () => metrics.flush(),
});

/**
 * Wraps a business function as a Lambda proxy handler, with `settings` (the active profile's
 * middleware, from `http.ts`) right after the correlation id when given. Schemas are compiled at
 * build time (`npm run generate`), so nothing is compiled at init.
 */
export const buildHttpHandler = <TBody = unknown>(options: HandlerOptions, run: HttpRun<TBody>, settings?: middy.MiddlewareObj<APIGatewayProxyEvent>) => {
  const stack = middy<APIGatewayProxyEvent, APIGatewayProxyResult>({
    // The streaming mode writes the answer's status and headers, then its body, to the response stream.
    ...(options.streaming ? { executionMode: options.streaming } : {}),
    timeoutEarlyInMillis: options.timeoutEarlyInMillis ?? 100,
    timeoutEarlyResponse: () => problemResponse(new GatewayTimeout('The function ran out of time.')),
  })
    .use(flushMetrics())
    .use(correlation(options.operation))
    .use(routeAuthorization());
  if (settings) stack.use(settings);
  stack.use(httpHeaderNormalizer()).use(proxyEvent());
  if (options.validate) stack.use(validator({ eventSchema: options.validate as unknown as ValidatorSchema }));
  const business = options.idempotency ? options.idempotency(options.operation, run) : run;
  return stack.use(problems(options.operation)).handler((event, context, opts) => business(event as unknown as HttpEvent<TBody>, context, opts));
};

/**
 * The handler of a function that reads no table and serves no application's route: no active
 * profile to apply (its function is given no profiles table), so none is bundled.
 * `test/unit/routes.test.ts` holds every user of it to that.
 */
export const staticHttpHandler = <TBody = unknown>(options: HandlerOptions, run: HttpRun<TBody>) => buildHttpHandler(options, run, noApplication);

/**
 * Fails closed: a route of an application served without the active profile would skip the gate
 * of a stopped application, so such a handler answers 500 rather than serve it.
 */
const noApplication: middy.MiddlewareObj<APIGatewayProxyEvent> = {
  before: (request) => {
    const application = applicationOf(request.event.resource);
    if (application)
      throw new InternalError('a route of an application is served without the active profile', { resource: request.event.resource, application });
  },
};

/** A JSON response. */
export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** A response with no body (204). */
export const noContent = (): APIGatewayProxyResult => ({ statusCode: 204, headers: {}, body: '' });

/** A path under the API as the client addressed it (stage or base path included). */
export const locationOf = (path: string, requestPath: string | undefined, resource: string): string => {
  const base = requestPath?.endsWith(resource) ? requestPath.slice(0, requestPath.length - resource.length) : '';
  return `${base}${path}`;
};
