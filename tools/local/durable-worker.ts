/**
 * The execution environment of a durable function in local mode: a worker thread with the
 * function's environment that imports its bundle once and runs each execution it is sent
 * with the official local runner (`LocalDurableTestRunner` of
 * `@aws/durable-execution-sdk-js-testing`): checkpoints, replays and waits as Lambda's durable
 * execution service would, in this process.
 *
 * This file runs as a worker entry point under Node's own type stripping: it may import only
 * Node built-ins (and types); the runner and the bundle are imported by path.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

export interface DurableWorkerConfig {
  readonly codeDir: string;
  /** `index.handler`. */
  readonly handler: string;
  /** File URL of the testing package's entry point. */
  readonly testingUrl: string;
}

export type DurableWorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'init-error'; readonly message: string }
  | { readonly type: 'done'; readonly id: number; readonly status: string; readonly error?: string };

interface Runner {
  run(params: { payload: unknown }): Promise<{ getStatus(): string; getError(): unknown }>;
}
interface Testing {
  LocalDurableTestRunner: {
    new (o: { handlerFunction: unknown }): Runner;
    setupTestEnvironment(o: { skipTime: boolean }): Promise<void>;
  };
}

const config = workerData as DurableWorkerConfig;

/** The runner class and the handler; each execution gets a runner of its own. */
const load = async (): Promise<() => Runner> => {
  // The package reads LOG_LEVEL when it loads and takes upper-case names only.
  const level = process.env['LOG_LEVEL'];
  process.env['LOG_LEVEL'] = (level ?? 'error').toUpperCase();
  const testing = (await import(config.testingUrl)) as Testing;
  if (level === undefined) delete process.env['LOG_LEVEL'];
  else process.env['LOG_LEVEL'] = level;
  await testing.LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
  const dot = config.handler.lastIndexOf('.');
  const file = ['.js', '.mjs', '.cjs'].map((ext) => path.join(config.codeDir, config.handler.slice(0, dot) + ext)).find((f) => existsSync(f));
  if (!file) throw new Error(`Cannot find the module of ${config.handler} in ${config.codeDir}`);
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const handlerFunction = mod[config.handler.slice(dot + 1)];
  if (typeof handlerFunction !== 'function') throw new Error(`${config.handler} is not exported`);
  return () => new testing.LocalDurableTestRunner({ handlerFunction });
};

const port = parentPort;
if (port) {
  const runner = load();
  runner.then(
    () => port.postMessage({ type: 'ready' } satisfies DurableWorkerMessage),
    (error: unknown) =>
      port.postMessage({ type: 'init-error', message: error instanceof Error ? error.message : String(error) } satisfies DurableWorkerMessage),
  );
  port.on('message', (message: { type: 'run'; id: number; payload: string }) => {
    if (message.type !== 'run') return;
    void (async () => {
      try {
        const execution = await (await runner)().run({ payload: JSON.parse(message.payload) as unknown });
        const status = execution.getStatus();
        port.postMessage({
          type: 'done',
          id: message.id,
          status,
          ...(status === 'SUCCEEDED' ? {} : { error: JSON.stringify(execution.getError()) }),
        } satisfies DurableWorkerMessage);
      } catch (error) {
        port.postMessage({
          type: 'done',
          id: message.id,
          status: 'FAILED',
          error: error instanceof Error ? error.message : String(error),
        } satisfies DurableWorkerMessage);
      }
    })();
  });
}
