/**
 * Seeding: loads tree summaries exactly as given (ids, repeated version labels, fixed
 * millisecond timestamps) so that a known data set can be set up. Used by
 * `npm run seed -- <file.json>` and by the local stack on its first start.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { pickSummary, summaryProblems, type TreeSummary } from './model.js';
import { DynamoTreeStore, type UpsertOutcome } from './store.js';
import { randomBytes } from 'node:crypto';
import { RULE_MODES, SEVERITIES, type Node, type Rule, type Selector } from './config-model.js';
import { selectOf } from './selectors.js';
import { CONFIG_LIMITS, normalizeRule, versionProblems } from './config-checks.js';
import { contentWireBytes, occurrenceOrdinals, putContent, type ContentRef, type VersionContent } from './version-store.js';

/**
 * The seed file: `{ "trees": [ entry, … ] }`. An entry is a tree summary whose `versions` lists
 * labels (empty versions) or versions with content, `{ name, variables?, root }`, or a mix.
 */
export interface SeedInput {
  readonly trees: readonly SeedTree[];
}

/** A version of a seed entry with its content. */
export interface SeedVersion {
  readonly name: string;
  readonly variables?: Readonly<Record<string, string>>;
  readonly root: Node;
}

export type SeedTree = Omit<TreeSummary, 'versions'> & { readonly versions: readonly (string | SeedVersion)[] };

/** A checked entry: its summary and the content of each version that has one (by position). */
export interface SeedEntry {
  readonly tree: TreeSummary;
  readonly contents: readonly (Pick<SeedVersion, 'variables' | 'root'> | undefined)[];
}

export interface SeedWritten {
  /** Position of the entry in `trees`, from 0. */
  readonly index: number;
  readonly id: string;
  readonly name: string;
  readonly action: 'created' | 'updated';
}

export interface SeedRejected {
  readonly index: number;
  /** The entry's id and name, when they are strings (to help find it in the file). */
  readonly id?: string;
  readonly name?: string;
  readonly reasons: readonly string[];
}

export interface SeedReport {
  readonly written: readonly SeedWritten[];
  readonly rejected: readonly SeedRejected[];
}

/** The file as a whole is unusable (not an object with a `trees` array): nothing was written. */
export class SeedFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedFileError';
  }
}

/** What seeding needs from storage. */
export interface TreeUpserter {
  upsert(tree: TreeSummary, extra?: Readonly<Record<string, unknown>>): Promise<UpsertOutcome>;
  /** Writes the contents of an entry's versions and returns the tree item's attributes that refer to them. */
  putContents?(entry: SeedEntry): Promise<Record<string, unknown>>;
}

export interface CheckedSeed {
  readonly valid: readonly { readonly index: number; readonly tree: TreeSummary; readonly contents: SeedEntry['contents'] }[];
  readonly rejected: readonly SeedRejected[];
}

const label = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const isNodeLike = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A node of a seed file with its lists defaulted, or `undefined` when it is not node-shaped. */
const seedNode = (v: unknown, depth = 1): Node | undefined => {
  if (!isNodeLike(v) || depth > CONFIG_LIMITS.nodeDepth + 1) return undefined;
  const n = v as Record<string, unknown>;
  const lists = ['devices', 'rules', 'children'].map((k) => n[k] ?? []);
  if (typeof n['name'] !== 'string' || !lists.every(Array.isArray)) return undefined;
  const [devices, rules, children] = lists as unknown[][];
  if (!devices!.every((d) => typeof d === 'string')) return undefined;
  if (
    !rules!.every(
      (r) =>
        isNodeLike(r) &&
        typeof (r as Rule).id === 'string' &&
        typeof (r as Rule).path === 'string' &&
        RULE_MODES.includes((r as Rule).mode) &&
        SEVERITIES.includes((r as Rule).severity),
    )
  )
    return undefined;
  const kids = children!.map((c) => seedNode(c, depth + 1));
  if (kids.some((k) => k === undefined)) return undefined;
  const select = n['select'] ?? [];
  if (!Array.isArray(select) || !select.every(isNodeLike)) return undefined;
  return {
    name: n['name'],
    devices: devices as string[],
    ...selectOf(select as Selector[]),
    rules: (rules as Rule[]).map(normalizeRule),
    children: kids as Node[],
  };
};

/** Labels and contents of an entry's `versions` (strings or `{ name, variables?, root }`); `undefined` when not an array. */
const splitVersions = (versions: unknown): { labels: unknown[]; contents: SeedEntry['contents']; problems: string[] } | undefined => {
  if (!Array.isArray(versions)) return undefined;
  const problems: string[] = [];
  const contents = versions.map((v: unknown, i) => {
    if (!isNodeLike(v)) return undefined;
    const { name, variables = {}, root, ...rest } = v as Record<string, unknown>;
    if (Object.keys(rest).length) problems.push(`versions.${i} has unknown properties: ${Object.keys(rest).join(', ')}`);
    const node = seedNode(root);
    const vars =
      isNodeLike(variables) && Object.values(variables as object).every((x) => typeof x === 'string') ? (variables as Record<string, string>) : undefined;
    if (!node) problems.push(`versions.${i}.root is not a node ({ name, devices?, rules?, children? } with well-formed rules)`);
    if (!vars) problems.push(`versions.${i}.variables is not an object of strings`);
    if (!node || !vars) return undefined;
    for (const p of versionProblems(node, vars, ['versions', i])) problems.push(`${p.field} ${p.message}`);
    return { variables: vars, root: node };
  });
  const labels = versions.map((v: unknown) => (isNodeLike(v) ? (v as Record<string, unknown>)['name'] : v));
  return { labels, contents, problems };
};

/**
 * Validates a parsed seed file without touching storage: each entry against the rules of a
 * tree (strict: unknown properties are rejected), and the file against itself (an id or a
 * name used twice keeps its first entry). Throws {@link SeedFileError} when the file itself
 * is not `{ "trees": [...] }`.
 */
export const checkSeedInput = (input: unknown): CheckedSeed => {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new SeedFileError('the seed file must hold a JSON object: { "trees": [ ... ] }');
  }
  const { trees, ...rest } = input as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) throw new SeedFileError(`the seed file has unknown top-level properties: ${extra.join(', ')} (only "trees" is allowed)`);
  if (!Array.isArray(trees)) throw new SeedFileError('the seed file must have a "trees" array');

  const valid: { index: number; tree: TreeSummary; contents: SeedEntry['contents'] }[] = [];
  const rejected: SeedRejected[] = [];
  const firstById = new Map<string, number>();
  const firstByName = new Map<string, number>();
  trees.forEach((entry: unknown, index) => {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const id = label(e['id']);
    const name = label(e['name']);
    const split = splitVersions(e['versions']);
    const reasons = [...summaryProblems(split ? { ...e, versions: split.labels } : entry, 'input'), ...(split?.problems ?? [])];
    if (reasons.length === 0) {
      const tree = { ...e, versions: split?.labels ?? [] } as unknown as TreeSummary;
      const sameId = firstById.get(tree.id);
      const sameName = firstByName.get(tree.name);
      if (sameId !== undefined) reasons.push(`id is also used by entry ${sameId} of this file`);
      if (sameName !== undefined) reasons.push(`name is also used by entry ${sameName} of this file`);
      if (reasons.length === 0) {
        firstById.set(tree.id, index);
        firstByName.set(tree.name, index);
        valid.push({ index, tree: pickSummary(tree), contents: split?.contents ?? [] });
        return;
      }
    }
    rejected.push({ index, ...(id !== undefined ? { id } : {}), ...(name !== undefined ? { name } : {}), reasons });
  });
  return { valid, rejected };
};

const UPSERT_ATTEMPTS = 3;

/**
 * Validates `input` and upserts every valid entry with its name lock through `store`. Entries
 * whose name another tree holds are rejected, never forced: the name lock is what keeps names
 * unique. Entries are written one by one, so a rejected entry does not stop the others.
 */
export const seedWith = async (store: TreeUpserter, input: unknown): Promise<SeedReport> => {
  const checked = checkSeedInput(input);
  const written: SeedWritten[] = [];
  const rejected: SeedRejected[] = [...checked.rejected];
  for (const { index, tree, contents } of checked.valid) {
    let outcome: UpsertOutcome = { kind: 'contended' };
    const extra = contents.some(Boolean) && store.putContents ? await store.putContents({ tree, contents }) : {};
    for (let attempt = 1; attempt <= UPSERT_ATTEMPTS && outcome.kind === 'contended'; attempt++) {
      outcome = await store.upsert(tree, extra);
    }
    const who = { index, id: tree.id, name: tree.name };
    if (outcome.kind === 'created' || outcome.kind === 'updated') written.push({ ...who, action: outcome.kind });
    else if (outcome.kind === 'name-held') rejected.push({ ...who, reasons: [`name is held by another tree (${outcome.by})`] });
    else rejected.push({ ...who, reasons: ['other writers kept changing this tree or its name; try again'] });
  }
  rejected.sort((a, b) => a.index - b.index);
  return { written, rejected };
};

/**
 * Writes each version's content (seeded as the system: `createdBy` is `seed`), then answers the
 * tree item's `contents` that refer to them and a fresh `revision`, so that a version write that
 * read the tree before the seed cannot commit over it.
 */
const contentWriter =
  (client: DynamoDBDocumentClient, tableName: string) =>
  async (entry: SeedEntry): Promise<Record<string, unknown>> => {
    const refs: ContentRef[] = [];
    const ordinals = occurrenceOrdinals(entry.tree.versions);
    for (const [i, content] of entry.contents.entries()) {
      const ordinal = ordinals[i] as number;
      if (!content) {
        refs.push({ id: '', wireBytes: 0, ordinal });
        continue;
      }
      const id = randomBytes(8).toString('hex');
      const stored: VersionContent = {
        variables: content.variables ?? {},
        root: content.root,
        created: entry.tree.created,
        createdBy: 'seed',
        lastUpdated: entry.tree.lastUpdated,
        lastUpdatedBy: 'seed',
      };
      await putContent(client, tableName, entry.tree.id, id, stored);
      refs.push({ id, wireBytes: contentWireBytes(stored), ordinal });
    }
    return { contents: refs, revision: Date.now() };
  };

/** {@link seedWith} against the trees table `tableName` through `client`. */
export const seedTrees = (client: DynamoDBDocumentClient, tableName: string, input: unknown): Promise<SeedReport> => {
  const store = new DynamoTreeStore(client, tableName);
  return seedWith({ upsert: (tree, extra) => store.upsert(tree, extra), putContents: contentWriter(client, tableName) }, input);
};
