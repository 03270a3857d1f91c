/**
 * The restore procedure of docs/operations.md ("Restore"), walked against DynamoDB Local with
 * the real handlers: the stack's table is brought back to an earlier state from a restored
 * table by tools/ops/copy-table.ts, with the commands the runbook prints. Locally there is no
 * point-in-time recovery nor AWS Backup: a copy of the table taken at the "restore point"
 * stands for the table they restore (same keys, same items), which is what the procedure starts from.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { treeKey } from '../../functions/trees/store.js';
import { createTables } from '../../tools/local/table-copies.js';
import { copyTable, main } from '../../tools/ops/copy-table.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { stdoutDuring } from '../support/stdout.js';

const COLLECTION = '/configuration_manager/configs';
let live: string;
let create: Parameters<typeof invoke>[0];
let get: Parameters<typeof invoke>[0];

const post = (name: string) => invoke(create, apiEvent({ method: 'POST', resource: COLLECTION, body: { name, deviceType: 'cisco-ios-xr' } }));
/** The runbook's copy commands (docs/operations.md, "Restore"), by their flag: the arguments after `--`. */
const runbook = (() => {
  const text = readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
  const restore = text.slice(text.indexOf('\n## Restore\n'), text.indexOf('\n## Rollback\n'));
  const commands = [...restore.matchAll(/npm run ops:copy-table -- ([^`\n]+)/g)].map((m) => m[1]!.trim().split(/\s+/));
  const find = (flag: string) => commands.find((argv) => argv.includes(flag)) ?? [];
  return { snapshot: find('--create'), swapIn: find('--prune'), appendBack: find('--append-only') };
})();

/** A runbook command with `<table>` standing for `table`. */
const withTable = (argv: readonly string[], table: string) => argv.map((a) => a.replaceAll('<table>', table));

/** Runs the command line as the runbook prints it; its exit status (its output captured). */
const run = async (...argv: string[]): Promise<number> => {
  let status = -1;
  await stdoutDuring(async () => {
    status = await main(argv);
  });
  return status;
};
const read = (treeId: string) => invoke(get, apiEvent({ method: 'GET', resource: `${COLLECTION}/{treeId}`, pathParameters: { treeId } }));

beforeAll(async () => {
  // The stack's tables; the handlers read their names from the environment, as deployed.
  live = (await createTables()).trees;
  ({ handler: create } = await import('../../functions/trees/handlers/create.js'));
  ({ handler: get } = await import('../../functions/trees/handlers/get.js'));
});

describe('restoring a table from a restored copy', () => {
  it('brings the stack’s table back to the restore point, read through the handlers', async () => {
    const kept = (await post('core-baseline')).body;
    const lost = (await post('edge-baseline')).body;
    expect(runbook.snapshot).toEqual(['--from', '<table>', '--to', '<table>-restored', '--create']);
    expect(runbook.swapIn).toEqual(['--from', '<table>-restored', '--to', '<table>', '--prune']);
    // The restore point: locally a copy stands for the table restore-table-to-point-in-time makes.
    expect(await run(...withTable(runbook.snapshot, live))).toBe(0);

    // After the restore point: a tree deleted by mistake, another written.
    await documentClient.send(new DeleteCommand({ TableName: live, Key: treeKey(lost.id) }));
    const later = (await post('late-baseline')).body;
    expect((await read(lost.id)).status).toBe(404);

    // The runbook's step: copy the restored items back, pruning what the restore point did not hold.
    expect(await run(...withTable(runbook.swapIn, live))).toBe(0);
    expect((await read(kept.id)).body).toStrictEqual(kept);
    expect((await read(lost.id)).body).toStrictEqual(lost);
    expect((await read(later.id)).status).toBe(404);
  });

  it('refuses a target of another key schema, a missing table, and the same table twice', async () => {
    const tables = await createTables();
    await expect(copyTable({ from: tables.trees, to: tables.compliance })).rejects.toThrow(/key schema differs/);
    await expect(copyTable({ from: tables.trees, to: `${tables.trees}-absent` })).rejects.toThrow(/no such table \(--create makes it\)/);
    expect(await run('--from', tables.trees, '--to', tables.trees)).toBe(2);
  });

  it('copies more items than one batch and one page hold, and prunes the rest', async () => {
    const tables = await createTables();
    const items = Array.from({ length: 60 }, (_, i) => ({ pk: treeKey(String(i).padStart(24, '0')).pk, blob: 'x'.repeat(20_000) }));
    for (const item of items) await documentClient.send(new PutCommand({ TableName: tables.trees, Item: item }));
    const target = `${tables.trees}-copy`;
    await expect(copyTable({ from: tables.trees, to: target, create: true })).resolves.toEqual({ copied: 60, deleted: 0 });
    for (const item of items.slice(0, 30)) await documentClient.send(new DeleteCommand({ TableName: tables.trees, Key: { pk: item.pk } }));
    await expect(copyTable({ from: tables.trees, to: target, prune: true })).resolves.toEqual({ copied: 30, deleted: 30 });
  });

  it('restores an append-only table by adding back only what it lost: no entry overwritten, none deleted, no batch write', async () => {
    expect(runbook.appendBack).toEqual(['--from', '<table>-restored', '--to', '<table>', '--append-only']);
    const { changelog } = await createTables();
    const entry = (pk: string, text: string) => ({ pk, sk: pk, text });
    for (const item of [entry('a', 'kept'), entry('b', 'lost')]) await documentClient.send(new PutCommand({ TableName: changelog, Item: item }));
    expect(await run(...withTable(runbook.snapshot, changelog))).toBe(0);
    // After the restore point: an entry lost, a later one written, and the restored copy holding a different text for a key the table still has.
    await documentClient.send(new DeleteCommand({ TableName: changelog, Key: { pk: 'b', sk: 'b' } }));
    await documentClient.send(new PutCommand({ TableName: changelog, Item: entry('c', 'later') }));
    await documentClient.send(new PutCommand({ TableName: `${changelog}-restored`, Item: entry('a', 'altered') }));
    const sent: string[] = [];
    const client = new DynamoDBClient({});
    client.middlewareStack.add((next, context) => (args) => (sent.push(String(context.commandName)), next(args)), { step: 'initialize' });
    expect(await main(withTable(runbook.appendBack, changelog), client)).toBe(0);
    const rows = (await documentClient.send(new ScanCommand({ TableName: changelog, ConsistentRead: true }))).Items ?? [];
    expect(Object.fromEntries(rows.map((r) => [r['pk'], r['text']]))).toEqual({ a: 'kept', b: 'lost', c: 'later' });
    expect(sent.filter((c) => /Write|Delete|Update/.test(c))).toEqual([]);
    expect(await run('--from', `${changelog}-restored`, '--to', changelog, '--append-only', '--prune')).toBe(1);
  });
});
