/**
 * The warm measurements, in a `node` process of their own that has the function's environment
 * (as a Lambda execution environment would): handlers are called in-process, one call at a
 * time, after a warm-up; two variants alternate call by call (A B, B A, A B…) so that drift and
 * GC pauses fall on both alike. Each call gets a fresh event and context built outside the
 * timed region, as the Lambda runtime hands every invocation a freshly parsed event.
 *
 * Modes (first argument; the second is the mode's configuration, base64url JSON):
 * - `trees`: the tree-summary handler against a bare handler doing the same GetCommand,
 *   first with the SDK answering from a canned response, then against DynamoDB Local;
 * - `authorizer`: the authorizer handler against raw `crypto.verify` of the same token;
 * - `relay`: the relay handler against a direct `fetch` of the same orchestrator resource,
 *   with the adapter read canned, then from DynamoDB Local.
 *
 * The result is one `@@bench <json>` line on standard error.
 */
import { createPublicKey, verify } from 'node:crypto';

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode?: number; principalId?: string } | undefined>;

interface RequestHandlerLike {
  handle(request: unknown): Promise<{ response: unknown }>;
}

interface DocumentClientLike {
  config: { requestHandler: unknown };
}

/** Per-call times of two variants, in milliseconds. */
interface Pair {
  readonly a: number[];
  readonly b: number[];
}

const context = (timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env['AWS_LAMBDA_FUNCTION_NAME'] ?? 'bench',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:bench',
    memoryLimitInMB: '512',
    awsRequestId: 'bench-warm',
    logGroupName: '/aws/lambda/bench',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};

/**
 * Runs `warmup` then `calls` alternated calls of `a` and `b`. Each variant is a factory: it
 * prepares its call (untimed) and returns the call to time; the call returns whether it
 * succeeded, and any failure stops the measurement.
 */
const alternate = async (a: () => () => Promise<boolean>, b: () => () => Promise<boolean>, warmup: number, calls: number): Promise<Pair> => {
  const out: Pair = { a: [], b: [] };
  const once = async (variant: () => () => Promise<boolean>, into: number[] | undefined, label: string): Promise<void> => {
    const call = variant();
    const start = performance.now();
    const ok = await call();
    const elapsed = performance.now() - start;
    if (!ok) throw new Error(`${label} call failed`);
    into?.push(elapsed);
  };
  for (let i = 0; i < warmup + calls; i++) {
    const measured = i >= warmup;
    if (i % 2 === 0) {
      await once(a, measured ? out.a : undefined, 'A');
      await once(b, measured ? out.b : undefined, 'B');
    } else {
      await once(b, measured ? out.b : undefined, 'B');
      await once(a, measured ? out.a : undefined, 'A');
    }
  }
  return out;
};

/** A request handler that answers every request with `body` (DynamoDB JSON), without a network. */
const cannedHandler = (body: string): RequestHandlerLike & Record<string, unknown> => ({
  handle: async () => ({
    response: {
      statusCode: 200,
      reason: 'OK',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(Buffer.byteLength(body)), 'x-amzn-requestid': 'bench' },
      body: Buffer.from(body),
    },
  }),
  updateHttpClientConfig: () => undefined,
  httpHandlerConfigs: () => ({}),
  destroy: () => undefined,
});

const parseEvent = (json: string): unknown => JSON.parse(json);

const runTrees = async (config: { bundle: string; event: unknown; cannedGetItem: string; warmup: number; calls: number }) => {
  const mod = (await import(config.bundle)) as { full: Handler; bare: Handler; documentClient: DocumentClientLike };
  const eventJson = JSON.stringify(config.event);
  const variant = (handler: Handler) => () => {
    const event = parseEvent(eventJson);
    const ctx = context();
    return async () => (await handler(event, ctx))?.statusCode === 200;
  };
  const network = mod.documentClient.config.requestHandler;
  mod.documentClient.config.requestHandler = cannedHandler(config.cannedGetItem);
  const canned = await alternate(variant(mod.full), variant(mod.bare), config.warmup, config.calls);
  mod.documentClient.config.requestHandler = network;
  const dynamo = await alternate(variant(mod.full), variant(mod.bare), config.warmup, config.calls);
  return { canned: { full: canned.a, bare: canned.b }, dynamo: { full: dynamo.a, bare: dynamo.b } };
};

const runAuthorizer = async (config: { bundle: string; event: unknown; token: string; jwk: Record<string, string>; warmup: number; calls: number }) => {
  const mod = (await import(config.bundle)) as { handler: Handler };
  const eventJson = JSON.stringify(config.event);
  const key = createPublicKey({ key: config.jwk, format: 'jwk' });
  const full = () => {
    const event = parseEvent(eventJson);
    const ctx = context();
    return async () => typeof (await mod.handler(event, ctx))?.principalId === 'string';
  };
  // What any verifier must do with the token at least: split it, decode the signature, verify.
  const raw = () => async () => {
    const dot = config.token.lastIndexOf('.');
    return verify('sha256', Buffer.from(config.token.slice(0, dot)), key, Buffer.from(config.token.slice(dot + 1), 'base64url'));
  };
  const pair = await alternate(full, raw, config.warmup, config.calls);
  return { full: pair.a, raw: pair.b };
};

const runRelay = async (config: {
  bundle: string;
  event: unknown;
  direct: { url: string; headers: Record<string, string> };
  cannedAdapter: string;
  warmup: number;
  calls: number;
}) => {
  const mod = (await import(config.bundle)) as { full: Handler; documentClient: DocumentClientLike };
  const eventJson = JSON.stringify(config.event);
  const full = () => {
    const event = parseEvent(eventJson);
    const ctx = context(29_000);
    return async () => (await mod.full(event, ctx))?.statusCode === 200;
  };
  // The same resource fetched directly, its JSON body read and parsed as the relay does.
  const direct = () => async () => {
    const res = await fetch(config.direct.url, { headers: config.direct.headers });
    const data: unknown = await res.json();
    return res.status === 200 && data !== undefined;
  };
  const network = mod.documentClient.config.requestHandler;
  mod.documentClient.config.requestHandler = cannedHandler(config.cannedAdapter);
  const canned = await alternate(full, direct, config.warmup, config.calls);
  mod.documentClient.config.requestHandler = network;
  const dynamo = await alternate(full, direct, config.warmup, config.calls);
  return { canned: { full: canned.a, direct: canned.b }, dynamo: { full: dynamo.a, direct: dynamo.b } };
};

const [mode = '', encoded = ''] = process.argv.slice(2);
let line: string;
try {
  const config = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as never;
  const result =
    mode === 'trees' ? await runTrees(config) : mode === 'authorizer' ? await runAuthorizer(config) : mode === 'relay' ? await runRelay(config) : undefined;
  if (!result) throw new Error(`unknown mode ${mode}`);
  line = JSON.stringify(result);
} catch (error) {
  line = JSON.stringify({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
}
// Exit once the (large) line is written: a pipe takes it in pieces.
process.stderr.write(`\n@@bench ${line}\n`, () => process.exit(0));
