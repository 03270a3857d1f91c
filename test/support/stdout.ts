/**
 * What the code under test writes to stdout (log lines, metric lines), captured through a spy
 * on `process.stdout.write`: one entry per line.
 */
import { vi } from 'vitest';

export interface CapturedStdout {
  /** Every non-empty line written since the capture began. */
  readonly lines: string[];
  /** The lines parsed as JSON (log and metric lines are JSON). */
  entries(): Record<string, any>[];
  /** All lines as one text, for searching. */
  raw(): string;
  restore(): void;
}

export const captureStdout = (): CapturedStdout => {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
    lines.push(...(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')).split('\n').filter(Boolean));
    return true;
  }) as typeof process.stdout.write);
  return {
    lines,
    entries: () => lines.map((l) => JSON.parse(l) as Record<string, any>),
    raw: () => lines.join('\n'),
    restore: () => spy.mockRestore(),
  };
};

/** Everything written to stdout while `fn` runs. */
export const stdoutDuring = async (fn: () => Promise<unknown>): Promise<CapturedStdout> => {
  const captured = captureStdout();
  try {
    await fn();
  } finally {
    captured.restore();
  }
  return captured;
};
