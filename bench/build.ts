/**
 * What the benchmark measures, built: the stack synthesized as `npm start` does
 * (`cdk synth -c local=true`), every function's bundle as CDK wrote it, and the reference
 * bundles (bare handler, SDK-only handler, Fastify Lambda-lith) built by esbuild with the very
 * options the functions are bundled with ({@link FUNCTION_BUNDLING}).
 *
 * Each function entry is also rebuilt here with a metafile; the rebuild must be byte-identical
 * to CDK's asset, which proves the options are the same and lets the metafile explain what is
 * in the deployed bundle.
 */
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { liveRoutes } from '../functions/api/routes.js';
import { PROJECT_ROOT } from '../infra/paths.js';
import { esbuildOptionsFor } from '../tools/local/bundles.js';
import { synthesize } from '../tools/local/synth.js';
import { parseTemplate, readCloudAssembly, type ApiModel, type CloudAssembly, type FunctionSpec } from '../tools/local/template.js';

/** One bundle on disk, with what esbuild says went into it. */
export interface Bundle {
  readonly name: string;
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly metafile?: Metafile;
}

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Bundles `entry` (relative to the project root) into `<outDir>/<name>/index.mjs` with the functions' options. */
export const bundleEntry = async (name: string, entry: string, outDir: string, overrides: BuildOptions = {}): Promise<Bundle> => {
  const file = path.join(outDir, name, 'index.mjs');
  mkdirSync(path.dirname(file), { recursive: true });
  const result = await build({ ...esbuildOptionsFor(), entryPoints: [entry], outfile: file, metafile: true, ...overrides });
  writeFileSync(path.join(outDir, name, 'meta.json'), JSON.stringify(result.metafile));
  return { name, file, bytes: statSync(file).size, sha256: sha256(file), metafile: result.metafile };
};

/** A function of the synthesized stack and its bundle. */
export interface StackFunction {
  /** CDK label, e.g. `GetTree`, `Auth/Authorizer`. */
  readonly label: string;
  /** Its handler module under `functions/` (`trees/get`). */
  readonly entry?: string;
  /** What it is measured as: its route's operation id (`getTree`), `authorizer`, or its label (`ComplianceBatch`). */
  readonly operation: string;
  readonly spec: FunctionSpec;
  /** CDK's bundle. */
  readonly asset: Bundle;
  /** `entry` rebuilt here with a metafile; byte-identical to `asset` unless the source changed since the synth. */
  readonly rebuild?: Bundle;
}

export interface BuiltStack {
  readonly assembly: CloudAssembly;
  readonly model: ApiModel;
  readonly functions: readonly StackFunction[];
}

const pascal = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

/** The functions that serve no route, by CDK label. */
const OTHER_FUNCTIONS: Readonly<Record<string, string>> = {
  'Auth/Authorizer': 'authorizer/handlers/authorize',
  ComplianceBatch: 'compliance/handlers/batch',
  ComplianceHousekeeping: 'api/handlers/housekeeping',
  RemediationRun: 'remediation/handlers/run',
  PlanScheduledRun: 'plans/handlers/scheduled-run',
};

/**
 * The handler module of a function, from its CDK label: `GetTree` is the function of route
 * `getTree` (the stack names each function after its operation); the others are listed above.
 */
export const entryOfLabel = (label: string): string | undefined => OTHER_FUNCTIONS[label] ?? liveRoutes.find((r) => pascal(r.operationId) === label)?.handler;

/**
 * What a function is measured and reported as, from its CDK label: its route's operation id
 * (two routes may share a handler module, never a function), `authorizer`, or the label itself.
 */
export const operationOfLabel = (label: string): string =>
  label === 'Auth/Authorizer' ? 'authorizer' : (liveRoutes.find((r) => pascal(r.operationId) === label)?.operationId ?? label);

/** Every handler module a function is built from: the route table's, and the others. */
export const functionEntries = (): string[] => [...new Set([...liveRoutes.map((r) => r.handler), ...Object.values(OTHER_FUNCTIONS)])];

/** Whether a function answers API requests (a route's, or the authorizer): those have a cold first call to measure. */
export const answersRequests = (entry: string | undefined): boolean => entry === 'authorizer/handlers/authorize' || liveRoutes.some((r) => r.handler === entry);

/**
 * Synthesizes (unless `cdkOut` names an assembly already synthesized with `-c local=true`),
 * reads the template, and rebuilds each function's entry beside its asset.
 */
export const buildStack = async (o: { workDir: string; cdkOut?: string; port: number; log: (line: string) => void }): Promise<BuiltStack> => {
  let outDir = o.cdkOut;
  if (!outDir) {
    outDir = path.join(o.workDir, 'cdk.out');
    o.log('synthesizing the stack (cdk synth -c local=true)…');
    await synthesize({ outDir, port: o.port });
  }
  const assembly = readCloudAssembly(outDir);
  const model = parseTemplate(assembly);
  const rebuilt = await Promise.all(
    functionEntries().map((entry) =>
      bundleEntry(entry.replaceAll('/', '-'), `functions/${entry}.ts`, path.join(o.workDir, 'rebuild')).then((b) => [entry, b] as const),
    ),
  );
  const functions = Object.values(model.functions).map((spec): StackFunction => {
    const file = path.join(spec.codeDir, `${spec.handler.slice(0, spec.handler.lastIndexOf('.'))}.mjs`);
    const asset: Bundle = { name: spec.label, file, bytes: statSync(file).size, sha256: sha256(file) };
    const entry = entryOfLabel(spec.label);
    const match = rebuilt.find(([e]) => e === entry);
    return { label: spec.label, operation: operationOfLabel(spec.label), spec, asset, ...(match ? { entry: match[0], rebuild: match[1] } : {}) };
  });
  return { assembly, model, functions };
};

/** The reference bundles: sources under `bench/fixtures/`. */
export const FIXTURES = {
  bare: 'bench/fixtures/bare.ts',
  sdkOnly: 'bench/fixtures/sdk-only.ts',
  sdkClient: 'bench/fixtures/sdk-client.ts',
  sdkHttp: 'bench/fixtures/sdk-http.ts',
  authorizerFloor: 'bench/fixtures/authorizer-floor.ts',
  lith: 'bench/fixtures/lith.ts',
  warmTrees: 'bench/fixtures/warm-trees.ts',
  warmRelay: 'bench/fixtures/warm-relay.ts',
  vaultFetch: 'bench/fixtures/vault-fetch.ts',
  vaultClient: 'bench/fixtures/vault-client.ts',
} as const;

export type FixtureName = keyof typeof FIXTURES;

/** Builds the reference bundles with the functions' options. */
export const buildFixtures = async (workDir: string): Promise<Record<FixtureName, Bundle>> => {
  const entries = Object.entries(FIXTURES) as [FixtureName, string][];
  const built = await Promise.all(entries.map(([name, entry]) => bundleEntry(name, entry, path.join(workDir, 'fixtures'))));
  return Object.fromEntries(built.map((b, i) => [entries[i]![0], b])) as Record<FixtureName, Bundle>;
};

/**
 * A benchmark of a durable function (`bench/compliance.ts`, `bench/remediation.ts`) as the
 * function runs on Lambda: this project's code bundled by esbuild with the functions' own
 * options (minified; TypeScript through tsx would keep every function's name with a `__name`
 * call each time a closure is made), the packages imported from node_modules rather than
 * bundled (the local durable runner starts worker threads from its own files). Written to
 * `dir`, which must be inside the project for the packages to resolve; `BENCH_BUNDLED` is
 * defined in it.
 */
export const buildBenchScript = async (dir: string, name: 'compliance' | 'remediation'): Promise<string> => {
  const file = path.join(dir, `${name}.mjs`);
  await build({
    ...esbuildOptionsFor(),
    entryPoints: [`bench/${name}.ts`],
    outfile: file,
    packages: 'external',
    define: { BENCH_BUNDLED: 'true' },
  });
  return file;
};

/**
 * A script the benchmark runs in child processes (`cold-child.ts`, `warm-child.ts`), bundled
 * unminified to `<workDir>/<name>.mjs` so that `node` runs it without a TypeScript loader.
 */
export const buildScript = async (workDir: string, name: 'cold-child' | 'warm-child'): Promise<string> => {
  const file = path.join(workDir, `${name}.mjs`);
  await build({
    entryPoints: [`bench/${name}.ts`],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    absWorkingDir: PROJECT_ROOT,
    logLevel: 'warning',
  });
  return file;
};
