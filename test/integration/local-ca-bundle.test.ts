/**
 * A private CA in local mode: a function bundled with its CA file, in a local execution
 * environment (a worker thread of the function pool, as `npm start` runs every function),
 * finds the file by the path relative to its code directory that NETCONFIG_CA_BUNDLE gives,
 * as on Lambda (`/var/task`), and reaches an orchestrator whose certificate that CA signed.
 */
import { build } from 'esbuild';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionPool, type PoolFunction } from '../../tools/local/lambda-pool.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { createTestCa } from '../support/relay-tls.js';

const ca = createTestCa('local mode private CA');
let nso: NsoSimulator;
let codeDir: string;
const pools: FunctionPool[] = [];

/** A handler that GETs the orchestrator's RESTCONF root through the shared client. */
const HANDLER = `
import { createHttpClient, OutboundError } from ${JSON.stringify(path.join(PROJECT_ROOT, 'functions/outbound/http-client.ts'))};
const client = createHttpClient({ allowLoopback: true });
export const handler = async (event) => {
  try {
    const answer = await client.send({
      target: { origin: new URL(event.url), path: '/restconf/data/tailf-ncs:devices/device=ce0/name' },
      method: 'GET',
      headers: { Authorization: 'Basic ' + Buffer.from('admin:admin').toString('base64') },
      timeoutMs: 5000,
      maxBodyBytes: 65536,
    });
    return { status: answer.status, trusted: client.trustedCertificates()?.length ?? 0 };
  } catch (error) {
    if (error instanceof OutboundError) return { failure: error.failure };
    throw error;
  }
};
`;

const pool = (bundle: string): FunctionPool => {
  const fn: PoolFunction = {
    name: 'netconfig-ca-probe',
    label: 'ca-probe',
    arn: 'arn:aws:lambda:eu-west-1:123456789012:function:netconfig-ca-probe',
    codeDir,
    handler: 'index.handler',
    memoryMb: 256,
    timeoutSeconds: 10,
    // No LAMBDA_TASK_ROOT here: the execution environment sets it, as Lambda's runtime does.
    environment: { NETCONFIG_CA_BUNDLE: bundle, LOG_LEVEL: 'warn' },
  };
  const created = new FunctionPool(fn);
  pools.push(created);
  return created;
};

const call = (functions: FunctionPool) => functions.invoke(JSON.stringify({ url: nso.url }), { callerTimeoutMs: 20_000 });

beforeAll(async () => {
  nso = await startNsoSimulator({ tls: ca.issue() });
  codeDir = await mkdtemp(path.join(tmpdir(), 'ca-bundle-fn-'));
  const entry = path.join(codeDir, 'entry.mjs');
  await writeFile(entry, HANDLER);
  await build({
    entryPoints: [entry],
    outfile: path.join(codeDir, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    logLevel: 'silent',
  });
  await mkdir(path.join(codeDir, 'certs'));
  await writeFile(path.join(codeDir, 'certs', 'private-ca.pem'), ca.cert);
  await writeFile(path.join(codeDir, 'certs', 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await nso?.close();
  if (codeDir) await rm(codeDir, { recursive: true, force: true });
});

describe('NETCONFIG_CA_BUNDLE in a local execution environment', () => {
  it('resolves a relative path against the code directory and trusts that CA', async () => {
    const outcome = await call(pool('certs/private-ca.pem'));
    expect(outcome).toMatchObject({ kind: 'result' });
    const result = JSON.parse((outcome as { payload: string }).payload) as { status: number; trusted: number };
    expect(result.status).toBe(200);
    expect(result.trusted).toBeGreaterThan(100);
    expect(nso.requests.at(-1)).toMatchObject({ method: 'GET', user: 'admin' });
  });

  it('fails the init, naming the variable and the file, when the bundle is broken', async () => {
    const outcome = await call(pool('certs/broken.pem'));
    expect(outcome).toEqual({
      kind: 'function-error',
      errorType: 'Error',
      errorMessage: `configuration error: NETCONFIG_CA_BUNDLE names ${path.join(codeDir, 'certs', 'broken.pem')}, which holds a certificate that does not parse (PEM block 1)`,
    });
  });
});
