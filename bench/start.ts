/**
 * Start section of `npm run bench` (also `npx tsx bench/start.ts [--rounds N]`): seconds from
 * `npm start` to its ready banner, as a developer meets them.
 *
 * - `fresh`: a fresh clone, nothing built yet — an empty assembly cache and data directory,
 *   so the start bundles every function, synthesizes, creates the tables and loads the sample
 *   trees;
 * - `warm`: the next start with unchanged sources, on the same cache and data directory.
 *
 * Each start is a real `npm start` in the project, on a port, data directory and assembly
 * cache of its own (`PORT`, `NETCONFIG_LOCAL_DIR`, `NETCONFIG_START_CACHE`), stopped with
 * Ctrl-C once ready; the developer's `.local/` and `.cache/` are left alone. Targets: fresh
 * within 45 s, warm within 15 s, on the two-core machine.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../infra/paths.js';
import { freePort } from '../tools/local/dynamodb-local.js';
import { median } from './stats.js';

export const START_RESULT_PREFIX = 'START_RESULT ';
export const START_TARGETS = { fresh: 45, warm: 15 } as const;

export interface StartSample {
  readonly kind: 'fresh' | 'warm';
  /** Seconds from spawning `npm start` to its ready banner. */
  readonly seconds: number;
  /** The phases the start reported (`bundled in`, `synthesized in`), when it built an assembly. */
  readonly bundleSeconds?: number;
  readonly synthSeconds?: number;
}

export interface StartRun {
  readonly samples: readonly StartSample[];
  readonly freshP50: number;
  readonly warmP50: number;
}

const READY = /Local stack ready in/;
const STOP_GRACE_MS = 20_000;

/** Runs `npm start` once; resolves with the seconds to its ready banner, after it stopped. */
const startOnce = async (kind: StartSample['kind'], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<StartSample> => {
  const began = performance.now();
  const child = spawn('npm', ['start'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const signalGroup = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {
      // Already gone.
    }
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tail: string[] = [];
  let bundleSeconds: number | undefined;
  let synthSeconds: number | undefined;
  try {
    const seconds = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not ready within ${timeoutMs / 1000} s:\n${tail.join('\n')}`)), timeoutMs);
      const onLine = (line: string) => {
        tail.push(line);
        if (tail.length > 30) tail.shift();
        const bundled = /bundled in ([\d.]+) s/.exec(line);
        if (bundled) bundleSeconds = Number(bundled[1]);
        const synthesized = /synthesized in ([\d.]+) s/.exec(line);
        if (synthesized) synthSeconds = Number(synthesized[1]);
        if (READY.test(line)) {
          clearTimeout(timer);
          resolve((performance.now() - began) / 1000);
        }
      };
      let buffered = '';
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) onLine(line);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited (${code}) before it was ready:\n${tail.join('\n')}`));
      });
    });
    return { kind, seconds, ...(bundleSeconds !== undefined ? { bundleSeconds } : {}), ...(synthSeconds !== undefined ? { synthSeconds } : {}) };
  } finally {
    signalGroup('SIGINT');
    const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), STOP_GRACE_MS))]);
    if (!stopped) signalGroup('SIGKILL');
  }
};

/** `rounds` pairs of a fresh start and the warm start after it, each pair on a new cache and data directory. */
export const measureStart = async (o: { rounds: number; log?: (line: string) => void; timeoutMs?: number }): Promise<StartRun> => {
  const samples: StartSample[] = [];
  for (let round = 0; round < o.rounds; round += 1) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'netconfig-start-'));
    try {
      const env = {
        ...process.env,
        PORT: String(await freePort()),
        NETCONFIG_LOCAL_DIR: path.join(dir, 'data'),
        NETCONFIG_START_CACHE: path.join(dir, 'cache'),
      };
      for (const kind of ['fresh', 'warm'] as const) {
        const sample = await startOnce(kind, env, o.timeoutMs ?? 600_000);
        samples.push(sample);
        o.log?.(`  start round ${round + 1}/${o.rounds} ${kind}: ${sample.seconds.toFixed(1)} s`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const of = (kind: StartSample['kind']) => median(samples.filter((s) => s.kind === kind).map((s) => s.seconds));
  return { samples, freshP50: of('fresh'), warmP50: of('warm') };
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '1' } }, strict: true });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const run = await measureStart({ rounds, log: (line) => process.stderr.write(`${line}\n`) });
  for (const s of run.samples) {
    const phases = s.bundleSeconds !== undefined ? ` (bundle ${s.bundleSeconds.toFixed(1)} s, synth ${s.synthSeconds?.toFixed(1) ?? '–'} s)` : '';
    process.stderr.write(`${s.kind.padEnd(5)} ${s.seconds.toFixed(1).padStart(6)} s${phases}\n`);
  }
  process.stderr.write(
    `fresh p50 ${run.freshP50.toFixed(1)} s (target ≤ ${START_TARGETS.fresh} s), warm p50 ${run.warmP50.toFixed(1)} s (target ≤ ${START_TARGETS.warm} s); ` +
      `${os.cpus().length} CPUs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
  );
  process.stdout.write(`${START_RESULT_PREFIX}${JSON.stringify(run)}\n`);
}
