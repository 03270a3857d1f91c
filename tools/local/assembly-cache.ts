/**
 * The local cloud assembly, built once per state of its inputs. `npm start` used to
 * synthesize and bundle everything on every start; now it keys the assembly by a content hash
 * of what goes into it — the functions' and the CDK app's sources, the lockfile, the
 * project's configuration files and the Node version — and serves the one it built before
 * when nothing changed. A change to any input gives another key, so a stale assembly is never
 * served. Port and data directory are not part of the key: they are rewritten when served
 * (`SynthInfo`).
 *
 * A new assembly is built in two steps: every function bundled in one esbuild run
 * (`bundles.ts`), then `cdk synth -c local=true` taking those bundles as the functions' code.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { synthesize } from './synth.js';

/** Where `npm start` keeps the assemblies it built: `.cache/local/`, or `NETCONFIG_START_CACHE`. */
export const defaultCacheDir = (): string =>
  process.env['NETCONFIG_START_CACHE'] ? path.resolve(process.env['NETCONFIG_START_CACHE']) : path.join(PROJECT_ROOT, '.cache', 'local');

/** Directories whose every file is an input (recursively). */
const INPUT_DIRS = ['functions', 'infra', 'deploy', 'console'];
/** Single files that are inputs: the lockfile, the project's configuration, and the code that builds the assembly. */
const INPUT_FILES = [
  'package-lock.json',
  'package.json',
  'cdk.json',
  'tsconfig.json',
  'tools/local/assembly-cache.ts',
  'tools/local/bundles.ts',
  'tools/local/synth.ts',
  'tools/local/config.ts',
];

/** The content hash of every input of the local assembly (paths and contents, in a stable order). */
export const assemblyKey = (root = PROJECT_ROOT): string => {
  const files = [
    ...INPUT_DIRS.flatMap((dir) =>
      existsSync(path.join(root, dir)) ? readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' }).map((f) => path.join(dir, f)) : [],
    ),
    ...INPUT_FILES,
  ]
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => existsSync(path.join(root, f)) && statSync(path.join(root, f)).isFile())
    .sort();
  const hash = createHash('sha256').update(`node ${process.version}\n`);
  for (const f of files)
    hash
      .update(`${f}\n`)
      .update(
        createHash('sha256')
          .update(readFileSync(path.join(root, f)))
          .digest('hex'),
      )
      .update('\n');
  return hash.digest('hex');
};

const READY_FILE = 'ready.json';
/** Assemblies kept besides the current one (another checkout state, or a stack still running on it). */
const KEEP_OTHERS = 1;

/**
 * Makes the cache directory (owner only) and refuses one another user owns or may write to: a
 * start runs the code it finds there, so a cache pointed at a shared place (`NETCONFIG_START_CACHE`
 * under `/tmp`, say) must not let anyone else plant an assembly.
 */
export const guardCacheDir = (cacheDir: string): void => {
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  const { uid, mode } = statSync(cacheDir);
  if (process.getuid !== undefined && uid !== process.getuid()) throw new Error(`${cacheDir} belongs to another user: npm start runs no code from it`);
  if (mode & 0o022) throw new Error(`${cacheDir} is writable by others (mode ${(mode & 0o777).toString(8)}): npm start runs no code from it; chmod go-w it`);
};

export interface LocalAssembly {
  /** The assembly directory (`cdk.out` layout). */
  readonly outDir: string;
  readonly key: string;
  /** False when it was built by this call. */
  readonly reused: boolean;
}

/**
 * The local assembly for the current sources: the one in `cacheDir` under their key, or a
 * new one built there (and the older ones but the last pruned).
 */
export const localAssembly = async (o: {
  readonly cacheDir?: string;
  readonly port: number;
  readonly log?: (line: string) => void;
}): Promise<LocalAssembly> => {
  const cacheDir = path.resolve(o.cacheDir ?? defaultCacheDir());
  guardCacheDir(cacheDir);
  const key = assemblyKey();
  const slot = path.join(cacheDir, key);
  const outDir = path.join(slot, 'cdk.out');
  if (existsSync(path.join(slot, READY_FILE))) {
    const now = new Date();
    utimesSync(slot, now, now);
    return { outDir, key, reused: true };
  }
  // Built aside and renamed into place: a start that fails half-way leaves nothing that looks ready.
  const work = path.join(cacheDir, `${key}.building-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  try {
    const bundlesDir = path.join(work, 'bundles');
    let t = Date.now();
    o.log?.('bundling the functions (one esbuild run)…');
    // Loaded only to build: the bundling options come with aws-cdk-lib, seconds to load.
    const { bundleFunctions } = await import('./bundles.js');
    await bundleFunctions(bundlesDir);
    o.log?.(`bundled in ${((Date.now() - t) / 1000).toFixed(1)} s; synthesizing the stack (cdk synth -c local=true)…`);
    t = Date.now();
    await synthesize({ outDir: path.join(work, 'cdk.out'), port: o.port, bundlesDir });
    o.log?.(`synthesized in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    // CDK copied each bundle into the assembly (asset.<hash>/).
    rmSync(bundlesDir, { recursive: true, force: true });
    // A source saved while building may be in this assembly or not: it is kept under no key.
    if (assemblyKey() !== key) throw new Error('the sources changed while the stack was being built; start again');
    writeFileSync(path.join(work, READY_FILE), `${JSON.stringify({ key, built: new Date().toISOString() })}\n`);
    if (existsSync(path.join(slot, READY_FILE))) {
      // Another start built the same key meanwhile (and may be serving it): its assembly is this one.
      rmSync(work, { recursive: true, force: true });
    } else {
      rmSync(slot, { recursive: true, force: true });
      renameSync(work, slot);
    }
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
  prune(cacheDir, key);
  return { outDir, key, reused: false };
};

/** Removes the assemblies of other keys but the most recently used, and leftovers of failed builds of this process. */
const prune = (cacheDir: string, current: string): void => {
  const others = readdirSync(cacheDir)
    .filter((name) => /^[0-9a-f]{64}$/.test(name) && name !== current)
    .map((name) => ({ name, used: statSync(path.join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { name } of others.slice(KEEP_OTHERS)) rmSync(path.join(cacheDir, name), { recursive: true, force: true });
};

/** The assembly of the cache used last, whatever the sources are now (`npm start -- --no-synth`). */
export const latestAssembly = (cacheDir = defaultCacheDir()): string => {
  const ready = existsSync(cacheDir)
    ? readdirSync(cacheDir)
        .filter((name) => /^[0-9a-f]{64}$/.test(name) && existsSync(path.join(cacheDir, name, READY_FILE)))
        .map((name) => ({ name, used: statSync(path.join(cacheDir, name)).mtimeMs }))
        .sort((a, b) => b.used - a.used)
    : [];
  if (!ready[0]) throw new Error(`no assembly built yet in ${cacheDir}: run npm start without --no-synth once`);
  return path.join(cacheDir, ready[0].name, 'cdk.out');
};
