/**
 * What a configuration diff costs (functions/configs/diff.ts): time and peak memory of the JSON
 * Patch and of the unified diff of two 1 MB configurations differing in 1% and in 50% of their
 * leaves, each case in a child process of its own (so that its peak RSS is its own), and the bytes
 * each diff library adds to a function bundle built with the functions' own esbuild options.
 *
 *   npx tsx bench/config-diff.ts [targetBytes]
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { canonicalJson } from '../functions/platform/canonical-json.js';
import { configPatch, DiffTooLarge, maskedConfigPatch, unifiedConfigDiff } from '../functions/configs/diff.js';
import type { JsonValue } from '../functions/trees/config-model.js';
import { PROJECT_ROOT } from '../infra/paths.js';
import { esbuildOptionsFor } from '../tools/local/bundles.js';
import { bundleContents } from './bundles.js';

/** A deterministic pseudo-random sequence in [0, 1) (a linear congruential generator), so that every run diffs the same configurations. */
const seeded = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
};

/** One interface of an NSO-like IOS configuration. */
const interfaceEntry = (i: number): JsonValue => ({
  name: `0/${Math.floor(i / 48)}/${i % 48}`,
  description: `uplink ${i} to access switch sw-${i}.site-${i % 97}.example.net`,
  mtu: 1500 + (i % 7),
  ip: { address: { primary: { address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, mask: '255.255.255.252' } } },
  'ospf-authentication-key': { '7': `0822455D0A16${i}` },
  'service-policy': { input: `POLICY-IN-${i % 13}`, output: `POLICY-OUT-${i % 11}` },
  negotiation: { auto: i % 2 === 0 },
});

/** A configuration of about `bytes` bytes of canonical JSON. */
const configOfSize = (bytes: number): JsonValue => {
  const interfaces: JsonValue[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const entry = interfaceEntry(i);
    interfaces.push(entry);
    size += canonicalJson(entry).length + 1;
  }
  return { 'tailf-ncs:config': { hostname: 'edge-1', 'tailf-ned-cisco-ios:interface': { GigabitEthernet: interfaces } } };
};

/** `value` with each string and number leaf changed with probability `share`. */
const changed = (value: JsonValue, share: number, random: () => number): JsonValue => {
  if (typeof value === 'string') return random() < share ? `${value}-changed` : value;
  if (typeof value === 'number') return random() < share ? value + 1 : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((entry: JsonValue) => changed(entry, share, random));
  return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, changed(child, share, random)]));
};

const CASES = [
  { kind: 'patch', share: 0.01 },
  { kind: 'patch', share: 0.5 },
  { kind: 'unified', share: 0.01 },
  { kind: 'unified', share: 0.5 },
] as const;

/** Runs one case in this process and prints what it cost as one JSON line. */
const runCase = (kind: (typeof CASES)[number]['kind'], share: number, targetBytes: number): void => {
  const against = configOfSize(targetBytes);
  const config = changed(against, share, seeded(42));
  const before = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  let outcome: string;
  let outputBytes = 0;
  try {
    if (kind === 'patch') {
      const body = JSON.stringify(maskedConfigPatch(against, config));
      outputBytes = body.length;
      outcome = `${configPatch(against, config).length} operations`;
    } else {
      const labels = { against: { name: 'configs/a' }, config: { name: 'configs/b' } };
      const body = unifiedConfigDiff(against, config, labels);
      outputBytes = body.length;
      outcome = `${body.split('\n').filter((line) => /^[-+][^-+]/.test(line)).length} changed lines`;
    }
  } catch (error) {
    if (!(error instanceof DiffTooLarge)) throw error;
    outcome = `422 (${error.detail})`;
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const peakMb = (process.resourceUsage().maxRSS * 1024) / 2 ** 20;
  const inputBytes = canonicalJson(against).length;
  console.log(
    JSON.stringify({
      kind,
      share,
      inputBytes,
      ms: Math.round(ms),
      rssBeforeMb: Math.round(before / 2 ** 20),
      peakRssMb: Math.round(peakMb),
      outputBytes,
      outcome,
    }),
  );
};

/** Bytes an entry adds to a bundle built with the functions' options, per package. */
const bundleBytes = async (name: string, contents: string) => {
  const result = await build({ ...esbuildOptionsFor(), stdin: { contents, resolveDir: PROJECT_ROOT, loader: 'ts' }, write: false, metafile: true });
  const found = bundleContents(result.metafile);
  return { name, bytes: found.outputBytes, packages: found.packages.slice(0, 4) };
};

const main = async (): Promise<void> => {
  const [mode, kind, share, target] = process.argv.slice(2);
  if (mode === 'case') return runCase(kind as (typeof CASES)[number]['kind'], Number(share), Number(target));
  const targetBytes = Number(mode ?? 1_000_000);
  const self = fileURLToPath(import.meta.url);
  for (const c of CASES) {
    process.stdout.write(
      execFileSync(process.execPath, [...process.execArgv, self, 'case', c.kind, String(c.share), String(targetBytes)], { encoding: 'utf8' }),
    );
  }
  const bundles = await Promise.all([
    bundleBytes('empty', 'export const x = 1;'),
    bundleBytes('fast-json-patch compare', "export { compare } from 'fast-json-patch/commonjs/duplex.js';"),
    bundleBytes('diff structuredPatch+formatPatch', "export { structuredPatch, formatPatch } from 'diff';"),
    bundleBytes('functions/configs/diff.ts', "export * from './functions/configs/diff.ts';"),
  ]);
  for (const bundle of bundles) console.log(JSON.stringify(bundle));
};

await main();
