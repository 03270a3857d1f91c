/**
 * Typed errors and the one place that renders them as RFC 9457 problem details
 * (`application/problem+json`). Business code throws; {@link problemResponse} renders.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** Problem type URIs are URNs: stable identifiers clients can switch on. */
export const problemType = (slug: string): string => `urn:netconfig:problem:${slug}`;

/** One offending field of a request. `field` is a dotted path (see {@link fieldPath}) such as `params.path` or `treeId`. */
export interface FieldError {
  readonly in: 'path' | 'query' | 'header' | 'body';
  readonly field: string;
  readonly message: string;
}

/** Where a field is: member names and array indexes from the top of its request part. */
export type FieldPlace = readonly (string | number)[];

/**
 * The one notation of {@link FieldError.field}: member names and array indexes joined by dots
 * (`rules.0.path`, `versions.2.root.children.1.name`; `''` for the whole part). Every producer
 * of field errors writes its places with it, so a client splits every `field` the same way.
 */
export const fieldPath = (...place: FieldPlace): string => place.join('.');

/**
 * At most this many field errors are listed in a problem's `errors` and named in its detail; the
 * detail counts the rest. A body of a million unknown members is one bad request, and its answer
 * stays small (Lambda refuses to return more than 6 MB).
 */
export const MAX_LISTED_ERRORS = 50;

/** Field errors as a problem's detail names them: `params.path is required; k1 is not allowed; and 3 more`. */
export const describeFieldErrors = (errors: readonly FieldError[]): string => {
  const named = errors
    .slice(0, MAX_LISTED_ERRORS)
    .map((e) => `${e.field || e.in} ${e.message}`)
    .join('; ');
  const more = errors.length - MAX_LISTED_ERRORS;
  return more > 0 ? `${named}; and ${more} more` : named;
};

/** The `errors` member of a problem: the first {@link MAX_LISTED_ERRORS}, none when there are none. */
const listed = (errors: readonly FieldError[]): { errors?: readonly FieldError[] } => (errors.length ? { errors: errors.slice(0, MAX_LISTED_ERRORS) } : {});

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

/** An error with an HTTP meaning. `extensions` become extra members of the problem body. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly extensions: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }

  /**
   * True when the request may already have taken effect upstream (the relay sent it, then the
   * answer failed): an idempotent retry must replay this answer, not repeat the request.
   */
  outcomeUnknown = false;

  /** Marks the problem as raised after the request left the service; returns it. */
  afterSending(): this {
    this.outcomeUnknown = true;
    return this;
  }

  toBody(): ProblemBody {
    return { type: problemType(this.slug), title: this.title, status: this.status, detail: this.detail, ...this.extensions };
  }
}

export class BadRequest extends HttpProblem {
  constructor(detail: string, errors: readonly FieldError[] = []) {
    super(400, 'validation', 'Bad Request', detail, listed(errors));
  }
}

export class UnsupportedMediaType extends HttpProblem {
  constructor(detail: string) {
    super(415, 'unsupported-media-type', 'Unsupported Media Type', detail);
  }
}

/**
 * 403: the function itself refuses the request: it came without the authorizer's context, or
 * the caller's roles do not allow the route (`route-authorization.ts`). The type and title are
 * those of the gateway's own 403, so a client meets one 403 whichever side refused.
 */
export class Forbidden extends HttpProblem {
  constructor(detail: string) {
    super(403, 'forbidden', 'Forbidden', detail);
  }
}

export class NotFound extends HttpProblem {
  constructor(detail: string) {
    super(404, 'not-found', 'Not Found', detail);
  }
}

export class Conflict extends HttpProblem {
  constructor(detail: string, slug = 'conflict') {
    super(409, slug, 'Conflict', detail);
  }
}

/** 413: the request goes past a stated size or count limit (each offending field named). */
export class ContentTooLarge extends HttpProblem {
  constructor(detail: string, errors: readonly FieldError[] = []) {
    super(413, 'limit-exceeded', 'Content Too Large', detail, listed(errors));
  }
}

export class UnprocessableContent extends HttpProblem {
  constructor(detail: string, slug = 'unprocessable') {
    super(422, slug, 'Unprocessable Content', detail);
  }
}

export class BadGateway extends HttpProblem {
  constructor(detail: string) {
    super(502, 'bad-gateway', 'Bad Gateway', detail);
  }
}

export class GatewayTimeout extends HttpProblem {
  constructor(detail: string) {
    super(504, 'gateway-timeout', 'Gateway Timeout', detail);
  }
}

export class ServiceUnavailable extends HttpProblem {
  constructor(detail: string, retryAfterSeconds = 5) {
    super(503, 'unavailable', 'Service Unavailable', detail, {}, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** A fault of ours (damaged data, broken configuration): the cause is logged, never shown. */
export class InternalError extends HttpProblem {
  constructor(
    readonly logDetail: string,
    readonly logFields: Readonly<Record<string, unknown>> = {},
  ) {
    super(500, 'internal', 'Internal Server Error', 'The service failed to handle the request. It has been logged; quote the request id when reporting it.');
  }
}

export const problemResponse = (problem: HttpProblem, requestId?: string): APIGatewayProxyResult => ({
  statusCode: problem.status,
  headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, ...problem.headers },
  body: JSON.stringify(requestId ? { ...problem.toBody(), requestId } : problem.toBody()),
});
