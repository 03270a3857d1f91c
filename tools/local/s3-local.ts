/**
 * A real S3-compatible server on loopback for local mode and the tests: s3rver (the
 * `@20minutes/s3rver` package, in process), its objects in a directory of its own. It answers
 * the S3 REST API the archive uses (PutObject, GetObject, CreateBucket) over HTTP with SigV4, so
 * the functions run the same SDK calls as in AWS; what it does not implement (bucket lifecycle)
 * it answers `NotImplemented` (docs/local-mode.md).
 */
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './dynamodb-local.js';

const require = createRequire(import.meta.url);

interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverServer;
interface Accounts {
  readonly DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}

export interface S3Local {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Where the objects are kept. */
  readonly directory: string;
  stop(): Promise<void>;
}

export interface S3LocalOptions {
  /** Keeps the objects there (local mode); default: a new temporary directory. */
  readonly directory?: string;
  /** Buckets that exist from the start. */
  readonly buckets?: readonly string[];
  /** The credentials the clients sign with: the server checks SigV4 signatures against them. */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly port?: number;
}

/** Starts the server on a free loopback port (or `port`) and creates `buckets`. */
export const startS3Local = async (options: S3LocalOptions): Promise<S3Local> => {
  const S3rver = require('@20minutes/s3rver') as S3rverClass;
  const accounts = require('@20minutes/s3rver/lib/models/account') as Accounts;
  // The server knows one account; the clients' own key pair is added to it, so their signatures verify.
  accounts.DUMMY_ACCOUNT.createKeyPair(options.credentials.accessKeyId, options.credentials.secretAccessKey);
  const directory = options.directory ?? (await mkdtemp(path.join(tmpdir(), 's3-local-')));
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? (await freePort()),
    directory,
    silent: true,
    // Buckets in the path (the clients set forcePathStyle): no DNS names for buckets on loopback.
    vhostBuckets: false,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
  });
  const { port } = await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, directory, stop: () => server.close() };
};
