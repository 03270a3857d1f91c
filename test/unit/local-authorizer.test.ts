import { describe, expect, it } from 'vitest';
import { AuthorizerCache, evaluatePolicy, identityValues, methodArn, parseAuthorizerResult, wildcardMatch } from '../../tools/local/authorizer.js';

const ARN = 'arn:aws:execute-api:eu-west-1:123456789012:localapi01/v1/GET/configuration_manager/configs/abc';
const allow = (resource: unknown, action: unknown = 'execute-api:Invoke') => ({ Effect: 'Allow', Action: action, Resource: resource });
const deny = (resource: unknown) => ({ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: resource });

describe('identity sources', () => {
  const request = { headers: { authorization: 'Bearer x', 'x-key': 'k' }, query: { q: 'v' }, stageVariables: { s: 'sv' }, context: { requestId: 'r' } };

  it('reads headers case-insensitively, query strings, stage variables and context', () => {
    expect(identityValues(['method.request.header.Authorization'], request)).toEqual(['Bearer x']);
    expect(identityValues(['method.request.header.X-Key', 'method.request.querystring.q', 'stageVariables.s', 'context.requestId'], request)).toEqual([
      'k',
      'v',
      'sv',
      'r',
    ]);
  });

  it('is undefined when any source is missing or blank (API Gateway answers 401 without calling the authorizer)', () => {
    expect(identityValues(['method.request.header.Authorization'], { ...request, headers: {} })).toBeUndefined();
    expect(identityValues(['method.request.header.Authorization'], { ...request, headers: { authorization: '  ' } })).toBeUndefined();
    expect(identityValues(['method.request.header.Authorization', 'method.request.querystring.missing'], request)).toBeUndefined();
  });
});

describe('method ARN', () => {
  it('is arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path>', () => {
    expect(
      methodArn({
        region: 'eu-west-1',
        accountId: '123456789012',
        apiId: 'localapi01',
        stage: 'v1',
        httpMethod: 'GET',
        path: '/configuration_manager/configs/abc',
      }),
    ).toBe(ARN);
    expect(methodArn({ region: 'r', accountId: 'a', apiId: 'i', stage: 's', httpMethod: 'GET', path: '/' })).toBe('arn:aws:execute-api:r:a:i/s/GET/');
  });
});

describe('policy evaluation', () => {
  it('matches IAM wildcards: * spans slashes, ? is one character, the rest is literal', () => {
    expect(wildcardMatch('arn:aws:execute-api:*:*:localapi01/v1/*', ARN)).toBe(true);
    expect(wildcardMatch('arn:aws:execute-api:eu-west-1:123456789012:localapi01/v1/GET/configuration_manager/configs/*', ARN)).toBe(true);
    expect(wildcardMatch('arn:aws:execute-api:eu-west-1:123456789012:localapi01/v1/GET/configuration_manager/configs', ARN)).toBe(false);
    expect(wildcardMatch('arn:aws:execute-api:eu-west-1:123456789012:localapi01/v?/GET/*', ARN)).toBe(true);
    expect(wildcardMatch('arn:aws:execute-api:eu-west-1:123456789012:localapi01/v1/POST/*', ARN)).toBe(false);
    expect(wildcardMatch('arn:aws:execute-api:eu-west-1:123456789012:localapi01/v1/GET/configuration_manager.configs/abc', ARN)).toBe(false);
  });

  it('allows only when a statement allows the ARN, and an explicit Deny wins', () => {
    expect(evaluatePolicy({ Statement: [allow(ARN)] }, ARN)).toBe('allow');
    expect(evaluatePolicy({ Statement: allow(['x', ARN]) }, ARN)).toBe('allow');
    expect(evaluatePolicy({ Statement: [] }, ARN)).toBe('deny');
    expect(evaluatePolicy({ Statement: [allow('arn:aws:execute-api:*:*:other/*')] }, ARN)).toBe('deny');
    expect(evaluatePolicy({ Statement: [allow('*'), deny(ARN)] }, ARN)).toBe('explicit-deny');
    expect(evaluatePolicy({ Statement: [deny('arn:aws:execute-api:*:*:*/v1/POST/*'), allow('*')] }, ARN)).toBe('allow');
  });

  it('checks the action (case-insensitively, with wildcards) and honours NotAction and NotResource', () => {
    expect(evaluatePolicy({ Statement: [allow(ARN, 'execute-api:*')] }, ARN)).toBe('allow');
    expect(evaluatePolicy({ Statement: [allow(ARN, 'EXECUTE-API:invoke')] }, ARN)).toBe('allow');
    expect(evaluatePolicy({ Statement: [allow(ARN, 's3:GetObject')] }, ARN)).toBe('deny');
    expect(evaluatePolicy({ Statement: [{ Effect: 'Allow', NotAction: 's3:*', Resource: ARN }] }, ARN)).toBe('allow');
    expect(evaluatePolicy({ Statement: [{ Effect: 'Allow', Action: '*', NotResource: 'arn:aws:execute-api:*:*:*/v1/POST/*' }] }, ARN)).toBe('allow');
    expect(evaluatePolicy({ Statement: [{ Effect: 'Allow', Action: '*', NotResource: 'arn:aws:execute-api:*:*:*/v1/GET/*' }] }, ARN)).toBe('deny');
  });

  it('never applies a statement with a condition (conditions are not evaluated locally)', () => {
    expect(evaluatePolicy({ Statement: [{ ...allow(ARN), Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } } }] }, ARN)).toBe('deny');
  });
});

describe('authorizer answers', () => {
  const policy = { Version: '2012-10-17', Statement: [allow('*')] };

  it('need a principalId and a policy with statements; the context is flattened to strings', () => {
    expect(parseAuthorizerResult({ principalId: 'u', policyDocument: policy, context: { a: 'x', n: 1, b: false, gone: null } })).toEqual({
      principalId: 'u',
      policy,
      context: { a: 'x', n: '1', b: 'false' },
    });
    expect(parseAuthorizerResult({ principalId: 'u', policyDocument: policy })?.context).toEqual({});
  });

  it.each([
    ['no principalId', { policyDocument: policy }],
    ['no policy', { principalId: 'u' }],
    ['a policy without statements', { principalId: 'u', policyDocument: { Version: '2012-10-17' } }],
    ['an object in the context', { principalId: 'u', policyDocument: policy, context: { roles: ['admin'] } }],
    ['not an object', 'Allow'],
  ])('are malformed with %s', (_, answer) => {
    expect(parseAuthorizerResult(answer)).toBeUndefined();
  });
});

describe('authorizer result cache', () => {
  const grant = { principalId: 'u', policy: { Statement: [] }, context: {} };

  it('keeps an answer for its TTL, then forgets it', () => {
    let now = 1_000_000;
    const cache = new AuthorizerCache(300, () => now);
    cache.set('k', grant);
    now += 299_999;
    expect(cache.get('k')).toBe(grant);
    now += 1;
    expect(cache.get('k')).toBeUndefined();
  });

  it('keeps nothing with a TTL of 0, and keys answers by identity', () => {
    const off = new AuthorizerCache(0);
    off.set('k', grant);
    expect(off.get('k')).toBeUndefined();
    const on = new AuthorizerCache(60);
    on.set('["Bearer a"]', grant);
    expect(on.get('["Bearer b"]')).toBeUndefined();
  });

  it('drops the oldest answer when full', () => {
    const cache = new AuthorizerCache(60, Date.now, 2);
    cache.set('a', grant);
    cache.set('b', grant);
    cache.set('c', grant);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')).toBe(grant);
  });
});
