/**
 * `npm run seed -- <file.json>`: loads `{ "trees": [ …summaries… ] }` into the trees table of
 * the running local stack (found through `.local/state.json`), upserting each valid entry with
 * its name lock, and prints what it wrote and what it rejected and why. Exits non-zero when
 * anything was rejected or nothing could be loaded.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SeedFileError, seedTrees, type SeedReport } from '../../functions/trees/seed.js';
import { StoreUnavailable } from '../../functions/trees/store.js';
import { LOCAL_STATE_FILE, type LocalState } from './config.js';

const USAGE = 'usage: npm run seed -- <file.json>   (the file holds { "trees": [ ...tree summaries... ] })';

/** The sample data set the local stack loads on its first start. */
export const SAMPLE_TREES_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sample-trees.json');

/**
 * A client for DynamoDB Local. It runs with a shared database, so the credentials only have
 * to be well-formed; few attempts, so that a stopped stack is reported quickly.
 */
export const localDynamoClient = (endpoint: string): DynamoDBClient =>
  new DynamoDBClient({
    endpoint,
    region: process.env['AWS_REGION'] ?? 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });

/** The Document client over `client`, marshalling as the functions do. */
export const documentClientFor = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

/** Loads `tools/local/sample-trees.json` (for the local stack's first start). */
export const seedSampleTrees = async (client: DynamoDBDocumentClient, tableName: string): Promise<SeedReport> =>
  seedTrees(client, tableName, JSON.parse(await readFile(SAMPLE_TREES_FILE, 'utf8')));

/** The report as the CLI prints it: one line per entry, then the totals. */
export const formatReport = (report: SeedReport, source: string): string => {
  const lines = [`Seeding trees from ${source}`];
  for (const w of report.written) lines.push(`  ${w.action.padEnd(8)} ${w.id}  ${JSON.stringify(w.name)}`);
  for (const r of report.rejected) {
    const who = [r.id, r.name === undefined ? undefined : JSON.stringify(r.name)].filter(Boolean).join('  ');
    lines.push(`  rejected entry ${r.index}${who ? ` (${who})` : ''}:`);
    for (const reason of r.reasons) lines.push(`    - ${reason}`);
  }
  lines.push(`${report.written.length} written, ${report.rejected.length} rejected`);
  return `${lines.join('\n')}\n`;
};

export interface SeedCliIo {
  /** Where the running local stack describes itself; `.local/state.json` by default. */
  readonly stateFile?: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const readState = async (stateFile: string): Promise<LocalState | string> => {
  let text: string;
  try {
    text = await readFile(stateFile, 'utf8');
  } catch {
    return `no running local stack found (${stateFile} is missing): start the local stack with npm start first`;
  }
  try {
    const state = JSON.parse(text) as Partial<LocalState>;
    if (typeof state.dynamodbEndpoint === 'string' && typeof state.tables?.['trees'] === 'string') return state as LocalState;
  } catch {
    // reported below
  }
  return `${stateFile} does not describe a local stack (dynamodbEndpoint, tables.trees): restart it with npm start`;
};

/** The whole command; returns the exit code (0 all written, 1 something rejected or failed, 2 usage). */
export const runSeedCli = async (argv: readonly string[], io: SeedCliIo): Promise<number> => {
  if (argv.length !== 1 || argv[0] === '' || argv[0]?.startsWith('-')) {
    io.err(`${USAGE}\n`);
    return 2;
  }
  const file = argv[0] as string;
  let input: unknown;
  try {
    input = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    io.err(`cannot read ${file}: ${error instanceof SyntaxError ? `not valid JSON (${error.message})` : 'no such readable file'}\n`);
    return 1;
  }
  const state = await readState(io.stateFile ?? LOCAL_STATE_FILE);
  if (typeof state === 'string') {
    io.err(`${state}\n`);
    return 1;
  }
  const tableName = state.tables['trees'] as string;
  // The Document client's destroy() leaves its base client open: the base one is closed below.
  const client = localDynamoClient(state.dynamodbEndpoint);
  try {
    const report = await seedTrees(documentClientFor(client), tableName, input);
    io.out(formatReport(report, file));
    return report.rejected.length ? 1 : 0;
  } catch (error) {
    if (error instanceof SeedFileError) io.err(`${file}: ${error.message}; nothing was written\n`);
    else if (error instanceof StoreUnavailable) {
      io.err(`cannot reach DynamoDB Local at ${state.dynamodbEndpoint}: start the local stack with npm start first\n`);
    } else if (error instanceof Error && error.name === 'ResourceNotFoundException') {
      io.err(`the trees table ${tableName} does not exist at ${state.dynamodbEndpoint}: restart the local stack with npm start\n`);
    } else io.err(`seeding failed: ${message(error)}\n`);
    return 1;
  } finally {
    client.destroy();
  }
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await runSeedCli(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
}
