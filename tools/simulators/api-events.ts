/**
 * API Gateway REST (v1) proxy events, shaped as API Gateway and `sam local` send them, and a
 * Lambda context. A JSON body always comes with its `Content-Type`.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { proxyHandler } from '../local/response-stream.js';

export interface EventInput {
  method: string;
  /** The resource template, e.g. `/configuration_manager/configs/{treeId}`. */
  resource: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  authorizer?: Record<string, string>;
}

export const apiEvent = (input: EventInput): APIGatewayProxyEvent => {
  const params = input.pathParameters ?? {};
  const path = input.resource.replaceAll(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const body = input.body === undefined ? null : typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Host: 'api.example.net',
    ...(body !== null ? { 'Content-Type': 'application/json' } : {}),
    ...input.headers,
  };
  const requestId = randomUUID();
  return {
    resource: input.resource,
    path,
    httpMethod: input.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: input.query ?? null,
    multiValueQueryStringParameters: input.query ? Object.fromEntries(Object.entries(input.query).map(([k, v]) => [k, [v]])) : null,
    pathParameters: input.pathParameters ?? null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      authorizer: input.authorizer ?? { principalId: 'tester', roles: 'admin' },
      domainName: 'api.example.net',
      domainPrefix: 'api',
      extendedRequestId: requestId,
      httpMethod: input.method,
      identity: { sourceIp: '127.0.0.1', userAgent: 'vitest' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/v1${path}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'res',
      resourcePath: input.resource,
      stage: 'v1',
    },
  };
};

/**
 * A Lambda context whose time left runs down from `remainingMs`, as Lambda's does; with
 * `frozen`, it stays at `remainingMs` however long the call takes, so that a test of what the
 * code does with little time left does not depend on how loaded the machine is.
 */
export const lambdaContext = (remainingMs = 10_000, functionName = 'test', { frozen = false } = {}): Context => {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => (frozen ? remainingMs : Math.max(0, deadline - Date.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** Invokes a handler (a streaming one's answer read to its end) and parses its JSON body. */
export const invoke = async (handler: Handler, event: APIGatewayProxyEvent, context = lambdaContext()) => {
  const result = await proxyHandler(handler)(event, context);
  const contentType = Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  const body = result.body ? (String(contentType).includes('json') ? JSON.parse(result.body) : result.body) : undefined;
  return { status: result.statusCode, headers: result.headers ?? {}, contentType: contentType as string | undefined, body };
};
