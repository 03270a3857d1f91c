/**
 * The local API Gateway: an HTTP server on loopback that serves the template's REST API under
 * its stage (`/v1/...`) as API Gateway does: 10 MB request limit, resource routing, the
 * Lambda REQUEST/TOKEN authorizer with its result cache, AWS_PROXY and MOCK integrations, the
 * 29 s integration timeout, and the template's gateway responses for every error it raises.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PROBLEM_CONTENT_TYPE, problemType } from '../../functions/platform/problem.js';
import { AuthorizerCache, evaluatePolicy, identityValues, methodArn, parseAuthorizerResult, type AuthorizerGrant } from './authorizer.js';
import { GATEWAY_MESSAGES, renderGatewayResponse, type GatewayError } from './gateway-responses.js';
import { MAX_PAYLOAD_BYTES, type InvokeOutcome } from './lambda-pool.js';
import type { MappingInput } from './mapping.js';
import { runMock } from './mock.js';
import { eventBody, groupHeaders, newRequestContext, parseQuery, proxyEvent, readProxyResult, type RequestContext, type RequestHeaders } from './proxy.js';
import { streamedResponseReader, type StreamedHead } from './response-stream.js';
import { Router, type RouteMatch } from './router.js';
import type { ApiModel, AuthorizerSpec } from './template.js';

/** API Gateway's request payload limit. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/** Past this much, an oversized request is cut off instead of read to its end and discarded. */
const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

/** Runs a function of the template by logical id. */
export type Invoker = (
  functionId: string,
  eventJson: string,
  options: { requestId: string; callerTimeoutMs: number; onChunk?: (data: Uint8Array) => void },
) => Promise<InvokeOutcome>;

/** A streamed answer's headers, as name/value pairs (multi-value ones repeated). */
const streamedHeaders = (head: StreamedHead): [string, string][] => [
  ...Object.entries(head.headers).map(([name, value]): [string, string] => [name, String(value)]),
  ...Object.entries(head.multiValueHeaders).flatMap(([name, values]) => values.map((value): [string, string] => [name, String(value)])),
];

/** A response the gateway sends for a path outside the API (the local issuer's JWKS). */
/** A request the gateway serves itself, not an API method: its query, body and headers. */
export interface ExtraRequest {
  readonly method: string;
  readonly query: URLSearchParams;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** The answer to an {@link ExtraRequest}. */
export interface ExtraAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface ExtraRoute {
  readonly method: string;
  readonly path: string;
  handle(request: ExtraRequest): ExtraAnswer | Promise<ExtraAnswer>;
}

export interface GatewayOptions {
  readonly model: ApiModel;
  readonly invoke: Invoker;
  readonly region: string;
  readonly accountId: string;
  readonly apiId: string;
  readonly extraRoutes?: readonly ExtraRoute[];
  /** One line per request (and per gateway-side failure). */
  readonly log?: (line: string) => void;
  readonly maxRequestBytes?: number;
  /** Authorizer time limit; API Gateway allows an authorizer the integration limit too. */
  readonly authorizerTimeoutMs?: number;
  readonly now?: () => number;
}

interface Answer {
  readonly statusCode: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  /** A streamed answer's body (response transfer mode STREAM), sent as it comes instead of `body`. */
  readonly stream?: Readable;
  /** What the access log says about a gateway-made answer. */
  readonly error?: GatewayError;
}

type BodyRead = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/** Reads a request body up to `limit` bytes; past it, the rest is discarded (not kept), up to a hard cap. */
const readBody = (req: IncomingMessage, limit: number): Promise<BodyRead> =>
  new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_DISCARD_BYTES) {
      resolve({ kind: 'too-large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
      else if (size > MAX_DISCARD_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        resolve({ kind: 'too-large' });
      }
    });
    req.on('end', () => resolve(tooLarge ? { kind: 'too-large' } : { kind: 'ok', body: Buffer.concat(chunks, size) }));
    req.on('error', () => resolve({ kind: 'aborted' }));
    req.on('close', () => resolve({ kind: 'aborted' }));
  });

export interface LocalGateway {
  readonly server: Server;
  /** Listens on 127.0.0.1; returns the port. */
  listen(port: number): Promise<number>;
  close(): Promise<void>;
}

/** Why Node refused a request before it reached the gateway (its HTTP parser's codes), as a status. */
const CLIENT_ERROR_STATUS: ReadonlyMap<string, number> = new Map([
  ['HPE_HEADER_OVERFLOW', 431],
  ['ERR_HTTP_REQUEST_TIMEOUT', 408],
  ['HPE_INVALID_METHOD', 400],
]);
const CLIENT_ERROR_DETAIL: ReadonlyMap<string, string> = new Map([
  ['HPE_HEADER_OVERFLOW', 'The request headers are larger than the 16 KB the gateway reads.'],
  ['ERR_HTTP_REQUEST_TIMEOUT', 'The request was not received in time.'],
  ['HPE_INVALID_METHOD', 'The request method is not one HTTP defines (methods are case-sensitive: GET, POST, PUT, PATCH, DELETE).'],
]);
const STATUS_TITLES: ReadonlyMap<number, string> = new Map([
  [400, 'Bad Request'],
  [408, 'Request Timeout'],
  [431, 'Request Header Fields Too Large'],
  [500, 'Internal Server Error'],
]);

/** A whole HTTP/1.1 problem+json answer, written on a socket Node's parser gave up on. */
export const rawProblemResponse = (status: number, detail: string, requestId: string): string => {
  const title = STATUS_TITLES.get(status) ?? 'Error';
  const slug = status === 431 ? 'headers-too-large' : status === 408 ? 'request-timeout' : 'validation';
  const body = JSON.stringify({ type: problemType(slug), title, status, detail, requestId });
  return (
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `x-amzn-RequestId: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
};

/** A fixed problem answer of the local gateway, built from nothing the request carried. */
const fixedProblem = (error: GatewayError, problem: { status: number; slug: string; title: string; detail: string }, requestId: string): Answer => {
  const body = { type: problemType(problem.slug), title: problem.title, status: problem.status, detail: problem.detail, requestId };
  return { statusCode: problem.status, headers: [['Content-Type', PROBLEM_CONTENT_TYPE]], body: Buffer.from(JSON.stringify(body)), error };
};

/** The gateway's own failure (a fault of the emulator, whatever the request was). */
const ownFailure = (requestId: string): Answer =>
  fixedProblem(
    { type: 'API_CONFIGURATION_ERROR', message: null },
    {
      status: 500,
      slug: 'internal',
      title: 'Internal Server Error',
      detail: 'The gateway failed to handle the request. Quote the request id when reporting it.',
    },
    requestId,
  );

/**
 * A request under API Gateway's 10 MB whose Lambda event is over the 6 MB an invocation takes.
 * AWS answers it with an invocation error; here it is a 413 that names the limit that applied.
 */
const eventTooLarge = (requestId: string): Answer =>
  fixedProblem(
    { type: 'REQUEST_TOO_LARGE', message: GATEWAY_MESSAGES.REQUEST_TOO_LARGE },
    {
      status: 413,
      slug: 'too-large',
      title: 'Content Too Large',
      detail: `The request makes a Lambda event larger than the ${MAX_PAYLOAD_BYTES / 1024 / 1024} MB a function invocation accepts (body, headers and query together; a binary body counts as base64).`,
    },
    requestId,
  );

export const createGateway = (options: GatewayOptions): LocalGateway => {
  const { model } = options;
  const router = new Router(model.methods);
  const caches = new Map<string, AuthorizerCache>(Object.values(model.authorizers).map((a) => [a.logicalId, new AuthorizerCache(a.ttlSeconds, options.now)]));
  const log = options.log ?? (() => undefined);
  const maxRequestBytes = options.maxRequestBytes ?? MAX_REQUEST_BYTES;
  const stagePrefix = `/${model.stageName}`;

  const mappingInput = (
    context: RequestContext | Record<string, unknown>,
    headers: RequestHeaders,
    query: Record<string, string>,
    pathParameters: Record<string, string>,
  ): MappingInput => ({
    context: context as Record<string, unknown>,
    stageVariables: model.stageVariables,
    headers: headers.lower,
    query,
    pathParameters,
  });

  const gatewayAnswer = (error: GatewayError, input: MappingInput): Answer => {
    const r = renderGatewayResponse(model.gatewayResponses, error, input);
    return { statusCode: r.statusCode, headers: Object.entries(r.headers), body: Buffer.from(r.body), error };
  };

  /** Runs the method's authorizer; a grant to go on, or the gateway error to answer. */
  const authorize = async (
    authorizer: AuthorizerSpec,
    match: RouteMatch,
    arn: string,
    request: { headers: RequestHeaders; query: ReturnType<typeof parseQuery>; context: RequestContext; path: string; httpMethod: string },
  ): Promise<{ grant: AuthorizerGrant; latencyMs: number } | { error: GatewayError }> => {
    const identity = identityValues(authorizer.identitySources, {
      headers: request.headers.lower,
      query: request.query.single,
      stageVariables: model.stageVariables,
      context: request.context as unknown as Record<string, unknown>,
    });
    const unauthorized: GatewayError = { type: 'UNAUTHORIZED', message: GATEWAY_MESSAGES.UNAUTHORIZED };
    if (!identity) return { error: unauthorized };
    if (
      authorizer.type === 'TOKEN' &&
      authorizer.identityValidationExpression &&
      !new RegExp(`^(?:${authorizer.identityValidationExpression})$`).test(identity[0]!)
    ) {
      return { error: unauthorized };
    }
    const cache = caches.get(authorizer.logicalId)!;
    const key = JSON.stringify(identity);
    const cached = cache.get(key);
    if (cached) return { grant: cached, latencyMs: 0 };

    const started = Date.now();
    const { requestContext: _omit, ...rest } = proxyEvent({
      resource: match.resourcePath,
      path: request.path,
      httpMethod: request.httpMethod,
      headers: request.headers,
      query: request.query,
      pathParameters: match.pathParameters,
      stageVariables: model.stageVariables,
      requestContext: request.context,
      body: { body: null, isBase64Encoded: false },
    });
    const event =
      authorizer.type === 'TOKEN'
        ? { type: 'TOKEN', authorizationToken: identity[0], methodArn: arn }
        : (({ body: _b, isBase64Encoded: _i, ...e }) => ({ type: 'REQUEST', methodArn: arn, ...e, requestContext: request.context }))(rest);
    const outcome = await options.invoke(authorizer.functionId, JSON.stringify(event), {
      requestId: randomUUID(),
      callerTimeoutMs: options.authorizerTimeoutMs ?? 29_000,
    });
    if (outcome.kind === 'function-error' && outcome.errorMessage === 'Unauthorized') return { error: unauthorized };
    if (outcome.kind !== 'result') {
      log(
        `authorizer ${authorizer.name} failed (${outcome.kind === 'function-error' ? outcome.errorType : outcome.kind}) for request ${request.context.requestId}`,
      );
      return { error: { type: 'AUTHORIZER_FAILURE', message: null } };
    }
    const grant = parseAuthorizerResult(JSON.parse(outcome.payload));
    if (!grant) {
      log(`authorizer ${authorizer.name} answered without a valid principalId, policy or context (request ${request.context.requestId})`);
      return { error: { type: 'AUTHORIZER_CONFIGURATION_ERROR', message: null } };
    }
    cache.set(key, grant);
    return { grant, latencyMs: Date.now() - started };
  };

  const handle = async (req: IncomingMessage, rawBody: Buffer, requestId: string): Promise<Answer> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const fullPath = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    const httpMethod = (req.method ?? 'GET').toUpperCase();
    const port = (req.socket.localPort ?? 0).toString();
    const sourceIp = req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
    const headers = groupHeaders(req.rawHeaders, {
      'X-Forwarded-For': sourceIp,
      'X-Forwarded-Port': port,
      'X-Forwarded-Proto': 'http',
      'X-Amzn-Trace-Id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    });
    const query = parseQuery(rawQuery);
    const inStage = fullPath === stagePrefix || fullPath.startsWith(`${stagePrefix}/`);
    const path = inStage ? fullPath.slice(stagePrefix.length) || '/' : fullPath;
    const match = inStage ? router.match(httpMethod, path) : undefined;
    const context = newRequestContext({
      accountId: options.accountId,
      apiId: options.apiId,
      stage: model.stageName,
      httpMethod,
      path,
      host: headers.lower['host'] ?? `127.0.0.1:${port}`,
      sourceIp,
      userAgent: headers.lower['user-agent'],
      resourceId: match?.method.resourceId ?? '',
      resourcePath: match?.resourcePath ?? '',
      requestId,
    });
    const input = mappingInput(context, headers, query.single, match?.pathParameters ?? {});
    if (!match) return gatewayAnswer({ type: 'MISSING_AUTHENTICATION_TOKEN', message: GATEWAY_MESSAGES.MISSING_AUTHENTICATION_TOKEN }, input);
    const method = match.method;

    let authorizerContext: Record<string, unknown> | undefined;
    if (method.authorizerId) {
      const authorizer = model.authorizers[method.authorizerId]!;
      const arn = methodArn({ region: options.region, accountId: options.accountId, apiId: options.apiId, stage: model.stageName, httpMethod, path });
      const outcome = await authorize(authorizer, match, arn, { headers, query, context, path, httpMethod });
      if ('error' in outcome) return gatewayAnswer(outcome.error, input);
      const decision = evaluatePolicy(outcome.grant.policy, arn);
      if (decision !== 'allow') {
        return gatewayAnswer(
          { type: 'ACCESS_DENIED', message: decision === 'explicit-deny' ? GATEWAY_MESSAGES.ACCESS_DENIED_EXPLICIT : GATEWAY_MESSAGES.ACCESS_DENIED },
          input,
        );
      }
      authorizerContext = { ...outcome.grant.context, principalId: outcome.grant.principalId, integrationLatency: outcome.latencyMs };
    }
    const requestContext: RequestContext = authorizerContext ? { ...context, authorizer: authorizerContext } : context;
    const withAuth = mappingInput(requestContext, headers, query.single, match.pathParameters);

    const integration = method.integration;
    if (integration.type === 'MOCK') {
      const result = runMock(integration, { ...withAuth, body: rawBody.toString('utf8') });
      if (result.kind === 'error') return gatewayAnswer(result.error, withAuth);
      return { statusCode: result.statusCode, headers: Object.entries(result.headers), body: Buffer.from(result.body) };
    }

    const event = proxyEvent({
      resource: match.resourcePath,
      path,
      httpMethod,
      headers,
      query,
      pathParameters: match.pathParameters,
      stageVariables: model.stageVariables,
      requestContext,
      body: eventBody(rawBody, headers.lower['content-type'], model.binaryMediaTypes),
    });
    const eventJson = JSON.stringify(event);
    // Lambda takes at most 6 MB per synchronous invocation; a larger event never reaches the function.
    if (Buffer.byteLength(eventJson) > MAX_PAYLOAD_BYTES) {
      return eventTooLarge(requestId);
    }
    const fn = model.functions[integration.functionId]?.label ?? integration.functionId;
    const malformed = (): Answer => {
      log(`${fn}: malformed Lambda proxy response (request ${requestId})`);
      return gatewayAnswer({ type: 'DEFAULT_5XX', message: GATEWAY_MESSAGES.INTERNAL, status: 502 }, withAuth);
    };
    /** The gateway's answer to a function that did not answer. */
    const failure = (outcome: Exclude<InvokeOutcome, { kind: 'result' }>): Answer => {
      switch (outcome.kind) {
        case 'caller-timeout':
          log(`${fn}: no answer within ${integration.timeoutMs} ms (request ${requestId}); its environment is restarted`);
          return gatewayAnswer({ type: 'INTEGRATION_TIMEOUT', message: GATEWAY_MESSAGES.INTEGRATION_TIMEOUT }, withAuth);
        case 'invoke-error':
          log(`${fn}: invocation failed: ${outcome.reason} (request ${requestId})`);
          return gatewayAnswer({ type: 'INTEGRATION_FAILURE', message: GATEWAY_MESSAGES.INTERNAL, status: 502 }, withAuth);
        case 'function-error':
          log(`${fn}: function error ${outcome.errorType} (request ${requestId})`);
          return gatewayAnswer({ type: 'DEFAULT_5XX', message: GATEWAY_MESSAGES.INTERNAL, status: 502 }, withAuth);
      }
    };
    const invokeOptions = { requestId, callerTimeoutMs: integration.timeoutMs };
    if (integration.stream) return streamedAnswer(integration.functionId, eventJson, invokeOptions, { failure, malformed });
    const outcome = await options.invoke(integration.functionId, eventJson, invokeOptions);
    if (outcome.kind !== 'result') return failure(outcome);
    return readProxyResult(outcome.payload, { binaryMediaTypes: model.binaryMediaTypes, accept: headers.lower['accept'] }) ?? malformed();
  };

  /**
   * Invokes a function whose integration streams (response transfer mode STREAM) and answers as
   * soon as it has written its metadata: status and headers, then the body as the function
   * writes it. A function that fails before its metadata gets the gateway's answer, as a buffered
   * one would; one that fails after has its answer cut short (the client sees an incomplete
   * transfer), as API Gateway does.
   */
  const streamedAnswer = (
    functionId: string,
    eventJson: string,
    invokeOptions: { requestId: string; callerTimeoutMs: number },
    otherwise: { failure: (outcome: Exclude<InvokeOutcome, { kind: 'result' }>) => Answer; malformed: () => Answer },
  ): Promise<Answer> =>
    new Promise<Answer>((resolve) => {
      const body = new PassThrough();
      let head: StreamedHead | undefined;
      const reader = streamedResponseReader({
        onHead: (h) => {
          head = h;
          if (h) resolve({ statusCode: h.statusCode, headers: streamedHeaders(h), body: Buffer.alloc(0), stream: body });
        },
        onBody: (data) => body.write(data),
      });
      void options.invoke(functionId, eventJson, { ...invokeOptions, onChunk: (data) => reader.push(data) }).then((outcome) => {
        if (head && outcome.kind === 'result') body.end();
        else if (head) body.destroy(new Error(`the function failed while streaming (${outcome.kind})`));
        else resolve(outcome.kind === 'result' ? otherwise.malformed() : otherwise.failure(outcome));
      });
    });

  const send = (res: ServerResponse, answer: Answer, requestId: string, close = false): void => {
    if (res.headersSent || res.destroyed) return;
    for (const [name, value] of answer.headers) res.appendHeader(name, value);
    res.setHeader('x-amzn-RequestId', requestId);
    if (close) res.setHeader('Connection', 'close');
    res.statusCode = answer.statusCode;
    if (answer.stream) {
      // Chunked, as it comes; a function failing mid-stream ends the connection without the last chunk.
      pipeline(answer.stream, res).catch(() => res.destroy());
      return;
    }
    res.setHeader('Content-Length', answer.body.length);
    res.end(answer.body);
  };

  const server = createServer((req, res) => {
    const started = Date.now();
    const requestId = randomUUID();
    const finish = (answer: Answer, close = false) => {
      send(res, answer, requestId, close);
      log(
        JSON.stringify({
          requestId,
          ip: req.socket.remoteAddress?.replace(/^::ffff:/, ''),
          httpMethod: req.method,
          path: (req.url ?? '').split('?')[0],
          status: answer.statusCode,
          ...(answer.error ? { error: answer.error.type } : {}),
          ...(answer.stream ? { streamed: true } : { responseLength: answer.body.length }),
          latencyMs: Date.now() - started,
        }),
      );
    };
    void (async () => {
      const extra = options.extraRoutes?.find((r) => r.method === req.method && r.path === (req.url ?? '').split('?')[0]);
      const read = await readBody(req, maxRequestBytes);
      if (extra && read.kind === 'ok') {
        const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
        const r = await extra.handle({ method: req.method ?? '', query, body: read.body, headers: req.headers });
        finish({ statusCode: r.statusCode, headers: Object.entries(r.headers), body: Buffer.from(r.body) });
        return;
      }
      if (read.kind === 'aborted') return;
      if (read.kind === 'too-large') {
        const headers = groupHeaders(req.rawHeaders);
        const answer = gatewayAnswer(
          { type: 'REQUEST_TOO_LARGE', message: GATEWAY_MESSAGES.REQUEST_TOO_LARGE },
          mappingInput({ requestId, stage: model.stageName, httpMethod: req.method ?? '' }, headers, {}, {}),
        );
        finish(answer, true);
        // A client still sending past the hard cap is cut off once the answer is out.
        if (!req.complete) res.on('finish', () => req.socket.destroySoon());
        return;
      }
      finish(await handle(req, read.body, requestId));
    })().catch((error: unknown) => {
      // The gateway's own fault. This path reads nothing of the request (the request may be
      // what made the gateway fail) and cannot throw: no request stops the local stack.
      try {
        log(`gateway failure for request ${requestId}: ${error instanceof Error ? error.message : String(error)}`);
        finish(ownFailure(requestId), true);
      } catch {
        if (!res.headersSent) res.destroy();
      }
    });
  });
  // Requests Node refuses before the gateway sees them (headers over 16 KB, a method it does
  // not know, such as a lower-case one, malformed HTTP) get a problem+json answer too.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = CLIENT_ERROR_STATUS.get(error.code ?? '') ?? 400;
    const detail = CLIENT_ERROR_DETAIL.get(error.code ?? '') ?? 'The request is not valid HTTP/1.1.';
    const requestId = randomUUID();
    log(JSON.stringify({ requestId, ip: (socket as Socket).remoteAddress?.replace(/^::ffff:/, ''), status, error: error.code ?? 'client-error' }));
    socket.end(rawProblemResponse(status, detail, requestId));
  });
  // API Gateway's own limit on a request's lifetime is the integration timeout; keep-alive as a client expects.
  server.keepAliveTimeout = 5_000;

  return {
    server,
    listen: (port) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
