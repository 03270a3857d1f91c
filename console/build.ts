/**
 * Builds the web console (`console/src/`) for the browser: one esbuild run, minified, content-hashed
 * names (`assets/<name>-<hash>.js|css`), an `index.html` template and a `manifest.json`. The same
 * sources always give the same bytes, so a synth without a change in `console/` changes no asset.
 *
 * `index.html` names its assets as `%BASE%/console/assets/…`: the console function writes its own
 * base path there per request (`functions/console/service.ts`), since API Gateway cannot tell
 * `/console/` from `/console` and relative URLs would resolve differently for each.
 *
 * The stack synth (`infra/stack.ts`), the local stack and the tests call {@link buildConsole};
 * `npx tsx console/build.ts [outDir]` builds and prints each asset's gzip size.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildSync, type Metafile, type OutputFile } from 'esbuild';

const CONSOLE_ROOT = path.dirname(fileURLToPath(import.meta.url));
/** Where the entry points lie. */
export const CONSOLE_SOURCES = path.join(CONSOLE_ROOT, 'src');
/** What `index.html` writes in place of the base path (the stage, e.g. `/v1`), replaced per request. */
export const BASE_PLACEHOLDER = '%BASE%';

/** One built file under `assets/`. */
export interface ConsoleAsset {
  readonly file: string;
  readonly contentType: string;
  readonly bytes: number;
  /** Its size gzipped (level 9), as API Gateway's compression sends it, give or take the level. */
  readonly gzipBytes: number;
}

/** `manifest.json`: what the build wrote and what the first load needs. */
export interface ConsoleManifest {
  /** Every asset by its name under `assets/`. */
  readonly assets: Readonly<Record<string, ConsoleAsset>>;
  /** The files `index.html` references: the entry script, the chunks it imports statically, the style sheet. */
  readonly firstLoad: { readonly scripts: readonly string[]; readonly styles: readonly string[] };
}

export interface BuiltConsole {
  /** The directory holding `index.html`, `manifest.json` and `assets/`. */
  readonly dir: string;
  readonly manifest: ConsoleManifest;
  /** The gzip size of the JavaScript `index.html` loads. */
  readonly firstLoadScriptGzipBytes: number;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The statically imported closure of an output: what the browser loads before the entry runs. */
const staticClosure = (metafile: Metafile, start: string): string[] => {
  const seen = new Set<string>();
  const visit = (output: string) => {
    if (seen.has(output)) return;
    seen.add(output);
    for (const i of metafile.outputs[output]?.imports ?? []) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(start);
  return [...seen];
};

const integrity = (contents: Uint8Array): string => `sha384-${createHash('sha384').update(contents).digest('base64')}`;

/** The page: no inline script or style, every asset with its SRI hash; `%BASE%` is the API's base path. */
const indexHtml = (scripts: readonly OutputFile[], styles: readonly OutputFile[], rel: (f: OutputFile) => string): string => {
  const url = (f: OutputFile) => `${BASE_PLACEHOLDER}/console/${rel(f)}`;
  const [entry, ...chunks] = scripts;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // No icon: without this line every browser asks the origin for /favicon.ico, which is not the console's.
    '<link rel="icon" href="data:,">',
    '<title>Netconfig console</title>',
    ...styles.map((f) => `<link rel="stylesheet" href="${url(f)}" integrity="${integrity(f.contents)}">`),
    ...chunks.map((f) => `<link rel="modulepreload" href="${url(f)}" integrity="${integrity(f.contents)}">`),
    ...(entry ? [`<script type="module" src="${url(entry)}" integrity="${integrity(entry.contents)}"></script>`] : []),
    '</head>',
    '<body>',
    '<div id="app"></div>',
    '<noscript>The console needs JavaScript.</noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
};

/** Builds into memory: the files of the output directory, by their path in it. */
export const buildConsoleFiles = (): { files: Map<string, Uint8Array>; manifest: ConsoleManifest } => {
  const outdir = path.join(tmpdir(), 'netconfig-console-out');
  const result = buildSync({
    entryPoints: { main: path.join(CONSOLE_SOURCES, 'main.tsx'), styles: path.join(CONSOLE_SOURCES, 'styles.css') },
    absWorkingDir: CONSOLE_ROOT,
    outdir,
    bundle: true,
    minify: true,
    format: 'esm',
    splitting: true,
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: 'assets/[name]-[hash]',
    chunkNames: 'assets/chunk-[hash]',
    assetNames: 'assets/[name]-[hash]',
    legalComments: 'none',
    sourcemap: false,
    charset: 'utf8',
    metafile: true,
    write: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const rel = (f: OutputFile) => path.relative(outdir, f.path).split(path.sep).join('/');
  const byRel = new Map(result.outputFiles.map((f) => [rel(f), f]));
  const metaKey = (f: OutputFile) => path.relative(CONSOLE_ROOT, f.path).split(path.sep).join('/');
  const outputs = Object.entries(result.metafile.outputs);
  const entryOf = (name: string) => outputs.find(([, o]) => o.entryPoint && path.basename(o.entryPoint).startsWith(`${name}.`))?.[0];
  const mainKey = entryOf('main');
  if (!mainKey) throw new Error('the console build produced no entry script');
  const toFile = (key: string) => result.outputFiles.find((f) => metaKey(f) === key)!;
  const scripts = staticClosure(result.metafile, mainKey).map(toFile);
  const styles = result.outputFiles.filter((f) => f.path.endsWith('.css'));
  const assets = Object.fromEntries(
    [...byRel]
      .filter(([name]) => name.startsWith('assets/'))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, f]) => {
        const file = name.slice('assets/'.length);
        const contentType = CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream';
        return [file, { file, contentType, bytes: f.contents.length, gzipBytes: gzipSync(f.contents, { level: 9 }).length }];
      }),
  );
  const manifest: ConsoleManifest = {
    assets,
    firstLoad: { scripts: scripts.map((f) => rel(f).slice('assets/'.length)), styles: styles.map((f) => rel(f).slice('assets/'.length)) },
  };
  const files = new Map<string, Uint8Array>([...byRel].filter(([name]) => name.startsWith('assets/')).map(([name, f]) => [name, f.contents]));
  files.set('index.html', Buffer.from(indexHtml(scripts, styles, rel)));
  files.set('manifest.json', Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  return { files, manifest };
};

const built = new Map<string, BuiltConsole>();

/**
 * Builds the console into `<parent>/console-<hash of the output>/` (default: the system's
 * temporary directory) and answers that directory. The name follows the content, and a directory
 * is written under a temporary name then renamed into place, so concurrent builds (parallel
 * synths) never see a half-written one and an unchanged console is written once. Synchronous
 * (esbuild's `buildSync`), since a CDK stack is built in its constructor; once per process and parent.
 */
export const buildConsole = (parent: string = path.join(tmpdir(), 'netconfig-console')): BuiltConsole => {
  const cached = built.get(parent);
  if (cached) return cached;
  const run = (() => {
    const { files, manifest } = buildConsoleFiles();
    const hash = createHash('sha256');
    for (const [name, contents] of [...files].sort(([a], [b]) => a.localeCompare(b))) hash.update(`${name}\0${contents.length}\0`).update(contents);
    const dir = path.join(parent, `console-${hash.digest('hex').slice(0, 16)}`);
    if (!existsSync(path.join(dir, 'manifest.json'))) {
      const temp = `${dir}.${process.pid}.${Date.now()}.tmp`;
      for (const [name, contents] of files) {
        mkdirSync(path.dirname(path.join(temp, name)), { recursive: true });
        writeFileSync(path.join(temp, name), contents);
      }
      try {
        renameSync(temp, dir);
      } catch (error) {
        // Another build wrote the same content first.
        rmSync(temp, { recursive: true, force: true });
        if (!existsSync(path.join(dir, 'manifest.json'))) throw error;
      }
    }
    const firstLoadScriptGzipBytes = manifest.firstLoad.scripts.reduce((sum, f) => sum + manifest.assets[f]!.gzipBytes, 0);
    return { dir, manifest, firstLoadScriptGzipBytes };
  })();
  built.set(parent, run);
  return run;
};

/** One line per asset: its name, size and gzip size. */
export const sizeReport = (console: BuiltConsole): string[] => [
  ...Object.values(console.manifest.assets).map((a) => `${a.file}  ${a.bytes} B, ${a.gzipBytes} B gzipped`),
  `first-load JavaScript: ${console.firstLoadScriptGzipBytes} B gzipped`,
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = buildConsole(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  process.stdout.write(`${result.dir}\n${sizeReport(result).join('\n')}\n`);
}
