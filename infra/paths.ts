/** Where the project lives, for tools that read or write its files (no CDK import: CLIs load this fast). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The project's own Node (the pinned `node` devDependency), which its scripts and benchmarks run on. */
export const PINNED_NODE = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'node');
