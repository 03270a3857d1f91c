/**
 * Measurement 6: the local API Gateway (`npm start`'s `startLocalStack`, serving the assembly
 * the benchmark synthesized) under load. autocannon runs in its own process (so that it does
 * not share an event loop with the gateway), 50 connections against the tree summary with a
 * valid bearer token: first a short warm-up that starts the function environments, then the
 * measured run. Every non-2xx answer, error and time-out counts as an error.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../infra/paths.js';
import { startLocalStack, type LocalStack } from '../tools/local/start.js';

export interface GatewayRun {
  readonly connections: number;
  readonly durationSeconds: number;
  readonly requests: number;
  readonly rps: number;
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
}

interface AutocannonJson {
  readonly requests: { readonly average: number; readonly total: number };
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly duration: number;
}

const autocannonCli = (): string => createRequire(path.join(PROJECT_ROOT, 'package.json')).resolve('autocannon/autocannon.js');

/** One autocannon run in a child process, its JSON result. */
const autocannon = (node: string, url: string, headers: Record<string, string>, connections: number, seconds: number): Promise<AutocannonJson> =>
  new Promise((resolve, reject) => {
    const args = [
      autocannonCli(),
      '--json',
      '-c',
      String(connections),
      '-d',
      String(seconds),
      ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]),
      url,
    ];
    const proc = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-2000)));
    proc.on('error', reject);
    proc.on('close', (code) => {
      try {
        resolve(JSON.parse(out) as AutocannonJson);
      } catch {
        reject(new Error(`autocannon failed (exit ${code}): ${err}`));
      }
    });
  });

/**
 * Runs `use` against the local stack (`npm start`'s `startLocalStack`) serving an assembly, in a
 * data directory of its own without the NSO simulator, then stops it and removes the data.
 * `logTail` gives the last 50 function and gateway lines, for an error message only (a load
 * makes many).
 */
export const withLocalStack = async <T>(
  o: { readonly cdkOut: string; readonly sampleData: boolean },
  use: (stack: LocalStack, logTail: () => string) => Promise<T>,
): Promise<T> => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'netconfig-bench-local-'));
  const lines: string[] = [];
  const stack = await startLocalStack({
    cdkOut: o.cdkOut,
    dataDir,
    port: 0,
    simulator: false,
    sampleData: o.sampleData,
    log: (label, _stream, line) => {
      lines.push(`[${label}] ${line}`);
      if (lines.length > 50) lines.shift();
    },
  });
  try {
    return await use(stack, () => lines.join('\n'));
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

/** Starts the local stack on the given assembly, loads it, stops it. */
export const measureGateway = (o: {
  node: string;
  cdkOut: string;
  treeId: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  log: (line: string) => void;
}): Promise<GatewayRun> =>
  withLocalStack({ cdkOut: o.cdkOut, sampleData: true }, async (stack, logTail) => {
    const url = `${stack.baseUrl}/configuration_manager/configs/${o.treeId}`;
    const headers = { Authorization: `Bearer ${stack.token(['apiread'])}` };
    const probe = await fetch(url, { headers });
    if (probe.status !== 200) throw new Error(`the local gateway answered ${probe.status}: ${await probe.text()}\n${logTail()}`);
    o.log(`local gateway on ${stack.baseUrl}: warming up for ${o.warmupSeconds} s, then ${o.connections} connections for ${o.seconds} s…`);
    await autocannon(o.node, url, headers, o.connections, o.warmupSeconds);
    const run = await autocannon(o.node, url, headers, o.connections, o.seconds);
    return {
      connections: o.connections,
      durationSeconds: run.duration,
      requests: run.requests.total,
      rps: run.requests.average,
      latency: { p50: run.latency.p50, p90: run.latency.p90, p99: run.latency.p99, max: run.latency.max },
      errors: run.errors,
      timeouts: run.timeouts,
      non2xx: run.non2xx,
    };
  });
