/**
 * Remediation section of `npm run bench` (also `npx tsx bench/remediation.ts [devices] [rounds]`,
 * default `1000 5`): a dry-run over a fleet where every device fails a remediable rule, run by
 * the production durable handler's engine (`runRemediation` with `remediationDeps`) under the
 * official local runner with its records in DynamoDB Local, at the batch's fetch cap of 50,
 * against a floor that makes the same NSO calls with a plain pool of 50 workers: per device the
 * configuration GET through the relay, `remediateDevice` with the same rules, variables and list
 * keys, and the dry-run through the same NSO client (`createNsoTransactions`), with no durable
 * engine and no DynamoDB writes. Target: the engine's wall time ≤ 1.25× the floor's.
 *
 * Once per process: a compliance batch over the fleet (`sync: none`, concurrency 50) graded
 * against {@link BENCH_RULES}; every device fails `netops-user` (a list entry none has). Each
 * engine run starts a new run on that batch through the service (`startRemediation`, its
 * execution started here instead), measured apart (`startSeconds`: reading the batch's reports
 * and writing the run and its devices, the start route's work); the clock runs from the
 * execution's start until the handler returns (the finish step has stored the totals).
 *
 * Each round measures floor and engine back to back, taking turns at going first, after an
 * unrecorded warm-up round; the ratio is the median of the rounds' ratios.
 */
import { pathToFileURL } from 'node:url';
import type { StartDeps } from '../functions/compliance/service.js';
import type { RemediationEngineDeps } from '../functions/remediation/engine.js';
import type { RemediationEvent, RemediationStore } from '../functions/remediation/model.js';
import type { Version } from '../functions/trees/config-model.js';
import { loadDurableTesting } from '../tools/local/durable.js';
import { FLEET_LIST_KEYS, FLEET_RULES, FLEET_VARIABLES, fleetNames } from '../tools/simulators/nso-fleet.js';
import { medianRatios, resources, runBundled, startDurableBackend, summarizeRun, type DurableRun } from './durable.js';

export interface RemediationRun extends DurableRun {
  /** Engine runs: seconds the start took (the batch's reports read, the run and its devices written), outside the clock. */
  readonly startSeconds?: number;
}

export const VARIANTS = { floor: 'floor', engine: 'durable engine' } as const;

/** The fetch cap both variants run at: the batch's concurrency, which the engine takes as its own. */
export const REMEDIATION_CONCURRENCY = 50;

/** The rules of the benchmark's tree: the fleet's, and one every device fails and a merge fixes. */
export const BENCH_RULES = [
  ...FLEET_RULES,
  { id: 'netops-user', path: '/tailf-ned-cisco-ios:username', mode: 'required', severity: 'error', value: [{ name: '{{user}}', privilege: 15 }] },
] as const;
export const BENCH_VARIABLES: Readonly<Record<string, string>> = { ...FLEET_VARIABLES, user: 'netops' };

/** The engine's wall time over the floor's at the benchmark's concurrency: the median of the rounds' ratios. */
export const remediationRatio = (runs: readonly RemediationRun[]): number | undefined =>
  medianRatios(runs, VARIANTS.engine, VARIANTS.floor).find((r) => r.concurrency === REMEDIATION_CONCURRENCY)?.ratio;

/** The last line a run prints: what `bench/run.ts` reads back. */
export const REMEDIATION_RESULT_PREFIX = 'REMEDIATION_RESULT ';

/** The device a configuration GET is for (`…/device=<name>/config`). */
const deviceOfPath = (path: string): string => decodeURIComponent(path.slice(path.indexOf('device=') + 'device='.length, path.lastIndexOf('/config')));

/** `store` with `stored(device)` called after each device record is written. */
const observed = (store: RemediationStore, stored: (device: string) => void): RemediationStore =>
  new Proxy(store, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (name === 'putDevice')
        return async (...args: Parameters<RemediationStore['putDevice']>) => {
          await target.putDevice(...args);
          stored(args[1].device);
        };
      if (name === 'putDevices')
        return async (...args: Parameters<RemediationStore['putDevices']>) => {
          await target.putDevices(...args);
          for (const record of args[1]) stored(record.device);
        };
      if (name === 'putUncounted')
        return async (...args: Parameters<RemediationStore['putUncounted']>) => {
          await target.putUncounted(...args);
          for (const { record } of args[1]) stored(record.device);
        };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

export const measureRemediation = async (devices = 1000, rounds = 5, log: (line: string) => void = console.log): Promise<RemediationRun[]> => {
  const backend = await startDurableBackend(devices);
  const { dynamo, sim, tables } = backend;
  const adapterId = await backend.addAdapter('bench-nso');
  // The batch function's module reads its archive's bucket at init; the batch here keeps no
  // configuration (no archive), so the bucket is never written.
  process.env['CONFIGS_BUCKET'] ??= 'bench-configs';
  const { documentClient } = await import('../functions/platform/dynamo.js');
  const { engineDeps } = await import('../functions/compliance/handlers/batch.js');
  const { runBatch } = await import('../functions/compliance/engine.js');
  const { startBatch } = await import('../functions/compliance/service.js');
  const { ComplianceStore } = await import('../functions/compliance/store.js');
  const { rulesFor } = await import('../functions/compliance/check.js');
  const { remediationDeps } = await import('../functions/remediation/handlers/run.js');
  const { runRemediation } = await import('../functions/remediation/engine.js');
  const { startRemediation } = await import('../functions/remediation/service.js');
  const { changelogAudit } = await import('../functions/remediation/audit.js');
  const { remediationStore } = await import('../functions/remediation/wiring.js');
  const { remediateDevice } = await import('../functions/remediation/generate.js');
  const { listKeysFrom } = await import('../functions/remediation/patch.js');
  const { withDurableExecution } = await import('@aws/durable-execution-sdk-js');
  const { LocalDurableTestRunner } = await loadDurableTesting();
  await LocalDurableTestRunner.setupTestEnvironment({ skipTime: false });
  const compliance = new ComplianceStore(documentClient, tables['compliance']);
  const names = fleetNames({ devices });
  const runs: RemediationRun[] = [];
  const record = (run: RemediationRun) => {
    if (run.round === 0) return;
    runs.push(run);
    log(JSON.stringify(run));
  };
  // As in the compliance section: each run from a collected heap, the simulator's request log emptied.
  const startRun = () => {
    sim.requests.length = 0;
    (globalThis as { gc?: () => void }).gc?.();
    return resources(dynamo.process.pid);
  };
  const runDurable = async <E, R>(event: E, handler: (event: E, context: Parameters<Parameters<typeof withDurableExecution>[0]>[1]) => Promise<R>) => {
    const runner = new LocalDurableTestRunner({ handlerFunction: withDurableExecution(handler as never) });
    const execution = await runner.run({ payload: event as never });
    if (execution.getStatus() !== 'SUCCEEDED') throw new Error(`the execution ended ${execution.getStatus()}`);
  };

  try {
    // The batch every run remediates: the fleet graded against BENCH_RULES.
    const version: Version = {
      name: 'bench',
      variables: BENCH_VARIABLES,
      created: '',
      createdBy: '',
      lastUpdated: '',
      lastUpdatedBy: '',
      root: { name: 'base', devices: names, rules: BENCH_RULES.map((r) => ({ ...r })) as unknown as Version['root']['rules'], children: [] },
    };
    const startDeps: StartDeps = {
      versions: async () => ({ tree: true, version }),
      adapters: { get: async (name) => ({ name }) },
      store: compliance,
      startExecution: async () => undefined,
      now: () => new Date(),
      retentionDays: 1,
      concurrency: REMEDIATION_CONCURRENCY,
    };
    const { batchId } = await startBatch({ treeId: 'b'.repeat(24), version: 'bench', adapterId, sync: 'none' }, startDeps);
    await runDurable({ batchId }, (event, context) => runBatch(event, context, { ...engineDeps, archive: undefined }));
    const plan = await compliance.getPlan(batchId);
    const rules = rulesFor(plan, 'base');
    const listKeys = listKeysFrom(FLEET_LIST_KEYS);
    const forever = () => 15 * 60_000;

    // Floor: per device the GET, the generation and the dry-run, a plain pool of workers.
    const floor = async (round: number): Promise<void> => {
      const relayGet = remediationDeps.relayGet(forever);
      const nso = remediationDeps.nso(forever);
      const times: number[] = [];
      let dryRuns = 0;
      const stop = startRun();
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: REMEDIATION_CONCURRENCY }, async () => {
          while (next < names.length) {
            const device = names[next++]!;
            const t = performance.now();
            const [answer] = await relayGet(adapterId, `/restconf/data/tailf-ncs:devices/device=${encodeURIComponent(device)}/config`);
            const config = (answer!.data as Record<string, unknown>)['tailf-ncs:config'];
            const { patch } = remediateDevice({ device, config, rules, variables: plan.variables, listKeys, patchId: `remediation/bench/${device}` });
            if (patch && 'output' in (await nso.dryRun(adapterId, patch))) dryRuns++;
            times.push(performance.now() - t);
          }
        }),
      );
      const used = stop();
      if (dryRuns !== names.length) throw new Error(`the floor dry-ran ${dryRuns} of ${names.length} devices`);
      record(summarizeRun(VARIANTS.floor, REMEDIATION_CONCURRENCY, devices, (performance.now() - started) / 1000, times, round, used));
    };

    // Engine: a new run through the service, then the production engine under the local runner.
    let executions = 0;
    const engine = async (round: number): Promise<void> => {
      const firstSent = new Map<string, number>();
      const times: number[] = [];
      const relayGet: RemediationEngineDeps['relayGet'] = (remaining) => {
        const get = remediationDeps.relayGet(remaining);
        return (adapter, path) => {
          const device = deviceOfPath(path);
          if (!firstSent.has(device)) firstSent.set(device, performance.now());
          return get(adapter, path);
        };
      };
      const store = observed(remediationDeps.store, (device) => times.push(performance.now() - firstSent.get(device)!));
      const deps: RemediationEngineDeps = { ...remediationDeps, relayGet, store };
      const startedRun = performance.now();
      const { remediationId, devices: planned } = await startRemediation(
        batchId,
        { mode: 'dry-run', listKeys: FLEET_LIST_KEYS },
        { subject: 'bench', roles: ['admin'] },
        {
          compliance,
          adapters: { get: async (name) => ({ name }) },
          store: remediationStore(),
          audit: changelogAudit(),
          startExecution: async () => void executions++,
          now: () => new Date(),
        },
      );
      const startSeconds = Math.round((performance.now() - startedRun) / 10) / 100;
      if (planned !== names.length) throw new Error(`the run takes ${planned} of ${names.length} devices: not every device fails`);
      let finished = 0;
      let used: ReturnType<ReturnType<typeof startRun>> | undefined;
      const stop = startRun();
      const started = performance.now();
      await runDurable({ remediationId, action: 'run' } satisfies RemediationEvent, async (event, context) => {
        const outcome = await runRemediation(event, context, deps);
        finished = performance.now();
        used = stop();
        return outcome;
      });
      const run = await remediationDeps.store.get(remediationId);
      if (run?.status !== 'completed' || run.totals.dryRun !== names.length) {
        throw new Error(`remediation ${remediationId} ended ${run?.status} with ${run?.totals.dryRun} dry-runs of ${names.length}`);
      }
      record({ ...summarizeRun(VARIANTS.engine, REMEDIATION_CONCURRENCY, devices, (finished - started) / 1000, times, round, used!), startSeconds });
    };

    for (let round = 0; round <= rounds; round++) {
      const order = round % 2 === 1 ? [floor, engine] : [engine, floor];
      for (const run of order) await run(round);
    }
  } finally {
    await LocalDurableTestRunner.teardownTestEnvironment();
    await backend.stop();
  }
  return runs;
};

/** Defined (true) in the bundle `buildBenchScript` makes; undeclared when run through tsx. */
declare const BENCH_BUNDLED: boolean | undefined;

const isMain = Boolean(process.argv[1]) && import.meta.url === pathToFileURL(process.argv[1]!).href;

if (isMain && typeof BENCH_BUNDLED === 'undefined') await runBundled('remediation');

if (isMain && typeof BENCH_BUNDLED !== 'undefined') {
  const devices = Number(process.argv[2] ?? 1000);
  const rounds = Number(process.argv[3] ?? 5);
  const runs = await measureRemediation(devices, rounds, (line) => console.error(line));
  const ratio = remediationRatio(runs);
  console.error(
    `concurrency ${REMEDIATION_CONCURRENCY}: engine/floor wall-time ratio ${ratio} (target ≤ 1.25: ${ratio !== undefined && ratio <= 1.25 ? 'met' : 'NOT met'})`,
  );
  console.log(`${REMEDIATION_RESULT_PREFIX}${JSON.stringify(runs)}`);
  process.exit(0);
}
