/**
 * `npm start`: the synthesized stack on one machine, like `sam local start-api`. It
 * synthesizes the stack with `-c local=true` (or serves the assembly it built before when no
 * input changed: `assembly-cache.ts`), starts DynamoDB Local (data under `.local/`),
 * creates the tables the template declares, the embedded secrets store and the local token
 * issuer, serves the template's REST API on `http://127.0.0.1:${PORT:-3000}/v1` with every
 * function in its own worker, registers the NSO simulator as adapter `lab-nso`, and loads the
 * sample trees on the first start. Ctrl-C stops all of it.
 *
 * {@link startLocalStack} is the same thing as a function, for the end-to-end tests.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { LOCAL_ACCOUNT, LOCAL_API_ID, LOCAL_AUDIENCE, LOCAL_CREDENTIALS, LOCAL_DIR, LOCAL_REGION, localPort, type LocalState } from './config.js';
import { freePort, QUICK_START_JVM_OPTIONS, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';
import { startS3Local } from './s3-local.js';
import { poolInvoker, SchedulerFiring, type Fired } from './scheduler-firing.js';
import { startSchedulerSimulator } from '../simulators/scheduler-simulator.js';
import { functionEnvironment, type Rewrite } from './environment.js';
import { createGateway, type ExtraRoute } from './gateway.js';
import { localJwks, mintToken } from '../simulators/issuer.js';
import { localSignIn } from '../simulators/sign-in.js';
import { durableWorkerRunner, startLambdaInvokeEndpoint } from './lambda-invoke.js';
import { FunctionPool, type LogSink } from './lambda-pool.js';
import { unsupportedMapping } from './mapping.js';
import type { FleetSpec } from '../simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../simulators/nso-simulator.js';
import { describeEvent, startEventBridgeSimulator, type EventBridgeSimulator } from '../simulators/eventbridge-simulator.js';
import { documentClientFor, seedSampleTrees } from './seed.js';
import { readSynthInfo, synthesize, type SynthInfo } from './synth.js';
import { latestAssembly, localAssembly } from './assembly-cache.js';
import { ensureTables } from './tables.js';
import { localNames, parseTemplate, readCloudAssembly, type ApiModel, type CloudAssembly } from './template.js';

/** The adapter name the NSO simulator is registered under. */

/**
 * The fleet the local NSO simulator adds to ce0 and pe0: 20 devices, every fifth out of sync
 * (edge-00002, -00007, -00012, -00017), so a batch with sync `check` shows drift at once; and the
 * 20 devices of the standards sample tree (`std-<rule>-pass`/`-fail`, docs/trees.md).
 */
export const LOCAL_FLEET = { devices: 20, outOfSyncEvery: 5, standards: true } as const satisfies FleetSpec;
export const SIMULATOR_ADAPTER = 'lab-nso';

export interface LocalStackOptions {
  /** Gateway port; default `PORT` or 3000; 0 picks a free one. */
  readonly port?: number;
  /** Where data lives (DynamoDB, secrets, issuer key, state file); default `.local/`. */
  readonly dataDir?: string;
  /** Serve this already synthesized assembly (made with `-c local=true`) instead of synthesizing. */
  readonly cdkOut?: string;
  /** Synthesize into this directory on every start, instead of the assembly cache. */
  readonly outDir?: string;
  /**
   * Where the assemblies built from the sources are kept, by a content hash of their inputs
   * (`assembly-cache.ts`); default `.cache/local/` or `NETCONFIG_START_CACHE`.
   */
  readonly cacheDir?: string;
  /** The stack to serve when the assembly holds several. */
  readonly stackName?: string;
  /** Where function, gateway and progress lines go; default standard output. */
  readonly log?: LogSink;
  /** Load the sample trees when the tables are new; default true. */
  readonly sampleData?: boolean;
  /** Start the NSO simulator and register it as adapter `lab-nso`; default true. */
  readonly simulator?: boolean;
  /** Execution environments per function at most; default 10. */
  readonly maxConcurrency?: number;
  /**
   * Lifetime of the tokens the local sign-in issues to the console, seconds; default
   * `NETCONFIG_SIGN_IN_TTL` or an hour (a test of the console's refresh sets a few seconds).
   */
  readonly signInTtlSeconds?: number;
  /** Start DynamoDB Local with {@link QUICK_START_JVM_OPTIONS} (what `npm start` does); default false. */
  readonly quickJvm?: boolean;
}

export interface LocalStack {
  /** The stage base URL, e.g. `http://127.0.0.1:3000/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly stateFile: string;
  readonly dynamodbEndpoint: string;
  /** The DynamoDB Local (Java) process. */
  readonly dynamodbPid: number | undefined;
  /** The local S3 server (the configuration history's bucket). */
  readonly s3Endpoint: string;
  /** The local EventBridge: the events the functions put (`events.events`, `GET <url>/events`), also appended to `eventsFile`. */
  readonly events: EventBridgeSimulator;
  /** `<data directory>/events.jsonl`: every event put, one JSON object a line, kept across restarts. */
  readonly eventsFile: string;
  /** The local EventBridge Scheduler (the plans' schedules). */
  readonly schedulerEndpoint: string;
  /** Fires the schedules due up to `now` (the stack also ticks on the machine's clock). */
  fireSchedules(now: Date): Promise<readonly Fired[]>;
  /** Physical table names by table key (`trees`, `adapters`). */
  readonly tables: Readonly<Record<string, string>>;
  readonly model: ApiModel;
  /** True when this start created the tables (and so loaded the sample trees). */
  readonly firstStart: boolean;
  /** The NSO simulator behind adapter `lab-nso`, when started. */
  readonly simulator?: NsoSimulator;
  /** Mints a token of this stack's issuer. */
  token(roles: readonly string[], options?: { sub?: string; ttlSeconds?: number }): string;
  /** Environments started so far for a function (by label, e.g. `GetTree`). */
  coldStarts(label: string): number;
  /**
   * Heap in use (bytes) of each live environment, by function label (for load tests); after a
   * full garbage collection in each when `collectGarbage` (call it while the stack is idle);
   * only the `limit` oldest environments of each function when given.
   */
  functionHeaps(options?: { readonly collectGarbage?: boolean; readonly limit?: number }): Promise<Record<string, number[]>>;
  stop(): Promise<void>;
}

/** How often the local scheduler looks for due schedules: Scheduler's own precision is the minute. */
const SCHEDULER_TICK_MS = 10_000;

/** The names of the template's EventBridge Scheduler schedule groups. */
const scheduleGroups = (assembly: CloudAssembly): string[] =>
  Object.values(assembly.template.Resources)
    .filter((r) => r.Type === 'AWS::Scheduler::ScheduleGroup' && typeof r.Properties?.['Name'] === 'string')
    .map((r) => r.Properties!['Name'] as string);

const defaultLog: LogSink = (label, _stream, line) => process.stdout.write(`[${label}] ${line}\n`);

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Data directories of the stacks running in this process. */
const running = new Set<string>();

/**
 * Refuses a second stack on the same data (two DynamoDB Local processes on one database file).
 * A state file left by a run that crashed names a process that is gone: it is overwritten (the
 * JVM of that run ended with it, see `dynamodb-local.ts`).
 */
const claimDataDir = (dataDir: string, stateFile: string): void => {
  if (running.has(dataDir)) throw new Error(`a local stack in this process already uses ${dataDir}`);
  if (existsSync(stateFile)) {
    let state: Partial<LocalState> = {};
    try {
      state = JSON.parse(readFileSync(stateFile, 'utf8')) as Partial<LocalState>;
    } catch {
      // A damaged state file says nothing: it is rewritten once the stack runs.
    }
    if (typeof state.pid === 'number' && state.pid !== process.pid && isAlive(state.pid)) {
      throw new Error(`a local stack (pid ${state.pid}, ${state.baseUrl}) already uses ${dataDir}: stop it first (Ctrl-C in its terminal)`);
    }
  }
  running.add(dataDir);
};

/** Creates the embedded secrets store file (format of `functions/outbound/secrets/local.ts`) when absent. */
const ensureSecretsStore = (file: string): void => {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (!existsSync(file)) writeFileSync(file, `${JSON.stringify({ version: 1, secrets: {} })}\n`, { mode: 0o600, flag: 'wx' });
};

export interface ServeOptions {
  readonly assembly: CloudAssembly;
  readonly model: ApiModel;
  /** What was baked into the template at synth time. */
  readonly synthInfo: SynthInfo;
  readonly port: number;
  readonly dataDir: string;
  readonly dynamodbEndpoint: string;
  /** The local S3 server the functions use. */
  readonly s3Endpoint?: string;
  /** The local EventBridge simulator the functions use. */
  readonly eventsEndpoint?: string;
  /** The local EventBridge Scheduler the functions use. */
  readonly schedulerEndpoint?: string;
  readonly log: LogSink;
  readonly maxConcurrency?: number;
  readonly extraRoutes?: readonly ExtraRoute[];
}

export interface ServedApi {
  readonly baseUrl: string;
  readonly pools: ReadonlyMap<string, FunctionPool>;
  /** The local secrets store files the functions use (`SECRETS_FILE`). */
  readonly secretsFiles: ReadonlySet<string>;
  stop(): Promise<void>;
}

/**
 * Serves a parsed template on `127.0.0.1:<port>`: one pool of workers per function, with the
 * template's environment resolved to local values, behind the local gateway.
 */
export const serveAssembly = async (o: ServeOptions): Promise<ServedApi> => {
  const say = (line: string) => o.log('local', 'stdout', line);
  const { model } = o;
  const names = localNames(o.assembly.template, {
    stackName: model.stackName,
    region: LOCAL_REGION,
    accountId: LOCAL_ACCOUNT,
    apiId: LOCAL_API_ID,
    stageName: model.stageName,
  });
  const rewrites: Rewrite[] = [
    { from: o.synthInfo.localDir, to: o.dataDir },
    { from: `http://127.0.0.1:${o.synthInfo.port}`, to: `http://127.0.0.1:${o.port}` },
  ];
  const pools = new Map<string, FunctionPool>();
  const secretsFiles = new Set<string>();
  const environments = new Map<string, Record<string, string>>();
  for (const fn of Object.values(model.functions)) {
    const { environment, unresolved } = functionEnvironment(fn, o.assembly.template, names, {
      region: LOCAL_REGION,
      dynamodbEndpoint: o.dynamodbEndpoint,
      ...(o.s3Endpoint ? { s3Endpoint: o.s3Endpoint } : {}),
      ...(o.eventsEndpoint ? { eventsEndpoint: o.eventsEndpoint } : {}),
      ...(o.schedulerEndpoint ? { schedulerEndpoint: o.schedulerEndpoint } : {}),
      credentials: LOCAL_CREDENTIALS,
      rewrites,
      ...(process.env['PATH'] ? { path: process.env['PATH'] } : {}),
    });
    if (unresolved.length) say(`warning: ${fn.label}: no local value for ${unresolved.join(', ')}; left unset`);
    if (environment['SECRETS_BACKEND'] === 'local' && environment['SECRETS_FILE']) secretsFiles.add(environment['SECRETS_FILE']);
    environments.set(fn.logicalId, environment);
  }
  // Durable functions are started through Lambda's Invoke API, served here on its own port.
  const durable = Object.values(model.functions)
    .filter((fn) => fn.durable)
    .map((fn) => ({
      fn,
      runner: durableWorkerRunner({ ...fn, environment: environments.get(fn.logicalId)!, log: (kind, line) => o.log(fn.label, kind, line) }),
    }));
  const lambdaApi = durable.length
    ? await startLambdaInvokeEndpoint({ functions: new Map(durable.map((d) => [d.fn.name, d.runner])), log: (line) => o.log('lambda', 'stdout', line) })
    : undefined;
  const closeDurable = async () => {
    await lambdaApi?.close();
    await Promise.all(durable.map((d) => d.runner.close()));
  };
  for (const fn of Object.values(model.functions)) {
    if (fn.durable) continue;
    const environment = { ...environments.get(fn.logicalId)!, ...(lambdaApi ? { AWS_ENDPOINT_URL_LAMBDA: lambdaApi.url } : {}) };
    const arn = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${fn.name}`;
    pools.set(
      fn.logicalId,
      new FunctionPool(
        {
          name: fn.name,
          label: fn.label,
          arn,
          codeDir: fn.codeDir,
          handler: fn.handler,
          memoryMb: fn.memoryMb,
          timeoutSeconds: fn.timeoutSeconds,
          environment,
        },
        { log: o.log, ...(o.maxConcurrency ? { maxConcurrency: o.maxConcurrency } : {}) },
      ),
    );
  }
  for (const m of model.methods) {
    if (m.integration.type !== 'MOCK') continue;
    const templates = [
      ...Object.values(m.integration.requestTemplates),
      ...m.integration.integrationResponses.flatMap((r) => Object.values(r.responseTemplates)),
    ];
    const why = templates.map(unsupportedMapping).find(Boolean);
    if (why) say(`warning: ${m.httpMethod} ${m.resourcePath} uses ${why}, which the local gateway does not evaluate`);
  }
  const gateway = createGateway({
    model,
    region: LOCAL_REGION,
    accountId: LOCAL_ACCOUNT,
    apiId: LOCAL_API_ID,
    invoke: (functionId, eventJson, options) => {
      const pool = pools.get(functionId);
      if (!pool) throw new Error(`no function ${functionId}`);
      return pool.invoke(eventJson, options);
    },
    ...(o.extraRoutes ? { extraRoutes: o.extraRoutes } : {}),
    log: (line) => o.log('gateway', 'stdout', line),
  });
  try {
    await gateway.listen(o.port);
  } catch (error) {
    await Promise.all([...pools.values()].map((p) => p.close()));
    await closeDurable();
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === 'EADDRINUSE' ? `port ${o.port} is in use: set PORT to another port` : (error as Error).message);
  }
  return {
    baseUrl: `http://127.0.0.1:${o.port}/${model.stageName}`,
    pools,
    secretsFiles,
    stop: async () => {
      await gateway.close();
      await Promise.all([...pools.values()].map((p) => p.close()));
      await closeDurable();
    },
  };
};

/** Starts the whole local stack; resolves once it answers requests. */
export const startLocalStack = async (options: LocalStackOptions = {}): Promise<LocalStack> => {
  const log = options.log ?? defaultLog;
  const say = (line: string) => log('local', 'stdout', line);
  const dataDir = path.resolve(options.dataDir ?? LOCAL_DIR);
  const stateFile = path.join(dataDir, 'state.json');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  claimDataDir(dataDir, stateFile);
  const stops: (() => Promise<void>)[] = [async () => void running.delete(dataDir)];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch((error: unknown) => say(`while stopping: ${(error as Error).message}`));
  };
  let dynamoStarting: Promise<DynamoDbLocal> | undefined;
  try {
    const port = options.port === 0 ? await freePort() : (options.port ?? localPort());
    // DynamoDB Local (a JVM) starts while CDK synthesizes: both take seconds.
    dynamoStarting = startDynamoDbLocal({ path: path.join(dataDir, 'dynamodb'), ...(options.quickJvm ? { jvmOptions: QUICK_START_JVM_OPTIONS } : {}) }).then(
      (d) => {
        stops.push(() => d.stop());
        return d;
      },
      (error: unknown) => {
        throw new Error(`${(error as Error).message}. DynamoDB Local needs a Java runtime (11 or later) on PATH.`);
      },
    );
    dynamoStarting.catch(() => undefined);

    // 1. The template: given, built from the sources (or reused when they did not change), or synthesized now.
    let outDir = options.cdkOut;
    if (!outDir && options.outDir) {
      outDir = path.resolve(options.outDir);
      say(`synthesizing the stack (cdk synth -c local=true) into ${path.relative(PROJECT_ROOT, outDir) || '.'}…`);
      await synthesize({ outDir, port });
    } else if (!outDir) {
      const built = await localAssembly({ port, log: say, ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
      outDir = built.outDir;
      say(
        `${built.reused ? 'serving the assembly built before from unchanged sources' : 'built the assembly'} (${path.relative(PROJECT_ROOT, outDir) || outDir})`,
      );
    }
    const assembly = readCloudAssembly(outDir, options.stackName);
    const model = parseTemplate(assembly);
    const synthInfo = readSynthInfo(outDir);

    // 2. DynamoDB Local and the template's tables.
    const dynamo = await dynamoStarting;
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 3 });
    stops.push(async () => client.destroy());
    const tableSpecs = Object.values(model.tables);
    const report = await ensureTables(client, tableSpecs);
    const firstStart = report.created.length > 0 && report.existing.length === 0;
    const tables = Object.fromEntries(tableSpecs.filter((t) => t.key).map((t) => [t.key!, t.name]));
    // The local S3 server and the template's buckets (objects under the data directory).
    const s3 = await startS3Local({ directory: path.join(dataDir, 's3'), buckets: Object.values(model.buckets), credentials: LOCAL_CREDENTIALS });
    stops.push(() => s3.stop());
    // The local EventBridge: the template's buses, each event kept in the data directory and printed.
    const eventsFile = path.join(dataDir, 'events.jsonl');
    const events = await startEventBridgeSimulator({
      buses: Object.values(model.eventBuses),
      file: eventsFile,
      region: LOCAL_REGION,
      account: LOCAL_ACCOUNT,
      onEvent: (event) => log('events', 'stdout', describeEvent(event)),
    });
    stops.push(() => events.close());
    // The local EventBridge Scheduler, with the template's schedule groups (schedules under the data directory).
    const scheduler = await startSchedulerSimulator({
      file: path.join(dataDir, 'scheduler', 'schedules.json'),
      groups: scheduleGroups(assembly),
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT,
    });
    stops.push(() => scheduler.close());

    // 3. The token issuer (its key pair lives in the data directory) and the API with its functions.
    const issuerDir = path.join(dataDir, 'issuer');
    const jwks = JSON.stringify(localJwks(issuerDir));
    const ttl = options.signInTtlSeconds ?? (process.env['NETCONFIG_SIGN_IN_TTL'] ? Number(process.env['NETCONFIG_SIGN_IN_TTL']) : undefined);
    const signIn = localSignIn({
      consoleUrl: consoleUrlOf(`http://127.0.0.1:${port}/${model.stageName}`),
      clientId: LOCAL_AUDIENCE,
      issuerDir,
      ...(ttl !== undefined ? { ttlSeconds: ttl } : {}),
    });
    const served = await serveAssembly({
      assembly,
      model,
      synthInfo,
      port,
      dataDir,
      dynamodbEndpoint: dynamo.endpoint,
      s3Endpoint: s3.endpoint,
      eventsEndpoint: events.url,
      schedulerEndpoint: scheduler.url,
      log,
      ...(options.maxConcurrency ? { maxConcurrency: options.maxConcurrency } : {}),
      extraRoutes: [
        {
          method: 'GET',
          path: '/.well-known/jwks.json',
          handle: () => ({ statusCode: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' }, body: jwks }),
        },
        // The console's sign-in (Cognito's hosted-UI paths).
        ...signIn.routes,
      ],
    });
    stops.push(() => served.stop());
    // What is due fires on the machine's clock, through the functions' pools.
    const firing = new SchedulerFiring({
      schedules: () => scheduler.schedules(),
      invoke: poolInvoker(served.pools.values()),
      stateFile: path.join(dataDir, 'scheduler', 'firing.json'),
      log: (line) => log('scheduler', 'stdout', line),
    });
    firing.start(SCHEDULER_TICK_MS);
    stops.push(() => firing.stop());
    // 4. The embedded secrets store.
    for (const file of served.secretsFiles) ensureSecretsStore(file);
    const baseUrl = served.baseUrl;
    const token = (roles: readonly string[], o: { sub?: string; ttlSeconds?: number } = {}) => mintToken({ roles, dir: issuerDir, ...o });

    // 5. The NSO simulator, registered through the real API so that its password takes the secrets path.
    let simulator: NsoSimulator | undefined;
    if (options.simulator ?? true) {
      const credentials = { username: 'admin', password: randomBytes(18).toString('base64url') };
      const sim = await startNsoSimulator({ credentials, fleet: LOCAL_FLEET });
      simulator = sim;
      stops.push(() => sim.close());
      const res = await fetch(`${baseUrl}/adapters/${SIMULATOR_ADAPTER}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token(['admin'], { sub: 'local-stack', ttlSeconds: 60 })}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'nso', baseUrl: sim.url, auth: { type: 'basic', ...credentials } }),
      });
      const text = await res.text();
      if (res.status !== 200 && res.status !== 201)
        throw new Error(`registering the NSO simulator as adapter ${SIMULATOR_ADAPTER} failed: ${res.status} ${text}`);
      say(
        `NSO simulator on ${sim.url}, registered as adapter ${SIMULATOR_ADAPTER} (fleet edge-00000…edge-${String(LOCAL_FLEET.devices - 1).padStart(5, '0')}, some out of sync; std-* for the standards sample tree)`,
      );
    }

    // 6. Sample trees on the first start.
    if (firstStart && (options.sampleData ?? true) && tables['trees']) {
      const seeded = await seedSampleTrees(documentClientFor(client), tables['trees']);
      say(`loaded ${seeded.written.length} sample trees${seeded.rejected.length ? ` (${seeded.rejected.length} rejected)` : ''}`);
    }

    // 7. What `npm run seed` and `npm run token` need to find this stack.
    const state: LocalState = {
      baseUrl,
      dynamodbEndpoint: dynamo.endpoint,
      tables,
      pid: process.pid,
      dataDir,
      region: LOCAL_REGION,
      ...(dynamo.process.pid ? { dynamodbPid: dynamo.process.pid } : {}),
    };
    writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    stops.push(async () => rmSync(stateFile, { force: true }));

    let stopped: Promise<void> | undefined;
    return {
      baseUrl,
      port,
      dataDir,
      stateFile,
      dynamodbEndpoint: dynamo.endpoint,
      dynamodbPid: dynamo.process.pid,
      s3Endpoint: s3.endpoint,
      events,
      eventsFile,
      schedulerEndpoint: scheduler.url,
      fireSchedules: (now) => firing.tick(now),
      tables,
      model,
      firstStart,
      ...(simulator ? { simulator } : {}),
      token,
      coldStarts: (label) => [...served.pools.values()].find((p) => p.fn.label === label)?.coldStarts ?? 0,
      functionHeaps: async (o = {}) => {
        const heaps: Record<string, number[]> = {};
        for (const p of served.pools.values()) heaps[p.fn.label] = (await p.heapStatistics(o)).map((h) => h.used_heap_size);
        return heaps;
      },
      stop: () => (stopped ??= stopAll()),
    };
  } catch (error) {
    await dynamoStarting?.catch(() => undefined);
    await stopAll();
    throw error;
  }
};

/** The web console's address under a stage's base URL. */
export const consoleUrlOf = (baseUrl: string): string => `${baseUrl}/console`;

/** The lines `npm start` prints once the stack answers. */
export const readyBanner = (
  stack: Pick<LocalStack, 'baseUrl' | 'dataDir' | 'model' | 's3Endpoint' | 'eventsFile' | 'schedulerEndpoint'> & {
    readonly events: Pick<EventBridgeSimulator, 'url'>;
  },
  token: string,
  seconds: number,
): string => {
  const functions = Object.keys(stack.model.functions).length;
  const relative = path.relative(process.cwd(), stack.dataDir);
  const where = relative === '' ? '.' : relative.startsWith('..') ? stack.dataDir : relative;
  const methods = stack.model.methods.length;
  return [
    '',
    `Local stack ready in ${seconds.toFixed(1)} s: ${methods} methods, ${functions} functions, data in ${where}`,
    `  Base URL: ${stack.baseUrl}`,
    `  Console: ${consoleUrlOf(stack.baseUrl)}   (sign in as admin or apiread)`,
    `  S3 (configuration history): ${stack.s3Endpoint}`,
    `  Compliance events: ${stack.events.url}/events, kept in ${path.relative(process.cwd(), stack.eventsFile) || stack.eventsFile} (each printed below as [events])`,
    `  EventBridge Scheduler (plans' schedules): ${stack.schedulerEndpoint}`,
    '',
    '  Try it (the token below is valid for one hour):',
    `    export BASE=${stack.baseUrl}`,
    `    export TOKEN=${token}`,
    '    curl -s -H "Authorization: Bearer $TOKEN" "$BASE/configuration_manager/configs"',
    '',
    '  More tokens: npm run --silent token -- --roles admin     (or apiread)',
    '  Stop: Ctrl-C',
    '',
  ].join('\n');
};

const START_USAGE = 'usage: npm start [-- --no-synth | --cdk-out DIR]   (PORT and NETCONFIG_LOCAL_DIR in the environment)';

/**
 * `npm start` options: `--no-synth` serves the assembly built last, even if the sources changed
 * since (an unchanged source tree is served from the cache anyway); `--cdk-out DIR` serves
 * another one (synthesized with `-c local=true`).
 */
export const parseStartArgs = (argv: readonly string[]): LocalStackOptions => {
  const { values } = parseArgs({
    args: [...argv],
    options: { 'no-synth': { type: 'boolean' }, 'cdk-out': { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) throw new Error(START_USAGE);
  if (values['cdk-out']) return { cdkOut: path.resolve(values['cdk-out']) };
  if (values['no-synth']) return { cdkOut: latestAssembly() };
  return {};
};

const main = async (): Promise<void> => {
  const started = Date.now();
  let stack: LocalStack | undefined;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      process.stderr.write('stopping already; forcing exit\n');
      process.exit(1);
    }
    stopping = true;
    process.stdout.write(`\n${signal}: stopping the local stack…\n`);
    // While starting, the start below finishes first and then stops what it started.
    if (stack) void stack.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  try {
    stack = await startLocalStack({ ...parseStartArgs(process.argv.slice(2)), quickJvm: true });
  } catch (error) {
    process.stderr.write(`npm start failed: ${(error as Error).message}\n`);
    process.exit(1);
  }
  if (stopping) {
    await stack.stop();
    process.exit(0);
  }
  process.stdout.write(readyBanner(stack, stack.token(['admin']), (Date.now() - started) / 1000));
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
