import { describe, expect, it } from 'vitest';
import { functionEnvironment, rewrite } from '../../tools/local/environment.js';
import { resolveIntrinsics, UnresolvableReference, type LocalNames } from '../../tools/local/intrinsics.js';
import { localNames, parseTemplate, TemplateError, type CfnTemplate } from '../../tools/local/template.js';
import { FIXTURE_SYNTH_DIR, FIXTURE_SYNTH_PORT, fixtureTemplate } from '../support/local-assembly.js';

const template = fixtureTemplate({ echo: 'e'.repeat(64), auth: 'a'.repeat(64), stream: 's'.repeat(64) }) as unknown as CfnTemplate;
const assembly = { stackName: 'Fixture', template, assetDirs: { ['e'.repeat(64)]: '/assets/echo' }, outDir: '/out' };
const names = localNames(template, { stackName: 'Fixture', region: 'eu-west-1', accountId: '123456789012', apiId: 'localapi01' });

describe('template parsing', () => {
  const model = parseTemplate(assembly);

  it('builds every method’s path from the resource tree, with its integration and authorizer', () => {
    const byKey = Object.fromEntries(model.methods.map((m) => [`${m.httpMethod} ${m.resourcePath}`, m]));
    expect(Object.keys(byKey).sort()).toEqual(
      [
        'ANY /files/{proxy+}',
        'ANY /gone',
        'GET /',
        'GET /fresh',
        'GET /items',
        'GET /items/secret',
        'GET /items/{id}',
        'GET /open',
        'GET /short',
        'GET /slow',
        'GET /stream',
        'POST /items',
        'POST /never',
        'POST /open',
      ].sort(),
    );
    expect(byKey['GET /items/{id}']).toMatchObject({
      authorizerId: 'Auth300',
      integration: { type: 'AWS_PROXY', functionId: 'EchoFunction', timeoutMs: 29_000 },
    });
    expect(byKey['GET /slow']?.integration).toMatchObject({ timeoutMs: 1000 });
    // Response transfer mode STREAM: the gateway passes the function's stream on as it comes.
    expect(byKey['GET /stream']?.integration).toMatchObject({ type: 'AWS_PROXY', functionId: 'StreamFunction', stream: true });
    expect(byKey['GET /items/{id}']?.integration).not.toHaveProperty('stream');
    expect(byKey['GET /open']?.authorizerId).toBeUndefined();
    expect(byKey['ANY /gone']?.integration).toMatchObject({
      type: 'MOCK',
      passthroughBehavior: 'WHEN_NO_MATCH',
      requestTemplates: { 'application/json': '{"statusCode": 410}' },
      integrationResponses: [{ statusCode: '410' }],
    });
  });

  it('reads authorizers, gateway responses, stage and binary media types', () => {
    expect(model.authorizers['Auth1']).toEqual({
      logicalId: 'Auth1',
      name: 'Auth1',
      type: 'REQUEST',
      functionId: 'AuthFunction',
      identitySources: ['method.request.header.Authorization'],
      ttlSeconds: 1,
    });
    expect(model.gatewayResponses['UNAUTHORIZED']).toMatchObject({
      statusCode: 401,
      responseParameters: { 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" },
    });
    expect(model.gatewayResponses['DEFAULT_5XX']?.statusCode).toBeUndefined();
    expect(model.stageName).toBe('v1');
    expect(model.stageVariables).toEqual({ env: 'test' });
    expect(model.binaryMediaTypes).toEqual(['application/octet-stream']);
  });

  it('maps each function to its bundled asset (asset manifest first, metadata otherwise) with timeout and memory', () => {
    expect(model.functions['EchoFunction']).toMatchObject({
      codeDir: '/assets/echo',
      handler: 'index.handler',
      timeoutSeconds: 3,
      memoryMb: 256,
      name: 'Fixture-EchoFunction',
    });
    expect(model.functions['AuthFunction']?.codeDir).toBe(`/out/asset.${'a'.repeat(64)}`);
  });

  it('reads tables with their keys and indexes, and the table key from the functions’ <KEY>_TABLE variables', () => {
    expect(model.tables['ItemsTable']).toMatchObject({
      name: 'Fixture-ItemsTable',
      key: 'items',
      keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      globalSecondaryIndexes: [{ IndexName: 'byKind' }],
    });
  });

  it('resolves an integration or authorizer URI that names an alias (a canary release) to the alias’ function', () => {
    const aliased = structuredClone(template) as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
    const aliasUri = (alias: string) => ({
      'Fn::Join': ['', ['arn:aws:apigateway:eu-west-1:lambda:path/2015-03-31/functions/', { Ref: alias }, '/invocations']],
    });
    const alias = (fn: string) => ({ Type: 'AWS::Lambda::Alias', Properties: { FunctionName: { Ref: fn }, FunctionVersion: '1', Name: 'live' } });
    aliased.Resources['EchoLive'] = alias('EchoFunction');
    aliased.Resources['AuthLive'] = alias('AuthFunction');
    (aliased.Resources['OpenGet']!.Properties['Integration'] as Record<string, unknown>)['Uri'] = aliasUri('EchoLive');
    aliased.Resources['Auth300']!.Properties['AuthorizerUri'] = aliasUri('AuthLive');
    const parsed = parseTemplate({ ...assembly, template: aliased as unknown as CfnTemplate });
    expect(parsed.methods.find((m) => m.httpMethod === 'GET' && m.resourcePath === '/open')?.integration).toMatchObject({ functionId: 'EchoFunction' });
    expect(parsed.authorizers['Auth300']).toMatchObject({ functionId: 'AuthFunction' });
    aliased.Resources['EchoLive']!.Properties['FunctionName'] = 'elsewhere';
    expect(() => parseTemplate({ ...assembly, template: aliased as unknown as CfnTemplate })).toThrow(/does not name a Lambda function of this stack/);
  });

  it('rejects what the local gateway cannot serve, naming it', () => {
    const withCognito = structuredClone(template) as { Resources: Record<string, { Properties: Record<string, unknown> }> };
    withCognito.Resources['Auth1']!.Properties['Type'] = 'COGNITO_USER_POOLS';
    expect(() => parseTemplate({ ...assembly, template: withCognito as unknown as CfnTemplate })).toThrow(TemplateError);
    const withHttp = structuredClone(template) as { Resources: Record<string, { Properties: Record<string, unknown> }> };
    withHttp.Resources['OpenGet']!.Properties['Integration'] = { Type: 'HTTP_PROXY', Uri: 'https://example.net' };
    expect(() => parseTemplate({ ...assembly, template: withHttp as unknown as CfnTemplate })).toThrow(/HTTP_PROXY is not supported/);
  });
});

describe('intrinsics', () => {
  const resolve = (v: unknown, n: LocalNames = names) => resolveIntrinsics(v, template, n);

  it('resolve Ref and GetAtt of tables, functions and roles to local names and ARNs', () => {
    expect(resolve({ Ref: 'ItemsTable' })).toBe('Fixture-ItemsTable');
    expect(resolve({ 'Fn::GetAtt': ['ItemsTable', 'Arn'] })).toBe('arn:aws:dynamodb:eu-west-1:123456789012:table/Fixture-ItemsTable');
    expect(resolve({ 'Fn::GetAtt': 'EchoFunction.Arn' })).toBe('arn:aws:lambda:eu-west-1:123456789012:function:Fixture-EchoFunction');
    expect(resolve({ 'Fn::GetAtt': ['EchoRole', 'Arn'] })).toBe('arn:aws:iam::123456789012:role/Fixture-EchoRole');
    expect(resolve({ Ref: 'Api' })).toBe('localapi01');
  });

  it('evaluate Join, Sub, Select, Split, If and the pseudo parameters', () => {
    expect(resolve({ 'Fn::Join': ['-', ['a', { Ref: 'AWS::Region' }, { Ref: 'AWS::AccountId' }]] })).toBe('a-eu-west-1-123456789012');
    expect(resolve({ 'Fn::Sub': 'arn:${AWS::Partition}:x:${AWS::Region}:${ItemsTable}:${EchoFunction.Arn}:${!Literal}' })).toBe(
      'arn:aws:x:eu-west-1:Fixture-ItemsTable:arn:aws:lambda:eu-west-1:123456789012:function:Fixture-EchoFunction:${Literal}',
    );
    expect(resolve({ 'Fn::Sub': ['${a}/${b}', { a: 'x', b: { Ref: 'AWS::URLSuffix' } }] })).toBe('x/amazonaws.com');
    expect(resolve({ 'Fn::Select': [1, { 'Fn::Split': [':', 'a:b:c'] }] })).toBe('b');
    expect(resolveIntrinsics({ 'Fn::If': ['IsLocal', 'yes', 'no'] }, { ...template, Conditions: { IsLocal: { 'Fn::Equals': ['a', 'a'] } } }, names)).toBe(
      'yes',
    );
    expect(resolve({ list: ['a', { Ref: 'AWS::NoValue' }], gone: { Ref: 'AWS::NoValue' } })).toEqual({ list: ['a'] });
  });

  it('use parameter defaults and fail on what has no local value', () => {
    const withParams = { ...template, Parameters: { Level: { Type: 'String', Default: 'info' }, VaultAddress: { Type: 'String' } } };
    expect(resolveIntrinsics({ Ref: 'Level' }, withParams, names)).toBe('info');
    expect(() => resolveIntrinsics({ Ref: 'VaultAddress' }, withParams, names)).toThrow(UnresolvableReference);
    expect(() => resolve({ Ref: 'Nope' })).toThrow(UnresolvableReference);
    expect(() => resolve({ 'Fn::ImportValue': 'x' })).toThrow(UnresolvableReference);
    expect(() => resolve({ 'Fn::GetAtt': ['ItemsTable', 'Nope'] })).toThrow(UnresolvableReference);
  });
});

describe('function environment', () => {
  const model = parseTemplate(assembly);
  const rewrites = [
    { from: FIXTURE_SYNTH_DIR, to: '/data/run' },
    { from: `http://127.0.0.1:${FIXTURE_SYNTH_PORT}`, to: 'http://127.0.0.1:4567' },
  ];
  const facts = {
    region: 'eu-west-1',
    dynamodbEndpoint: 'http://127.0.0.1:8000',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    rewrites,
    path: '/bin',
  };

  it('resolves the template’s variables, moves synth-time paths and URLs, and adds the Lambda runtime variables', () => {
    const { environment, unresolved } = functionEnvironment(model.functions['EchoFunction']!, template, names, facts);
    expect(unresolved).toEqual([]);
    expect(environment).toEqual({
      PATH: '/bin',
      LANG: 'en_US.UTF-8',
      ITEMS_TABLE: 'Fixture-ItemsTable',
      ITEMS_TABLE_ARN: 'arn:aws:dynamodb:eu-west-1:123456789012:table/Fixture-ItemsTable',
      STATIC: 'plain value',
      DATA_FILE: '/data/run/data.json',
      JWKS_URL: 'http://127.0.0.1:4567/.well-known/jwks.json',
      REGION_NAME: 'region-eu-west-1',
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_NAME: 'Fixture-EchoFunction',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/Fixture-EchoFunction',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_NODEJS_CONNECTION_REUSE_ENABLED: '1',
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
      LAMBDA_TASK_ROOT: '/assets/echo',
      _HANDLER: 'index.handler',
      AWS_SAM_LOCAL: 'true',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
    });
  });

  it('points the functions at the local EventBridge, and knows the template’s event buses by their names', () => {
    const bus = { Type: 'AWS::Events::EventBus', Properties: { Name: 'fixture-compliance' } };
    const withBus = { ...template, Resources: { ...template.Resources, ComplianceBus: bus } } as CfnTemplate;
    const busNames = localNames(withBus, { stackName: 'Fixture', region: 'eu-west-1', accountId: '123456789012', apiId: 'localapi01' });
    const fn = {
      ...model.functions['EchoFunction']!,
      environment: { EVENT_BUS_NAME: { Ref: 'ComplianceBus' }, BUS_ARN: { 'Fn::GetAtt': ['ComplianceBus', 'Arn'] } },
    };
    const { environment } = functionEnvironment(fn, withBus, busNames, { ...facts, eventsEndpoint: 'http://127.0.0.1:4999' });
    expect(environment).toMatchObject({
      EVENT_BUS_NAME: 'fixture-compliance',
      BUS_ARN: 'arn:aws:events:eu-west-1:123456789012:event-bus/fixture-compliance',
      AWS_ENDPOINT_URL_EVENTBRIDGE: 'http://127.0.0.1:4999',
    });
    expect(parseTemplate({ ...assembly, template: withBus }).eventBuses).toEqual({ ComplianceBus: 'fixture-compliance' });
    expect(functionEnvironment(fn, withBus, busNames, facts).environment['AWS_ENDPOINT_URL_EVENTBRIDGE']).toBeUndefined();
  });

  it('reports variables without a local value instead of setting them', () => {
    const fn = { ...model.functions['EchoFunction']!, environment: { VAULT_ADDR: { Ref: 'VaultAddress' }, OK: 'x' } };
    const withParam = { ...template, Parameters: { VaultAddress: { Type: 'String' } } };
    const { environment, unresolved } = functionEnvironment(fn, withParam, names, facts);
    expect(unresolved).toEqual(['VAULT_ADDR']);
    expect(environment['OK']).toBe('x');
    expect(environment['VAULT_ADDR']).toBeUndefined();
  });

  it('rewrites only whole values or path prefixes', () => {
    expect(rewrite('/synth-time/.local', rewrites)).toBe('/data/run');
    expect(rewrite('/synth-time/.local-other/x', rewrites)).toBe('/synth-time/.local-other/x');
    expect(rewrite('http://127.0.0.1:39990/x', rewrites)).toBe('http://127.0.0.1:39990/x');
  });
});
