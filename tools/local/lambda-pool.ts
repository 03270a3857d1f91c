/**
 * Lambda's execution model for one function: a pool of execution environments (worker threads,
 * see `lambda-worker.ts`), each running one invocation at a time. A new environment starts
 * (cold start) only when every warm one is busy; a function that outlives its timeout is
 * stopped and its environment thrown away, as Lambda does; so is one that crashes.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { HeapInfo } from 'node:v8';
import type { InvokeMessage, WorkerConfig, WorkerMessage } from './lambda-worker.js';

export interface PoolFunction {
  readonly name: string;
  /** For log lines. */
  readonly label: string;
  readonly arn: string;
  readonly codeDir: string;
  readonly handler: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly environment: Readonly<Record<string, string>>;
}

export type InvokeOutcome =
  /** The function answered; `payload` is its result as JSON. */
  | { readonly kind: 'result'; readonly payload: string }
  /** The function threw, timed out, crashed or failed to start: Lambda's "function error". */
  | { readonly kind: 'function-error'; readonly errorType: string; readonly errorMessage: string }
  /** The caller's deadline (API Gateway's integration timeout) passed first. */
  | { readonly kind: 'caller-timeout' }
  /** Lambda refused the invocation (its response was larger than 6 MB). */
  | { readonly kind: 'invoke-error'; readonly reason: string };

/** Lambda's synchronous payload limit, for the event and for the response. */
export const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** How long Lambda lets an execution environment initialise. */
const INIT_TIMEOUT_MS = 10_000;

export type LogSink = (label: string, stream: 'stdout' | 'stderr', line: string) => void;

export interface PoolOptions {
  /** At most this many environments at once; further invocations wait for one. */
  readonly maxConcurrency?: number;
  readonly log?: LogSink;
}

interface Environment {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  busy: boolean;
  dead: boolean;
  current?: (message: WorkerMessage | { type: 'exit'; error?: Error }) => void;
}

const WORKER_URL = new URL('./lambda-worker.ts', import.meta.url);

/** Node runs the worker's TypeScript itself (type stripping); older runtimes need tsx's loader. */
const workerExecArgv = (): string[] => ((process.features as { typescript?: unknown }).typescript ? [] : ['--import', import.meta.resolve('tsx')]);

const pipeLines = (stream: Readable, label: string, kind: 'stdout' | 'stderr', log: LogSink): void => {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => log(label, kind, line));
};

export class FunctionPool {
  readonly #environments = new Set<Environment>();
  readonly #waiting: (() => void)[] = [];
  readonly #maxConcurrency: number;
  readonly #log: LogSink;
  #nextId = 1;
  #closed = false;
  #coldStarts = 0;

  constructor(
    readonly fn: PoolFunction,
    options: PoolOptions = {},
  ) {
    this.#maxConcurrency = options.maxConcurrency ?? 10;
    this.#log = options.log ?? (() => undefined);
  }

  /** How many environments exist now (busy or idle). */
  get size(): number {
    return this.#environments.size;
  }

  /** How many environments were started so far (cold starts). */
  get coldStarts(): number {
    return this.#coldStarts;
  }

  #start(): Environment {
    this.#coldStarts += 1;
    const config: WorkerConfig = {
      codeDir: this.fn.codeDir,
      handler: this.fn.handler,
      functionName: this.fn.name,
      functionArn: this.fn.arn,
      memoryMb: this.fn.memoryMb,
      logGroupName: `/aws/lambda/${this.fn.name}`,
      logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    };
    const worker = new Worker(WORKER_URL, {
      workerData: config,
      // Set by the runtime, as Lambda does (a function cannot override them there): the task
      // root is the function's code directory, which relative paths such as
      // NETCONFIG_CA_BUNDLE resolve against.
      env: { ...this.fn.environment, LAMBDA_TASK_ROOT: this.fn.codeDir, AWS_LAMBDA_LOG_STREAM_NAME: config.logStreamName },
      execArgv: workerExecArgv(),
      stdout: true,
      stderr: true,
      // The function's memory setting bounds its heap, so that a leak fails here as it would there.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(64, this.fn.memoryMb) },
    });
    pipeLines(worker.stdout, this.fn.label, 'stdout', this.#log);
    pipeLines(worker.stderr, this.fn.label, 'stderr', this.#log);
    let settleReady!: (error?: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      settleReady = (error) => (error ? reject(error) : resolve());
    });
    ready.catch(() => undefined);
    const env: Environment = { worker, ready, busy: false, dead: false };
    const initTimer = setTimeout(() => settleReady(Object.assign(new Error('Init timed out'), { name: 'Runtime.InitTimeout' })), INIT_TIMEOUT_MS);
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        clearTimeout(initTimer);
        settleReady();
      } else if (message.type === 'init-error') {
        clearTimeout(initTimer);
        settleReady(Object.assign(new Error(message.errorMessage), { name: message.errorType }));
      } else env.current?.(message);
    });
    const onExit = (error?: Error) => {
      clearTimeout(initTimer);
      env.dead = true;
      this.#environments.delete(env);
      settleReady(error ?? Object.assign(new Error('Runtime exited during init'), { name: 'Runtime.ExitError' }));
      env.current?.({ type: 'exit', ...(error ? { error } : {}) });
      this.#wake();
    };
    worker.on('error', (error) => onExit(error));
    worker.on('exit', () => onExit());
    this.#environments.add(env);
    return env;
  }

  #wake(): void {
    this.#waiting.shift()?.();
  }

  /** A free environment: a warm idle one, else a new one when under the concurrency limit, else wait. */
  async #acquire(signal: AbortSignal): Promise<Environment> {
    for (;;) {
      if (this.#closed) throw new Error('the local stack is stopping');
      signal.throwIfAborted();
      const idle = [...this.#environments].find((e) => !e.busy && !e.dead);
      if (idle) {
        idle.busy = true;
        return idle;
      }
      if (this.#environments.size < this.#maxConcurrency) {
        const env = this.#start();
        env.busy = true;
        return env;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.#waiting.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  #release(env: Environment): void {
    env.busy = false;
    env.current = undefined;
    this.#wake();
  }

  #kill(env: Environment): void {
    env.dead = true;
    this.#environments.delete(env);
    void env.worker.terminate();
    this.#wake();
  }

  /**
   * Invokes the function with an event (as JSON). `callerTimeoutMs` is the caller's own limit
   * (API Gateway's integration timeout), counted from now, waiting included. A streaming
   * function's bytes go to `onChunk` as it writes them; its `result` then has an empty payload.
   */
  async invoke(
    eventJson: string,
    options: { requestId?: string; traceId?: string; callerTimeoutMs: number; onChunk?: (data: Uint8Array) => void },
  ): Promise<InvokeOutcome> {
    const requestId = options.requestId ?? randomUUID();
    const abort = new AbortController();
    const callerTimer = setTimeout(() => abort.abort(), options.callerTimeoutMs);
    let env: Environment | undefined;
    try {
      try {
        env = await this.#acquire(abort.signal);
      } catch (error) {
        if (abort.signal.aborted) return { kind: 'caller-timeout' };
        throw error;
      }
      try {
        await Promise.race([
          env.ready,
          new Promise((_, reject) => abort.signal.addEventListener('abort', () => reject(new Error('caller-timeout')), { once: true })),
        ]);
      } catch (error) {
        // A failed init is an invocation error, and the environment is discarded (the next invocation re-initialises).
        this.#kill(env);
        if (abort.signal.aborted) return { kind: 'caller-timeout' };
        const e = error as Error;
        return { kind: 'function-error', errorType: e.name || 'Runtime.Unknown', errorMessage: e.message };
      }
      const deadline = Date.now() + this.fn.timeoutSeconds * 1000;
      const id = this.#nextId++;
      const running = env;
      const outcome = await new Promise<InvokeOutcome>((resolve) => {
        const finish = (o: InvokeOutcome, discard: boolean) => {
          running.current = undefined;
          clearTimeout(timer);
          abort.signal.removeEventListener('abort', onCallerTimeout);
          if (discard) this.#kill(running);
          resolve(o);
        };
        const timer = setTimeout(
          () =>
            finish(
              { kind: 'function-error', errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${this.fn.timeoutSeconds.toFixed(2)} seconds` },
              true,
            ),
          Math.max(0, deadline - Date.now()),
        );
        // API Gateway gave up: the function is stuck as far as anyone can tell; restart its environment.
        const onCallerTimeout = () => finish({ kind: 'caller-timeout' }, true);
        abort.signal.addEventListener('abort', onCallerTimeout, { once: true });
        running.current = (message) => {
          if (message.type === 'exit') {
            const reason = message.error;
            finish(
              reason && /ERR_WORKER_OUT_OF_MEMORY/.test(String((reason as { code?: string }).code))
                ? { kind: 'function-error', errorType: 'Runtime.OutOfMemory', errorMessage: 'Runtime exited: out of memory' }
                : { kind: 'function-error', errorType: 'Runtime.ExitError', errorMessage: `Runtime exited${reason ? ` with error: ${reason.message}` : ''}` },
              false,
            );
          } else if (message.type === 'chunk' && message.id === id) {
            options.onChunk?.(message.data);
          } else if (message.type === 'result' && message.id === id) {
            if (Buffer.byteLength(message.payload) > MAX_PAYLOAD_BYTES) finish({ kind: 'invoke-error', reason: 'response payload larger than 6 MB' }, false);
            else finish({ kind: 'result', payload: message.payload }, false);
          } else if (message.type === 'error' && message.id === id) {
            finish({ kind: 'function-error', errorType: message.errorType, errorMessage: message.errorMessage }, false);
          }
        };
        const invoke: InvokeMessage = {
          type: 'invoke',
          id,
          event: eventJson,
          requestId,
          traceId: options.traceId ?? `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)};Sampled=0`,
          deadline,
        };
        running.worker.postMessage(invoke);
      });
      if (!running.dead) this.#release(running);
      return outcome;
    } finally {
      clearTimeout(callerTimer);
    }
  }

  /**
   * V8 heap statistics of each live environment (its worker's isolate), for tests that watch
   * the functions' memory under load. With `collectGarbage`, each isolate first takes (and
   * discards) a heap snapshot, before which V8 runs a full collection: the statistics then
   * count live objects only. That pauses the environment; call it when the pool is idle.
   * `limit` samples only the oldest environments: the pool hands work to the oldest idle one,
   * so they have served the most invocations.
   */
  async heapStatistics(options: { readonly collectGarbage?: boolean; readonly limit?: number } = {}): Promise<HeapInfo[]> {
    const stats: HeapInfo[] = [];
    // One at a time: a snapshot is several times the heap, and there may be dozens of environments.
    for (const e of [...this.#environments].filter((env) => !env.dead).slice(0, options.limit ?? Infinity)) {
      try {
        if (options.collectGarbage) for await (const chunk of await e.worker.getHeapSnapshot()) void chunk;
        stats.push(await e.worker.getHeapStatistics());
      } catch {
        // The environment went away meanwhile.
      }
    }
    return stats;
  }

  /** Stops every environment. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const wake of this.#waiting.splice(0)) wake();
    await Promise.all([...this.#environments].map((e) => e.worker.terminate()));
    this.#environments.clear();
  }
}
