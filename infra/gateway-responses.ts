/**
 * API Gateway's own error answers as `application/problem+json`. Templates are non-VTL:
 * only `$context` variables are substituted.
 */
import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { problemType, PROBLEM_CONTENT_TYPE } from '../functions/platform/problem.js';

export interface GatewayProblem {
  readonly type: ResponseType;
  /** The status to answer; omitted for the two defaults, which keep API Gateway's. */
  readonly status?: number;
  readonly slug: string;
  readonly title: string;
  /** Static text, or undefined to pass API Gateway's own message. */
  readonly detail?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export const gatewayProblems: readonly GatewayProblem[] = [
  {
    type: ResponseType.UNAUTHORIZED,
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'A valid bearer token is required.',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  {
    type: ResponseType.EXPIRED_TOKEN,
    status: 401,
    slug: 'unauthorized',
    title: 'Unauthorized',
    detail: 'A valid bearer token is required.',
    headers: { 'WWW-Authenticate': 'Bearer' },
  },
  { type: ResponseType.ACCESS_DENIED, status: 403, slug: 'forbidden', title: 'Forbidden', detail: 'The roles of this token do not allow this route.' },
  {
    type: ResponseType.AUTHORIZER_FAILURE,
    status: 500,
    slug: 'internal',
    title: 'Internal Server Error',
    detail: 'The authorizer failed. Quote the request id when reporting it.',
  },
  {
    type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR,
    status: 500,
    slug: 'internal',
    title: 'Internal Server Error',
    detail: 'The authorizer failed. Quote the request id when reporting it.',
  },
  // Unknown routes: API Gateway says 403 "Missing Authentication Token"; users expect 404.
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, status: 404, slug: 'not-found', title: 'Not Found', detail: 'No route matches this method and path.' },
  { type: ResponseType.RESOURCE_NOT_FOUND, status: 404, slug: 'not-found', title: 'Not Found', detail: 'No route matches this method and path.' },
  {
    type: ResponseType.REQUEST_TOO_LARGE,
    status: 413,
    slug: 'too-large',
    title: 'Content Too Large',
    detail:
      'The request is too large: API Gateway accepts at most 10 MB, and a function at most 6 MB of request (headers and body, binary bodies base64-encoded).',
  },
  { type: ResponseType.UNSUPPORTED_MEDIA_TYPE, status: 415, slug: 'unsupported-media-type', title: 'Unsupported Media Type' },
  { type: ResponseType.BAD_REQUEST_BODY, status: 400, slug: 'validation', title: 'Bad Request' },
  { type: ResponseType.BAD_REQUEST_PARAMETERS, status: 400, slug: 'validation', title: 'Bad Request' },
  { type: ResponseType.THROTTLED, status: 429, slug: 'throttled', title: 'Too Many Requests', detail: 'Too many requests: retry with backoff.' },
  { type: ResponseType.QUOTA_EXCEEDED, status: 429, slug: 'throttled', title: 'Too Many Requests', detail: 'The usage quota is exceeded.' },
  {
    type: ResponseType.INTEGRATION_TIMEOUT,
    status: 504,
    slug: 'gateway-timeout',
    title: 'Gateway Timeout',
    detail: 'The function did not answer within 29 seconds.',
  },
  {
    type: ResponseType.INTEGRATION_FAILURE,
    status: 502,
    slug: 'bad-gateway',
    title: 'Bad Gateway',
    detail: 'The function failed. Quote the request id when reporting it.',
  },
  {
    type: ResponseType.API_CONFIGURATION_ERROR,
    status: 500,
    slug: 'internal',
    title: 'Internal Server Error',
    detail: 'The API is misconfigured. Quote the request id when reporting it.',
  },
  { type: ResponseType.INVALID_API_KEY, status: 403, slug: 'forbidden', title: 'Forbidden', detail: 'The API key is invalid.' },
  { type: ResponseType.INVALID_SIGNATURE, status: 403, slug: 'forbidden', title: 'Forbidden', detail: 'The request signature is invalid.' },
  { type: ResponseType.WAF_FILTERED, status: 403, slug: 'forbidden', title: 'Forbidden', detail: 'The request was refused by the web application firewall.' },
  // The two defaults catch only types not listed above (none today): API Gateway keeps its own
  // status for them, which a template cannot read, so their body has no `status` member.
  { type: ResponseType.DEFAULT_4XX, slug: 'client-error', title: 'Client Error' },
  { type: ResponseType.DEFAULT_5XX, slug: 'server-error', title: 'Server Error' },
];

/** The body template of one gateway response (substitution only, as API Gateway applies it). */
export const gatewayProblemTemplate = (p: GatewayProblem): string => {
  const members = [
    `"type":${JSON.stringify(problemType(p.slug))}`,
    `"title":${JSON.stringify(p.title)}`,
    ...(p.status ? [`"status":${p.status}`] : []),
    `"detail":${p.detail ? JSON.stringify(p.detail) : '$context.error.messageString'}`,
    `"requestId":"$context.requestId"`,
  ];
  return `{${members.join(',')}}`;
};

export const addGatewayResponses = (api: RestApi): void => {
  for (const p of gatewayProblems) {
    api.addGatewayResponse(`Gateway${p.type.responseType}`, {
      type: p.type,
      ...(p.status ? { statusCode: String(p.status) } : {}),
      responseHeaders: Object.fromEntries(Object.entries({ 'Content-Type': PROBLEM_CONTENT_TYPE, ...p.headers }).map(([k, v]) => [k, `'${v}'`])),
      templates: { 'application/json': gatewayProblemTemplate(p) },
    });
  }
};
