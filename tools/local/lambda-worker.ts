/**
 * One Lambda execution environment: a worker thread with its own module state and the
 * function's environment. It imports the bundled handler once (the cold start), then runs one
 * invocation at a time, as Lambda does, with a context whose remaining time counts down to the
 * function's timeout.
 *
 * This file runs as a worker entry point under Node's own type stripping: it may import only
 * Node built-ins (and types).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';

/** What the pool tells a new worker. */
export interface WorkerConfig {
  readonly codeDir: string;
  /** `index.handler`: module path, then the exported function. */
  readonly handler: string;
  readonly functionName: string;
  readonly functionArn: string;
  readonly memoryMb: number;
  readonly logGroupName: string;
  readonly logStreamName: string;
}

/** Messages from the pool. */
export interface InvokeMessage {
  readonly type: 'invoke';
  readonly id: number;
  /** The event as JSON, as Lambda receives it. */
  readonly event: string;
  readonly requestId: string;
  readonly traceId: string;
  /** Epoch milliseconds at which the function times out. */
  readonly deadline: number;
}

/** Messages to the pool. */
export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'init-error'; readonly errorType: string; readonly errorMessage: string }
  | { readonly type: 'result'; readonly id: number; readonly payload: string }
  /** A streaming function wrote these bytes of its answer (`result` with an empty payload ends it). */
  | { readonly type: 'chunk'; readonly id: number; readonly data: Uint8Array }
  | { readonly type: 'error'; readonly id: number; readonly errorType: string; readonly errorMessage: string };

type Handler = (event: unknown, context: unknown, callback?: (error: unknown, result?: unknown) => void) => unknown;

/** How Lambda's Node.js runtime marks a handler wrapped by `awslambda.streamifyResponse`. */
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
/** Between an HTTP integration's metadata (JSON) and its body: eight NUL bytes. */
export const HTTP_PRELUDE_DELIMITER = new Uint8Array(8);

/** The response stream Lambda's runtime hands a streaming handler: a writable of bytes. */
export type ResponseStream = Writable & { setContentType(type: string): void };

/**
 * Installs what Lambda's Node.js runtime provides streaming handlers as the global `awslambda`:
 * `streamifyResponse` (marks the handler, which the runtime then calls with a response stream)
 * and `HttpResponseStream.from` (writes an HTTP integration's metadata, JSON, then the eight NUL
 * bytes API Gateway reads as its end). Handlers wrapped at module load need it before they load.
 */
export const installLambdaStreaming = (): void => {
  // Other code may have made the object already (the AWS SDK's invoke store keeps a member there).
  const global = globalThis as { awslambda?: Record<string, unknown> };
  const awslambda = (global.awslambda ??= {});
  awslambda['streamifyResponse'] ??= <T extends object>(handler: T): T => Object.assign(handler, { [STREAMING]: 'response' });
  awslambda['HttpResponseStream'] ??= {
    from: (stream: ResponseStream, metadata: unknown): ResponseStream => {
      stream.setContentType('application/vnd.awslambda.http-integration-response');
      stream.write(JSON.stringify(metadata));
      stream.write(HTTP_PRELUDE_DELIMITER);
      return stream;
    },
  };
};

/** Whether a handler was wrapped by `awslambda.streamifyResponse`. */
export const isStreamingHandler = (handler: unknown): boolean => (handler as { [STREAMING]?: unknown })[STREAMING] === 'response';

/** A response stream whose bytes go to `write`, chunk by chunk, as the function writes them. */
export const responseStream = (write: (data: Uint8Array) => void): ResponseStream =>
  Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        write(typeof chunk === 'string' ? Buffer.from(chunk) : new Uint8Array(chunk));
        done();
      },
    }),
    { setContentType: () => undefined },
  );

/** Runs a streaming handler to its end: the handler's promise and its stream's end, as the runtime waits for both. */
export const invokeStreaming = async (handler: unknown, event: unknown, stream: ResponseStream, context: unknown): Promise<void> => {
  const ended = new Promise<void>((resolve, reject) => {
    stream.once('finish', resolve);
    stream.once('error', reject);
  });
  await (handler as (event: unknown, stream: ResponseStream, context: unknown) => Promise<unknown>)(event, stream, context);
  if (!stream.writableFinished) {
    if (!stream.writableEnded) stream.end();
    await ended;
  }
};

/** What `run` returns for a streamed answer: its bytes went out as chunks. */
const STREAMED = Symbol('streamed');

const port = parentPort;
const config = workerData as WorkerConfig;

// The stack is left out on purpose: no stack trace reaches a log line (the Node.js runtime would log it).
const describe = (error: unknown): { errorType: string; errorMessage: string } => {
  if (error instanceof Error) return { errorType: error.name || 'Error', errorMessage: error.message };
  return { errorType: 'Error', errorMessage: typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error)) };
};

/** Finds the handler as the Node.js runtime does: `<module>.js`, `.mjs`, then `.cjs` under the code directory. */
const loadHandler = async (): Promise<Handler> => {
  const dot = config.handler.lastIndexOf('.');
  if (dot <= 0) throw Object.assign(new Error(`Bad handler ${config.handler}: expected <module>.<function>`), { name: 'Runtime.MalformedHandlerName' });
  const modulePath = config.handler.slice(0, dot);
  const exportName = config.handler.slice(dot + 1);
  const file = ['.js', '.mjs', '.cjs'].map((ext) => path.join(config.codeDir, modulePath + ext)).find((f) => existsSync(f));
  if (!file) throw Object.assign(new Error(`Cannot find module '${modulePath}'`), { name: 'Runtime.ImportModuleError' });
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown> & { default?: Record<string, unknown> };
  const fn = mod[exportName] ?? mod.default?.[exportName];
  if (typeof fn !== 'function') {
    throw Object.assign(new Error(`${modulePath}.${exportName} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  }
  return fn as Handler;
};

const run = async (handler: Handler, message: InvokeMessage): Promise<unknown> => {
  // The runtime sets the trace header per invocation; X-Ray SDKs read it from the environment.
  process.env['_X_AMZN_TRACE_ID'] = message.traceId;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: config.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: config.functionArn,
    memoryLimitInMB: String(config.memoryMb),
    awsRequestId: message.requestId,
    logGroupName: config.logGroupName,
    logStreamName: config.logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, message.deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  const event: unknown = JSON.parse(message.event);
  if (isStreamingHandler(handler)) {
    const stream = responseStream((data) => port?.postMessage({ type: 'chunk', id: message.id, data } satisfies WorkerMessage));
    await invokeStreaming(handler, event, stream, context);
    return STREAMED;
  }
  if (handler.length >= 3) {
    // Callback-style handler (still supported by nodejs22.x).
    return new Promise((resolve, reject) => {
      const returned = handler(event, context, (error, result) => (error ? reject(error) : resolve(result)));
      if (returned && typeof (returned as Promise<unknown>).then === 'function') (returned as Promise<unknown>).then(resolve, reject);
    });
  }
  return handler(event, context);
};

if (port) {
  installLambdaStreaming();
  const handlerPromise = loadHandler();
  handlerPromise.then(
    () => port.postMessage({ type: 'ready' } satisfies WorkerMessage),
    (error: unknown) => {
      const d = describe(error);
      console.error(`INIT_REPORT\t${JSON.stringify({ errorType: d.errorType, errorMessage: d.errorMessage })}`);
      port.postMessage({ type: 'init-error', errorType: d.errorType, errorMessage: d.errorMessage } satisfies WorkerMessage);
    },
  );
  port.on('message', (message: InvokeMessage) => {
    if (message.type !== 'invoke') return;
    void (async () => {
      try {
        const result = await run(await handlerPromise, message);
        // Lambda serializes the result as JSON (`undefined` becomes `null`); a streamed answer was sent already.
        port.postMessage({ type: 'result', id: message.id, payload: result === STREAMED ? '' : JSON.stringify(result ?? null) } satisfies WorkerMessage);
      } catch (error) {
        const d = describe(error);
        // What the Node.js runtime logs for a failed invocation (to the function's log, never to the client).
        console.error(`${new Date().toISOString()}\t${message.requestId}\tERROR\tInvoke Error \t${JSON.stringify(d)}`);
        port.postMessage({ type: 'error', id: message.id, errorType: d.errorType, errorMessage: d.errorMessage } satisfies WorkerMessage);
      }
    })();
  });
}
