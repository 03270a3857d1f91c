/**
 * Every function bundled in one esbuild run, with the very options `NodejsFunction` passes
 * ({@link FUNCTION_BUNDLING}), for the local synth (`localBundles` context, see
 * `infra/local-mode.ts`). CDK runs esbuild once per function, through `npx`: with 55 functions
 * that was most of a start's two to three minutes; one run parses each module once and builds
 * the entries on every core. The output is byte for byte CDK's own (the bench checks it on
 * every run, rebuilding each function with these options beside its CDK asset).
 */
import { build, type BuildOptions } from 'esbuild';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { FUNCTION_BUNDLING } from '../../infra/constructs/service-function.js';
import { localBundleDir } from '../../infra/local-mode.js';
import { PROJECT_ROOT } from '../../infra/paths.js';

/**
 * `esbuildArgs` of the CDK bundling options as esbuild API options. Only the arguments the
 * functions use are understood (`--alias:<module>=<path>`); anything else throws, so that
 * nothing is ever bundled differently from the functions without saying so.
 */
export const esbuildArgsAsOptions = (args: Readonly<Record<string, string | boolean>>): Pick<BuildOptions, 'alias'> => {
  const alias: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (key.startsWith('--alias:') && typeof value === 'string') alias[key.slice('--alias:'.length)] = value;
    else throw new Error(`esbuild argument ${key} of FUNCTION_BUNDLING is not understood; teach tools/local/bundles.ts about it`);
  }
  return Object.keys(alias).length ? { alias } : {};
};

/** esbuild's options for a function, derived from the CDK bundling options (as `NodejsFunction` passes them on its command line). */
export const esbuildOptionsFor = (bundling: typeof FUNCTION_BUNDLING = FUNCTION_BUNDLING): BuildOptions => ({
  bundle: true,
  platform: bundling.platform,
  target: bundling.target,
  format: bundling.format === OutputFormat.ESM ? 'esm' : 'cjs',
  minify: bundling.minify,
  sourcemap: bundling.sourceMap,
  mainFields: [...bundling.mainFields],
  banner: { js: bundling.banner },
  external: [...bundling.externalModules],
  ...esbuildArgsAsOptions(bundling.esbuildArgs),
  // CDK runs esbuild in the project root: entry and alias paths are relative to it.
  absWorkingDir: PROJECT_ROOT,
  logLevel: 'warning',
});

const HANDLER_EXPORT = /^export\s+(?:const|let|async\s+function|function)\s+handler\b|^export\s*\{[^}]*\bhandler\b[^}]*\}/m;

/**
 * The handler modules under `functions/` (`trees/get`): every module that exports `handler`.
 * A function the stack builds from a module not found here is bundled by CDK as usual.
 */
export const handlerModules = (root = PROJECT_ROOT): string[] => {
  const dir = path.join(root, 'functions');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && HANDLER_EXPORT.test(readFileSync(path.join(dir, f), 'utf8')))
    .map((f) => f.slice(0, -'.ts'.length).split(path.sep).join('/'))
    .sort();
};

/** Bundles each handler module into `<outDir>/<localBundleDir>/index.mjs`, all in one esbuild run. */
export const bundleFunctions = async (outDir: string, handlers: readonly string[] = handlerModules()): Promise<void> => {
  const entryPoints = Object.fromEntries(
    handlers.map((h) => [path.relative(outDir, path.join(localBundleDir(outDir, h), 'index')), path.join('functions', `${h}.ts`)]),
  );
  await build({ ...esbuildOptionsFor(), entryPoints, outdir: outDir, outExtension: { '.js': '.mjs' } });
};
