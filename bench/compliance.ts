/**
 * Compliance section of `npm run bench` (also `npx tsx bench/compliance.ts [devices]`): a batch
 * over the NSO simulator's synthetic fleet (default 10,000 devices), run by the production
 * durable handler under the official local runner with reports in DynamoDB Local, at adapter
 * concurrency 10 and 50, against a floor that fetches the same devices through the same relay
 * path and evaluates them with a plain concurrency-limited loop (no durable engine, no
 * DynamoDB writes). Reports devices per second, p50/p99 per-device time, the process's memory
 * high-water mark, the CPU seconds of this process and of DynamoDB Local's JVM, and the ratio of
 * the engine's wall time to the floor's (target ≤ 1.25 at 50).
 *
 * `npx tsx bench/compliance.ts [devices] [concurrencies] [rounds]` (default `10000 10,50 12`):
 * each round measures floor and engine back to back, taking turns at going first, after an
 * unrecorded warm-up round, and the ratio is the median of the rounds' ratios (on a shared
 * machine the speed moves between runs; a pair measured back to back shares it).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BatchEvent, EngineDeps } from '../functions/compliance/engine.js';
import type { StartDeps } from '../functions/compliance/service.js';
import type { Version } from '../functions/trees/config-model.js';
import { loadDurableTesting } from '../tools/local/durable.js';
import { startDynamoDbLocal } from '../tools/local/dynamodb-local.js';
import { FLEET_RULES, FLEET_VARIABLES, fleetNames } from '../tools/simulators/nso-fleet.js';
import { startNsoSimulator } from '../tools/simulators/nso-simulator.js';
import { percentile } from './stats.js';

export interface ComplianceRun {
  readonly variant: string;
  readonly concurrency: number;
  readonly devices: number;
  readonly seconds: number;
  readonly devicesPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly rssHighWaterMiB: number;
  /** 1-based: each round measures floor and engine back to back, so the pair ran under the same load. */
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

/** Starts measuring a run's resources; the returned function ends it. */
const resources = (dynamoPid: number | undefined) => {
  const rss = highWater();
  const cpu = process.cpuUsage();
  const dynamo = treeCpuSeconds(dynamoPid);
  return () => {
    const used = process.cpuUsage(cpu);
    const dynamoNow = treeCpuSeconds(dynamoPid);
    return {
      rssHighWaterMiB: rss(),
      cpuSeconds: Math.round((used.user + used.system) / 1e4) / 100,
      ...(dynamo !== undefined && dynamoNow !== undefined ? { dynamoCpuSeconds: Math.round((dynamoNow - dynamo) * 100) / 100 } : {}),
    };
  };
};

export const measureCompliance = async (
  devices = 10_000,
  concurrencies = [10, 50],
  log: (line: string) => void = console.log,
  rounds = 1,
): Promise<ComplianceRun[]> => {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-compliance-'));
  const dynamo = await startDynamoDbLocal();
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = dynamo.endpoint;
  process.env['AWS_REGION'] ??= 'eu-west-1';
  process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';
  process.env['METRICS_DISABLED'] = 'true';
  process.env['LOG_LEVEL'] = 'warn';
  // The configuration history's bucket, on the local S3 server (the batch function keeps every configuration).
  const { startS3Local } = await import('../tools/local/s3-local.js');
  const s3 = await startS3Local({ buckets: ['bench-configs'], credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  process.env['AWS_ENDPOINT_URL_S3'] = s3.endpoint;
  process.env['S3_FORCE_PATH_STYLE'] = 'true';
  process.env['CONFIGS_BUCKET'] = 'bench-configs';
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
  await createAdapterStore(documentClient, tables['adapters']).put(
    { name: 'bench-nso', type: 'nso', baseUrl: sim.url, auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/bench#password' } },
    new Date().toISOString(),
  );
  const { engineDeps } = await import('../functions/compliance/handlers/batch.js');
  const { runBatch } = await import('../functions/compliance/engine.js');
  const { startBatch } = await import('../functions/compliance/service.js');
  const { ComplianceStore } = await import('../functions/compliance/store.js');
  const { withDurableExecution } = await import('@aws/durable-execution-sdk-js');
  const { LocalDurableTestRunner } = await loadDurableTesting();
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
  const store = new ComplianceStore(documentClient, tables['compliance']);
  const names = fleetNames({ devices });
  const version: Version = {
    name: 'bench',
    variables: FLEET_VARIABLES,
    created: '',
    createdBy: '',
    lastUpdated: '',
    lastUpdatedBy: '',
    root: { name: 'base', devices: names, rules: FLEET_RULES.map((r) => ({ ...r })) as Version['root']['rules'], children: [] },
  };
  const runs: ComplianceRun[] = [];
  // Each run starts with the simulator's request log empty (it keeps every request, which
  // would otherwise pile up in the heap round after round) and from a fully collected heap
  // (the bundle runs with `--expose-gc`), so that no run pays for the garbage the one before left.
  const startRun = () => {
    sim.requests.length = 0;
    (globalThis as { gc?: () => void }).gc?.();
    return resources(dynamo.process.pid);
  };
  // Round 0 of each concurrency warms both up (code optimized, sockets open) and is not recorded.
  const record = (run: ComplianceRun) => {
    if (run.round === 0) return;
    runs.push(run);
    log(JSON.stringify(run));
  };
  // Floor: the same fetches and evaluations, a plain pool of `concurrency` workers.
  const floor = async (concurrency: number, round: number): Promise<void> => {
    const relayGet = engineDeps.relayGet(() => 15 * 60_000);
    const rules = FLEET_RULES.map((r) => ({ ...r, node: 'base' })) as unknown as Parameters<EngineDeps['evaluate']>[2];
    const times: number[] = [];
    const stop = startRun();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < names.length) {
          const device = names[next++]!;
          const t = performance.now();
          const [answer] = await relayGet('bench-nso', `/restconf/data/tailf-ncs:devices/device=${encodeURIComponent(device)}/config`);
          engineDeps.evaluate((answer!.data as Record<string, unknown>)['tailf-ncs:config'], FLEET_VARIABLES, rules);
          times.push(performance.now() - t);
        }
      }),
    );
    record(summarizeRun('floor', concurrency, devices, (performance.now() - started) / 1000, times, round, stop()));
  };
  // Engine: the production handler under the local runner, reports in DynamoDB Local.
  const engine = async (concurrency: number, round: number): Promise<void> => {
    const times: number[] = [];
    const deps: EngineDeps = { ...engineDeps, onDeviceChecked: (_report, ms) => times.push(ms) };
    const startDeps: StartDeps = {
      versions: async () => ({ tree: true, version }),
      adapters: { get: async (name) => ({ name }) },
      store,
      startExecution: async () => undefined,
      now: () => new Date(),
      retentionDays: 1,
      concurrency,
    };
    const stop = startRun();
    const started = performance.now();
    // Sync `none`: the engine's own cost over the floor of configuration fetches, as measured before sync modes.
    const { batchId } = await startBatch({ treeId: 'b'.repeat(24), version: 'bench', adapterId: 'bench-nso', sync: 'none' }, startDeps);
    // The clock stops when the handler returns: the batch is complete then (its finish step
    // has stored status and totals). The local runner's `run()` resolves a fixed 100 ms
    // later, a pause of the runner's own before it stops polling, which Lambda does not have.
    let finished = 0;
    let used: ReturnType<typeof stop> | undefined;
    const runner = new LocalDurableTestRunner({
      handlerFunction: withDurableExecution(async (event: BatchEvent, context) => {
        const outcome = await runBatch(event, context, deps);
        finished = performance.now();
        used = stop();
        return outcome;
      }),
    });
    const execution = await runner.run({ payload: { batchId } });
    if (execution.getStatus() !== 'SUCCEEDED' || !used) throw new Error(`batch ${batchId} ended ${execution.getStatus()}`);
    record(summarizeRun('durable engine', concurrency, devices, (finished - started) / 1000, times, round, used));
  };
  try {
    // Floor and engine take turns going first (floor, engine; engine, floor; …), so that neither
    // always runs in the state the other leaves behind.
    for (const concurrency of concurrencies)
      for (let round = 0; round <= rounds; round++) {
        for (const run of round % 2 ? [floor, engine] : [engine, floor]) await run(concurrency, round);
      }
  } finally {
    await LocalDurableTestRunner.teardownTestEnvironment();
    await sim.close();
    await dynamo.stop();
    await s3.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return runs;
};

const summarizeRun = (
  variant: string,
  concurrency: number,
  devices: number,
  seconds: number,
  times: number[],
  round: number,
  used: Pick<ComplianceRun, 'rssHighWaterMiB' | 'cpuSeconds' | 'dynamoCpuSeconds'>,
): ComplianceRun => ({
  variant,
  concurrency,
  devices,
  seconds: Math.round(seconds * 100) / 100,
  devicesPerSecond: Math.round(devices / seconds),
  p50Ms: Math.round(percentile(times, 50) * 10) / 10,
  p99Ms: Math.round(percentile(times, 99) * 10) / 10,
  round,
  ...used,
});

/** The engine's wall time over the floor's at each concurrency: the median over rounds of each round's ratio. */
export const complianceRatios = (runs: readonly ComplianceRun[]): { concurrency: number; ratio: number }[] =>
  [...new Set(runs.map((r) => r.concurrency))].map((concurrency) => {
    const ratios = runs
      .filter((r) => r.concurrency === concurrency && r.variant !== 'floor')
      .map(
        (engine) =>
          engine.seconds / runs.find((r) => r.concurrency === concurrency && r.variant === 'floor' && (r.round ?? 1) === (engine.round ?? 1))!.seconds,
      );
    return { concurrency, ratio: Math.round(percentile(ratios, 50) * 100) / 100 };
  });

/** The last line a run prints: what `bench/run.ts` reads back. */
export const RESULT_PREFIX = 'COMPLIANCE_RESULT ';

/** Defined (true) in the bundle `buildComplianceScript` makes; undeclared when run through tsx. */
declare const COMPLIANCE_BENCH_BUNDLED: boolean | undefined;

const isMain = Boolean(process.argv[1]) && import.meta.url === pathToFileURL(process.argv[1]!).href;

if (isMain && typeof COMPLIANCE_BENCH_BUNDLED === 'undefined') {
  // Run through tsx: measure the bundle instead, on the project's Node 22, with the same arguments.
  const { buildComplianceScript } = await import('./build.js');
  const { PINNED_NODE, PROJECT_ROOT } = await import('../infra/paths.js');
  mkdirSync(path.join(PROJECT_ROOT, '.local'), { recursive: true });
  const dir = mkdtempSync(path.join(PROJECT_ROOT, '.local', 'bench-compliance-'));
  try {
    const child = spawnSync(PINNED_NODE, ['--expose-gc', await buildComplianceScript(dir), ...process.argv.slice(2)], { stdio: 'inherit' });
    if (child.error) console.error(`bench: the compliance benchmark could not run: ${child.error.message}`);
    process.exitCode = child.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit();
}

if (isMain && typeof COMPLIANCE_BENCH_BUNDLED !== 'undefined') {
  // [devices] [concurrencies, comma-separated] [rounds]
  const devices = Number(process.argv[2] ?? 10_000);
  const concurrencies = process.argv[3] ? process.argv[3].split(',').map(Number) : [10, 50];
  const rounds = Number(process.argv[4] ?? 12);
  const runs = await measureCompliance(devices, concurrencies, (line) => console.error(line), rounds);
  for (const { concurrency, ratio } of complianceRatios(runs)) console.error(`concurrency ${concurrency}: engine/floor wall-time ratio ${ratio}`);
  console.log(`${RESULT_PREFIX}${JSON.stringify(runs)}`);
  process.exit(0);
}
