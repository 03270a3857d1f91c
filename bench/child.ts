/**
 * Runs one of the benchmark's child scripts in a fresh `node` process with exactly the given
 * environment, and reads the one `@@bench <json>` line it writes on standard error. What the
 * measured code writes on standard output (its logs) is drained and kept only for error messages.
 */
import { spawn } from 'node:child_process';

export interface ChildRun<T> {
  readonly result: T;
  /** Spawn to exit, in milliseconds, as the parent saw it. */
  readonly wallMs: number;
}

export class ChildFailed extends Error {}

const MARKER = '@@bench ';

export const runNode = <T>(o: {
  node: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** For messages. */
  label: string;
}): Promise<ChildRun<T>> =>
  new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const proc = spawn(o.node, [...o.args], { env: { ...o.env }, stdio: ['ignore', 'pipe', 'pipe'], ...(o.cwd ? { cwd: o.cwd } : {}) });
    let stdout = '';
    const stderr: Buffer[] = [];
    proc.stdout.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString('utf8')).slice(-4000)));
    proc.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    proc.on('error', reject);
    proc.on('close', (code) => {
      const wallMs = performance.now() - startedAt;
      const text = Buffer.concat(stderr).toString('utf8');
      const line = text.split('\n').findLast((l) => l.startsWith(MARKER));
      const tail = `(exit ${code}; stderr: ${text.slice(-600)}; stdout: ${stdout.slice(-600)})`;
      if (!line) return reject(new ChildFailed(`${o.label}: no result ${tail}`));
      const parsed = JSON.parse(line.slice(MARKER.length)) as T & { error?: string };
      if (parsed.error) return reject(new ChildFailed(`${o.label}: ${parsed.error} (stdout: ${stdout.slice(-600)})`));
      resolve({ result: parsed, wallMs });
    });
  });
