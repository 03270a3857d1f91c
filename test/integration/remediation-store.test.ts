/**
 * The remediation store against DynamoDB Local: a run and its devices in the compliance table,
 * pages of devices by name, totals counted once per state reached however often a record is
 * written, the rollback's start conditions, and device items kept inside DynamoDB's item size.
 */
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/platform/dynamo.js';
import { emptyRemediationTotals, type NewRemediation, type RemediationDevice } from '../../functions/remediation/model.js';
import type { YangPatch } from '../../functions/remediation/patch.js';
import { shownOutput } from '../../functions/remediation/nso.js';
import { DynamoRemediationStore, MAX_DEVICE_BYTES, MAX_DRY_RUN_BYTES } from '../../functions/remediation/store.js';
import { createTables } from '../../tools/local/table-copies.js';

let table: string;
let store: DynamoRemediationStore;
const AT = '2026-11-20T10:00:00.000Z';
const newId = () => randomBytes(12).toString('hex');

const newRun = (over: Partial<NewRemediation> = {}): NewRemediation => ({
  remediationId: newId(),
  batchId: 'b'.repeat(24),
  adapterId: 'nso-1',
  treeId: 'a'.repeat(24),
  version: 'v1',
  mode: 'apply',
  commitQueue: false,
  listKeys: { 'tailf-ned-cisco-ios:interface/GigabitEthernet': ['name'] },
  devices: ['edge-2', 'edge-0', 'core 1/x', 'edge-1'].map((device) => ({ device, node: device.startsWith('core') ? 'base/core' : 'base' })),
  startedBy: { subject: 'alice', roles: ['admin'] },
  started: AT,
  expiresAt: 2_000_000_000,
  ...over,
});

const patch: YangPatch = {
  'ietf-yang-patch:yang-patch': {
    'patch-id': 'p',
    edit: [{ 'edit-id': 'ntp-0', operation: 'merge', target: '/ntp', value: { 'tailf-ned-cisco-ios:ntp': { server: 'x' } } }],
  },
};
const record = (device: string, state: RemediationDevice['state'], over: Partial<RemediationDevice> = {}): RemediationDevice => ({
  device,
  state,
  rules: [{ ruleId: 'ntp', node: 'base', edits: ['ntp-0'] }],
  patch,
  updatedAt: AT,
  ...over,
});

beforeAll(async () => {
  table = (await createTables())['compliance'];
  store = new DynamoRemediationStore(documentClient, table, async () => undefined);
});

describe('runs and their devices', () => {
  it('stores a run running with its devices pending, and gives the engine its work', async () => {
    const run = newRun({ ruleIds: ['ntp'] });
    await store.create(run);
    expect(await store.get(run.remediationId)).toEqual({
      remediationId: run.remediationId,
      batchId: run.batchId,
      adapterId: 'nso-1',
      treeId: run.treeId,
      version: 'v1',
      mode: 'apply',
      commitQueue: false,
      ruleIds: ['ntp'],
      status: 'running',
      devices: 4,
      totals: emptyRemediationTotals(),
      startedBy: run.startedBy,
      started: AT,
    });
    const work = (await store.getWork(run.remediationId))!;
    expect(work.listKeys).toEqual(run.listKeys);
    expect(work.devices).toEqual([...run.devices].sort((a, b) => (a.device < b.device ? -1 : 1)));
    expect(await store.getDevice(run.remediationId, 'edge-0')).toEqual({ device: 'edge-0', state: 'pending', rules: [], updatedAt: AT });
    await expect(store.create(run)).rejects.toThrow(/exists already/);
    expect(await store.get(newId())).toBeUndefined();
    expect(await store.getWork(newId())).toBeUndefined();
  });

  it('pages devices by name, each once, however small the page', async () => {
    const run = newRun();
    await store.create(run);
    for (const limit of [1, 3, 4, 10]) {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = await store.listDevices(run.remediationId, { limit, ...(after === undefined ? {} : { after }) });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        seen.push(...page.items.map((d) => d.device));
        after = page.next;
        pages++;
      } while (after !== undefined);
      expect(seen).toEqual(['core 1/x', 'edge-0', 'edge-1', 'edge-2']);
      expect(pages).toBeLessThanOrEqual(Math.ceil(4 / limit) + 1);
    }
    await expect(store.listDevices(run.remediationId, { limit: 0 })).rejects.toThrow(RangeError);
  });
});

describe('totals', () => {
  it('counts each state reached once per device, however often the same record is written', async () => {
    const run = newRun();
    await store.create(run);
    const id = run.remediationId;
    for (let i = 0; i < 3; i++) await store.putDevice(id, record('edge-0', 'committing'));
    for (let i = 0; i < 3; i++) await store.putDevice(id, record('edge-0', 'applied', { rollbackId: 7 }));
    await store.putDevice(id, record('edge-0', 'fixed', { rollbackId: 7, gradeAfter: 'pass' }));
    await store.putDevice(id, record('edge-0', 'fixed', { rollbackId: 7, gradeAfter: 'pass' }));
    await store.putDevice(id, record('edge-1', 'committing'));
    await store.putDevice(id, record('edge-1', 'applied', { rollbackId: 8 }));
    await store.putDevice(id, record('edge-1', 'failed', { rollbackId: 8, error: { kind: 'timeout', reason: 'late' } }));
    await store.putDevice(id, record('edge-1', 'failed', { rollbackId: 8, error: { kind: 'timeout', reason: 'late' } }));
    await store.putDevice(id, record('edge-2', 'nothing-to-do'));
    await store.putDevice(id, record('core 1/x', 'committing'));
    await store.putDevice(id, record('core 1/x', 'still-failing', { rollbackId: 9, gradeAfter: 'fail' }));
    await store.putDevice(id, record('edge-0', 'rolled-back', { rollbackId: 7, rollback: { state: 'rolled-back', at: AT } }));
    await store.putDevice(id, record('edge-0', 'rolled-back', { rollbackId: 7, rollback: { state: 'rolled-back', at: AT } }));
    expect((await store.get(id))!.totals).toEqual({ planned: 3, dryRun: 0, applied: 3, fixed: 1, stillFailing: 1, failed: 1, rolledBack: 1 });
    expect(await store.getDevice(id, 'edge-1')).toMatchObject({ state: 'failed', rollbackId: 8, error: { kind: 'timeout', reason: 'late' }, patch });
  });

  it('writes devices together in transactions of at most 99, counting once, also when a group is written again by other stores', async () => {
    // An apply run's records that no commit waits for (here: fetches that failed).
    const devices = Array.from({ length: 250 }, (_, i) => ({ device: `g-${String(i).padStart(3, '0')}`, node: 'base' }));
    const run = newRun({ mode: 'apply', devices });
    await store.create(run);
    const id = run.remediationId;
    const sent: number[] = [];
    const counting = new DynamoRemediationStore(
      {
        send: (command: { input: { TransactItems?: unknown[] } }) => (
          sent.push(command.input.TransactItems?.length ?? 1), documentClient.send(command as never)
        ),
      } as never,
      table,
      async () => undefined,
    );
    const records = devices.map(({ device }) => record(device, 'failed', { patch: undefined, error: { kind: 'timeout', reason: device } }));
    await counting.putDevices(id, records);
    // Three transactions of 99, 99 and 52 devices, each with the run's item.
    expect(sent).toEqual([100, 100, 53]);
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), failed: 250 });
    // The same records again, from a store that knows no revision (its group is refused and
    // written device by device), then from the first, whose group meets revisions moved since.
    const other = new DynamoRemediationStore(documentClient, table, async () => undefined);
    await other.putDevices(id, records.slice(0, 20));
    await counting.putDevices(id, records.slice(10, 30));
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), failed: 250 });
    expect(await store.getDevice(id, 'g-249')).toMatchObject({ state: 'failed', error: { reason: 'g-249' } });
    expect(await store.getDevice(id, 'g-015')).toMatchObject({ state: 'failed', error: { reason: 'g-015' } });
  });

  it('reads a chunk’s devices, from the first to the last by key, in one query', async () => {
    const run = newRun();
    await store.create(run);
    const { devices } = (await store.getWork(run.remediationId))!;
    await store.putDevice(run.remediationId, record(devices[1]!.device, 'committing'));
    const read = await store.readDevices(run.remediationId, devices[1]!.device, devices[2]!.device);
    expect([...read.keys()]).toEqual([devices[1]!.device, devices[2]!.device]);
    expect(read.get(devices[1]!.device)).toMatchObject({ state: 'committing', patch });
    expect(read.get(devices[2]!.device)).toMatchObject({ state: 'pending' });
  });

  it('counts exactly under concurrent writes of the run’s devices, and once when the same write is sent twice at once', async () => {
    const devices = Array.from({ length: 30 }, (_, i) => ({ device: `d-${String(i).padStart(2, '0')}`, node: 'base' }));
    const run = newRun({ mode: 'dry-run', devices });
    await store.create(run);
    await Promise.all(
      devices.flatMap(({ device }) =>
        [0, 1].map(() => store.putDevice(run.remediationId, record(device, 'dry-run', { dryRun: shownOutput('+ ntp server x').output }))),
      ),
    );
    expect((await store.get(run.remediationId))!.totals).toMatchObject({ planned: 30, dryRun: 30 });
  });

  it('counts once when stores of several containers write the same device, each knowing an older revision, and replaces the whole record', async () => {
    const run = newRun();
    await store.create(run);
    const id = run.remediationId;
    const first = new DynamoRemediationStore(documentClient, table, async () => undefined);
    const second = new DynamoRemediationStore(documentClient, table, async () => undefined);
    await first.putDevice(id, record('edge-0', 'committing', { error: { kind: 'x', reason: 'y' } }));
    await second.putDevice(id, record('edge-0', 'applied', { rollbackId: 3 }));
    await first.putDevice(id, record('edge-0', 'fixed', { rollbackId: 3, gradeAfter: 'pass' }));
    await second.putDevice(id, record('edge-0', 'fixed', { rollbackId: 3, gradeAfter: 'pass' }));
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 1, applied: 1, fixed: 1 });
    const kept = (await store.getDevice(id, 'edge-0'))!;
    expect(kept).toEqual(record('edge-0', 'fixed', { rollbackId: 3, gradeAfter: 'pass' }));
    expect(kept.error).toBeUndefined();
  });

  it('refuses a device the run does not have, and counts nothing for it', async () => {
    const run = newRun();
    await store.create(run);
    await expect(store.putDevice(run.remediationId, record('elsewhere', 'dry-run'))).rejects.toThrow(/no device elsewhere/);
    expect((await store.get(run.remediationId))!.totals).toEqual(emptyRemediationTotals());
  });

  it('writes the device and its counts together: a write cut off after it landed counts once', async () => {
    const run = newRun();
    await store.create(run);
    // The transaction lands, and its answer is lost (a socket closed after the write).
    let cut = true;
    const lossy = {
      send: async (command: unknown) => {
        const out = await documentClient.send(command as TransactWriteCommand);
        if (cut && command instanceof TransactWriteCommand) {
          cut = false;
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} });
        }
        return out;
      },
    } as unknown as DynamoDBDocumentClient;
    const flaky = new DynamoRemediationStore(lossy, table, async () => undefined);
    await flaky.putDevice(run.remediationId, record('edge-0', 'committing'));
    expect(cut).toBe(false);
    expect((await store.get(run.remediationId))!.totals.planned).toBe(1);
  });
});

describe('a dry-run’s devices, counted by chunk', () => {
  /** A store whose client notes the name of each command it sends. */
  const noting = (sent: string[]) =>
    new DynamoRemediationStore(
      { send: (command: object) => (sent.push(command.constructor.name), documentClient.send(command as never)) } as never,
      table,
      async () => undefined,
    );

  it('writes records in batch writes, whole with their node and expiry, and counts nothing until the chunk sets its counts', async () => {
    const devices = Array.from({ length: 60 }, (_, i) => ({ device: `c-${String(i).padStart(2, '0')}`, node: i % 2 ? 'base/core' : 'base' }));
    const run = newRun({ mode: 'dry-run', devices });
    await store.create(run);
    const id = run.remediationId;
    const sent: string[] = [];
    const uncounted = noting(sent);
    const records = devices.slice(0, 50).map(({ device, node }) => ({
      node,
      record:
        device === 'c-07'
          ? record(device, 'failed', { error: { kind: 'timeout', reason: 'late' }, patch: undefined })
          : record(device, 'dry-run', { dryRun: shownOutput(`+ ${device}`).output }),
    }));
    await uncounted.putUncounted(id, records.slice(0, 40));
    await uncounted.putUncounted(id, records.slice(40));
    // One read of the run's expiry for the run (not one per write), then 25 records a request: no transaction.
    expect(sent).toEqual(['GetCommand', 'BatchWriteCommand', 'BatchWriteCommand', 'BatchWriteCommand']);
    expect((await store.get(id))!.totals).toEqual(emptyRemediationTotals());
    expect(await store.getDevice(id, 'c-07')).toMatchObject({ state: 'failed', error: { kind: 'timeout' } });
    expect(await store.getDevice(id, 'c-08')).toEqual(record('c-08', 'dry-run', { dryRun: shownOutput('+ c-08').output }));
    // The node stays (the engine's work lists it), and the item expires with the run.
    expect((await store.getWork(id))!.devices).toEqual(devices);
    const raw = await documentClient.send(new GetCommand({ TableName: table, Key: { pk: `M#${id}`, sk: 'D#c-08' } }));
    expect(raw.Item).toMatchObject({ expiresAt: run.expiresAt, node: 'base' });

    // Chunks of 30: the first stored whole, the second in part (c-30 to c-49 of c-30 to c-59).
    await store.countChunk(id, 0, 'c-00', 'c-29');
    await store.countChunk(id, 1, 'c-30', 'c-59');
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 49, dryRun: 49, failed: 1 });
    // A chunk run again counts the same records again: set, never added.
    await store.countChunk(id, 0, 'c-00', 'c-29');
    await store.countChunk(id, 1, 'c-30', 'c-59');
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 49, dryRun: 49, failed: 1 });
    // The rest of the second chunk, stored and counted.
    await uncounted.putUncounted(
      id,
      devices.slice(50).map(({ device, node }) => ({ node, record: record(device, 'dry-run') })),
    );
    await store.countChunk(id, 1, 'c-30', 'c-59');
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 59, dryRun: 59, failed: 1 });
    // States a chunk knows its records hold (its writes acknowledged): set with no read.
    sent.length = 0;
    await uncounted.countChunk(id, 2, 'c-60', 'c-62', ['dry-run', 'failed', 'pending']);
    expect(sent).toEqual(['UpdateCommand']);
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 60, dryRun: 60, failed: 2 });
  });

  it('keeps a chunk’s count of more devices when a count read earlier lands later', async () => {
    const devices = Array.from({ length: 4 }, (_, i) => ({ device: `e-${i}`, node: 'base' }));
    const run = newRun({ mode: 'dry-run', devices });
    await store.create(run);
    const id = run.remediationId;
    // An earlier attempt's count (its read: two devices stored) whose write is held back.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const writing = new Promise<void>((resolve) => (reached = resolve));
    const late = new DynamoRemediationStore(
      {
        send: async (command: object) => {
          if (command instanceof UpdateCommand) {
            reached();
            await held;
          }
          return documentClient.send(command as never);
        },
      } as never,
      table,
      async () => undefined,
    );
    await store.putUncounted(
      id,
      devices.slice(0, 2).map(({ device, node }) => ({ node, record: record(device, 'dry-run') })),
    );
    const earlier = late.countChunk(id, 0, 'e-0', 'e-3');
    await writing;
    await store.putUncounted(
      id,
      devices.slice(2).map(({ device, node }) => ({ node, record: record(device, 'dry-run') })),
    );
    await store.countChunk(id, 0, 'e-0', 'e-3');
    release();
    await earlier;
    expect((await store.get(id))!.totals).toMatchObject({ planned: 4, dryRun: 4 });
  });

  it('adds the chunks’ counts to the transactional totals', async () => {
    const run = newRun({ mode: 'dry-run' });
    await store.create(run);
    const id = run.remediationId;
    await store.putDevice(id, record('edge-0', 'dry-run'));
    await store.putUncounted(id, [
      { node: 'base', record: record('edge-1', 'dry-run') },
      { node: 'base', record: record('edge-2', 'nothing-to-do') },
    ]);
    await store.countChunk(id, 1, 'edge-1', 'edge-2');
    expect((await store.get(id))!.totals).toEqual({ ...emptyRemediationTotals(), planned: 2, dryRun: 2 });
    await expect(store.putUncounted(newId(), [{ node: 'base', record: record('edge-1', 'dry-run') }])).rejects.toThrow(/does not exist/);
  });
});

describe('the run’s end and its rollback', () => {
  it('starts a rollback only of a finished apply run, once (again after one that failed before reaching a device)', async () => {
    const by = { subject: 'bob', roles: ['admin'] };
    const running = newRun();
    await store.create(running);
    expect(await store.startRollback(running.remediationId, by, AT)).toBe(false);
    await store.finish(running.remediationId, 'completed', AT);
    expect(await store.startRollback(running.remediationId, by, AT)).toBe(true);
    expect(await store.startRollback(running.remediationId, by, AT)).toBe(false);
    expect((await store.get(running.remediationId))!.rollback).toEqual({ status: 'running', startedBy: by, started: AT });
    await store.finishRollback(running.remediationId, 'completed', '2026-11-20T11:00:00.000Z');
    expect((await store.get(running.remediationId))!.rollback).toEqual({
      status: 'completed',
      startedBy: by,
      started: AT,
      finished: '2026-11-20T11:00:00.000Z',
    });

    const dryRun = newRun({ mode: 'dry-run' });
    await store.create(dryRun);
    await store.finish(dryRun.remediationId, 'completed', AT);
    expect(await store.startRollback(dryRun.remediationId, by, AT)).toBe(false);

    const failed = newRun();
    await store.create(failed);
    await store.finish(failed.remediationId, 'failed', AT, 'a chunk could not be run');
    expect(await store.get(failed.remediationId)).toMatchObject({ status: 'failed', finished: AT, reason: 'a chunk could not be run' });
    // A failed apply run may have committed devices: it can be rolled back.
    expect(await store.startRollback(failed.remediationId, by, AT)).toBe(true);
    await store.finishRollback(failed.remediationId, 'failed', AT);
    // Started again only while a device is left to roll back (it has a rollback id, none applied).
    expect(await store.startRollback(failed.remediationId, by, '2026-11-20T12:00:00.000Z')).toBe(false);
    await store.putDevice(failed.remediationId, record('edge-0', 'fixed', { rollbackId: 11 }));
    expect(await store.startRollback(failed.remediationId, by, '2026-11-20T12:00:00.000Z')).toBe(true);
    expect(await store.get(failed.remediationId)).toMatchObject({ rollback: { status: 'running', attempt: 2 } });
    expect(await store.startRollback(failed.remediationId, by, AT)).toBe(false);
    expect(await store.startRollback(newId(), by, AT)).toBe(false);
  });
});

describe('item size', () => {
  it('cuts dry-run output, leaves out a patch too large to keep, then rules from the end, and says so', async () => {
    const run = newRun();
    await store.create(run);
    const id = run.remediationId;
    const huge: YangPatch = {
      'ietf-yang-patch:yang-patch': {
        'patch-id': 'p',
        edit: Array.from({ length: 2_000 }, (_, i) => ({
          'edit-id': `e${i}`,
          operation: 'merge' as const,
          target: `/x${i}`,
          value: { [`m:x${i}`]: 'v'.repeat(200) },
        })),
      },
    };
    const long = shownOutput('é'.repeat(MAX_DRY_RUN_BYTES));
    await store.putDevice(id, record('edge-0', 'dry-run', { patch: huge, dryRun: long.output, ...(long.truncated ? { dryRunTruncated: true } : {}) }));
    const kept = (await store.getDevice(id, 'edge-0'))!;
    expect(kept).toMatchObject({ state: 'dry-run', patchOmitted: true, dryRunTruncated: true, rules: record('x', 'dry-run').rules });
    expect(kept.patch).toBeUndefined();
    expect(Buffer.byteLength(kept.dryRun!, 'utf8')).toBeLessThanOrEqual(MAX_DRY_RUN_BYTES);
    expect(kept.dryRun!).toMatch(/^é+$/);

    const rules = Array.from({ length: 5_000 }, (_, i) => ({ ruleId: `rule-${i}`, unremediable: 'why '.repeat(25) }));
    await store.putDevice(id, record('edge-1', 'nothing-to-do', { rules, patch: undefined }));
    const cut = (await store.getDevice(id, 'edge-1'))!;
    expect(cut.rulesOmitted).toBeGreaterThan(0);
    expect(cut.rules.length + cut.rulesOmitted!).toBe(5_000);
    expect(cut.rules).toEqual(rules.slice(0, cut.rules.length));
    expect(Buffer.byteLength(JSON.stringify(cut.rules), 'utf8')).toBeLessThanOrEqual(MAX_DEVICE_BYTES);

    await store.putDevice(id, record('edge-2', 'committing'));
    expect(await store.getDevice(id, 'edge-2')).toMatchObject({ patch, rules: record('x', 'x' as never).rules });
  });

  it('keeps the patch masked', async () => {
    const run = newRun();
    await store.create(run);
    const secret: YangPatch = {
      'ietf-yang-patch:yang-patch': {
        'patch-id': 'p',
        edit: [{ 'edit-id': 'e', operation: 'merge', target: '/snmp', value: { 'm:snmp': { password: 's3cret-Value' } } }],
      },
    };
    await store.putDevice(run.remediationId, record('edge-0', 'dry-run', { patch: secret }));
    expect(JSON.stringify(await store.getDevice(run.remediationId, 'edge-0'))).not.toContain('s3cret-Value');
  });
});
