/**
 * `npm run mutate [-- <stryker options>]`: runs Stryker (stryker.config.mjs) with the options
 * given, then rewrites docs/reports/mutation.md with the run's figures for the modules it mutated
 * (tools/mutation/report.ts). The page is left alone when Stryker fails.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (name: string): string => path.join(ROOT, 'node_modules/.bin', name);

const started = Date.now();
const stryker = spawnSync(bin('stryker'), ['run', ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit' });
if (stryker.status !== 0) process.exit(stryker.status ?? 1);
const seconds = String(Math.round((Date.now() - started) / 1000));
const report = spawnSync(bin('tsx'), ['tools/mutation/report.ts', '--run', 'reports/mutation/mutation.json', '--seconds', seconds], {
  cwd: ROOT,
  stdio: 'inherit',
});
process.exit(report.status ?? 1);
