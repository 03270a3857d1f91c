/**
 * `npm run --silent token -- --roles admin,apiread [--sub NAME] [--ttl SECONDS]`: prints one
 * bearer token of the local issuer (and nothing else) for the local API.
 *
 * `--roles` takes any comma-separated names, unknown ones included (and may be empty), so that
 * tokens without a granted role can be minted to try the 403 path.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS, mintToken } from './issuer.js';

const USAGE = 'usage: npm run --silent token -- --roles admin,apiread [--sub NAME] [--ttl SECONDS]';

/** Parses the CLI arguments into mint options; throws a message meant for the user. */
const parseTokenArgs = (argv: readonly string[]): { roles: string[]; sub?: string; ttlSeconds: number } => {
  const { values } = parseArgs({
    args: [...argv],
    options: { roles: { type: 'string' }, sub: { type: 'string' }, ttl: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.roles === undefined) throw new Error('--roles is required (comma-separated, may be empty)');
  const roles = values.roles
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r.length > 0);
  const ttlSeconds = values.ttl === undefined ? DEFAULT_TTL_SECONDS : Number(values.ttl);
  if (!/^\d+$/.test(values.ttl ?? '1') || !Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new Error(`--ttl must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}`);
  }
  if (values.sub !== undefined && (values.sub.length === 0 || values.sub.length > 256)) throw new Error('--sub must be 1 to 256 characters');
  return { roles, ttlSeconds, ...(values.sub !== undefined ? { sub: values.sub } : {}) };
};

try {
  process.stdout.write(`${mintToken(parseTokenArgs(process.argv.slice(2)))}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
  process.exitCode = 2;
}
