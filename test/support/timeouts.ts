/**
 * How long a test that synthesizes, bundles or spawns processes may run before it counts as
 * hung. Its work is CPU-bound with no deadline of its own: the figure only ends a hang, so it
 * is far beyond what a loaded machine needs (vitest.config.ts gives it to those files, and a
 * child process they start gets the same, so no child outlives a hung test).
 */
export const HANG_MS = 10 * 60_000;
