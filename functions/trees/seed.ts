/**
 * Seeding: loads tree summaries exactly as given (ids, repeated version labels, fixed
 * millisecond timestamps) so that a known data set can be set up. Used by
 * `npm run seed -- <file.json>` and by the local stack on its first start.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { pickSummary, summaryProblems, type TreeSummary } from './model.js';
import { DynamoTreeStore, type UpsertOutcome } from './store.js';

/** The seed file: `{ "trees": [ summary, … ] }`. */
export interface SeedInput {
  readonly trees: readonly TreeSummary[];
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
  upsert(tree: TreeSummary): Promise<UpsertOutcome>;
}

export interface CheckedSeed {
  readonly valid: readonly { readonly index: number; readonly tree: TreeSummary }[];
  readonly rejected: readonly SeedRejected[];
}

const label = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

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

  const valid: { index: number; tree: TreeSummary }[] = [];
  const rejected: SeedRejected[] = [];
  const firstById = new Map<string, number>();
  const firstByName = new Map<string, number>();
  trees.forEach((entry: unknown, index) => {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const id = label(e['id']);
    const name = label(e['name']);
    const reasons = summaryProblems(entry, 'input');
    if (reasons.length === 0) {
      const tree = entry as TreeSummary;
      const sameId = firstById.get(tree.id);
      const sameName = firstByName.get(tree.name);
      if (sameId !== undefined) reasons.push(`id is also used by entry ${sameId} of this file`);
      if (sameName !== undefined) reasons.push(`name is also used by entry ${sameName} of this file`);
      if (reasons.length === 0) {
        firstById.set(tree.id, index);
        firstByName.set(tree.name, index);
        valid.push({ index, tree: pickSummary(tree) });
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
  for (const { index, tree } of checked.valid) {
    let outcome: UpsertOutcome = { kind: 'contended' };
    for (let attempt = 1; attempt <= UPSERT_ATTEMPTS && outcome.kind === 'contended'; attempt++) {
      outcome = await store.upsert(tree);
    }
    const who = { index, id: tree.id, name: tree.name };
    if (outcome.kind === 'created' || outcome.kind === 'updated') written.push({ ...who, action: outcome.kind });
    else if (outcome.kind === 'name-held') rejected.push({ ...who, reasons: [`name is held by another tree (${outcome.by})`] });
    else rejected.push({ ...who, reasons: ['other writers kept changing this tree or its name; try again'] });
  }
  rejected.sort((a, b) => a.index - b.index);
  return { written, rejected };
};

/** {@link seedWith} against the trees table `tableName` through `client`. */
export const seedTrees = (client: DynamoDBDocumentClient, tableName: string, input: unknown): Promise<SeedReport> =>
  seedWith(new DynamoTreeStore(client, tableName), input);
