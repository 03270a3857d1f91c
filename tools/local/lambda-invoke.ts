/**
 * Lambda's `Invoke` API for the durable functions of a local stack, on its own loopback port
 * (functions reach it through `AWS_ENDPOINT_URL_LAMBDA`, so the code that starts an execution
 * is the deployed code, AWS SDK call included).
 *
 * Supported as the service does for what this stack sends: `POST
 * /2015-03-31/functions/{name or ARN, alias allowed}/invocations` with `X-Amz-Invocation-Type:
 * Event`; `X-Amz-Durable-Execution-Name` names the execution, and a name already started
 * answers 409 `DurableExecutionAlreadyStartedException`. The answer is 202 as soon as the
 * execution is queued; it then runs in the function's durable worker (`durable-worker.ts`).
 * Anything else answers Lambda's error shape with status 400 or 404.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DurableWorkerConfig, DurableWorkerMessage } from './durable-worker.js';

/** Runs one execution of a function with its JSON payload; settles when the execution ends. */
export type ExecutionRunner = (payloadJson: string, name: string) => Promise<void>;

export interface LambdaInvokeEndpoint {
  readonly url: string;
  /** Resolves when every execution started so far has ended. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** `name`, `name:alias`, or an ARN ending in either: the function's name. */
export const functionNameOf = (raw: string): string => {
  const parts = raw.split(':');
  if (parts.length >= 7 && parts[0] === 'arn') return parts[6]!;
  return parts[0]!;
};

const error = (res: ServerResponse, status: number, type: string, message: string): void => {
  res.writeHead(status, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': type, 'x-amzn-RequestId': randomUUID() });
  res.end(JSON.stringify({ Type: 'User', message }));
};

export const startLambdaInvokeEndpoint = async (o: {
  /** Durable functions by name. */
  readonly functions: ReadonlyMap<string, ExecutionRunner>;
  readonly log: (line: string) => void;
}): Promise<LambdaInvokeEndpoint> => {
  const started = new Map<string, Set<string>>();
  const running = new Set<Promise<void>>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const match = req.method === 'POST' ? PATH.exec((req.url ?? '').split('?')[0]!) : null;
    if (!match) return error(res, 404, 'ResourceNotFoundException', `No such operation: ${req.method} ${req.url}`);
    let raw: string;
    try {
      raw = decodeURIComponent(match[1]!);
    } catch {
      return error(res, 400, 'InvalidParameterValueException', 'The function name is not valid.');
    }
    const name = functionNameOf(raw);
    const run = o.functions.get(name);
    if (!run) return error(res, 404, 'ResourceNotFoundException', `Function not found: ${raw}`);
    if ((req.headers['x-amz-invocation-type'] ?? 'RequestResponse') !== 'Event') {
      return error(res, 400, 'InvalidParameterValueException', 'Local mode starts durable executions asynchronously only (InvocationType Event).');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_PAYLOAD_BYTES) return error(res, 413, 'RequestTooLargeException', 'The payload is larger than an asynchronous invocation takes.');
      chunks.push(chunk);
    }
    const payload = chunks.length ? Buffer.concat(chunks).toString('utf8') : '{}';
    try {
      JSON.parse(payload);
    } catch {
      return error(res, 400, 'InvalidRequestContentException', 'The payload is not JSON.');
    }
    const executionName = (req.headers['x-amz-durable-execution-name'] as string | undefined) ?? randomUUID();
    const names = started.get(name) ?? new Set<string>();
    started.set(name, names);
    if (names.has(executionName)) {
      return error(res, 409, 'DurableExecutionAlreadyStartedException', `The durable execution ${executionName} has already been started.`);
    }
    names.add(executionName);
    const arn = `arn:aws:lambda:local:000000000000:function:${name}/durable-execution/${executionName}`;
    res.writeHead(202, { 'Content-Type': 'application/json', 'X-Amz-Durable-Execution-Arn': arn, 'x-amzn-RequestId': randomUUID() });
    res.end();
    o.log(`durable execution ${executionName} of ${name} started`);
    const execution = run(payload, executionName).then(
      () => o.log(`durable execution ${executionName} of ${name} ended`),
      (e: unknown) => o.log(`durable execution ${executionName} of ${name} failed: ${e instanceof Error ? e.message : String(e)}`),
    );
    running.add(execution);
    void execution.finally(() => running.delete(execution));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) error(res, 500, 'ServiceException', e instanceof Error ? e.message : String(e));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    idle: async () => {
      while (running.size) await Promise.all([...running]);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/**
 * An {@link ExecutionRunner} on one durable worker thread with the function's environment,
 * created on the first execution; executions run concurrently in it, as they share a warm
 * container's module state on Lambda.
 */
export const durableWorkerRunner = (fn: {
  readonly label: string;
  readonly codeDir: string;
  readonly handler: string;
  readonly memoryMb: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly log: (kind: 'stdout' | 'stderr', line: string) => void;
}): ExecutionRunner & { close(): Promise<void> } => {
  let worker: Promise<import('node:worker_threads').Worker> | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();

  const start = async () => {
    const { Worker } = await import('node:worker_threads');
    const { createInterface } = await import('node:readline');
    const config: DurableWorkerConfig = { codeDir: fn.codeDir, handler: fn.handler, testingUrl: import.meta.resolve('@aws/durable-execution-sdk-js-testing') };
    const w = new Worker(new URL('./durable-worker.ts', import.meta.url), {
      workerData: config,
      env: { ...fn.environment },
      execArgv: (process.features as { typescript?: unknown }).typescript ? [] : ['--import', import.meta.resolve('tsx')],
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: Math.max(128, fn.memoryMb) },
    });
    createInterface({ input: w.stdout, crlfDelay: Infinity }).on('line', (line) => fn.log('stdout', line));
    createInterface({ input: w.stderr, crlfDelay: Infinity }).on('line', (line) => fn.log('stderr', line));
    await new Promise<void>((resolve, reject) => {
      w.on('message', (m: DurableWorkerMessage) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'init-error') reject(new Error(`${fn.label} failed to load: ${m.message}`));
        else if (m.type === 'done') {
          const p = pending.get(m.id);
          pending.delete(m.id);
          if (m.status === 'SUCCEEDED') p?.resolve();
          else p?.reject(new Error(`execution ${m.status}${m.error ? `: ${m.error}` : ''}`));
        }
      });
      w.on('error', (e) => {
        reject(e);
        for (const p of pending.values()) p.reject(e);
        pending.clear();
      });
      w.on('exit', () => {
        for (const p of pending.values()) p.reject(new Error(`${fn.label} stopped`));
        pending.clear();
      });
    });
    return w;
  };

  const run: ExecutionRunner = async (payloadJson) => {
    worker ??= start();
    worker.catch(() => (worker = undefined));
    const w = await worker;
    const id = nextId++;
    const done = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
    w.postMessage({ type: 'run', id, payload: payloadJson });
    return done;
  };
  return Object.assign(run, {
    close: async () => {
      const w = await worker?.catch(() => undefined);
      await w?.terminate();
    },
  });
};
