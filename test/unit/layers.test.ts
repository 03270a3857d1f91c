/**
 * The layers of `functions/`, lowest first: each imports only its own layer and those below.
 *
 *   platform   HTTP core, problems, logging, metrics, tracing, DynamoDB, cursors, idempotency, route types
 *   outbound   outbound HTTP (client, address policy, CA bundle, the relay's target guard), secrets
 *   runtime    settings from the active profile, the profile-aware httpHandler, changelog
 *   generated  validators and the route index (`npm run generate`)
 *   features   adapters, applications, authorizer, compliance, configs, exemptions, health, plans, profiles, relay, remediation, trees
 *   api        the assembly of the features: their routes, the removed routes, the housekeeping
 *
 * Nothing under `functions/` imports the CDK app, the tools, the tests or the bench, and no two
 * folders of `functions/` import each other, directly or around a loop.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';

const FUNCTIONS = path.join(PROJECT_ROOT, 'functions');
const FEATURES = [
  'adapters',
  'applications',
  'authorizer',
  'compliance',
  'configs',
  'console',
  'exemptions',
  'health',
  'profiles',
  'plans',
  'relay',
  'remediation',
  'trees',
];
const LAYERS: readonly (readonly string[])[] = [['platform'], ['outbound'], ['runtime'], ['generated'], FEATURES, ['api']];
const OUTSIDE = ['infra', 'tools', 'test', 'bench'];

/** One import: the importing file and the imported one, both relative to the project root. */
interface Edge {
  readonly from: string;
  readonly to: string;
}

/** Every relative import of a source: static imports, `import()`, `export … from`, bare `import '…'`. */
const importsOf = (source: string): string[] => {
  const specs: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /^\s*import\s+['"]([^'"]+)['"]/gm,
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) specs.push(match[1]!);
  return specs.filter((spec) => spec.startsWith('.'));
};

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(?:ts|mts|js|mjs)$/.test(entry.name) ? [full] : [];
  });

const edges = (): Edge[] =>
  sourceFiles(FUNCTIONS).flatMap((file) =>
    importsOf(readFileSync(file, 'utf8')).map((spec) => ({
      from: path.relative(PROJECT_ROOT, file),
      to: path.relative(PROJECT_ROOT, path.resolve(path.dirname(file), spec)),
    })),
  );

const rankOf = (file: string): number | undefined => {
  const [top, first] = file.split('/');
  if (top !== 'functions') return undefined;
  const rank = LAYERS.findIndex((layer) => layer.includes(first!));
  return rank === -1 ? undefined : rank;
};

/** The imports that go up a layer, leave `functions/` for the CDK app, tools, tests or bench, or reach a folder no layer names. */
const layerViolations = (all: readonly Edge[]): string[] =>
  all.flatMap(({ from, to }) => {
    const top = to.split('/')[0]!;
    if (OUTSIDE.includes(top)) return [`${from} imports ${to}: nothing under functions/ imports ${top}/`];
    if (top !== 'functions') return [];
    const [own, target] = [rankOf(from), rankOf(to)];
    if (own === undefined) return [`${from}: its folder is in no layer`];
    if (target === undefined) return [`${from} imports ${to}: that folder is in no layer`];
    return target > own ? [`${from} imports ${to}: ${LAYERS[target]!.join('/')} is above ${LAYERS[own]!.join('/')}`] : [];
  });

/** The folders (modules) of `functions/` that import each other around a loop: strongly connected components (Tarjan). */
const moduleCycles = (all: readonly Edge[]): string[][] => {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of all) {
    if (!to.startsWith('functions/')) continue;
    const [a, b] = [path.dirname(from), path.dirname(to)];
    if (!graph.has(a)) graph.set(a, new Set());
    if (!graph.has(b)) graph.set(b, new Set());
    if (a !== b) graph.get(a)!.add(b);
  }
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
};

describe('layers of functions/', () => {
  const all = edges();

  it('reads every kind of import', () => {
    expect(
      importsOf(
        "import a from './a.js';\nimport type { B } from '../b.js';\nexport { c } from './c.js';\nexport * from './d.js';\nimport './e.js';\nconst f = import('./f.js');",
      ),
    ).toEqual(['./a.js', '../b.js', './c.js', './d.js', './f.js', './e.js']);
    // The tree has each kind: a dynamic import (the settings' profile store) and a re-export.
    expect(all.some(({ from, to }) => from === 'functions/runtime/settings.ts' && to === 'functions/runtime/profile-store.js')).toBe(true);
    expect(all.length).toBeGreaterThan(300);
  });

  it('imports go down the layers only, never into the CDK app, the tools, the tests or the bench', () => {
    expect(layerViolations(all)).toEqual([]);
  });

  it('has no import cycle between its folders', () => {
    expect(moduleCycles(all)).toEqual([]);
  });

  it('the rules catch what they are meant to', () => {
    expect(layerViolations([{ from: 'functions/platform/route.ts', to: 'functions/trees/model.js' }])).toHaveLength(1);
    expect(layerViolations([{ from: 'functions/runtime/settings.ts', to: 'functions/profiles/service.js' }])).toHaveLength(1);
    expect(layerViolations([{ from: 'functions/health/dynamo-check.ts', to: 'infra/tables.js' }])).toHaveLength(1);
    expect(layerViolations([{ from: 'functions/trees/service.ts', to: 'test/support/events.js' }])).toHaveLength(1);
    expect(layerViolations([{ from: 'functions/relay/service.ts', to: 'functions/adapters/model.js' }])).toEqual([]);
    expect(
      moduleCycles([
        { from: 'functions/adapters/store.ts', to: 'functions/health/checks.js' },
        { from: 'functions/health/checks.ts', to: 'functions/relay/service.js' },
        { from: 'functions/relay/service.ts', to: 'functions/adapters/model.js' },
      ]),
    ).toEqual([['functions/adapters', 'functions/health', 'functions/relay']]);
  });
});
