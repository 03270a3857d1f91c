/**
 * The checker the end-to-end suites use to hold every answer to openapi.json
 * (test/support/openapi-conformance.ts): it passes what the document says and fails an
 * undocumented status, content type or member.
 */
import { describe, expect, it } from 'vitest';
import { checkExchange, matchPath, OpenApiSchemas, readOpenApi } from '../support/openapi-conformance.js';
import type { Exchange } from '../support/recording.js';

const schemas = new OpenApiSchemas(readOpenApi());
const PROBLEM = 'application/problem+json';

const answer = (
  method: string,
  path: string,
  status: number,
  contentType: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
): Exchange => ({
  method,
  path,
  status,
  contentType,
  body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
  requestId: 'r-1',
  headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers },
});
const problems = (e: Exchange) => {
  const v = checkExchange(schemas, e);
  return v.kind === 'checked' ? v.problems : [`outside: ${v.why}`];
};

const gatewayProblem = (slug: string, status?: number) => ({
  type: `urn:netconfig:problem:${slug}`,
  title: 'T',
  ...(status ? { status } : {}),
  detail: 'D',
  requestId: 'r-1',
});
const STATUS = { service: 'netconfig', version: '0.1.0', status: 'running' };
const gone = {
  type: 'urn:netconfig:problem:route-removed',
  title: 'Gone',
  status: 410,
  detail: 'GET /providers was deprecated in 2020.2 and removed in 2021.2. Use GET /adapters instead.',
  route: 'GET /providers',
  deprecatedIn: '2020.2',
  removedIn: '2021.2',
  replacement: ['GET /adapters'],
};

describe('matching a concrete path to the document', () => {
  it('prefers literal segments, spans segments only with a greedy parameter, and ignores one trailing slash', () => {
    const doc = schemas.doc;
    expect(matchPath(doc, '/adapters/lab-nso/stop')).toBe('/adapters/{name}/stop');
    expect(matchPath(doc, '/adapters/lab-nso')).toBe('/adapters/{name}');
    expect(matchPath(doc, '/configuration_manager/configs/5cb0a3b7e1c4f20012a9d3e1/1/nodes/a/b/c')).toBe(
      '/configuration_manager/configs/{treeId}/{version}/nodes/{nodePath}',
    );
    expect(matchPath(doc, '/configuration_manager/compliance_reports/batches/x/reports')).toBe(
      '/configuration_manager/compliance_reports/batches/{batchId}/reports',
    );
    expect(matchPath(doc, '/appUpdate/changeLog/')).toBe('/appUpdate/changeLog');
    expect(matchPath(doc, '/no/such/route')).toBeUndefined();
  });
});

describe('checking an answer', () => {
  it('passes documented answers: a success, a handler problem, an API Gateway problem, a 410', () => {
    expect(problems(answer('GET', '/v1/status', 200, 'application/json', STATUS))).toEqual([]);
    expect(
      problems(
        answer('GET', '/v1/adapters/x', 404, PROBLEM, {
          type: 'urn:netconfig:problem:not-found',
          title: 'Not Found',
          status: 404,
          detail: 'D',
          requestId: 'r',
        }),
      ),
    ).toEqual([]);
    expect(problems(answer('GET', '/v1/adapters/x', 401, PROBLEM, gatewayProblem('unauthorized', 401), { 'www-authenticate': 'Bearer' }))).toEqual([]);
    expect(problems(answer('POST', '/v1/configuration_manager/configs', 502, PROBLEM, gatewayProblem('server-error')))).toEqual([]);
    expect(problems(answer('GET', '/v1/providers', 410, `${PROBLEM}; charset=utf-8`, gone, { link: '</v1/adapters>; rel="successor-version"' }))).toEqual([]);
    expect(problems(answer('DELETE', '/v1/adapters/x', 204, undefined, undefined))).toEqual([]);
  });

  it('fails an undocumented status', () => {
    expect(problems(answer('GET', '/v1/status', 418, PROBLEM, gatewayProblem('teapot', 418))).join()).toMatch(/status 418 is not documented/);
    // A public route has no authorizer: no 401.
    expect(problems(answer('GET', '/v1/status', 401, PROBLEM, gatewayProblem('unauthorized', 401))).join()).toMatch(/status 401 is not documented/);
  });

  it('fails an undocumented content type, and a body where none is documented', () => {
    expect(problems(answer('GET', '/v1/adapters/x', 404, 'text/html', '<p>no</p>')).join()).toMatch(/content type text\/html is not documented/);
    expect(problems(answer('GET', '/v1/status', 200, undefined, '')).join()).toMatch(/content type \(none\) is not documented/);
    expect(problems(answer('DELETE', '/v1/adapters/x', 204, 'application/json', {})).join()).toMatch(/documents no body/);
  });

  it('fails a missing required header, and a header that is not what the document says', () => {
    const created = {
      id: '0123456789abcdef01234567',
      name: 'n',
      deviceType: 'd',
      versions: ['initial'],
      created: '2020-01-01T00:00:00.000Z',
      lastUpdated: '2020-01-01T00:00:00.000Z',
    };
    expect(
      problems(
        answer('POST', '/v1/configuration_manager/configs', 201, 'application/json', created, {
          location: '/v1/configuration_manager/configs/0123456789abcdef01234567',
        }),
      ),
    ).toEqual([]);
    expect(problems(answer('POST', '/v1/configuration_manager/configs', 201, 'application/json', created)).join()).toMatch(
      /required header Location is missing/,
    );
    expect(problems(answer('GET', '/v1/providers', 410, PROBLEM, gone)).join()).toMatch(/required header Link is missing/);
    expect(problems(answer('GET', '/v1/providers', 410, PROBLEM, gone, { link: '/v1/adapters' })).join()).toMatch(/header Link: .*must match pattern/);
    expect(problems(answer('GET', '/v1/adapters/x', 401, PROBLEM, gatewayProblem('unauthorized', 401), { 'www-authenticate': 'Bearer' }))).toEqual([]);
    expect(problems(answer('GET', '/v1/adapters/x', 401, PROBLEM, gatewayProblem('unauthorized', 401), {})).join()).toMatch(/WWW-Authenticate is missing/);
  });

  it('fails an undocumented member and a missing one', () => {
    expect(problems(answer('GET', '/v1/providers', 410, PROBLEM, { ...gone, hint: 'x' })).join()).toMatch(/additional properties/);
    expect(problems(answer('GET', '/v1/adapters/x', 401, PROBLEM, { ...gatewayProblem('unauthorized', 401), message: 'Unauthorized' })).join()).toMatch(
      /additional properties/,
    );
    const { route: _route, ...withoutRoute } = gone;
    expect(problems(answer('GET', '/v1/providers', 410, PROBLEM, withoutRoute)).join()).toMatch(/must have required property 'route'/);
    expect(problems(answer('GET', '/v1/status', 200, 'application/json', 'not json')).join()).toMatch(/not JSON/);
    expect(problems(answer('GET', '/v1/adapters/x', 401, PROBLEM, gatewayProblem('unauthorized', 403))).join()).toMatch(/says status 403, the answer is 401/);
    // Success bodies too, where the document fixes their shape.
    expect(problems(answer('GET', '/v1/status', 200, 'application/json', { ...STATUS, uptime: 1 })).join()).toMatch(/additional properties/);
    expect(problems(answer('POST', '/v1/orch_manager/restAction/x', 200, 'application/json', { result: '200' })).join()).toMatch(/must be array/);
  });

  it('holds a method and path no operation documents to the 404 not-found GatewayProblem', () => {
    expect(problems(answer('GET', '/v1/no/such/route', 404, PROBLEM, gatewayProblem('not-found', 404)))).toEqual([]);
    expect(problems(answer('PATCH', '/v1/status', 404, PROBLEM, gatewayProblem('not-found', 404)))).toEqual([]);
    expect(problems(answer('GET', '/v1/no/such/route', 403, PROBLEM, gatewayProblem('forbidden', 403))).join()).toMatch(/answer 404/);
    expect(problems(answer('GET', '/v1/no/such/route', 404, 'application/json', { message: 'Missing Authentication Token' })).join()).toMatch(
      /not application\/problem\+json/,
    );
  });

  it('leaves out what is not under the stage, and fails a request that got no answer', () => {
    expect(checkExchange(schemas, answer('GET', '/.well-known/jwks.json', 200, 'application/json', { keys: [] })).kind).toBe('outside');
    expect(problems({ ...answer('GET', '/v1/status', 0, undefined, 'no answer: ECONNRESET') }).join()).toMatch(/no answer/);
  });
});
