/**
 * `npm run bench`: cold starts, warm per-invocation overhead, authorizer, relay and local
 * gateway figures of the service, each against its floor in the same run (the machine's speed
 * drifts; ratios measured side by side hold). Prints a table and writes `bench/results.json`.
 *
 * Options (after `npm run bench --`):
 *   --cdk-out DIR   measure this assembly (synthesized with `-c local=true`) instead of synthesizing
 *   --rounds N      cold starts per variant (default 20)
 *   --calls N       measured warm calls per variant (default 10000; the relay makes a fifth of it)
 *   --seconds N     local gateway load duration (default 10)
 *   --skip LIST     comma-separated sections to leave out: start, cold, warm, gateway, history, compliance, remediation, rules, csv
 *   --start-rounds N  fresh + warm `npm start` pairs of the start section (default 1)
 *   --devices N     simulated devices of the compliance section (default 10000)
 *   --cpu-prof DIR  also write one CPU profile per cold variant into DIR (for finding out why)
 *   --keep          keep the work directory (bundles, metafiles, synthesized assembly)
 *
 * What serves each call, and why each reference is what it is, is described in docs/performance.md
 * and at the top of each module.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { liveRoutes } from '../functions/api/routes.js';
import { PINNED_NODE, PROJECT_ROOT } from '../infra/paths.js';
import { apiEvent } from '../tools/simulators/api-events.js';
import { answersRequests, buildFixtures, buildScript, buildStack, type Bundle, type StackFunction } from './build.js';
import { bundleContents, sdkBytes, type BundleContents } from './bundles.js';
import { measureCold, probeCompilations, runCold, type ColdSample, type ColdVariant } from './cold.js';
import { LITH_OPERATIONS, RELAY_BODY, firstCallAccepts, firstCallEvent, putAdapterName, type CallContext } from './events.js';
import { RESULT_PREFIX, archiveFigures, complianceRatios, VARIANTS, type ComplianceRun } from './compliance.js';
import { REMEDIATION_RESULT_PREFIX, VARIANTS as REMEDIATION_VARIANTS, remediationRatio, type RemediationRun } from './remediation.js';
import { PATTERN_RESULT_PREFIX, PATTERN_SIZES, patternGrowth, RULES_RESULT_PREFIX, type PatternRun, type RulesRun } from './rules.js';
import { CSV_RESULT_PREFIX, type CsvRun } from './csv-export.js';
import { START_RESULT_PREFIX, START_TARGETS, type StartRun } from './start.js';
import { measureGateway, withLocalStack, type GatewayRun } from './gateway.js';
import { DEVICE_POINTS, HISTORY_P99_LIMIT_MS, measureHistoryReads, TREND_POINTS, type HistoryReads } from './history.js';
import { SIMULATOR_ADAPTER, startServices, type Services } from './services.js';
import { atMost, formatBytes, formatNumber, formatTable, median, pairedDifferences, ratio, summarize, type Summary, type TargetResult } from './stats.js';
import { measureAuthorizerWarm, measureRelayWarm, measureTreesWarm } from './warm.js';

const RESULTS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results.json');
/** The old space the CSV export runs in: far below the 10 MB its 50,000 rows write, and their reports. */
const CSV_OLD_SPACE_MIB = 32;
/** Rounds used by the untimed probe runs, apart from the measured rounds' names. */
const PROBE_ROUND = 10_000;

const { values: options } = parseArgs({
  options: {
    'cdk-out': { type: 'string' },
    rounds: { type: 'string', default: '20' },
    calls: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '10' },
    skip: { type: 'string', default: '' },
    'start-rounds': { type: 'string', default: '1' },
    devices: { type: 'string', default: '10000' },
    'cpu-prof': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
  strict: true,
});
const positive = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
};
const ROUNDS = positive('rounds', options.rounds);
const CALLS = positive('calls', options.calls);
const SECONDS = positive('seconds', options.seconds);
const SKIP = new Set(options.skip.split(',').filter(Boolean));
const START_ROUNDS = positive('start-rounds', options['start-rounds']);
const SECTIONS = ['start', 'cold', 'warm', 'gateway', 'history', 'compliance', 'remediation', 'rules', 'csv'];
for (const s of SKIP) if (!SECTIONS.includes(s)) throw new Error(`--skip knows ${SECTIONS.join(', ')}, not ${s}`);

const started = Date.now();
const say = (line: string): void => {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
};

/** Node 22 from node_modules/.bin, whatever `node` is on PATH (the pinned `node` devDependency). */
const NODE = PINNED_NODE;
const nodeVersion = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
if (!nodeVersion.startsWith('v22.')) throw new Error(`bench: ${NODE} is ${nodeVersion}, not Node 22`);

const workDir = mkdtempSync(path.join(os.tmpdir(), 'netconfig-bench-'));
let services: Services | undefined;
const targets: TargetResult[] = [];
const output: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: nodeVersion,
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadAverageAtStart: os.loadavg() },
  options: { rounds: ROUNDS, calls: CALLS, seconds: SECONDS, skip: [...SKIP] },
};
const tables: string[] = [];

/**
 * Runs a section's script in a process of its own (`npx tsx <script> …args`: it starts its own
 * DynamoDB Local and sets the environment the functions read) and parses its result line.
 */
const sectionResult = <T>(script: string, args: readonly string[], prefix: string): T => {
  const out = execFileSync('npx', ['tsx', script, ...args], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  return resultOf<T>(out, prefix);
};

/** The JSON after `prefix` on the line of a section's output that starts with it. */
const resultOf = <T>(out: string, prefix: string): T => {
  const line = out.split('\n').find((l) => l.startsWith(prefix));
  if (!line) throw new Error(`no ${prefix.trim()} line`);
  return JSON.parse(line.slice(prefix.length)) as T;
};

const ms = (v: number | undefined, d = 1) => formatNumber(v, d);
const us = (v: number | undefined) => formatNumber(v === undefined ? undefined : v * 1000, 1);
const compact = (s: Summary) => ({ n: s.n, p50: s.p50, p90: s.p90, p99: s.p99, min: s.min, max: s.max, mean: s.mean });

try {
  // ── 0. npm start ──────────────────────────────────────────────────────────────────────
  // First, while the machine runs nothing of the bench: a fresh clone's start, then the next
  // one with unchanged sources (bench/start.ts, in its own process as `npm start` is run).
  if (!SKIP.has('start')) {
    say(`npm start: ${START_ROUNDS} fresh + warm pair(s), each start until its ready banner…`);
    try {
      const out = execFileSync(NODE, ['--import', 'tsx', 'bench/start.ts', '--rounds', String(START_ROUNDS)], {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const line = out.split('\n').find((l) => l.startsWith(START_RESULT_PREFIX));
      if (!line) throw new Error('no result line');
      const run = JSON.parse(line.slice(START_RESULT_PREFIX.length)) as StartRun;
      output['start'] = run;
      targets.push(atMost('npm start, fresh clone (no assembly, no data): seconds to ready, p50', run.freshP50, START_TARGETS.fresh, ' s', 1));
      targets.push(atMost('npm start again, sources unchanged: seconds to ready, p50', run.warmP50, START_TARGETS.warm, ' s', 1));
      tables.push(
        'npm start: seconds from the command to the ready banner (bundle and synth: the phases of a start that builds)\n' +
          formatTable(
            ['start', 'seconds', 'bundle s', 'synth s'],
            run.samples.map((x) => [
              x.kind,
              ms(x.seconds),
              x.bundleSeconds === undefined ? '' : ms(x.bundleSeconds),
              x.synthSeconds === undefined ? '' : ms(x.synthSeconds),
            ]),
            ['left', 'right', 'right', 'right'],
          ),
      );
    } catch (error) {
      say(`start measurement failed: ${(error as Error).message}`);
      output['start'] = { error: (error as Error).message };
      targets.push({
        name: 'npm start, fresh and warm',
        measured: 'failed to run',
        limit: `≤ ${START_TARGETS.fresh} s / ≤ ${START_TARGETS.warm} s`,
        pass: false,
      });
    }
  }

  // ── Build ───────────────────────────────────────────────────────────────────────────────
  const stack = await buildStack({ workDir, ...(options['cdk-out'] ? { cdkOut: path.resolve(options['cdk-out']) } : {}), port: 3000, log: say });
  const [fixtures, coldChild, warmChild] = await Promise.all([buildFixtures(workDir), buildScript(workDir, 'cold-child'), buildScript(workDir, 'warm-child')]);
  const functions = [...stack.functions].sort((a, b) => a.label.localeCompare(b.label));
  const fn = (entry: string): StackFunction => {
    const found = functions.find((f) => f.entry === entry);
    if (!found) throw new Error(`bench: the stack has no function built from functions/${entry}.ts`);
    return found;
  };

  // ── 1. Bundles ──────────────────────────────────────────────────────────────────────────
  const contents = new Map<string, BundleContents>();
  for (const f of functions) if (f.rebuild?.metafile) contents.set(f.label, bundleContents(f.rebuild.metafile));
  const reproduced = functions.filter((f) => f.rebuild && f.rebuild.sha256 === f.asset.sha256).length;
  say(`${functions.length} functions; ${reproduced} of their CDK bundles rebuilt byte for byte with FUNCTION_BUNDLING`);

  say('starting DynamoDB Local, the NSO simulators and the JWKS server…');
  services = await startServices({ workDir, assembly: stack.assembly, model: stack.model });
  const svc = services;
  const runId = Date.now().toString(36);
  const ctx = (round: number): CallContext => ({
    round,
    treeId: svc.treeIds[0]!,
    simulatorUrl: svc.simulator.url,
    simulatorCredentials: svc.simulatorCredentials,
    token: svc.token(['admin']),
    runId,
  });
  const envOf = (entry: string) => svc.environmentOf(fn(entry).spec);

  // What the first calls need: the simulator registered as adapter lab-nso (through the real
  // putAdapter function, so that its password takes the secrets path), and the adapters the
  // first deleteAdapter runs delete.
  const put = fn('adapters/handlers/put');
  const setupPut = (name: string) =>
    runCold(
      NODE,
      coldChild,
      {
        name: `setup ${name}`,
        kind: 'function',
        file: put.asset.file,
        environment: envOf('adapters/handlers/put'),
        timeoutSeconds: put.spec.timeoutSeconds,
        event: () =>
          apiEvent({
            method: 'PUT',
            resource: '/adapters/{name}',
            pathParameters: { name },
            body: { type: 'nso', baseUrl: svc.simulator.url, auth: { type: 'basic', ...svc.simulatorCredentials } },
          }),
      },
      0,
    );
  for (const name of [SIMULATOR_ADAPTER, putAdapterName(ctx(0), -1), putAdapterName(ctx(0), PROBE_ROUND - 1)]) await setupPut(name);

  // ── 2. Cold starts ──────────────────────────────────────────────────────────────────────
  const treeEnv = envOf('trees/handlers/get');
  const reference = (name: string, bundle: Bundle, environment: Record<string, string>, operation: string): ColdVariant => ({
    name,
    kind: 'reference',
    file: bundle.file,
    environment,
    timeoutSeconds: 10,
    event: (round) => firstCallEvent(operation, ctx(round)),
  });
  const lithEnv = { ...envOf('relay/handlers/rest-action'), ...envOf('trees/handlers/create'), ...treeEnv };
  const variants: ColdVariant[] = [
    reference('bare', fixtures.bare, treeEnv, 'getTree'),
    reference('sdk-only', fixtures.sdkOnly, treeEnv, 'getTree'),
    reference('sdk-client', fixtures.sdkClient, treeEnv, 'getTree'),
    reference(
      'sdk-http',
      fixtures.sdkHttp,
      {
        ...treeEnv,
        BENCH_ORCHESTRATOR_URL: `${svc.simulator.url}${RELAY_BODY.params.path}`,
        BENCH_ORCHESTRATOR_AUTHORIZATION: `Basic ${Buffer.from(`${svc.simulatorCredentials.username}:${svc.simulatorCredentials.password}`).toString('base64')}`,
      },
      'getTree',
    ),
    reference('authorizer-floor', fixtures.authorizerFloor, envOf('authorizer/handlers/authorize'), 'authorizer'),
    ...(['vault-fetch', 'vault-client'] as const).map((name) =>
      reference(
        name,
        name === 'vault-fetch' ? fixtures.vaultFetch : fixtures.vaultClient,
        { ...treeEnv, BENCH_VAULT_ADDR: svc.vault.url, BENCH_VAULT_TOKEN: svc.vault.rootToken },
        'getTree',
      ),
    ),
    ...LITH_OPERATIONS.map(
      (operation): ColdVariant => ({
        name: `lith ${operation}`,
        kind: 'lith',
        file: fixtures.lith.file,
        environment: lithEnv,
        timeoutSeconds: 29,
        event: (round) => firstCallEvent(operation, ctx(round)),
      }),
    ),
    // The compliance batch function is measured in its own section, running batches.
    ...functions
      .filter((f) => answersRequests(f.entry))
      .map(
        (f): ColdVariant => ({
          name: f.operation,
          kind: 'function',
          file: f.asset.file,
          environment: svc.environmentOf(f.spec),
          timeoutSeconds: f.spec.timeoutSeconds,
          event: (round) => firstCallEvent(f.operation, ctx(round)),
          accepts: firstCallAccepts(f.operation),
        }),
      ),
  ];
  const functionVariants = variants.filter((v) => v.kind === 'function');

  say('counting run-time compilations (untimed probe of each function)…');
  const compilations = new Map<string, number>();
  for (const v of [...functionVariants, ...variants.filter((x) => x.kind === 'lith').slice(0, 1)]) {
    compilations.set(v.name, await probeCompilations(NODE, coldChild, v, PROBE_ROUND));
  }

  // The reference of a function's first call does the same kind of I/O with nothing else:
  // `sdk-http` (the client, one read, one HTTP call) when it calls an orchestrator, `sdk-only`
  // (the client and one read) when it reaches DynamoDB, `sdk-client` (the client alone) when it
  // does neither. The authorizer has none: its target is against the bare handler.
  const referenceOf = (operation: string): string | undefined => {
    const route = liveRoutes.find((r) => r.operationId === operation);
    if (!route) return undefined;
    if (route.needs.orchestrator) return 'sdk-http';
    return Object.keys(route.needs.tables ?? {}).length > 0 ? 'sdk-only' : 'sdk-client';
  };
  const lithOf = (operation: string): string => ((LITH_OPERATIONS as readonly string[]).includes(operation) ? `lith ${operation}` : 'lith getTree');

  const bundleRows = functions.map((f) => {
    const c = contents.get(f.label);
    return {
      function: f.operation,
      label: f.label,
      entry: f.entry,
      bytes: f.asset.bytes,
      sdkBytes: c ? sdkBytes(c) : undefined,
      rebuiltIdentically: f.rebuild?.sha256 === f.asset.sha256,
      ajvCompilerModules: c?.ajvCompilerModules ?? [],
      ajvModules: c?.ajvModules ?? [],
      compiledAtInit: compilations.get(f.operation),
      topPackages: c?.packages.slice(0, 8) ?? [],
    };
  });
  output['bundles'] = {
    functions: bundleRows,
    references: Object.fromEntries(
      Object.entries(fixtures).map(([k, b]) => [k, { bytes: b.bytes, topPackages: b.metafile ? bundleContents(b.metafile).packages.slice(0, 8) : [] }]),
    ),
  };
  // Compilations are counted on a first call, so only for the functions that answer requests.
  const compiles = (r: (typeof bundleRows)[number]) => r.ajvCompilerModules.length > 0 || (answersRequests(r.entry) && r.compiledAtInit !== 0);
  targets.push({
    name: 'no JSON Schema compiled at init (no Ajv compiler in any bundle, no Function() compiled in init + first call)',
    measured: bundleRows.some(compiles)
      ? bundleRows
          .filter(compiles)
          .map((r) => `${r.function}: ${r.ajvCompilerModules.length} compiler modules, ${r.compiledAtInit} compiled`)
          .join('; ')
      : `none in ${bundleRows.length} functions`,
    limit: 'none',
    pass: !bundleRows.some(compiles),
  });

  if (!SKIP.has('cold')) {
    say(`cold starts: ${variants.length} variants × ${ROUNDS} rounds, alternated…`);
    const cold = await measureCold({
      node: NODE,
      child: coldChild,
      variants,
      rounds: ROUNDS,
      onProgress: (round) => {
        if ((round + 1) % 5 === 0 || round + 1 === ROUNDS) say(`  cold round ${round + 1}/${ROUNDS}`);
      },
    });
    if (options['cpu-prof']) {
      const dir = path.resolve(options['cpu-prof']);
      mkdirSync(dir, { recursive: true });
      // Round ROUNDS: the adapter the last round's putAdapter created is still there to delete.
      for (const v of variants) {
        const vdir = path.join(dir, v.name.replaceAll(' ', '-'));
        mkdirSync(vdir, { recursive: true });
        await runCold(NODE, coldChild, v, ROUNDS, { nodeArgs: ['--cpu-prof', '--cpu-prof-interval=100'], cwd: vdir });
      }
      say(`CPU profiles of one cold start per variant in ${dir}`);
    }
    const series = (name: string, key: 'total' | 'cpu') => cold.get(name)!.map((s) => s[key]);
    const summaryOf = (name: string, key: keyof Omit<ColdSample, 'status'>) => summarize(cold.get(name)!.map((s) => s[key]));
    /** Median over rounds of (variant − bare) in the same round. */
    const overBare = (name: string, key: 'total' | 'cpu' = 'total') => median(pairedDifferences(series(name, key), series('bare', key)));
    const bareP50 = summaryOf('bare', 'total').p50;
    const bareCpuP50 = summaryOf('bare', 'cpu').p50;

    const rows: string[][] = [];
    const coldOut: Record<string, unknown> = {};
    for (const v of variants) {
      const total = summaryOf(v.name, 'total');
      const operation = v.kind === 'function' ? v.name : undefined;
      const ref = operation ? referenceOf(operation) : undefined;
      const lith = operation ? lithOf(operation) : undefined;
      const over = overBare(v.name);
      const refRatio = ref ? ratio(over, overBare(ref)) : undefined;
      // The same on CPU time: the process's own work, without the time it waited for DynamoDB
      // Local or the simulator (a transaction or an HTTP call waits longer than the reference's read).
      const refCpuRatio = ref ? ratio(overBare(v.name, 'cpu'), overBare(ref, 'cpu')) : undefined;
      const bytes = v.kind === 'function' ? bundleRows.find((r) => r.function === v.name)?.bytes : undefined;
      const fixtureBytes = Object.values(fixtures).find((b) => b.file === v.file)?.bytes;
      coldOut[v.name] = {
        kind: v.kind,
        bytes: bytes ?? fixtureBytes,
        boot: compact(summaryOf(v.name, 'boot')),
        init: compact(summaryOf(v.name, 'init')),
        first: compact(summaryOf(v.name, 'first')),
        total: compact(total),
        cpu: compact(summaryOf(v.name, 'cpu')),
        wall: compact(summaryOf(v.name, 'wall')),
        overBareP50: over,
        ...(ref ? { reference: ref, overBareRatioToReference: refRatio, cpuOverBareRatioToReference: refCpuRatio } : {}),
        ...(lith ? { lith, belowLith: total.p50 < summaryOf(lith, 'total').p50 } : {}),
        samples: cold.get(v.name),
      };
      rows.push([
        v.name,
        formatBytes(bytes ?? fixtureBytes ?? 0),
        ms(summaryOf(v.name, 'init').p50),
        ms(summaryOf(v.name, 'first').p50),
        ms(total.p50),
        ms(total.p90),
        ms(summaryOf(v.name, 'cpu').p50),
        v.name === 'bare' ? '' : `${ms(overBare(v.name, 'cpu'))} / ${ms(over)}`,
        ref ? `${ref}: cpu ${formatNumber(refCpuRatio, 2)}× wall ${formatNumber(refRatio, 2)}×` : '',
        lith ? `${formatNumber(ratio(total.p50, summaryOf(lith, 'total').p50), 2)}× ${lith.replace('lith ', '')}` : '',
      ]);
      // Verdicts on CPU time, the wall-clock figure beside it: on a shared two-core machine a
      // run's wall time mostly measures how long it waited for a core, and on Lambda (512 MB is
      // about a third of a vCPU) an init lasts as long as its CPU work, waits for I/O aside.
      if (operation === 'authorizer') {
        const cpuRatio = ratio(summaryOf(v.name, 'cpu').p50, bareCpuP50);
        targets.push({
          ...atMost('cold: authorizer / bare (p50)', cpuRatio, 1.3, '×'),
          measured: `cpu ${formatNumber(cpuRatio, 2)}× · wall ${formatNumber(ratio(total.p50, bareP50), 2)}×`,
        });
        targets.push({
          name: '  (for scale) authorizer-floor / bare: JWKS fetch + one crypto.verify and nothing else',
          measured: `cpu ${formatNumber(ratio(summaryOf('authorizer-floor', 'cpu').p50, bareCpuP50), 2)}× · wall ${formatNumber(ratio(summaryOf('authorizer-floor', 'total').p50, bareP50), 2)}×`,
          limit: 'information',
          pass: true,
        });
      } else if (operation && ref) {
        targets.push({
          ...atMost(`cold: ${operation} (−bare) / ${ref} (−bare), p50 of paired runs`, refCpuRatio, 1.15, '×'),
          measured: `cpu ${formatNumber(refCpuRatio, 2)}× · wall ${formatNumber(refRatio, 2)}×`,
        });
      }
      if (operation && lith) {
        const lithP50 = summaryOf(lith, 'total').p50;
        targets.push({
          name: `cold: ${operation} below the Lambda-lith (${lith})`,
          measured: `${ms(total.p50)} ms vs ${ms(lithP50)} ms`,
          limit: '<',
          pass: total.p50 < lithP50,
        });
      }
    }
    // The secrets code reads Vault through the shared node:http(s) client; the global fetch
    // it replaced loads undici on its first call. Same read, same server, both cold.
    const vaultCpu = ratio(overBare('vault-client', 'cpu'), overBare('vault-fetch', 'cpu'));
    targets.push({
      ...atMost('cold: Vault read via the shared client (−bare) / via global fetch (−bare), cpu p50', vaultCpu, 1, '×'),
      measured: `cpu ${formatNumber(overBare('vault-client', 'cpu'))} ms vs ${formatNumber(overBare('vault-fetch', 'cpu'))} ms (${formatNumber(vaultCpu, 2)}×)`,
    });
    output['cold'] = coldOut;
    tables.push(
      `Cold start: fresh node process, import + first call; ms from process start (cpu: CPU time of the process); ${ROUNDS} runs per variant, alternated\n` +
        formatTable(
          [
            'variant',
            'bundle',
            'init p50',
            '1st call p50',
            'total p50',
            'total p90',
            'cpu p50',
            'over bare cpu/wall',
            '(−bare) / (reference −bare)',
            'total / lith',
          ],
          rows,
        ),
    );
  }

  if (!SKIP.has('warm')) {
    // ── 3. Warm tree summary ──────────────────────────────────────────────────────────────
    say(`warm tree summary: ${CALLS} calls per variant, canned SDK then DynamoDB Local…`);
    const trees = await measureTreesWarm({
      node: NODE,
      script: warmChild,
      env: treeEnv,
      warmup: Math.min(1000, CALLS),
      calls: CALLS,
      bundle: fixtures.warmTrees.file,
      event: firstCallEvent('getTree', ctx(0)),
      services: svc,
      treeId: svc.treeIds[0]!,
    });
    const s = {
      cannedFull: summarize(trees.canned.full),
      cannedBare: summarize(trees.canned.bare),
      dynamoFull: summarize(trees.dynamo.full),
      dynamoBare: summarize(trees.dynamo.bare),
    };
    const cannedOverhead = s.cannedFull.p50 - s.cannedBare.p50;
    const cannedPaired = median(pairedDifferences(trees.canned.full, trees.canned.bare));
    output['warm'] = {
      calls: CALLS,
      canned: { full: compact(s.cannedFull), bare: compact(s.cannedBare), overheadP50Ms: cannedOverhead, pairedOverheadP50Ms: cannedPaired },
      dynamodbLocal: {
        full: compact(s.dynamoFull),
        bare: compact(s.dynamoBare),
        ratioP50: ratio(s.dynamoFull.p50, s.dynamoBare.p50),
        ratioP99: ratio(s.dynamoFull.p99, s.dynamoBare.p99),
      },
    };
    targets.push(atMost('warm: tree summary full − bare, p50, canned SDK', cannedOverhead * 1000, 50, ' µs', 1));
    targets.push(atMost('warm: tree summary full / bare against DynamoDB Local, p50', ratio(s.dynamoFull.p50, s.dynamoBare.p50), 1.05, '×'));
    targets.push(atMost('warm: tree summary full / bare against DynamoDB Local, p99', ratio(s.dynamoFull.p99, s.dynamoBare.p99), 1.1, '×'));

    // ── 4. Authorizer ─────────────────────────────────────────────────────────────────────
    say(`warm authorizer: ${CALLS} calls per variant…`);
    const token = svc.token(['admin']);
    const auth = await measureAuthorizerWarm({
      node: NODE,
      script: warmChild,
      env: envOf('authorizer/handlers/authorize'),
      warmup: Math.min(1000, CALLS),
      calls: CALLS,
      bundle: fn('authorizer/handlers/authorize').asset.file,
      event: firstCallEvent('authorizer', { ...ctx(0), token }),
      token,
      services: svc,
    });
    const a = { full: summarize(auth.full), raw: summarize(auth.raw) };
    output['authorizer'] = {
      calls: CALLS,
      full: compact(a.full),
      rawVerify: compact(a.raw),
      ratioP50: ratio(a.full.p50, a.raw.p50),
      jwksFetches: auth.jwksFetches,
    };
    targets.push(atMost('warm: authorizer / raw crypto.verify, p50', ratio(a.full.p50, a.raw.p50), 1.5, '×'));
    targets.push({ name: 'warm: JWKS fetches per authorizer process', measured: String(auth.jwksFetches), limit: '= 1', pass: auth.jwksFetches === 1 });

    // ── 5. Relay ──────────────────────────────────────────────────────────────────────────
    // Twice, each in its own process: as deployed (the relay's adapter cache on, its default
    // TTL), and with ADAPTER_CACHE_TTL_SECONDS=0 (the adapter read on every call, canned then
    // from DynamoDB Local), which is what the relay cost before the cache and shows the price of one read.
    const relayCalls = Math.max(1, Math.round(CALLS / 5));
    const authorization = `Basic ${Buffer.from(`${svc.simulatorCredentials.username}:${svc.simulatorCredentials.password}`).toString('base64')}`;
    const relayRun = (env: Record<string, string>) =>
      measureRelayWarm({
        node: NODE,
        script: warmChild,
        env,
        warmup: Math.min(200, relayCalls),
        calls: relayCalls,
        bundle: fixtures.warmRelay.file,
        event: firstCallEvent('relayRestAction', ctx(0)),
        services: svc,
        direct: { url: `${svc.directSimulator.url}${RELAY_BODY.params.path}`, headers: { accept: RELAY_BODY.params.accept, authorization } },
        directConnections: () => svc.directSimulator.connections,
      });
    say(`relay: ${relayCalls} calls per variant as deployed (adapter cache on), adapter read canned then from DynamoDB Local…`);
    const cached = await relayRun(envOf('relay/handlers/rest-action'));
    say(`relay: ${relayCalls} calls per variant with the adapter cache off (ADAPTER_CACHE_TTL_SECONDS=0)…`);
    const relay = await relayRun({ ...envOf('relay/handlers/rest-action'), ADAPTER_CACHE_TTL_SECONDS: '0' });
    const r = {
      cachedFull: summarize(cached.dynamo.full),
      cachedDirect: summarize(cached.dynamo.direct),
      cannedFull: summarize(relay.canned.full),
      cannedDirect: summarize(relay.canned.direct),
      dynamoFull: summarize(relay.dynamo.full),
      dynamoDirect: summarize(relay.dynamo.direct),
    };
    output['relay'] = {
      calls: relayCalls,
      adapterCached: { relay: compact(r.cachedFull), direct: compact(r.cachedDirect), addedP50Ms: r.cachedFull.p50 - r.cachedDirect.p50 },
      canned: { relay: compact(r.cannedFull), direct: compact(r.cannedDirect), addedP50Ms: r.cannedFull.p50 - r.cannedDirect.p50 },
      dynamodbLocal: { relay: compact(r.dynamoFull), direct: compact(r.dynamoDirect), addedP50Ms: r.dynamoFull.p50 - r.dynamoDirect.p50 },
      relayConnections: [cached.relayConnections, relay.relayConnections],
      relayCallsReceived: [cached.relayCalls, relay.relayCalls],
      directConnections: [cached.directConnections, relay.directConnections],
    };
    targets.push(
      atMost('relay: added p50 over a direct fetch, as deployed (adapter cache on, DynamoDB Local)', r.cachedFull.p50 - r.cachedDirect.p50, 0.3, ' ms'),
    );
    targets.push({
      name: '  (information) relay: added p50, adapter read on every call (cache off), read canned',
      measured: `${ms(r.cannedFull.p50 - r.cannedDirect.p50, 2)} ms`,
      limit: 'information',
      pass: true,
    });
    targets.push({
      name: '  (information) relay: added p50, adapter read on every call (cache off), from DynamoDB Local',
      measured: `${ms(r.dynamoFull.p50 - r.dynamoDirect.p50, 2)} ms`,
      limit: 'information',
      pass: true,
    });
    targets.push({
      name: 'relay: TCP connections to the orchestrator for all calls of each run',
      measured: `${cached.relayConnections} for ${cached.relayCalls} calls, ${relay.relayConnections} for ${relay.relayCalls}`,
      limit: '= 1',
      pass: cached.relayConnections === 1 && relay.relayConnections === 1,
    });

    tables.push(
      `Warm, in-process, per call (ms); ${CALLS} calls per variant after warm-up, alternated (relay: ${relayCalls})\n` +
        formatTable(
          ['measurement', 'p50', 'p90', 'p99', 'floor', 'floor p50', 'floor p99', 'added p50', 'ratio p50', 'ratio p99'],
          [
            ['tree summary, canned SDK', s.cannedFull, s.cannedBare, 'bare GetCommand'] as const,
            ['tree summary, DynamoDB Local', s.dynamoFull, s.dynamoBare, 'bare GetCommand'] as const,
            ['authorizer', a.full, a.raw, 'crypto.verify'] as const,
            ['relay, adapter cache (as deployed)', r.cachedFull, r.cachedDirect, 'direct fetch'] as const,
            ['relay, no cache, read canned', r.cannedFull, r.cannedDirect, 'direct fetch'] as const,
            ['relay, no cache, DynamoDB Local', r.dynamoFull, r.dynamoDirect, 'direct fetch'] as const,
          ].map(([name, full, floor, floorName]) => [
            name,
            ms(full.p50, 3),
            ms(full.p90, 3),
            ms(full.p99, 3),
            floorName,
            ms(floor.p50, 3),
            ms(floor.p99, 3),
            `${us(full.p50 - floor.p50)} µs`,
            `${formatNumber(ratio(full.p50, floor.p50), 2)}×`,
            `${formatNumber(ratio(full.p99, floor.p99), 2)}×`,
          ]),
        ) +
        `\nJWKS fetches by the warm authorizer process: ${auth.jwksFetches}; relay: ${cached.relayConnections} and ${relay.relayConnections} TCP connection(s) for ${cached.relayCalls} and ${relay.relayCalls} calls (direct fetch: ${cached.directConnections} and ${relay.directConnections})`,
    );
  }

  await services.stop();
  services = undefined;

  if (!SKIP.has('gateway')) {
    // ── 6. Local gateway ──────────────────────────────────────────────────────────────────
    say('local gateway: starting the local stack on the synthesized assembly…');
    let run: GatewayRun | undefined;
    try {
      run = await measureGateway({
        node: NODE,
        cdkOut: stack.assembly.outDir,
        treeId: ctx(0).treeId,
        connections: 50,
        seconds: SECONDS,
        warmupSeconds: 3,
        log: say,
      });
    } catch (error) {
      say(`local gateway measurement failed: ${(error as Error).message}`);
      output['gateway'] = { error: (error as Error).message };
      targets.push({ name: 'gateway: tree summary, 50 connections, zero errors', measured: 'failed to run', limit: '0 errors', pass: false });
    }
    if (run) {
      output['gateway'] = run;
      const failures = run.errors + run.timeouts + run.non2xx;
      targets.push({
        name: `gateway: errors, time-outs and non-2xx in ${run.requests} requests`,
        measured: String(failures),
        limit: '= 0',
        pass: failures === 0,
      });
      tables.push(
        `Local gateway (npm start), GET tree summary, ${run.connections} connections, ${run.durationSeconds} s\n` +
          formatTable(
            ['requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'time-outs', 'non-2xx'],
            [
              [
                String(run.requests),
                ms(run.rps),
                ms(run.latency.p50),
                ms(run.latency.p90),
                ms(run.latency.p99),
                ms(run.latency.max),
                String(run.errors),
                String(run.timeouts),
                String(run.non2xx),
              ],
            ],
            ['right'],
          ),
      );
    }
  }

  if (!SKIP.has('history')) {
    // ── 6b. Plan history through the local gateway ────────────────────────────────────────
    const requests = 300;
    const concurrency = 4;
    say(`history: a plan's ${TREND_POINTS}-point trend and a device's ${DEVICE_POINTS} daily points, ${requests} requests each, ${concurrency} clients…`);
    const names = [`${TREND_POINTS} trend points, one page`, `${DEVICE_POINTS} daily device points, one page`];
    try {
      const reads: HistoryReads = await withLocalStack({ cdkOut: stack.assembly.outDir, sampleData: false }, (local) =>
        measureHistoryReads(local, { requests, concurrency }),
      );
      output['history'] = reads;
      [reads.trend, reads.device].forEach((run, i) => {
        targets.push(atMost(`history: ${names[i]}, p99 through the local gateway`, run.latency.p99, HISTORY_P99_LIMIT_MS, ' ms', 1));
        targets.push({ name: `history: ${names[i]}, wrong answers in ${run.latency.n}`, measured: String(run.errors), limit: '= 0', pass: run.errors === 0 });
      });
      targets.push({
        name: '  (information) history: the same trend route over a range without points (gateway, authorizer, no rows), p99',
        measured: `${ms(reads.floor.latency.p99)} ms`,
        limit: 'information',
        pass: true,
      });
      tables.push(
        `Plan history through the local gateway (npm start), ${concurrency} clients, ${requests} requests per route after a warm-up; seeded in ${ms(reads.seedSeconds)} s\n` +
          formatTable(
            ['route', 'rows', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'wrong answers'],
            [reads.floor, reads.trend, reads.device].map((r) => [
              r.route,
              String(r.rows),
              ms(r.latency.p50),
              ms(r.latency.p90),
              ms(r.latency.p99),
              ms(r.latency.max),
              String(r.errors),
            ]),
            ['left', 'right'],
          ),
      );
    } catch (error) {
      say(`history measurement failed: ${(error as Error).message}`);
      output['history'] = { error: (error as Error).message };
      for (const name of names) {
        targets.push({
          name: `history: ${name}, p99 through the local gateway`,
          measured: 'failed to run',
          limit: `≤ ${HISTORY_P99_LIMIT_MS} ms`,
          pass: false,
        });
      }
    }
  }

  if (!SKIP.has('compliance')) {
    // ── 7. Compliance batch ───────────────────────────────────────────────────────────────
    // In its own process: it starts its own DynamoDB Local and sets the environment the
    // batch function reads.
    say(`compliance: ${options.devices} simulated devices, durable engine against a plain loop…`);
    try {
      const runs = sectionResult<ComplianceRun[]>('bench/compliance.ts', [options.devices], RESULT_PREFIX);
      const ratios = complianceRatios(runs);
      const archive = archiveFigures(runs);
      output['compliance'] = { runs, ratios, archive };
      const at50 = ratios.find((r) => r.concurrency === 50)?.ratio;
      targets.push(atMost('compliance: durable engine / plain loop wall time, concurrency 50', at50, 1.25, '×'));
      const archived50 = archive.find((r) => r.concurrency === 50);
      targets.push(atMost('compliance: sync check + archive / sync none, no archive, wall time, concurrency 50', archived50?.ratio, 1.2, '×'));
      targets.push({
        name: `compliance: uploads of a second run over unchanged configurations (first run: ${archived50?.firstUploads ?? '?'})`,
        measured: String(archived50?.secondUploads ?? 'not measured'),
        limit: '= 0',
        pass: archived50?.secondUploads === 0,
      });
      tables.push(
        `Compliance batch, ${options.devices} simulated devices (per-device time: first fetch sent to report stored)\n` +
          formatTable(
            ['variant', 'concurrency', 'seconds', 'devices/s', 'p50 ms', 'p99 ms', 'RSS high-water MiB', 'uploads', 'ratio'],
            runs.map((r) => [
              r.variant,
              String(r.concurrency),
              String(r.seconds),
              String(r.devicesPerSecond),
              String(r.p50Ms),
              String(r.p99Ms),
              String(r.rssHighWaterMiB),
              r.uploads === undefined ? '' : String(r.uploads),
              r.variant === VARIANTS.engine
                ? `${ratios.find((x) => x.concurrency === r.concurrency)?.ratio}× of floor`
                : r.variant === VARIANTS.archived
                  ? `${archive.find((x) => x.concurrency === r.concurrency)?.ratio}× of none`
                  : '',
            ]),
            ['left', 'right'],
          ),
      );
    } catch (error) {
      say(`compliance measurement failed: ${(error as Error).message}`);
      output['compliance'] = { error: (error as Error).message };
      targets.push({ name: 'compliance: durable engine / plain loop, concurrency 50', measured: 'failed to run', limit: '≤ 1.25×', pass: false });
      targets.push({ name: 'compliance: sync check + archive / sync none, concurrency 50', measured: 'failed to run', limit: '≤ 1.2×', pass: false });
    }
  }

  if (!SKIP.has('remediation')) {
    // ── 8. Remediation dry-run ────────────────────────────────────────────────────────────
    say('remediation: a dry-run over 1,000 failing devices, durable engine against a plain loop…');
    const target = 'remediation: dry-run, durable engine / plain loop of the same NSO calls, concurrency 50';
    try {
      const runs = sectionResult<RemediationRun[]>('bench/remediation.ts', [], REMEDIATION_RESULT_PREFIX);
      const ratio = remediationRatio(runs);
      output['remediation'] = { runs, ratio };
      targets.push(atMost(target, ratio, 1.25, '×'));
      tables.push(
        `Remediation dry-run, ${runs[0]?.devices ?? '?'} failing devices (per-device time: first fetch sent to record stored; CPU: process + DynamoDB Local)\n` +
          formatTable(
            ['variant', 'round', 'seconds', 'devices/s', 'p50 ms', 'p99 ms', 'CPU s', 'start s', 'ratio'],
            runs.map((r) => [
              r.variant,
              String(r.round),
              String(r.seconds),
              String(r.devicesPerSecond),
              String(r.p50Ms),
              String(r.p99Ms),
              `${r.cpuSeconds} + ${r.dynamoCpuSeconds ?? '–'}`,
              r.startSeconds === undefined ? '' : String(r.startSeconds),
              r.variant === REMEDIATION_VARIANTS.engine ? `${ratio}× of floor (median)` : '',
            ]),
            ['left', 'right'],
          ),
      );
    } catch (error) {
      say(`remediation measurement failed: ${(error as Error).message}`);
      output['remediation'] = { error: (error as Error).message };
      targets.push({ name: target, measured: 'failed to run', limit: '≤ 1.25×', pass: false });
    }
  }

  if (!SKIP.has('rules')) {
    // ── 9. Rule evaluation ────────────────────────────────────────────────────────────────
    // On the project's Node 22, as the batch function runs it.
    const [smallest, largest] = [PATTERN_SIZES[0] / 1000, PATTERN_SIZES.at(-1)! / 1000];
    const PATTERN_TARGET = `rules: pathological pattern on ${largest} KB: time per KB at ${largest} KB / at ${smallest} KB`;
    say('rules: one device, the largest rules against the largest configurations…');
    try {
      const out = execFileSync(NODE, ['--import', 'tsx', 'bench/rules.ts'], { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      const runs = resultOf<RulesRun[]>(out, RULES_RESULT_PREFIX);
      output['rules'] = runs;
      tables.push(
        'Rule evaluation, one device (every expected entry found last in its list)\n' +
          formatTable(
            ['workload', 'evaluator', 'rules', 'rule bytes', 'config bytes', 'p50 ms', 'max ms', 'rounds'],
            runs.map((r) => [
              r.workload,
              r.evaluator,
              String(r.rules),
              formatBytes(r.ruleBytes),
              formatBytes(r.configBytes),
              ms(r.p50Ms),
              ms(r.maxMs),
              String(r.rounds),
            ]),
            ['left', 'left', 'right'],
          ),
      );
      const patterns = resultOf<PatternRun[]>(out, PATTERN_RESULT_PREFIX);
      output['rulesPattern'] = patterns;
      tables.push(
        'Pathological pattern (RE2), one `pattern` rule over one leaf\n' +
          formatTable(
            ['pattern', 'leaf bytes', 'config bytes', 'p50 ms', 'ms per KB', 'rounds'],
            patterns.map((r) => [r.pattern, formatBytes(r.valueBytes), formatBytes(r.configBytes), ms(r.p50Ms, 2), r.msPerKb.toFixed(3), String(r.rounds)]),
            ['left', 'right'],
          ),
      );
      targets.push(atMost(PATTERN_TARGET, patternGrowth(patterns), 2, '×'));
    } catch (error) {
      say(`rules measurement failed: ${(error as Error).message}`);
      output['rules'] = { error: (error as Error).message };
      targets.push({ name: PATTERN_TARGET, measured: 'failed to run', limit: '≤ 2.00×', pass: false });
    }
  }

  if (!SKIP.has('csv')) {
    // ── 10. CSV export memory ─────────────────────────────────────────────────────────────
    // In a child with a small old space: an export that held its rows could not finish there.
    say('csv: exporting 5,000 and 50,000 reports through the streaming handler…');
    try {
      const out = execFileSync(NODE, ['--expose-gc', `--max-old-space-size=${CSV_OLD_SPACE_MIB}`, '--import', 'tsx', 'bench/csv-export.ts'], {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const line = out.split('\n').find((l) => l.startsWith(CSV_RESULT_PREFIX));
      if (!line) throw new Error('no result line');
      const runs = JSON.parse(line.slice(CSV_RESULT_PREFIX.length)) as CsvRun[];
      output['csv'] = runs;
      tables.push(
        `CSV export of a batch's reports, streamed (old space capped at ${CSV_OLD_SPACE_MIB} MiB)\n` +
          formatTable(
            ['devices', 'CSV bytes', 'ms', 'peak heap', 'peak RSS'],
            runs.map((r) => [formatNumber(r.devices), formatBytes(r.bytes), ms(r.ms), formatBytes(r.peakHeapBytes), formatBytes(r.peakRssBytes)]),
            ['right'],
          ),
      );
      targets.push({ name: `CSV export of 50,000 devices within a ${CSV_OLD_SPACE_MIB} MiB old space`, measured: 'completed', limit: 'completes', pass: true });
    } catch (error) {
      say(`csv measurement failed: ${(error as Error).message}`);
      output['csv'] = { error: (error as Error).message };
      targets.push({
        name: `CSV export of 50,000 devices within a ${CSV_OLD_SPACE_MIB} MiB old space`,
        measured: 'failed to run',
        limit: 'completes',
        pass: false,
      });
    }
  }

  tables.unshift(
    'Bundles (bytes as CDK wrote them; SDK = @aws-sdk/@smithy/@aws-crypto bytes per esbuild metafile)\n' +
      formatTable(
        ['function', 'bundle', 'SDK', 'rebuilt identically', 'Ajv compiler', 'compiled at init'],
        [
          ...bundleRows.map((r) => [
            r.function,
            formatBytes(r.bytes),
            r.sdkBytes === undefined ? '–' : formatBytes(r.sdkBytes),
            r.rebuiltIdentically ? 'yes' : 'NO',
            r.ajvCompilerModules.length ? 'YES' : 'no',
            String(r.compiledAtInit ?? '–'),
          ]),
          ...Object.entries(fixtures)
            .filter(([k]) => !k.startsWith('warm'))
            .map(([k, b]) => [`(ref) ${k}`, formatBytes(b.bytes), '', '', '', k === 'lith' ? String(compilations.get('lith getTree') ?? '–') : '']),
        ],
      ),
  );

  output['targets'] = targets;
  output['machine'] = { ...(output['machine'] as object), loadAverageAtEnd: os.loadavg() };
  output['durationSeconds'] = (Date.now() - started) / 1000;
  writeFileSync(RESULTS_FILE, `${JSON.stringify(output, null, 2)}\n`);

  const verdicts = formatTable(
    ['target', 'measured', 'limit', ''],
    targets.map((t) => [t.name, t.measured, t.limit, t.limit === 'information' ? '' : t.pass ? 'pass' : 'FAIL']),
    ['left', 'right', 'left', 'left'],
  );
  const passed = targets.filter((t) => t.limit !== 'information' && t.pass).length;
  const counted = targets.filter((t) => t.limit !== 'information').length;
  process.stdout.write(
    `\n${tables.join('\n\n')}\n\nTargets (${passed}/${counted} met)\n${verdicts}\n\n` +
      `Node ${nodeVersion}, ${os.cpus().length} CPUs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; ` +
      `${((Date.now() - started) / 1000).toFixed(0)} s. Figures in ${path.relative(process.cwd(), RESULTS_FILE)}.\n`,
  );
} finally {
  await services?.stop();
  if (options.keep) say(`work directory kept: ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}
