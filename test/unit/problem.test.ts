/**
 * Problem rendering on its own: every typed error's status, type, title and detail, the members it
 * adds, the headers it sets, and the RFC 9457 response `problemResponse` makes of it.
 */
import { describe, expect, it } from 'vitest';
import {
  BadGateway,
  BadRequest,
  Conflict,
  ContentTooLarge,
  describeFieldErrors,
  GatewayTimeout,
  HttpProblem,
  InternalError,
  MAX_LISTED_ERRORS,
  NotFound,
  PROBLEM_CONTENT_TYPE,
  problemResponse,
  problemType,
  ServiceUnavailable,
  UnprocessableContent,
  UnsupportedMediaType,
  type FieldError,
} from '../../functions/platform/problem.js';

const FIELD: FieldError = { in: 'body', field: 'name', message: 'must not be empty' };

describe('the typed problems', () => {
  it.each([
    ['BadRequest', () => new BadRequest('d'), 400, 'validation', 'Bad Request'],
    ['UnsupportedMediaType', () => new UnsupportedMediaType('d'), 415, 'unsupported-media-type', 'Unsupported Media Type'],
    ['NotFound', () => new NotFound('d'), 404, 'not-found', 'Not Found'],
    ['Conflict', () => new Conflict('d'), 409, 'conflict', 'Conflict'],
    ['Conflict with its own type', () => new Conflict('d', 'name-taken'), 409, 'name-taken', 'Conflict'],
    ['ContentTooLarge', () => new ContentTooLarge('d'), 413, 'limit-exceeded', 'Content Too Large'],
    ['UnprocessableContent', () => new UnprocessableContent('d'), 422, 'unprocessable', 'Unprocessable Content'],
    ['UnprocessableContent with its own type', () => new UnprocessableContent('d', 'not-a-tree'), 422, 'not-a-tree', 'Unprocessable Content'],
    ['BadGateway', () => new BadGateway('d'), 502, 'bad-gateway', 'Bad Gateway'],
    ['GatewayTimeout', () => new GatewayTimeout('d'), 504, 'gateway-timeout', 'Gateway Timeout'],
    ['ServiceUnavailable', () => new ServiceUnavailable('d'), 503, 'unavailable', 'Service Unavailable'],
  ] as const)('%s renders its status, type and title, with the detail as given', (_label, make, status, slug, title) => {
    // Made inside the test, so that mutation testing's coverage sees each constructor run.
    const problem = make();
    expect(problem).toBeInstanceOf(HttpProblem);
    expect(problem.message).toBe('d');
    expect(problem.toBody()).toEqual({ type: `urn:netconfig:problem:${slug}`, title, status, detail: 'd' });
  });

  it('names each error after its class, so that logs and stacks say which problem it was', () => {
    expect(new NotFound('d').name).toBe('NotFound');
    expect(new ServiceUnavailable('d').name).toBe('ServiceUnavailable');
    expect(new HttpProblem(418, 'teapot', 'I’m a teapot', 'd').name).toBe('HttpProblem');
  });

  it('lists the offending fields of a 400 and a 413, and adds no errors member without any', () => {
    expect(new BadRequest('d', [FIELD]).toBody()).toEqual({ type: problemType('validation'), title: 'Bad Request', status: 400, detail: 'd', errors: [FIELD] });
    expect(new ContentTooLarge('d', [FIELD]).toBody()).toMatchObject({ status: 413, errors: [FIELD] });
    expect(new BadRequest('d', [])).not.toHaveProperty('extensions.errors');
    expect(new BadRequest('d', []).toBody()).not.toHaveProperty('errors');
    expect(new ContentTooLarge('d', []).toBody()).not.toHaveProperty('errors');
  });

  it(`lists at most ${MAX_LISTED_ERRORS} fields in a 400 and a 413, and its detail counts the rest`, () => {
    const many = Array.from({ length: MAX_LISTED_ERRORS + 7 }, (_, i): FieldError => ({ in: 'body', field: `k${i}`, message: 'is not allowed' }));
    for (const problem of [new BadRequest('d', many), new ContentTooLarge('d', many)])
      expect(problem.toBody()['errors']).toEqual(many.slice(0, MAX_LISTED_ERRORS));
    const detail = describeFieldErrors(many);
    expect(detail).toMatch(/^k0 is not allowed; k1 is not allowed; /);
    expect(detail).toContain(`k${MAX_LISTED_ERRORS - 1} is not allowed; and 7 more`);
    expect(detail).not.toContain(`k${MAX_LISTED_ERRORS} `);
    const exactly = many.slice(0, MAX_LISTED_ERRORS);
    expect(new BadRequest('d', exactly).toBody()['errors']).toEqual(exactly);
    expect(describeFieldErrors(exactly)).not.toContain('more');
    // A field error on a whole part is named by the part.
    expect(describeFieldErrors([{ in: 'query', field: '', message: 'is invalid' }, FIELD])).toBe('query is invalid; name must not be empty');
  });

  it('asks a 503 to be retried after 5 s, or after the seconds given', () => {
    expect(new ServiceUnavailable('d').headers).toEqual({ 'Retry-After': '5' });
    expect(new ServiceUnavailable('d', 30).headers).toEqual({ 'Retry-After': '30' });
    expect(new NotFound('d').headers).toEqual({});
  });

  it('shows a 500 with a fixed detail, and keeps the cause for the log only', () => {
    const problem = new InternalError('tree 42 has no root', { treeId: '42' });
    expect(problem.toBody()).toEqual({
      type: problemType('internal'),
      title: 'Internal Server Error',
      status: 500,
      detail: 'The service failed to handle the request. It has been logged; quote the request id when reporting it.',
    });
    expect(problem.logDetail).toBe('tree 42 has no root');
    expect(problem.logFields).toEqual({ treeId: '42' });
    expect(new InternalError('x').logFields).toEqual({});
    expect(JSON.stringify(problemResponse(problem))).not.toContain('tree 42');
  });

  it('adds its extensions as members of the body, after the standard ones', () => {
    const problem = new HttpProblem(409, 'stale', 'Conflict', 'd', { currentVersion: 3 });
    expect(Object.keys(problem.toBody())).toEqual(['type', 'title', 'status', 'detail', 'currentVersion']);
    expect(problem.toBody()['currentVersion']).toBe(3);
  });

  it('marks a problem raised after the request was sent upstream, and only that one', () => {
    const problem = new BadGateway('d');
    expect(problem.outcomeUnknown).toBe(false);
    expect(problem.afterSending()).toBe(problem);
    expect(problem.outcomeUnknown).toBe(true);
    expect(new BadGateway('d').outcomeUnknown).toBe(false);
  });
});

describe('problemResponse', () => {
  it('renders the problem as application/problem+json with its status', () => {
    expect(PROBLEM_CONTENT_TYPE).toBe('application/problem+json');
    const response = problemResponse(new NotFound('no tree 42'));
    expect(response).toEqual({ statusCode: 404, headers: { 'Content-Type': 'application/problem+json' }, body: expect.any(String) });
    expect(JSON.parse(response.body)).toEqual({ type: 'urn:netconfig:problem:not-found', title: 'Not Found', status: 404, detail: 'no tree 42' });
  });

  it('adds the request id to the body when there is one', () => {
    expect(JSON.parse(problemResponse(new NotFound('d'), 'req-1').body)).toMatchObject({ status: 404, requestId: 'req-1' });
    expect(JSON.parse(problemResponse(new NotFound('d'), '').body)).not.toHaveProperty('requestId');
    expect(JSON.parse(problemResponse(new NotFound('d')).body)).not.toHaveProperty('requestId');
  });

  it("sends the problem's own headers beside the content type", () => {
    expect(problemResponse(new ServiceUnavailable('d', 7)).headers).toEqual({ 'Content-Type': 'application/problem+json', 'Retry-After': '7' });
  });
});
