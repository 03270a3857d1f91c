/**
 * Memory of this process after a full garbage collection, for tests that prove a fault left
 * nothing behind. `gc` is exposed at run time (the V8 flag), so no test runner flag is needed.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface MemorySample {
  /** V8 heap in use, bytes. */
  readonly heapUsed: number;
  /** Buffers and other memory outside the V8 heap, bytes. */
  readonly external: number;
  readonly rss: number;
}

/** Collects garbage (twice: weak references and finalizers need a second pass), then samples. */
export const settledMemory = async (): Promise<MemorySample> => {
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heapUsed, external, rss };
};

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
