/** Where the project lives, for tools that read or write its files (no CDK import: CLIs load this fast). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
