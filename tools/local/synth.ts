/**
 * Runs `cdk synth -c local=true` into an output directory, as `npm run synth` would, with the
 * port the local gateway will listen on (the authorizer's JWKS URL is baked into the template).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LOCAL_BUNDLES_CONTEXT } from '../../infra/local-mode.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { LOCAL_DIR } from './config.js';

/** What a local synth baked into the template, kept next to it so that another run can move it. */
export interface SynthInfo {
  /** The gateway port the template names (the authorizer's JWKS URL). */
  readonly port: number;
  /** The data directory the template names (`SECRETS_FILE`). */
  readonly localDir: string;
}

const SYNTH_INFO_FILE = 'netconfig-local.json';

/** The synth info of an assembly; for one synthesized by hand (`npx cdk synth -c local=true`), the defaults it used. */
export const readSynthInfo = (outDir: string): SynthInfo => {
  const file = path.join(outDir, SYNTH_INFO_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SynthInfo) : { port: Number(process.env['PORT'] ?? 3000), localDir: LOCAL_DIR };
};

const cdkCli = (): string => createRequire(path.join(PROJECT_ROOT, 'package.json')).resolve('aws-cdk/bin/cdk');

export interface SynthOptions {
  readonly outDir: string;
  /** The gateway port the template is synthesized for (`PORT`). */
  readonly port: number;
  /** Function bundles built ahead (`tools/local/bundles.ts`), taken instead of bundling each function again. */
  readonly bundlesDir?: string;
  /** Extra `-c key=value` context. */
  readonly context?: Readonly<Record<string, string>>;
  /** Receives each line CDK prints. */
  readonly log?: (line: string) => void;
}

/** Synthesizes the local stack (and records its synth info); throws with CDK's last lines of output when it fails. */
export const synthesize = (options: SynthOptions): Promise<void> =>
  new Promise((resolve, reject) => {
    const context = Object.entries({
      local: 'true',
      ...(options.bundlesDir ? { [LOCAL_BUNDLES_CONTEXT]: options.bundlesDir } : {}),
      ...options.context,
    }).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    const binDirs = [path.dirname(process.execPath), path.join(PROJECT_ROOT, 'node_modules', '.bin')];
    // The app as cdk.json runs it, without the `npx` in front. CDK's built-in template
    // validation (half of the synth's CPU time, ~14 s of 27 on 2 cores) is left out: it never
    // fails a synth of this app and changes nothing in the template; `npm run synth` and
    // `npm run deploy` still run it.
    const app = `"${process.execPath}" --import tsx infra/app.ts`;
    const child = spawn(process.execPath, [cdkCli(), 'synth', '--app', app, ...context, '--quiet', '--output', options.outDir], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, PORT: String(options.port), CDK_VALIDATION: 'false', PATH: [...binDirs, process.env['PATH'] ?? ''].join(path.delimiter) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        options.log?.(line);
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) {
        writeFileSync(path.join(options.outDir, SYNTH_INFO_FILE), JSON.stringify({ port: options.port, localDir: LOCAL_DIR } satisfies SynthInfo));
        resolve();
      } else reject(new Error(`cdk synth failed (exit ${code}):\n${tail.join('\n')}`));
    });
  });
