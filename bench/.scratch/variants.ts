import { build } from 'esbuild';
import { esbuildOptionsFor } from '../build.js';
const entries = { get: 'functions/trees/get.ts', auth: 'functions/authorizer/handler.ts', sdk: 'bench/fixtures/sdk-only.ts', relay: 'functions/relay/rest-action.ts' };
const alias = { http: './bench/.scratch/shims/http.cjs', 'node:http': './bench/.scratch/shims/http.cjs', https: './bench/.scratch/shims/https.cjs', 'node:https': './bench/.scratch/shims/https.cjs' };
for (const [n, e] of Object.entries(entries)) {
  await build({ ...esbuildOptionsFor(), entryPoints: [e], outfile: `/tmp/benchwork/var/${n}-esm/index.mjs` });
  await build({ ...esbuildOptionsFor(), entryPoints: [e], outfile: `/tmp/benchwork/var/${n}-alias/index.mjs`, alias });
  await build({ ...esbuildOptionsFor(), entryPoints: [e], outfile: `/tmp/benchwork/var/${n}-cjs/index.cjs`, format: 'cjs', banner: {} });
}
