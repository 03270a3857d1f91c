import { describe, expect, it } from 'vitest';
import { gatewayProblemTemplate, gatewayProblems } from '../../infra/gateway-responses.js';
import { chooseTemplate, renderGatewayResponse } from '../../tools/local/gateway-responses.js';
import { mapParameter, renderTemplate, unsupportedMapping, type MappingInput } from '../../tools/local/mapping.js';
import { requestTemplateFor, runMock } from '../../tools/local/mock.js';
import type { GatewayResponseSpec, MockIntegration } from '../../tools/local/template.js';

const input = (over: Partial<MappingInput> = {}): MappingInput => ({
  context: { requestId: 'req-1', stage: 'v1', authorizer: { principalId: 'p' } },
  stageVariables: { env: 'dev' },
  headers: { accept: 'application/json', 'x-h': 'hv' },
  query: { q: 'qv' },
  pathParameters: { id: 'pv' },
  ...over,
});

/** The template's gateway responses, as the CDK stack declares them. */
const stackResponses: Record<string, GatewayResponseSpec> = Object.fromEntries(
  gatewayProblems.map((p) => [
    p.type.responseType,
    {
      type: p.type.responseType,
      ...(p.status ? { statusCode: p.status } : {}),
      responseParameters: Object.fromEntries(
        Object.entries({ 'Content-Type': 'application/problem+json', ...p.headers }).map(([k, v]) => [`gatewayresponse.header.${k}`, `'${v}'`]),
      ),
      responseTemplates: { 'application/json': gatewayProblemTemplate(p) },
    },
  ]),
);

describe('mapping', () => {
  it('substitutes $context and $stageVariables references in their three spellings; unknown ones are empty', () => {
    expect(renderTemplate('{"id":"$context.requestId","p":"${context.authorizer.principalId}","e":"$!stageVariables.env","x":"$context.nope"}', input())).toBe(
      '{"id":"req-1","p":"p","e":"dev","x":""}',
    );
    expect(renderTemplate('$context.requestId}', input())).toBe('req-1}');
  });

  it('maps header sources: literals, request parts, context and stage variables', () => {
    const i = input();
    expect(mapParameter("'text/plain'", i)).toBe('text/plain');
    expect(mapParameter('method.request.header.X-H', i)).toBe('hv');
    expect(mapParameter('method.request.querystring.q', i)).toBe('qv');
    expect(mapParameter('method.request.path.id', i)).toBe('pv');
    expect(mapParameter('context.requestId', i)).toBe('req-1');
    expect(mapParameter('stageVariables.env', i)).toBe('dev');
    expect(mapParameter('integration.response.header.X', i)).toBeUndefined();
  });

  it('recognises what it cannot evaluate (VTL directives, $input, $util)', () => {
    expect(unsupportedMapping('{"statusCode": 410}')).toBeUndefined();
    expect(unsupportedMapping('#set($x = 1)')).toBe('VTL directives');
    expect(unsupportedMapping('$input.json("$")')).toBe('$input/$util references');
  });

  it('chooses a body template by Accept, else application/json, else the first', () => {
    const t = { 'application/xml': 'x', 'application/json': 'j' };
    expect(chooseTemplate(t, 'application/xml;q=0.9')?.[1]).toBe('x');
    expect(chooseTemplate(t, 'text/html')?.[1]).toBe('j');
    expect(chooseTemplate({ 'text/plain': 't' }, undefined)?.[1]).toBe('t');
    expect(chooseTemplate({}, undefined)).toBeUndefined();
  });
});

describe('gateway responses', () => {
  it('render the type’s response with its status, headers and $context values', () => {
    const r = renderGatewayResponse(stackResponses, { type: 'UNAUTHORIZED', message: 'Unauthorized' }, input());
    expect(r.statusCode).toBe(401);
    expect(r.headers).toEqual({ 'Content-Type': 'application/problem+json', 'WWW-Authenticate': 'Bearer' });
    expect(JSON.parse(r.body)).toEqual({
      type: 'urn:netconfig:problem:unauthorized',
      title: 'Unauthorized',
      status: 401,
      detail: 'A valid bearer token is required.',
      requestId: 'req-1',
    });
  });

  it('use DEFAULT_5XX with the status API Gateway sets when the type has no response, quoting the message', () => {
    const r = renderGatewayResponse(stackResponses, { type: 'DEFAULT_5XX', message: 'Internal server error', status: 502 }, input());
    expect(r.statusCode).toBe(502);
    expect(JSON.parse(r.body)).toEqual({
      type: 'urn:netconfig:problem:server-error',
      title: 'Server Error',
      detail: 'Internal server error',
      requestId: 'req-1',
    });
    const { WAF_FILTERED: _, ...rest } = stackResponses;
    const waf = renderGatewayResponse(rest, { type: 'WAF_FILTERED', message: 'Forbidden' }, input());
    expect(waf.statusCode).toBe(403);
    expect(JSON.parse(waf.body)).toMatchObject({ type: 'urn:netconfig:problem:client-error', detail: 'Forbidden' });
  });

  it('fall back to API Gateway’s built-in {"message": …} when the template declares none', () => {
    const r = renderGatewayResponse({}, { type: 'MISSING_AUTHENTICATION_TOKEN', message: 'Missing Authentication Token' }, input());
    expect(r).toEqual({ statusCode: 403, headers: { 'Content-Type': 'application/json' }, body: '{"message":"Missing Authentication Token"}' });
    expect(renderGatewayResponse({}, { type: 'AUTHORIZER_FAILURE', message: null }, input()).body).toBe('{"message":null}');
  });

  it('make the unknown-route response of this stack a 404 problem', () => {
    const r = renderGatewayResponse(stackResponses, { type: 'MISSING_AUTHENTICATION_TOKEN', message: 'Missing Authentication Token' }, input());
    expect(r.statusCode).toBe(404);
    expect(JSON.parse(r.body)).toMatchObject({ type: 'urn:netconfig:problem:not-found', status: 404 });
  });
});

describe('mock integrations', () => {
  const integration: MockIntegration = {
    type: 'MOCK',
    passthroughBehavior: 'WHEN_NO_MATCH',
    requestTemplates: { 'application/json': '{"statusCode": $stageVariables.code}' },
    integrationResponses: [
      { statusCode: '400', selectionPattern: '40\\d', responseParameters: {}, responseTemplates: { 'application/json': '{"client":true}' } },
      {
        statusCode: '410',
        responseParameters: {
          'method.response.header.Content-Type': "'application/problem+json'",
          'method.response.header.Link': '\'</x>; rel="successor-version"\'',
        },
        responseTemplates: { 'application/json': '{"id":"$context.requestId"}' },
      },
    ],
    timeoutMs: 29_000,
  };

  it('choose the request template by content type: exact, bare media type, $default; JSON when there is none', () => {
    const t = { 'application/json': 'j', $default: 'd' };
    expect(requestTemplateFor(t, undefined)).toBe('j');
    expect(requestTemplateFor(t, 'Application/JSON; charset=utf-8')).toBe('j');
    expect(requestTemplateFor(t, 'text/plain')).toBe('d');
    expect(requestTemplateFor({ 'application/json': 'j' }, 'text/plain')).toBeUndefined();
  });

  it('answer the default integration response when no selection pattern matches the mock status', () => {
    const r = runMock(integration, { ...input({ stageVariables: { code: '410' } }), body: '' });
    expect(r).toEqual({
      kind: 'response',
      statusCode: 410,
      headers: { 'Content-Type': 'application/problem+json', Link: '</x>; rel="successor-version"' },
      body: '{"id":"req-1"}',
    });
  });

  it('set the headers a response template sets (responseOverride), stage and path parameters filled, printing nothing of those lines', () => {
    const withLink: MockIntegration = {
      ...integration,
      integrationResponses: [
        {
          statusCode: '410',
          responseParameters: { 'method.response.header.Link': "'</mapped>'" },
          responseTemplates: {
            'application/json': `#set($q = '"')\n#set($context.responseOverride.header.Link = "</$context.stage/profiles/$input.params('id')>; rel=\${q}successor-version\${q}, </$context.stage/q/$input.params('q')>")\n{"id":"$context.requestId"}`,
          },
        },
      ],
    };
    const r = runMock(withLink, { ...input({ stageVariables: { code: '410' }, pathParameters: { id: '42' } }), body: '' });
    expect(r).toMatchObject({ kind: 'response', statusCode: 410, body: '{"id":"req-1"}' });
    expect((r as { headers: Record<string, string> }).headers['Link']).toBe('</v1/profiles/42>; rel="successor-version", </v1/q/qv>');
    expect(unsupportedMapping(withLink.integrationResponses[0]!.responseTemplates['application/json']!)).toBeUndefined();
    expect(unsupportedMapping('#set($x = $input.body)')).toBe('VTL directives');
  });

  it('answer the integration response whose selection pattern matches', () => {
    expect(runMock(integration, { ...input({ stageVariables: { code: '404' } }), body: '' })).toMatchObject({
      kind: 'response',
      statusCode: 400,
      body: '{"client":true}',
    });
  });

  it('fail with 500 when the request JSON names no integer status, and 415 when passthrough is refused', () => {
    const plain = { ...input({ headers: { 'content-type': 'text/plain' } }), body: 'hello' };
    expect(runMock(integration, plain)).toMatchObject({ kind: 'error', error: { type: 'DEFAULT_5XX', status: 500 } });
    expect(runMock(integration, { ...plain, body: '{"statusCode": 410}' })).toMatchObject({ kind: 'response', statusCode: 410 });
    expect(runMock({ ...integration, passthroughBehavior: 'NEVER' }, plain)).toMatchObject({ kind: 'error', error: { type: 'UNSUPPORTED_MEDIA_TYPE' } });
    expect(runMock({ ...integration, passthroughBehavior: 'WHEN_NO_TEMPLATES' }, plain)).toMatchObject({
      kind: 'error',
      error: { type: 'UNSUPPORTED_MEDIA_TYPE' },
    });
  });
});
