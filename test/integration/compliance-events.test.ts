/**
 * The compliance events' publisher (functions/compliance/events.ts) with the real EventBridge
 * client against the loopback EventBridge simulator: requests of at most 10 entries and 256 KB,
 * the entries a partial failure left retried alone, a rejection naming how many failed after the
 * bounded retries, and the events kept where a test and the user read them.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { complianceEvents, entrySize, eventBridgePublisher, EventsNotPut, PUT_EVENTS_LIMITS, toEntry } from '../../functions/compliance/events.js';
import type { BatchEndedEvent, ComplianceEvent, DeviceChangedEvent } from '../../functions/compliance/history-model.js';
import { describeEvent, startEventBridgeSimulator, type EventBridgeSimulator, type WireEntry } from '../../tools/simulators/eventbridge-simulator.js';

const BUS = 'netconfig-compliance';
let sim: EventBridgeSimulator;
let client: EventBridgeClient;
let file: string;
const pauses: number[] = [];
const noSleep = async (ms: number) => void pauses.push(ms);

const changed = (i: number, extra = ''): DeviceChangedEvent => ({
  detailType: 'Device Compliance Changed',
  detail: {
    eventId: `b-1:edge-${String(i).padStart(5, '0')}`,
    planId: 'nightly',
    batchId: 'b-1',
    device: `edge-${String(i).padStart(5, '0')}${extra}`,
    change: 'newly-failing',
    from: 'pass',
    to: 'fail',
    at: '2026-11-27T10:00:00.000Z',
  },
});

const ended: BatchEndedEvent = {
  detailType: 'Compliance Batch Completed',
  detail: {
    batchId: 'b-1',
    kind: 'compliance',
    planId: 'nightly',
    treeId: 'core',
    version: '3',
    adapterId: 'nso-lab',
    status: 'completed',
    started: '2026-11-27T09:58:00.000Z',
    finished: '2026-11-27T10:00:00.000Z',
    total: 25,
    grades: { pass: 20, review: 0, fail: 5, error: 0, 'out-of-sync': 0, kept: 0 },
    totals: { errors: 5, warnings: 0, infos: 0, passes: 120 },
    delta: { 'newly-failing': 5, fixed: 0, changed: 0, new: 0, gone: 0 },
    previousBatchId: 'b-0',
  },
};

const publisher = (retries = 3) => eventBridgePublisher({ bus: BUS, client, retries, sleep: noSleep });
const devicesOf = (events: readonly { detail: Record<string, unknown> }[]) => events.map((e) => e.detail['device']);

beforeAll(async () => {
  file = path.join(mkdtempSync(path.join(tmpdir(), 'events-')), 'events.jsonl');
  sim = await startEventBridgeSimulator({ buses: [BUS], file, region: 'eu-west-1', account: '123456789012' });
  client = new EventBridgeClient({ endpoint: sim.url, region: 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  client.destroy();
  await sim.close();
});
afterEach(() => {
  sim.failEntries(() => false);
  pauses.length = 0;
});

describe('compliance events over PutEvents', () => {
  it('puts 25 events in order, in requests of at most 10 entries', async () => {
    const before = { requests: sim.requests, events: sim.events.length };
    const events: ComplianceEvent[] = [ended, ...Array.from({ length: 24 }, (_, i) => changed(i))];
    await publisher().publish(events);
    expect(sim.requests - before.requests).toBe(3);
    const put = sim.events.slice(before.events);
    expect(put.map((e) => e['detail-type'])).toEqual(events.map((e) => e.detailType));
    expect(put[0]).toMatchObject({
      source: 'netconfig.compliance',
      'detail-type': 'Compliance Batch Completed',
      time: '2026-11-27T10:00:00Z',
      region: 'eu-west-1',
      account: '123456789012',
      eventBusName: BUS,
      detail: ended.detail,
    });
    expect(devicesOf(put.slice(1))).toEqual(events.slice(1).map((e) => (e as DeviceChangedEvent).detail.device));
  });

  it('keeps every event in the JSON Lines file and answers them on GET /events', async () => {
    await publisher().publish([changed(900)]);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(lines.map((l) => l.id)).toEqual(sim.events.map((e) => e.id));
    const res = await fetch(`${sim.url}/events`);
    expect(((await res.json()) as { id: string }[]).map((e) => e.id)).toEqual(sim.events.map((e) => e.id));
  });

  it('splits requests at 256 KB as EventBridge counts entries', async () => {
    // Four entries of about 100 KB each: two fit in a request, the third would pass 256 KB.
    const big = Array.from({ length: 4 }, (_, i) => changed(i, 'x'.repeat(100_000)));
    const sizes = big.map((e) => entrySize(toEntry(e, BUS)));
    expect(sizes[0]! * 2).toBeLessThanOrEqual(PUT_EVENTS_LIMITS.bytes);
    expect(sizes[0]! * 3).toBeGreaterThan(PUT_EVENTS_LIMITS.bytes);
    const before = sim.requests;
    await publisher().publish(big);
    expect(sim.requests - before).toBe(2);
  });

  it('counts an entry as EventBridge does: 14 bytes of Time and the UTF-8 bytes of source, detail type and detail', () => {
    const entry = toEntry(changed(1, 'é'), BUS);
    expect(entrySize(entry)).toBe(14 + 'netconfig.compliance'.length + 'Device Compliance Changed'.length + Buffer.byteLength(entry.Detail!, 'utf8'));
  });

  it('the simulator refuses a request over 10 entries or 256 KB as EventBridge does', async () => {
    const raw = (entries: WireEntry[]) =>
      fetch(sim.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'AWSEvents.PutEvents' },
        body: JSON.stringify({ Entries: entries }),
      });
    const entry = { Source: 's', DetailType: 't', Detail: '{}', EventBusName: BUS };
    const eleven = await raw(Array.from({ length: 11 }, () => entry));
    expect(eleven.status).toBe(400);
    expect(await eleven.json()).toMatchObject({ __type: 'ValidationException' });
    const heavy = await raw([{ ...entry, Detail: JSON.stringify({ x: 'y'.repeat(PUT_EVENTS_LIMITS.bytes) }) }]);
    expect(heavy.status).toBe(400);
    const mixed = await raw([entry, { ...entry, Detail: '[1]' }, { ...entry, EventBusName: 'nope' }, { ...entry, Source: 'aws.ec2' }]);
    expect(await mixed.json()).toMatchObject({
      FailedEntryCount: 3,
      Entries: [
        { EventId: expect.any(String) },
        { ErrorCode: 'MalformedDetail' },
        { ErrorCode: 'ResourceNotFoundException' },
        { ErrorCode: 'NotAuthorizedForSourceException' },
      ],
    });
  });

  it('rejects an entry over 256 KB on its own without sending it, and puts the others', async () => {
    const before = sim.events.length;
    const huge = changed(1, 'x'.repeat(PUT_EVENTS_LIMITS.bytes));
    const error = await publisher()
      .publish([changed(2), huge, changed(3)])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventsNotPut);
    expect(error).toMatchObject({ failed: 1, total: 3, reasons: { EntryTooLarge: 1 } });
    expect(devicesOf(sim.events.slice(before))).toEqual(['edge-00002', 'edge-00003']);
  });

  it('sends again only the entries a partial failure left, after a pause, and succeeds', async () => {
    const before = { requests: sim.requests, events: sim.events.length };
    sim.failEntries((e) => typeof e.Detail === 'string' && /edge-0000[37]/.test(e.Detail), { times: 2, code: 'ThrottlingException' });
    await publisher().publish(Array.from({ length: 10 }, (_, i) => changed(i)));
    // One request of 10, then two of the 2 left: each device put exactly once.
    expect(sim.requests - before.requests).toBe(3);
    expect(pauses).toEqual([200, 400]);
    const put = devicesOf(sim.events.slice(before.events));
    expect([...put].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `edge-${String(i).padStart(5, '0')}`));
    expect(put.slice(-2)).toEqual(['edge-00003', 'edge-00007']);
  });

  it('rejects naming how many failed once the retries are spent', async () => {
    sim.failEntries((e) => typeof e.Detail === 'string' && e.Detail.includes('edge-00004'));
    const before = sim.requests;
    const error = await publisher(2)
      .publish(Array.from({ length: 12 }, (_, i) => changed(i)))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventsNotPut);
    expect((error as Error).message).toBe('1 of 12 compliance events could not be put on the event bus (InternalFailure ×1)');
    // 10 + 2 retries of the one entry + the second request of 2.
    expect(sim.requests - before).toBe(4);
    expect(pauses).toEqual([200, 400]);
  });

  it('does not retry an entry EventBridge will refuse every time', async () => {
    sim.failEntries(() => true, { code: 'MalformedDetail' });
    const before = sim.requests;
    await expect(publisher().publish([changed(1), changed(2)])).rejects.toThrow(
      '2 of 2 compliance events could not be put on the event bus (MalformedDetail ×2)',
    );
    expect(sim.requests - before).toBe(1);
  });

  it('counts every event as failed when the bus cannot be reached, without sending the rest', async () => {
    const dead = await startEventBridgeSimulator();
    const url = dead.url;
    await dead.close();
    const away = new EventBridgeClient({ endpoint: url, region: 'eu-west-1', maxAttempts: 1, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
    const error = await eventBridgePublisher({ bus: BUS, client: away, sleep: noSleep })
      .publish(Array.from({ length: 15 }, (_, i) => changed(i)))
      .catch((e: unknown) => e);
    away.destroy();
    expect(error).toMatchObject({ failed: 15, total: 15 });
    expect((error as EventsNotPut).reasons['NotSent']).toBe(5);
  });

  it('the factory publishes on EVENT_BUS_NAME, and there is no publisher without it', async () => {
    expect(complianceEvents({})).toBeUndefined();
    const env = { EVENT_BUS_NAME: `arn:aws:events:eu-west-1:123456789012:event-bus/${BUS}` };
    const saved = process.env['AWS_ENDPOINT_URL_EVENTBRIDGE'];
    process.env['AWS_ENDPOINT_URL_EVENTBRIDGE'] = sim.url;
    try {
      const before = sim.events.length;
      await complianceEvents(env)!.publish([ended]);
      expect(sim.events.slice(before).map((e) => e.eventBusName)).toEqual([BUS]);
    } finally {
      if (saved === undefined) delete process.env['AWS_ENDPOINT_URL_EVENTBRIDGE'];
      else process.env['AWS_ENDPOINT_URL_EVENTBRIDGE'] = saved;
    }
  });

  it('describes each event in one line for npm start', () => {
    expect(describeEvent({ 'detail-type': ended.detailType, detail: ended.detail })).toBe(
      'Compliance Batch Completed: batch b-1 (plan nightly) completed, 25 devices, delta newly-failing 5 fixed 0 changed 0 new 0 gone 0',
    );
    expect(describeEvent({ 'detail-type': 'Device Compliance Changed', detail: changed(7).detail })).toBe(
      'Device Compliance Changed: edge-00007 pass → fail (batch b-1, plan nightly)',
    );
  });
});
