import { build } from 'esbuild';
import { esbuildOptionsFor } from '../build.js';
const entries = { get: 'functions/trees/get.ts', auth: 'functions/authorizer/handler.ts', sdk: 'bench/fixtures/sdk-only.ts', relay: 'functions/relay/rest-action.ts' };
const mk = (mods: string[]) => Object.fromEntries(mods.flatMap((m) => [[m, `./bench/.scratch/shims/${m.replace('/', '-')}.cjs`], [`node:${m}`, `./bench/.scratch/shims/${m.replace('/', '-')}.cjs`]]));
const sets = { A: mk(['http', 'https']), C: mk(['http', 'https', 'crypto']), B: mk(['child_process', 'crypto', 'dgram', 'dns', 'fs', 'fs/promises', 'http', 'https', 'net', 'os', 'path', 'process', 'stream', 'timers', 'tls', 'util', 'zlib']) };
for (const [n, e] of Object.entries(entries)) for (const [k, alias] of Object.entries(sets)) await build({ ...esbuildOptionsFor(), entryPoints: [e], outfile: `/tmp/benchwork/var/${n}-${k}/index.mjs`, alias });
