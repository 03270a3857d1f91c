/**
 * A small cloud assembly, shaped as `cdk synth` writes one (manifest, template, asset manifest,
 * bundled `asset.<hash>/index.mjs` directories), for testing the local gateway without
 * synthesizing the real stack. Its functions echo what they receive and misbehave on request
 * (`?mode=throw|malformed|sleep|exit|multi|binary`); its authorizer decides by token.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gatewayProblemTemplate, gatewayProblems } from '../../infra/gateway-responses.js';

/** The function every proxy method of the fixture uses: it echoes its event, context and environment. */
export const ECHO_CODE = `
let calls = 0;
export const handler = async (event, context) => {
  calls += 1;
  const q = event.queryStringParameters ?? {};
  if (q.mode === 'throw') throw new Error('boom: internal detail');
  if (q.mode === 'malformed') return { statusCode: 200, body: { not: 'a string' } };
  if (q.mode === 'extra-key') return { statusCode: 200, body: '', cookies: ['a=1'] };
  if (q.mode === 'sleep') await new Promise((r) => setTimeout(r, Number(q.ms)));
  if (q.mode === 'exit') process.exit(3);
  if (q.mode === 'multi') return { statusCode: 201, headers: { 'X-One': 'one', 'Set-Cookie': 'ignored=1' }, multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] }, body: 'multi' };
  if (q.mode === 'big') return { statusCode: 200, body: 'x'.repeat(7 * 1024 * 1024) };
  if (q.mode === 'no-type') return { statusCode: 200, body: 'plain' };
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      event,
      calls,
      remainingMs: context.getRemainingTimeInMillis(),
      functionName: context.functionName,
      memoryLimitInMB: context.memoryLimitInMB,
      awsRequestId: context.awsRequestId,
      env: process.env,
    }),
  };
};
`;

/**
 * The fixture authorizer. Tokens: `all…` allows every method, `items` only GET /items and
 * below, `deny-secret` allows all but explicitly denies GET /items/secret, `none…` allows
 * nothing, `bad` is rejected (401), `crash` fails, `malformed` answers without a policy.
 * The context carries how often this environment ran, to observe the result cache.
 */
export const AUTHORIZER_CODE = `
let calls = 0;
export const handler = async (event) => {
  calls += 1;
  const token = (event.headers?.Authorization ?? '').replace(/^Bearer /, '');
  if (token === 'bad') throw new Error('Unauthorized');
  if (token === 'crash') throw new Error('database down');
  if (token === 'malformed') return { principalId: 'someone' };
  const [api, stage] = event.methodArn.split('/');
  const kind = token.startsWith('all') ? 'all' : token.startsWith('none') ? 'none' : token;
  const allow = {
    all: [api + '/' + stage + '/*/*'],
    items: [api + '/' + stage + '/GET/items', api + '/' + stage + '/GET/items/*'],
    'deny-secret': [api + '/' + stage + '/*'],
    none: [],
  }[kind] ?? [];
  const statements = allow.length ? [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: allow }] : [];
  if (kind === 'deny-secret') statements.push({ Effect: 'Deny', Action: 'execute-api:*', Resource: api + '/' + stage + '/GET/items/secret' });
  return {
    principalId: 'user-' + token,
    policyDocument: { Version: '2012-10-17', Statement: statements },
    context: { calls, roles: 'admin', count: 5, flag: true, methodArn: event.methodArn, type: event.type },
  };
};
`;

export const FIXTURE_STACK = 'Fixture';
/** The data directory the fixture template names, as a synthesized local template would. */
export const FIXTURE_SYNTH_DIR = '/synth-time/.local';
export const FIXTURE_SYNTH_PORT = 3999;

const apiRef = { Ref: 'Api' };
const lambdaUri = (fn: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':apigateway:',
      { Ref: 'AWS::Region' },
      ':lambda:path/2015-03-31/functions/',
      { 'Fn::GetAtt': [fn, 'Arn'] },
      '/invocations',
    ],
  ],
});
/** A streaming function (`awslambda.streamifyResponse`, as on Lambda): `?mode=throw-first|throw-later|problem`. */
export const STREAM_CODE = `
export const handler = awslambda.streamifyResponse(async (event, responseStream) => {
  const q = event.queryStringParameters ?? {};
  if (q.mode === 'throw-first') throw new Error('boom before the metadata');
  if (q.mode === 'problem') {
    const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 404, headers: { 'Content-Type': 'application/problem+json' } });
    stream.end(JSON.stringify({ title: 'Not Found', status: 404 }));
    return;
  }
  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 200, headers: { 'Content-Type': 'text/csv' }, multiValueHeaders: { 'X-Part': ['a', 'b'] } });
  stream.write('name\\r\\n');
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    stream.write('row' + i + '\\r\\n');
  }
  if (q.mode === 'throw-later') throw new Error('boom while streaming');
  stream.end();
});
`;

const streamingUri = (fn: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':apigateway:',
      { Ref: 'AWS::Region' },
      ':lambda:path/2021-11-15/functions/',
      { 'Fn::GetAtt': [fn, 'Arn'] },
      '/response-streaming-invocations',
    ],
  ],
});

const resource = (parent: unknown, part: string) => ({
  Type: 'AWS::ApiGateway::Resource',
  Properties: { ParentId: parent, PathPart: part, RestApiId: apiRef },
});
const root = { 'Fn::GetAtt': ['Api', 'RootResourceId'] };
const proxyMethod = (resourceId: unknown, method: string, fn: string, auth?: string, timeoutMs?: number) => ({
  Type: 'AWS::ApiGateway::Method',
  Properties: {
    HttpMethod: method,
    ResourceId: resourceId,
    RestApiId: apiRef,
    AuthorizationType: auth ? 'CUSTOM' : 'NONE',
    ...(auth ? { AuthorizerId: { Ref: auth } } : {}),
    Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST', Uri: lambdaUri(fn), ...(timeoutMs ? { TimeoutInMillis: timeoutMs } : {}) },
  },
});
const fn = (hash: string, props: Record<string, unknown>) => ({
  Type: 'AWS::Lambda::Function',
  Properties: {
    Code: { S3Bucket: { 'Fn::Sub': 'cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}' }, S3Key: `${hash}.zip` },
    Handler: 'index.handler',
    Runtime: 'nodejs22.x',
    ...props,
  },
  Metadata: { 'aws:asset:path': `asset.${hash}`, 'aws:asset:property': 'Code' },
});
const authorizer = (ttl: number) => ({
  Type: 'AWS::ApiGateway::Authorizer',
  Properties: {
    Type: 'REQUEST',
    IdentitySource: 'method.request.header.Authorization',
    AuthorizerResultTtlInSeconds: ttl,
    AuthorizerUri: lambdaUri('AuthFunction'),
    RestApiId: apiRef,
    Name: `Auth${ttl}`,
  },
});
const mock = (resourceId: unknown, method: string, passthrough: string) => ({
  Type: 'AWS::ApiGateway::Method',
  Properties: {
    HttpMethod: method,
    ResourceId: resourceId,
    RestApiId: apiRef,
    AuthorizationType: 'NONE',
    Integration: {
      Type: 'MOCK',
      PassthroughBehavior: passthrough,
      RequestTemplates: { 'application/json': '{"statusCode": 410}' },
      IntegrationResponses: [
        {
          StatusCode: '410',
          ResponseParameters: {
            'method.response.header.Content-Type': "'application/problem+json'",
            'method.response.header.Link': '\'</items>; rel="successor-version"\'',
            'method.response.header.X-Request': 'context.requestId',
          },
          ResponseTemplates: { 'application/json': '{"title":"Gone","status":410,"stage":"$context.stage","env":"$stageVariables.env"}' },
        },
      ],
    },
  },
});

/** The fixture template (CloudFormation JSON as CDK writes it). */
export const fixtureTemplate = (hashes: { echo: string; auth: string; stream: string }) => ({
  Resources: {
    ItemsTable: {
      Type: 'AWS::DynamoDB::Table',
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'kind', AttributeType: 'S' },
        ],
        GlobalSecondaryIndexes: [{ IndexName: 'byKind', KeySchema: [{ AttributeName: 'kind', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    },
    EchoRole: { Type: 'AWS::IAM::Role', Properties: {} },
    EchoFunction: fn(hashes.echo, {
      Timeout: 3,
      MemorySize: 256,
      Role: { 'Fn::GetAtt': ['EchoRole', 'Arn'] },
      Environment: {
        Variables: {
          ITEMS_TABLE: { Ref: 'ItemsTable' },
          ITEMS_TABLE_ARN: { 'Fn::GetAtt': ['ItemsTable', 'Arn'] },
          STATIC: 'plain value',
          DATA_FILE: `${FIXTURE_SYNTH_DIR}/data.json`,
          JWKS_URL: `http://127.0.0.1:${FIXTURE_SYNTH_PORT}/.well-known/jwks.json`,
          REGION_NAME: { 'Fn::Sub': 'region-${AWS::Region}' },
        },
      },
    }),
    ShortFunction: fn(hashes.echo, { Timeout: 1, MemorySize: 128 }),
    AuthFunction: fn(hashes.auth, { Timeout: 5, MemorySize: 256 }),
    StreamFunction: fn(hashes.stream, { Timeout: 5, MemorySize: 256 }),
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'fixture', BinaryMediaTypes: ['application/octet-stream'] } },
    Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { RestApiId: apiRef, StageName: 'v1', Variables: { env: 'test' } } },
    Auth300: authorizer(300),
    Auth1: authorizer(1),
    Items: resource(root, 'items'),
    ItemsId: resource({ Ref: 'Items' }, '{id}'),
    ItemsSecret: resource({ Ref: 'Items' }, 'secret'),
    Fresh: resource(root, 'fresh'),
    Files: resource(root, 'files'),
    FilesProxy: resource({ Ref: 'Files' }, '{proxy+}'),
    Open: resource(root, 'open'),
    Slow: resource(root, 'slow'),
    Short: resource(root, 'short'),
    Gone: resource(root, 'gone'),
    Stream: resource(root, 'stream'),
    Never: resource(root, 'never'),
    RootGet: proxyMethod(root, 'GET', 'EchoFunction'),
    ItemsGet: proxyMethod({ Ref: 'Items' }, 'GET', 'EchoFunction', 'Auth300'),
    ItemsPost: proxyMethod({ Ref: 'Items' }, 'POST', 'EchoFunction', 'Auth300'),
    ItemsIdGet: proxyMethod({ Ref: 'ItemsId' }, 'GET', 'EchoFunction', 'Auth300'),
    ItemsSecretGet: proxyMethod({ Ref: 'ItemsSecret' }, 'GET', 'EchoFunction', 'Auth300'),
    FreshGet: proxyMethod({ Ref: 'Fresh' }, 'GET', 'EchoFunction', 'Auth1'),
    FilesAny: proxyMethod({ Ref: 'FilesProxy' }, 'ANY', 'EchoFunction'),
    OpenGet: proxyMethod({ Ref: 'Open' }, 'GET', 'EchoFunction'),
    OpenPost: proxyMethod({ Ref: 'Open' }, 'POST', 'EchoFunction'),
    SlowGet: proxyMethod({ Ref: 'Slow' }, 'GET', 'EchoFunction', undefined, 1000),
    ShortGet: proxyMethod({ Ref: 'Short' }, 'GET', 'ShortFunction'),
    StreamGet: {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        HttpMethod: 'GET',
        ResourceId: { Ref: 'Stream' },
        RestApiId: apiRef,
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST', Uri: streamingUri('StreamFunction'), ResponseTransferMode: 'STREAM' },
      },
    },
    GoneAny: mock({ Ref: 'Gone' }, 'ANY', 'WHEN_NO_MATCH'),
    NeverPost: mock({ Ref: 'Never' }, 'POST', 'NEVER'),
    ...Object.fromEntries(
      gatewayProblems.map((p) => [
        `Gateway${p.type.responseType}`,
        {
          Type: 'AWS::ApiGateway::GatewayResponse',
          Properties: {
            RestApiId: apiRef,
            ResponseType: p.type.responseType,
            ...(p.status ? { StatusCode: String(p.status) } : {}),
            ResponseParameters: Object.fromEntries(
              Object.entries({ 'Content-Type': 'application/problem+json', ...p.headers }).map(([k, v]) => [`gatewayresponse.header.${k}`, `'${v}'`]),
            ),
            ResponseTemplates: { 'application/json': gatewayProblemTemplate(p) },
          },
        },
      ]),
    ),
  },
});

/** Writes the fixture assembly into a new temporary directory; returns that directory. */
export const writeFixtureAssembly = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'netconfig-fixture-'));
  const hash = (code: string) => createHash('sha256').update(code).digest('hex');
  const hashes = { echo: hash(ECHO_CODE), auth: hash(AUTHORIZER_CODE), stream: hash(STREAM_CODE) };
  for (const [h, code] of [
    [hashes.echo, ECHO_CODE],
    [hashes.stream, STREAM_CODE],
    [hashes.auth, AUTHORIZER_CODE],
  ] as const) {
    mkdirSync(path.join(dir, `asset.${h}`));
    writeFileSync(path.join(dir, `asset.${h}`, 'index.mjs'), code);
  }
  writeFileSync(path.join(dir, `${FIXTURE_STACK}.template.json`), JSON.stringify(fixtureTemplate(hashes)));
  writeFileSync(
    path.join(dir, `${FIXTURE_STACK}.assets.json`),
    JSON.stringify({
      version: '55.0.0',
      files: Object.fromEntries(Object.values(hashes).map((h) => [h, { source: { path: `asset.${h}`, packaging: 'zip' } }])),
    }),
  );
  writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      version: '55.0.0',
      artifacts: {
        [`${FIXTURE_STACK}.assets`]: { type: 'cdk:asset-manifest', properties: { file: `${FIXTURE_STACK}.assets.json` } },
        [FIXTURE_STACK]: { type: 'aws:cloudformation:stack', properties: { templateFile: `${FIXTURE_STACK}.template.json` } },
      },
    }),
  );
  return dir;
};
