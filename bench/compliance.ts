/**
 * Compliance section of `npm run bench` (also `npx tsx bench/compliance.ts [devices]`): a batch
 * over the NSO simulator's synthetic fleet (default 10,000 devices), run by the production
 * durable handler under the official local runner with reports in DynamoDB Local, at adapter
 * concurrency 10 and 50, against a floor that fetches the same devices through the same relay
 * path and evaluates them with a plain concurrency-limited loop (no durable engine, no
 * DynamoDB writes). Reports devices per second, p50/p99 per-device time, the process's memory
 * high-water mark, the CPU seconds of this process and of DynamoDB Local's JVM, and the ratio of
 * the engine's wall time to the floor's (target ≤ 1.25 at 50). Both grade the fleet against the
 * same tree, {@link BENCH_RULES}: the fleet's rules and a rule of every form of the rule language
 * (`*` paths with `match` `all`, `any` and `none`, `pattern`, `oneOf`, `cidr` with a variable,
 * `range`, `strict`, `allowEmpty`), so the ratio holds with every form in use.
 *
 * Each round at concurrency 50 also runs the same batch as a production batch runs by default: `sync: check` (NSO's
 * grouped `check-sync` before grading) with every configuration kept by the real archive (gzip to
 * the local S3 server, run in a process of its own as S3 is elsewhere, and the index in DynamoDB
 * Local), against the engine's run above (`sync: none`, no archive): target ≤ 1.2 at 50. Each such
 * run is a first take (a fresh adapter name, so every configuration is uploaded); after the rounds
 * one more run over the last adapter's unchanged configurations must upload nothing (counted by
 * the archive's `uploads`).
 *
 * `npx tsx bench/compliance.ts [devices] [concurrencies] [rounds]` (default `10000 10,50 12`):
 * each round measures floor and engine back to back, taking turns at going first, after an
 * unrecorded warm-up round, and the ratio is the median of the rounds' ratios (on a shared
 * machine the speed moves between runs; a pair measured back to back shares it).
 */
import { pathToFileURL } from 'node:url';
import type { BatchEvent, EngineDeps } from '../functions/compliance/engine.js';
import type { StartDeps } from '../functions/compliance/service.js';
import type { Version } from '../functions/trees/config-model.js';
import { loadDurableTesting } from '../tools/local/durable.js';
import { FLEET_LANGUAGE_RULES, FLEET_RULES, FLEET_VARIABLES, fleetNames } from '../tools/simulators/nso-fleet.js';
import { medianRatios, resources, runBundled, startDurableBackend, summarizeRun, type DurableRun } from './durable.js';

export interface ComplianceRun extends DurableRun {
  /** CPU seconds of the local S3 server's process during the run (Linux; absent elsewhere). */
  readonly s3CpuSeconds?: number;
  /** Runs with the archive: configurations it uploaded, and found unchanged. */
  readonly uploads?: number;
  readonly unchanged?: number;
}

/**
 * The `base` node's rules, graded by both the engine and the floor: the fleet's rules and a rule
 * of every form of the rule language (`*` paths with `all`, `any` and `none`, `pattern`,
 * `oneOf`, `cidr` through a variable, `range`, `strict`, `allowEmpty`).
 */
export const BENCH_RULES = [...FLEET_RULES, ...FLEET_LANGUAGE_RULES];

/** The concurrency the archive's target is measured at. */
export const ARCHIVE_CONCURRENCY = 50;
/** Recorded rounds that also run the archived variant: the longest run by far, so the first few only. */
export const ARCHIVE_ROUNDS = 3;

/** The variants a round measures, and the run over unchanged configurations after the rounds. */
export const VARIANTS = {
  floor: 'floor',
  engine: 'durable engine',
  archived: 'check + archive',
  unchanged: 'check + archive, unchanged',
} as const;

/** Environment variable that makes the bundle run only the local S3 server (in the child process {@link startS3Process} starts). */
const S3_CHILD_ENV = 'BENCH_S3_SERVER';
const S3_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The local S3 server in a process of its own, started from this same script: S3 is another
 * machine in AWS, so its work must not share the batch's thread, and its CPU is counted apart
 * (as DynamoDB Local's JVM is).
 */
const startS3Process = async (bucket: string): Promise<{ endpoint: string; pid: number | undefined; stop: () => Promise<void> }> => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [process.argv[1]!], { env: { ...process.env, [S3_CHILD_ENV]: bucket }, stdio: ['ignore', 'pipe', 'inherit'] });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('S3_ENDPOINT '));
      if (line) resolve(line.slice('S3_ENDPOINT '.length).trim());
    });
    child.once('exit', (code) => reject(new Error(`the local S3 server exited (${code}) before it listened`)));
  });
  return {
    endpoint,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
};

export const measureCompliance = async (
  devices = 10_000,
  concurrencies = [10, 50],
  log: (line: string) => void = console.log,
  rounds = 1,
): Promise<ComplianceRun[]> => {
  const backend = await startDurableBackend(devices);
  const { dynamo, sim, tables, addAdapter } = backend;
  // The configuration history's bucket, on the local S3 server.
  const s3 = await startS3Process('bench-configs');
  process.env['AWS_ENDPOINT_URL_S3'] = s3.endpoint;
  process.env['S3_FORCE_PATH_STYLE'] = 'true';
  process.env['CONFIGS_BUCKET'] = 'bench-configs';
  const { documentClient } = await import('../functions/platform/dynamo.js');
  await addAdapter('bench-nso');
  const { engineDeps } = await import('../functions/compliance/handlers/batch.js');
  const { ConfigHistory } = await import('../functions/configs/archive.js');
  const { archiveStores } = await import('../functions/configs/wiring.js');
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
    root: { name: 'base', devices: names, rules: BENCH_RULES.map((r) => ({ ...r })) as Version['root']['rules'], children: [] },
  };
  const runs: ComplianceRun[] = [];
  // Each run starts with the simulator's request log empty (it keeps every request, which
  // would otherwise pile up in the heap round after round) and from a fully collected heap
  // (the bundle runs with `--expose-gc`), so that no run pays for the garbage the one before left.
  const startRun = () => {
    sim.requests.length = 0;
    (globalThis as { gc?: () => void }).gc?.();
    return resources(dynamo.process.pid, s3.pid);
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
    const rules = BENCH_RULES.map((r) => ({ ...r, node: 'base' })) as unknown as Parameters<EngineDeps['evaluate']>[2];
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
    record(summarizeRun(VARIANTS.floor, concurrency, devices, (performance.now() - started) / 1000, times, round, stop()));
  };
  /** The last archived run's adapter and its number: the run over unchanged configurations goes over it again. */
  let archivedRuns = 0;
  // Engine: the production handler under the local runner, reports in DynamoDB Local. `none`:
  // sync `none` and no archive, the engine's own cost over the floor of configuration fetches
  // (as measured before sync modes and the archive); `archived`: sync `check` and every
  // configuration kept, on a new adapter name (every configuration uploaded) unless `unchanged`.
  const engine = async (concurrency: number, round: number, variant: 'none' | 'archived' | 'unchanged' = 'none'): Promise<void> => {
    const times: number[] = [];
    const archive = variant === 'none' ? undefined : new ConfigHistory({ ...archiveStores(), retentionDays: async () => 30 });
    if (variant === 'archived') archivedRuns++;
    const adapterId = variant === 'none' ? 'bench-nso' : await addAdapter(`bench-nso-${archivedRuns}`);
    const deps: EngineDeps = { ...engineDeps, archive, onDeviceChecked: (_report, ms) => times.push(ms) };
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
    const { batchId } = await startBatch({ treeId: 'b'.repeat(24), version: 'bench', adapterId, sync: variant === 'none' ? 'none' : 'check' }, startDeps);
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
    const counted = archive ? { uploads: archive.uploads, unchanged: archive.unchanged } : {};
    const name = variant === 'none' ? VARIANTS.engine : variant === 'archived' ? VARIANTS.archived : VARIANTS.unchanged;
    record(summarizeRun(name, concurrency, devices, (finished - started) / 1000, times, round, { ...used, ...counted }));
  };
  const archived = (concurrency: number, round: number) => engine(concurrency, round, 'archived');
  try {
    // The three take turns going first (floor, engine, archived; engine, archived, floor; …), so
    // that none always runs in the state another leaves behind.
    // The archived variant runs at the target's concurrency only, in the first ARCHIVE_ROUNDS
    // recorded rounds (it is the longest run by far).
    for (const concurrency of concurrencies) {
      for (let round = 0; round <= rounds; round++) {
        const withArchive = concurrency === ARCHIVE_CONCURRENCY && round <= ARCHIVE_ROUNDS;
        const order = [floor, (c: number, r: number) => engine(c, r), ...(withArchive ? [archived] : [])];
        const first = (round + 1) % order.length;
        for (const run of [...order.slice(first), ...order.slice(0, first)]) await run(concurrency, round);
      }
      // A second run over the last archived run's configurations, unchanged: it must upload nothing.
      if (concurrency === ARCHIVE_CONCURRENCY) await engine(concurrency, rounds, 'unchanged');
    }
  } finally {
    await LocalDurableTestRunner.teardownTestEnvironment();
    await backend.stop();
    await s3.stop();
  }
  return runs;
};

/** The engine's wall time over the floor's at each concurrency: the median over rounds of each round's ratio. */
export const complianceRatios = (runs: readonly ComplianceRun[]): { concurrency: number; ratio: number }[] =>
  medianRatios(runs, VARIANTS.engine, VARIANTS.floor);

/**
 * At each concurrency: the median ratio of the `check` + archive run's wall time to the `none`
 * run's of the same round, and the uploads of the first archived run and of the run over its
 * configurations unchanged.
 */
export const archiveFigures = (
  runs: readonly ComplianceRun[],
): { concurrency: number; ratio: number; firstUploads: number | undefined; secondUploads: number | undefined }[] =>
  medianRatios(runs, VARIANTS.archived, VARIANTS.engine).map(({ concurrency, ratio }) => {
    const at = runs.filter((r) => r.concurrency === concurrency);
    return {
      concurrency,
      ratio,
      firstUploads: at.findLast((r) => r.variant === VARIANTS.archived)?.uploads,
      secondUploads: at.find((r) => r.variant === VARIANTS.unchanged)?.uploads,
    };
  });

/** The last line a run prints: what `bench/run.ts` reads back. */
export const RESULT_PREFIX = 'COMPLIANCE_RESULT ';

/** Defined (true) in the bundle `buildBenchScript` makes; undeclared when run through tsx. */
declare const BENCH_BUNDLED: boolean | undefined;

const isMain = Boolean(process.argv[1]) && import.meta.url === pathToFileURL(process.argv[1]!).href;

if (isMain && typeof BENCH_BUNDLED === 'undefined') await runBundled('compliance');

if (isMain && typeof BENCH_BUNDLED !== 'undefined' && process.env[S3_CHILD_ENV]) {
  // The child startS3Process starts: the local S3 server alone, until it is told to stop.
  const { startS3Local } = await import('../tools/local/s3-local.js');
  const server = await startS3Local({ buckets: [process.env[S3_CHILD_ENV]], credentials: S3_CREDENTIALS });
  process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
  console.log(`S3_ENDPOINT ${server.endpoint}`);
} else if (isMain && typeof BENCH_BUNDLED !== 'undefined') {
  // [devices] [concurrencies, comma-separated] [rounds]
  const devices = Number(process.argv[2] ?? 10_000);
  const concurrencies = process.argv[3] ? process.argv[3].split(',').map(Number) : [10, 50];
  const rounds = Number(process.argv[4] ?? 12);
  const runs = await measureCompliance(devices, concurrencies, (line) => console.error(line), rounds);
  for (const { concurrency, ratio } of complianceRatios(runs)) console.error(`concurrency ${concurrency}: engine/floor wall-time ratio ${ratio}`);
  for (const { concurrency, ratio, firstUploads, secondUploads } of archiveFigures(runs)) {
    console.error(
      `concurrency ${concurrency}: check + archive / none wall-time ratio ${ratio}; uploads: ${firstUploads} in the last first take, ${secondUploads} in the run over it unchanged`,
    );
  }
  console.log(`${RESULT_PREFIX}${JSON.stringify(runs)}`);
  process.exit(0);
}
