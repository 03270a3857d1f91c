/**
 * How a batch's plan and chunks are stored (plan.ts): what is read back is what was planned,
 * the stored plan is never larger than the version's own JSON (so the version limit bounds the
 * plan's item), and plans and chunks of earlier releases are still read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planBatch } from '../../functions/compliance/service.js';
import type { BatchPlan } from '../../functions/compliance/model.js';
import { chunkEntries, decodeChunk, decodePlan, encodePlan } from '../../functions/compliance/plan.js';
import type { Node, Rule, Version } from '../../functions/trees/config-model.js';
import { utf8Bytes } from '../../functions/trees/config-checks.js';

const rule = (id: string, extra: Partial<Rule> = {}): Rule => ({ id, path: '/a', mode: 'required', severity: 'info', ...extra });

const version = (root: Node, variables: Record<string, string> = {}): Version => ({
  name: 'v1',
  variables,
  root,
  created: '2026-11-26T00:00:00.000Z',
  createdBy: 'ops',
  lastUpdated: '2026-11-26T00:00:00.000Z',
  lastUpdatedBy: 'ops',
});

/** Node trees of any shape the limits allow, with names, rules, devices and text that take many bytes. */
const text = fc.string({ unit: fc.constantFrom('a', '"', '\\', '\u0001', '設', '😀'), maxLength: 12 });
const ruleArb = fc.record(
  {
    id: fc.stringMatching(/^[a-z0-9]{1,6}$/),
    path: text.map((t) => `/${t}`),
    mode: fc.constantFrom('required' as const, 'disallowed' as const),
    severity: fc.constantFrom('error' as const, 'info' as const),
    value: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    description: fc.option(text, { nil: undefined }),
  },
  { requiredKeys: ['id', 'path', 'mode', 'severity'] },
);
/** A version: `base` then nodes each under an earlier one, names unique among siblings, each device on one node. */
const versionArb = fc
  .tuple(
    fc.array(
      fc.record({
        parent: fc.nat(),
        name: fc.stringMatching(/^[A-Za-z0-9 ._-]{1,16}$/),
        devices: fc.array(
          text.filter((t) => t.length > 0),
          { maxLength: 3 },
        ),
        rules: fc.array(ruleArb, { maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 30 },
    ),
    fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), text, { maxKeys: 3 }),
  )
  .map(([specs, variables]) => {
    const seen = new Set<string>();
    const nodes = specs.map((spec, i) => ({
      name: i === 0 ? 'base' : `${spec.name}-${i}`,
      devices: spec.devices.filter((d) => !seen.has(d) && seen.add(d)),
      rules: spec.rules as Rule[],
      children: [] as Node[],
    }));
    specs.forEach((spec, i) => {
      if (i > 0) nodes[spec.parent % i]!.children.push(nodes[i]!);
    });
    // As the store reads it back: JSON (no -0, no undefined members).
    return JSON.parse(JSON.stringify(version(nodes[0]!, variables))) as Version;
  });

describe('a stored plan', () => {
  it('reads back as planned, its devices too, and is never larger than the version', () => {
    fc.assert(
      fc.property(versionArb, (v) => {
        const { plan, devices } = planBatch(v);
        const stored = encodePlan(plan);
        expect(decodePlan(stored)).toEqual(plan);
        expect(Buffer.byteLength(stored, 'utf8')).toBeLessThanOrEqual(utf8Bytes({ variables: v.variables, root: v.root }));
        expect(decodeChunk(JSON.stringify(devices.map(chunkEntries(plan))), plan)).toEqual(devices);
      }),
      { numRuns: 300 },
    );
  });

  it('holds each node once, whatever the depth and however many rules it has', () => {
    const deep = ['base', ...Array.from({ length: 7 }, (_, i) => `${i}`.padEnd(128, 'n'))];
    let node: Node = { name: deep[7]!, devices: ['pe1'], rules: Array.from({ length: 100 }, (_, i) => rule(`r${i}`)), children: [] };
    for (let level = 6; level >= 0; level--) node = { name: deep[level]!, devices: [], rules: [], children: [node] };
    const stored = encodePlan(planBatch(version(node)).plan);
    // The leaf's path (1 KB) appears nowhere, its name once.
    expect(stored).not.toContain(deep.join('/'));
    expect(stored.split(deep[7]!).length).toBe(2);
  });

  it('keeps only the nodes the checked devices are on and their ancestors, parents first', () => {
    const root: Node = {
      name: 'base',
      devices: [],
      rules: [rule('b')],
      children: [
        { name: 'wan', devices: ['ce0'], rules: [rule('w')], children: [{ name: 'pe', devices: ['pe0'], rules: [rule('p')], children: [] }] },
        { name: 'lan', devices: ['sw0'], rules: [rule('l')], children: [] },
      ],
    };
    const { plan } = planBatch(version(root), ['pe0']);
    expect(plan.nodes).toEqual(['base', 'base/wan', 'base/wan/pe']);
    expect(Object.keys(decodePlan(encodePlan(plan)).rulesByNode)).toEqual(['base', 'base/wan', 'base/wan/pe']);
  });

  it('refuses what it could not read back: a node before its parent, a device on a node it does not list, a place it does not have', () => {
    const plan: BatchPlan = { variables: {}, rulesByNode: {}, nodes: ['base/wan', 'base'] };
    expect(() => encodePlan(plan)).toThrow(RangeError);
    expect(() => chunkEntries({ ...plan, nodes: ['base'] })({ device: 'd', node: 'base/lan' })).toThrow(RangeError);
    expect(() => decodeChunk('[["d",3]]', { ...plan, nodes: ['base'] })).toThrow(RangeError);
    // A device on no node (a backup's) has no place in a compliance batch's chunk.
    expect(() => chunkEntries({ ...plan, nodes: ['base'] })({ device: 'd' })).toThrow(RangeError);
    // A chunk of node places read without the plan they refer to.
    expect(() => decodeChunk('[["d",0]]')).toThrow(RangeError);
  });

  it("reads a backup batch's chunks without a plan: device names, on no node", () => {
    expect(decodeChunk('["ce0","pe 1"]')).toEqual([{ device: 'ce0' }, { device: 'pe 1' }]);
  });

  it('reads plans and chunks stored by earlier releases: rules by node path, devices with their paths', () => {
    const rulesByNode = { base: [{ ...rule('b'), node: 'base' }], 'base/wan': [{ ...rule('w'), node: 'base/wan' }] };
    const plan = decodePlan(JSON.stringify({ variables: { x: '1' }, rulesByNode }));
    expect(plan).toEqual({ variables: { x: '1' }, rulesByNode, nodes: [] });
    expect(decodeChunk('[["ce0","base/wan"],["sw0","base"]]', plan)).toEqual([
      { device: 'ce0', node: 'base/wan' },
      { device: 'sw0', node: 'base' },
    ]);
  });
});
