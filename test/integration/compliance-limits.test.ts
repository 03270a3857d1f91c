/**
 * Every version the tree limits allow starts a batch, and the batch completes: the largest
 * versions the limits allow, in bytes and in counts (200 nodes, 8 levels of 128-character
 * names, 100 rules a node, the longest rule fields and device names in the UTF-8 characters
 * that take the most bytes, the most devices the bytes allow), imported and checked through the
 * real handlers against DynamoDB Local and the NSO simulator. Each largest version is filled to
 * exactly the version's byte limit, with the write checks as the judge, and the same version one
 * byte larger, like a version one past any other limit, is refused at write.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetName } from '../../tools/simulators/nso-fleet.js';
import { CONFIG_LIMITS, versionProblems } from '../../functions/trees/config-checks.js';
import type { Node, Rule } from '../../functions/trees/config-model.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { startComplianceStack, type ComplianceStack } from '../support/compliance-stack.js';

const L = CONFIG_LIMITS;
/** DynamoDB's item size limit. */
const ITEM_BYTES = 400 * 1024;
/** A non-leaf level's node: base, then 6 more, so that the leaves are at the depth limit. */
const CHAIN = L.nodeDepth - 1;
const LEAVES = L.nodesPerVersion - CHAIN;
/** The longest node names (node names are ASCII: each is as many bytes). */
const nodeName = (i: number): string => `n${i}`.padEnd(128, 'x');
/** JSON escapes a control character in 6 bytes: the most a UTF-16 unit can take as JSON text. */
const WIDE = '\u0001';
/** 3 bytes of UTF-8 in one UTF-16 unit: the most bytes for names where JSON escapes none. */
const CJK = '設';

interface Content {
  readonly variables: Record<string, string>;
  readonly root: Node;
}

/** 200 nodes: a chain of the longest names down to the 7th level, then 193 leaves at the 8th. */
const tree = (leaf: (i: number) => Pick<Node, 'devices' | 'rules'>, baseRules: readonly Rule[] = []): Node => {
  const leaves = Array.from({ length: LEAVES }, (_, i): Node => ({ name: nodeName(100 + i), ...leaf(i), children: [] }));
  let node: Node = { name: nodeName(CHAIN - 1), devices: [], rules: [], children: leaves };
  for (let level = CHAIN - 2; level >= 1; level--) node = { name: nodeName(level), devices: [], rules: [], children: [node] };
  return { name: 'base', devices: [], rules: baseRules, children: [node] };
};

const valid = (c: Content): boolean => versionProblems(c.root, c.variables).length === 0;
const bytes = (c: Content): number => Buffer.byteLength(JSON.stringify(c), 'utf8');

/** The largest `n` in [0, max] for which `make(n)` is valid (it must be for 0). */
const largest = (max: number, make: (n: number) => Content): number => {
  let [lo, hi] = [0, max];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (valid(make(mid))) lo = mid;
    else hi = mid - 1;
  }
  return lo;
};

/**
 * Fills `make(n)` with the most filler the write checks take (less the one or two items that
 * leave room for an empty variable), then pads it to exactly the byte limit with that variable;
 * returns that version and the one with a single byte more.
 */
const atByteLimit = (max: number, make: (n: number) => Content): { readonly at: Content; readonly over: Content; readonly filler: number } => {
  const withPad = (content: Content, n: number): Content => ({ ...content, variables: { ...content.variables, pad: 'p'.repeat(n) } });
  let filler = largest(max, make);
  while (!valid(withPad(make(filler), 0))) filler--;
  const full = make(filler);
  const padded = (n: number): Content => withPad(full, n);
  const pad = largest(L.variableValue, padded);
  expect(pad).toBeLessThan(L.variableValue);
  return { at: padded(pad), over: padded(pad + 1), filler };
};

/** The rule whose every field is at its limit, in the characters that take the most bytes. */
const widestRule: Rule = {
  id: 'w'.repeat(128),
  path: `/${CJK.repeat(L.rulePath - 1)}`,
  mode: 'required',
  severity: 'error',
  // `"` + 2,730 escaped units of 6 bytes + 2 + `"`: exactly the value limit.
  value: `${WIDE.repeat((L.ruleValueBytes - 4) / 6)}ab`,
  description: WIDE.repeat(L.ruleDescription),
};
const widestVariables = { wide: WIDE.repeat(L.variableValue), cjk: CJK.repeat(L.variableValue) };

/**
 * The most rules: the widest rule on `base`, then 100 small rules a leaf for as many leaves as the
 * bytes allow, one fleet device a leaf (every node is in the batch) and, on the first leaf, two
 * devices of the longest names in 3-byte characters.
 */
const mostRules = (n: number): Content => ({
  variables: widestVariables,
  root: tree(
    (i) => ({
      devices: [fleetName(i), ...(i === 0 ? [`a${CJK.repeat(L.deviceName - 1)}`, `b${CJK.repeat(L.deviceName - 1)}`] : [])],
      rules: Array.from({ length: Math.max(0, Math.min(L.rulesPerNode, n - i * L.rulesPerNode)) }, (_, r) => ({
        id: `r${r}`,
        path: '',
        mode: 'required',
        severity: 'info',
      })),
    }),
    [widestRule],
  ),
});

/** Short distinct device names, cheapest first: 1, 2, then 3 characters of 64. */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.';
const shortName = (k: number): string => {
  let name = '';
  let rest = k;
  for (let size = 1; ; size++) {
    const count = ALPHABET.length ** size;
    if (rest < count) {
      for (let i = 0; i < size; i++, rest = Math.floor(rest / ALPHABET.length)) name += ALPHABET[rest % ALPHABET.length];
      return name;
    }
    rest -= count;
  }
};

/**
 * The most devices: 1,000 a leaf (the node limit) in the shortest names, as many as the bytes
 * allow. Each name holds a `%`, which a RESTCONF path cannot carry, so each device is graded
 * `error` without a fetch: the count stresses what a batch stores and walks, and tens of
 * thousands of fetches would only measure the relay (the benchmark does that).
 */
const mostDevices = (n: number): Content => ({
  variables: {},
  root: tree((i) => ({
    devices: Array.from({ length: Math.max(0, Math.min(L.devicesPerNode, n - i * L.devicesPerNode)) }, (_, d) => `%${shortName(i * L.devicesPerNode + d)}`),
    rules: [],
  })),
});

let stack: ComplianceStack;

beforeAll(async () => {
  stack = await startComplianceStack(LEAVES);
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

/** The sizes of the batch's items as DynamoDB counts them (names and values as UTF-8). */
const itemSizes = async (batchId: string): Promise<{ readonly plan: number; readonly chunks: readonly number[] }> => {
  const size = (item: Record<string, unknown>): number =>
    Object.entries(item).reduce(
      (sum, [name, value]) => sum + Buffer.byteLength(name, 'utf8') + (typeof value === 'number' ? 21 : Buffer.byteLength(String(value), 'utf8')),
      0,
    );
  const table = stack.tables['compliance'];
  const plan = (await documentClient.send(new GetCommand({ TableName: table, Key: { pk: `B#${batchId}`, sk: 'PLAN' } }))).Item!;
  const chunks = await documentClient.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
      ExpressionAttributeValues: { ':pk': `B#${batchId}`, ':c': 'C#' },
    }),
  );
  return { plan: size(plan), chunks: (chunks.Items ?? []).map(size) };
};

/** Imports `content` as a one-version tree, checks it at the limit, starts a batch on it and waits for its end. */
const runAtLimit = async (name: string, content: Content, devices: number) => {
  const imported = await stack.importTree({ name, deviceType: 'cisco-ios', versions: [{ name: 'v1', ...content }] });
  expect(imported.status).toBe(201);
  const treeId = (imported.body as { id: string }).id;
  const started = await stack.start({ treeId, version: 'v1', adapterId: stack.adapterId });
  expect(started.status).toBe(202);
  const { batchId, total } = started.body as { batchId: string; total: number };
  expect(total).toBe(devices);
  await stack.idle();
  const batch = (await stack.batch(batchId)).body as { status: string; done: number; total: number };
  expect(batch).toMatchObject({ status: 'completed', total: devices, done: devices });
  return itemSizes(batchId);
};

describe('the largest versions the limits allow', () => {
  it('starts and completes a batch on the version of the most rules, the longest names and the widest characters', async () => {
    const { at, over, filler } = atByteLimit(LEAVES * L.rulesPerNode, mostRules);
    expect(bytes(at)).toBe(L.versionBytes);
    // Past the limit by one byte: refused at write, as the route refuses it below.
    expect(versionProblems(over.root, over.variables)).toEqual([expect.objectContaining({ field: 'root', kind: 'limit' })]);
    const refused = await stack.importTree({ name: 'rules past the limit', deviceType: 'cisco-ios', versions: [{ name: 'v1', ...over }] });
    expect(refused.status).toBe(413);
    // Whole leaves of 100 rules, at the longest paths (earlier releases repeated the path in each).
    expect(filler).toBeGreaterThan(40 * L.rulesPerNode);
    const sizes = await runAtLimit('most rules', at, LEAVES + 2);
    expect(sizes.plan).toBeLessThanOrEqual(L.versionBytes + 100);
    expect(sizes.plan).toBeLessThan(ITEM_BYTES);
  }, 600_000);

  it('starts and completes a batch on the version of the most devices', async () => {
    const { at, over, filler } = atByteLimit(LEAVES * L.devicesPerNode, mostDevices);
    expect(bytes(at)).toBe(L.versionBytes);
    expect((await stack.importTree({ name: 'devices past the limit', deviceType: 'cisco-ios', versions: [{ name: 'v1', ...over }] })).status).toBe(413);
    expect(filler).toBeGreaterThan(40_000);
    const sizes = await runAtLimit('most devices', at, filler);
    // One chunk item for each 1,000 devices, each well inside an item.
    expect(sizes.chunks).toHaveLength(Math.ceil(filler / 1000));
    expect(Math.max(...sizes.chunks)).toBeLessThan(ITEM_BYTES / 4);
  }, 600_000);
});

describe('a version one past any limit', () => {
  const small = (root: Partial<Node> = {}, variables: Record<string, string> = {}): Content => ({
    variables,
    root: { name: 'base', devices: [], rules: [], children: [], ...root },
  });
  const rule = (over: Partial<Rule> = {}): Rule => ({ id: 'r', path: '/a', mode: 'required', severity: 'info', ...over });
  const chain = (levels: number): Node => {
    let node: Node = { name: nodeName(levels), devices: [], rules: [], children: [] };
    for (let level = levels - 1; level >= 1; level--) node = { name: nodeName(level), devices: [], rules: [], children: [node] };
    return node;
  };
  it.each<[string, Content, number]>([
    ['nodes', small({ children: Array.from({ length: L.nodesPerVersion }, (_, i) => ({ name: nodeName(i), devices: [], rules: [], children: [] })) }), 413],
    ['depth', small({ children: [chain(L.nodeDepth)] }), 400],
    ['node name', small({ children: [{ name: 'x'.repeat(129), devices: [], rules: [], children: [] }] }), 400],
    ['rules per node', small({ rules: Array.from({ length: L.rulesPerNode + 1 }, (_, i) => rule({ id: `r${i}` })) }), 400],
    ['rule id', small({ rules: [rule({ id: 'w'.repeat(129) })] }), 400],
    ['rule path', small({ rules: [rule({ path: `/${CJK.repeat(L.rulePath)}` })] }), 400],
    ['rule value', small({ rules: [rule({ value: `${WIDE.repeat((L.ruleValueBytes - 4) / 6)}abc` })] }), 413],
    ['rule description', small({ rules: [rule({ description: WIDE.repeat(L.ruleDescription + 1) })] }), 400],
    ['devices per node', small({ devices: Array.from({ length: L.devicesPerNode + 1 }, (_, i) => shortName(i)) }), 400],
    ['device name', small({ devices: [`a${CJK.repeat(L.deviceName)}`] }), 400],
    ['variables', small({}, Object.fromEntries(Array.from({ length: L.variables + 1 }, (_, i) => [`v${i}`, 'x']))), 400],
    ['variable value', small({}, { wide: WIDE.repeat(L.variableValue + 1) }), 400],
  ])('refuses a version past the %s limit at write', async (limit, content, status) => {
    const res = await stack.importTree({ name: `past ${limit}`, deviceType: 'cisco-ios', versions: [{ name: 'v1', ...content }] });
    expect(res.status).toBe(status);
    expect(res.contentType).toBe('application/problem+json');
  });
});
