/**
 * What the benchmarks of durable engines share (`bench/compliance.ts`, `bench/remediation.ts`):
 * the local backend they run against (DynamoDB Local, the NSO simulator's synthetic fleet
 * registered as an adapter, the embedded secrets store), the resources a run used (CPU of this
 * process and of DynamoDB Local's JVM, RSS high-water mark), a run's summary, the median of the
 * rounds' ratios, and running the script as a bundle on the pinned Node.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TableKey } from '../functions/platform/route.js';
import type { DynamoDbLocal } from '../tools/local/dynamodb-local.js';
import { startDynamoDbLocal } from '../tools/local/dynamodb-local.js';
import type { NsoSimulator } from '../tools/simulators/nso-simulator.js';
import { startNsoSimulator } from '../tools/simulators/nso-simulator.js';
import { percentile } from './stats.js';

/** One measured run of a variant (the floor, the engine, …) at one concurrency. */
export interface DurableRun {
  readonly variant: string;
  readonly concurrency: number;
  readonly devices: number;
  readonly seconds: number;
  readonly devicesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly rssHighWaterMiB: number;
  /** 1-based: each round measures the variants back to back, so they ran under the same load. */
  readonly round: number;
  /** CPU seconds of this process (all its threads) during the run. */
  readonly cpuSeconds: number;
  /** CPU seconds of DynamoDB Local's JVM during the run (Linux; absent elsewhere). */
  readonly dynamoCpuSeconds?: number;
}

const highWater = () => {
  let max = process.memoryUsage.rss();
  const timer = setInterval(() => (max = Math.max(max, process.memoryUsage.rss())), 50);
  return () => {
    clearInterval(timer);
    return Math.round(Math.max(max, process.memoryUsage.rss()) / 1048576);
  };
};

/** CPU seconds used so far by `pid` and its descendants (from /proc), or undefined off Linux. */
const treeCpuSeconds = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime (fields 14 and 15 of stat, counted after the command), in clock ticks of 1/100 s.
    const own = (Number(fields[11]) + Number(fields[12])) / 100;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return children.reduce((sum, child) => sum + (treeCpuSeconds(child) ?? 0), own);
  } catch {
    return undefined;
  }
};

/** CPU seconds `pid` used from now until the returned function is called, or undefined off Linux. */
const cpuWindow = (pid: number | undefined): (() => number | undefined) => {
  const before = treeCpuSeconds(pid);
  return () => {
    const after = treeCpuSeconds(pid);
    return before === undefined || after === undefined ? undefined : Math.round((after - before) * 100) / 100;
  };
};

/** What {@link resources} measures. */
export interface Used {
  readonly rssHighWaterMiB: number;
  readonly cpuSeconds: number;
  readonly dynamoCpuSeconds?: number;
  readonly s3CpuSeconds?: number;
}

/** Starts measuring a run's resources (and those of the DynamoDB Local and S3 processes given); the returned function ends it. */
export const resources = (dynamoPid: number | undefined, s3Pid?: number): (() => Used) => {
  const rss = highWater();
  const cpu = process.cpuUsage();
  const dynamo = cpuWindow(dynamoPid);
  const s3 = cpuWindow(s3Pid);
  return () => {
    const used = process.cpuUsage(cpu);
    const [dynamoCpuSeconds, s3CpuSeconds] = [dynamo(), s3()];
    return {
      rssHighWaterMiB: rss(),
      cpuSeconds: Math.round((used.user + used.system) / 1e4) / 100,
      ...(dynamoCpuSeconds !== undefined ? { dynamoCpuSeconds } : {}),
      ...(s3CpuSeconds !== undefined ? { s3CpuSeconds } : {}),
    };
  };
};

/** A run's figures from its wall time and per-device times (rounded as reported). */
export const summarizeRun = <U extends object>(
  variant: string,
  concurrency: number,
  devices: number,
  seconds: number,
  times: readonly number[],
  round: number,
  used: U,
): DurableRun & U => ({
  variant,
  concurrency,
  devices,
  seconds: Math.round(seconds * 100) / 100,
  devicesPerSecond: Math.round(devices / seconds),
  p50Ms: Math.round(percentile(times, 50) * 10) / 10,
  p99Ms: Math.round(percentile(times, 99) * 10) / 10,
  round,
  ...(used as U & Pick<DurableRun, 'rssHighWaterMiB' | 'cpuSeconds'>),
});

/** At each concurrency, the median over rounds of `variant`'s wall time over `base`'s in the same round. */
export const medianRatios = (
  runs: readonly Pick<DurableRun, 'variant' | 'concurrency' | 'round' | 'seconds'>[],
  variant: string,
  base: string,
): { concurrency: number; ratio: number }[] =>
  [...new Set(runs.map((r) => r.concurrency))].flatMap((concurrency) => {
    const ratios = runs
      .filter((r) => r.concurrency === concurrency && r.variant === variant)
      .flatMap((run) => {
        const pair = runs.find((r) => r.concurrency === concurrency && r.variant === base && (r.round ?? 1) === (run.round ?? 1));
        return pair ? [run.seconds / pair.seconds] : [];
      });
    return ratios.length ? [{ concurrency, ratio: Math.round(percentile(ratios, 50) * 100) / 100 }] : [];
  });

/** The local backend a durable benchmark runs against. */
export interface DurableBackend {
  readonly dynamo: DynamoDbLocal;
  readonly sim: NsoSimulator;
  /** Physical table names by table key (the functions' environment points at them). */
  readonly tables: Readonly<Record<TableKey, string>>;
  /** Registers an adapter named `name` on the simulator, its password in the secrets store. */
  addAdapter(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local with a copy of every table, the NSO simulator with a fleet of `devices`
 * and the embedded secrets store, and sets the environment the functions read (imported after
 * this, as a Lambda container reads it at init).
 */
export const startDurableBackend = async (devices: number): Promise<DurableBackend> => {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-durable-'));
  const dynamo = await startDynamoDbLocal();
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = dynamo.endpoint;
  process.env['AWS_REGION'] ??= 'eu-west-1';
  process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';
  process.env['METRICS_DISABLED'] = 'true';
  process.env['LOG_LEVEL'] = 'warn';
  const sim = await startNsoSimulator({ credentials: { username: 'admin', password: 'bench-Pa55' }, fleet: { devices } });
  const { createTables } = await import('../tools/local/table-copies.js');
  const tables = await createTables();
  const secretsFile = path.join(dir, 'secrets.json');
  const { createLocalBackend } = await import('../functions/outbound/secrets/local.js');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/bench', { password: 'bench-Pa55' });
  process.env['SECRETS_BACKEND'] = 'local';
  process.env['SECRETS_FILE'] = secretsFile;
  process.env['LOCAL_MODE'] = 'true';
  const { createAdapterStore } = await import('../functions/adapters/store.js');
  const { documentClient } = await import('../functions/platform/dynamo.js');
  const adapterStore = createAdapterStore(documentClient, tables['adapters']);
  return {
    dynamo,
    sim,
    tables,
    addAdapter: async (name) => {
      await adapterStore.put(
        { name, type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/bench#password' } },
        new Date().toISOString(),
      );
      return name;
    },
    stop: async () => {
      await sim.close();
      await dynamo.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/**
 * Run through tsx: measures the bundle instead (`buildBenchScript`), on the project's Node 22
 * with `--expose-gc` and the same arguments, and exits with its status.
 */
export const runBundled = async (name: 'compliance' | 'remediation'): Promise<never> => {
  const { buildBenchScript } = await import('./build.js');
  const { PINNED_NODE, PROJECT_ROOT } = await import('../infra/paths.js');
  mkdirSync(path.join(PROJECT_ROOT, '.local'), { recursive: true });
  const dir = mkdtempSync(path.join(PROJECT_ROOT, '.local', `bench-${name}-`));
  try {
    const child = spawnSync(PINNED_NODE, ['--expose-gc', await buildBenchScript(dir, name), ...process.argv.slice(2)], { stdio: 'inherit' });
    if (child.error) console.error(`bench: the ${name} benchmark could not run: ${child.error.message}`);
    process.exitCode = child.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit();
};
