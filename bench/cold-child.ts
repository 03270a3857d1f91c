/**
 * One cold start, in a fresh `node` process: import the bundle as the Lambda runtime does (an
 * ES module through `import()`), make its first call, and report the times on standard error
 * as one `@@bench <json>` line. Times are from `performance.timeOrigin`, the start of this
 * process, so `total` covers Node's own start, the bundle's load and init, and the first call.
 *
 * Arguments: the bundle's file URL, the exported handler's name, the event (base64url JSON),
 * the function's timeout in seconds (for `getRemainingTimeInMillis`), and `probe` for an
 * untimed run that counts run-time compilations instead. A handler that streams (marked by
 * `awslambda.streamifyResponse`) is called with a response stream, as Lambda's runtime does. Kept
 * tiny and free of imports: whatever this file costs is paid by every variant.
 */
interface LambdaResult {
  readonly statusCode?: number;
  readonly body?: string;
  readonly principalId?: string;
}

const started = performance.now();
const [url = '', exportName = 'handler', encodedEvent = '', timeoutSeconds = '10', mode = 'measure'] = process.argv.slice(2);

// `probe` (an untimed run): count the functions compiled from source text at run time, which
// is how Ajv compiles a JSON Schema (`new Function(…)`). Schemas compiled at build time need none.
let compiledFunctions = 0;
if (mode === 'probe') {
  const count = <T extends object>(target: T): T =>
    new Proxy(target, {
      construct: (t, args, newTarget) => {
        compiledFunctions += 1;
        return Reflect.construct(t as new (...a: unknown[]) => object, args, newTarget) as object;
      },
      apply: (t, self, args) => {
        compiledFunctions += 1;
        return Reflect.apply(t as (...a: unknown[]) => unknown, self, args);
      },
    });
  globalThis.Function = count(Function);
}
// What Lambda's Node.js runtime gives a streaming handler (`awslambda.streamifyResponse`,
// `HttpResponseStream.from`), inline as tools/local/lambda-worker.ts has it: handlers that stream
// (the CSV exports) wrap themselves with it when their module loads.
const STREAMING = Symbol('streaming');
const lambdaGlobal = ((globalThis as { awslambda?: Record<string, unknown> }).awslambda ??= {});
lambdaGlobal['streamifyResponse'] ??= <T extends object>(handler: T): T => Object.assign(handler, { [STREAMING]: true });
lambdaGlobal['HttpResponseStream'] ??= {
  from: (stream: NodeJS.WritableStream, metadata: unknown) => {
    stream.write(JSON.stringify(metadata));
    stream.write(new Uint8Array(8));
    return stream;
  },
};

/** Calls a streaming handler with a response stream and reads its answer back as a proxy result (status and body). */
const callStreaming = async (handler: (...args: unknown[]) => Promise<unknown>, input: unknown, context: unknown): Promise<LambdaResult> => {
  const chunks: Buffer[] = [];
  const { Writable } = process.getBuiltinModule('node:stream');
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    }),
    { setContentType: () => undefined },
  );
  const finished = new Promise((resolve) => stream.once('finish', resolve));
  await handler(input, stream, context);
  if (!stream.writableEnded) stream.end();
  await finished;
  const bytes = Buffer.concat(chunks);
  const split = bytes.indexOf(Buffer.alloc(8));
  const metadata = JSON.parse(bytes.subarray(0, split).toString('utf8')) as { statusCode?: number };
  return { ...(metadata.statusCode === undefined ? {} : { statusCode: metadata.statusCode }), body: bytes.subarray(split + 8).toString('utf8') };
};

const event: unknown = JSON.parse(Buffer.from(encodedEvent, 'base64url').toString('utf8'));
const timeoutMs = Number(timeoutSeconds) * 1000;

/** Writes the result line, then ends the process: kept-alive sockets and timers must not make the measurement wait. */
const report = (fields: Record<string, unknown>): void => {
  process.stderr.write(`\n@@bench ${JSON.stringify(fields)}\n`, () => process.exit(0));
};

try {
  // As the Lambda runtime loads a handler: an ES module through import(), CommonJS through require().
  const mod = (url.endsWith('.mjs') ? await import(url) : process.getBuiltinModule('node:module').createRequire(url)(new URL(url).pathname)) as Record<
    string,
    unknown
  >;
  const imported = performance.now();
  const handler = mod[exportName] as (event: unknown, context: unknown) => Promise<LambdaResult | undefined>;
  if (typeof handler !== 'function') throw new Error(`${exportName} is not exported`);
  const deadline = Date.now() + timeoutMs;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env['AWS_LAMBDA_FUNCTION_NAME'] ?? 'bench',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env['AWS_REGION'] ?? 'eu-west-1'}:123456789012:function:bench`,
    memoryLimitInMB: process.env['AWS_LAMBDA_FUNCTION_MEMORY_SIZE'] ?? '512',
    awsRequestId: 'bench-cold-1',
    logGroupName: '/aws/lambda/bench',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  const result = (handler as unknown as Record<symbol, unknown>)[STREAMING]
    ? await callStreaming(handler as unknown as (...args: unknown[]) => Promise<unknown>, event, context)
    : await handler(event, context);
  const answered = performance.now();
  const cpu = process.cpuUsage();
  report({
    compiledFunctions,
    cpu: (cpu.user + cpu.system) / 1000,
    boot: started,
    init: imported - started,
    first: answered - imported,
    total: answered,
    status: result?.statusCode ?? (result?.principalId ? 'authorized' : 'none'),
    body: typeof result?.body === 'string' ? result.body.slice(0, 300) : undefined,
  });
} catch (error) {
  report({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
}
