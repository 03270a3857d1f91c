/** Grading as docs/compliance.md states it, the per-adapter gate's cap and pause, and how a batch is cut into chunks. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InternalError, ServiceUnavailable } from '../../functions/platform/problem.js';
import { AdapterGate, backoffMs } from '../../functions/compliance/gate.js';
import { gradeOf, ruleTotals, score } from '../../functions/compliance/grading.js';
import { checkDevice, configPath, isoTimestamp, MAX_ISSUE_BYTES } from '../../functions/compliance/check.js';
import { MAX_REPORT_BYTES } from '../../functions/compliance/store.js';
import { CHUNK_BYTES, CHUNK_SIZE, chunkDevices } from '../../functions/compliance/service.js';
import type { BatchPlan, DeviceAssignment } from '../../functions/compliance/model.js';
import { chunkEntries } from '../../functions/compliance/plan.js';

const o = (severity: 'error' | 'warning' | 'info', passed: boolean) => ({ severity, passed });

describe('grading', () => {
  it('weighs error 2, warning 1, info 0.5, rounds to one decimal, and is 100 when no rule applies', () => {
    expect(score([])).toBe(100);
    expect(score([o('error', true), o('error', false)])).toBe(50);
    expect(score([o('error', true), o('warning', false)])).toBe(66.7);
    expect(score([o('error', true), o('error', true), o('warning', true), o('error', true), o('info', false)])).toBe(93.3);
    expect(score([o('info', false)])).toBe(0);
  });

  it('grades pass at 90 or more, review at 80 or more, fail below', () => {
    expect([100, 90, 89.9, 80, 79.9, 0].map(gradeOf)).toEqual(['pass', 'pass', 'review', 'review', 'fail', 'fail']);
  });

  it('counts failed rules by severity and passed rules', () => {
    expect(ruleTotals([o('error', false), o('warning', false), o('info', false), o('info', false), o('error', true)])).toEqual({
      errors: 1,
      warnings: 1,
      infos: 2,
      passes: 1,
    });
  });
});

describe("a report's size", () => {
  it('keeps every issue, in order, when they fit together, and one at the cap that fits alone', async () => {
    const check = (messages: readonly string[]) =>
      checkDevice(
        { device: 'edge-1', node: 'base' },
        {
          batchId: 'a'.repeat(24),
          treeId: 'b'.repeat(24),
          version: 'v1',
          adapterId: 'lab',
          plan: {
            variables: {},
            nodes: ['base'],
            rulesByNode: { base: messages.map((_, i) => ({ id: `r${i}`, node: 'base', path: '/x', mode: 'required' as const, severity: 'warning' as const })) },
          },
        },
        {
          relayGet: async () => [{ result: '200', data: { 'tailf-ncs:config': {} } }] as never,
          evaluate: (_config, _variables, planned) =>
            planned.map((r, i) => ({
              id: r.id,
              path: r.path,
              mode: r.mode,
              severity: r.severity,
              status: i % 3 === 2 ? ('pass' as const) : ('fail' as const),
              message: messages[i]!,
            })),
          gate: { run: (fetch) => fetch(), pause: () => undefined },
          now: () => new Date('2026-11-25T10:00:00.000Z'),
        },
      );
    const few = await check(['a', 'b', 'c', 'd']);
    expect(few.issues.map((i) => i.ruleId)).toEqual(['r0', 'r1', 'r3']);
    expect(few.issuesOmitted).toBeUndefined();
    // One issue's JSON a few bytes under the cap: it fits alone, and the next does not.
    const bare = Buffer.byteLength(JSON.stringify({ ruleId: 'r0', node: 'base', path: '/x', severity: 'warning', mode: 'required', message: '' }), 'utf8');
    const atCap = await check(['x'.repeat(MAX_ISSUE_BYTES - bare), 'y']);
    expect(atCap.issues.map((i) => i.ruleId)).toEqual(['r0']);
    expect(atCap.issuesOmitted).toBe(1);
    // Under the cap in characters, over it in UTF-8 bytes (é is two): measured in bytes.
    const twoByte = await check(['é'.repeat(60_000), 'é'.repeat(60_000), 'skipped: passes', 'é'.repeat(60_000)]);
    expect(JSON.stringify(twoByte.issues).length).toBeLessThan(MAX_ISSUE_BYTES);
    expect(twoByte.issues.map((i) => i.ruleId)).toEqual(['r0', 'r1']);
    expect(twoByte.issuesOmitted).toBe(1);
  });

  it('keeps issues up to 300,000 UTF-8 bytes of JSON, counting bytes, not characters, and counts the rest as omitted', async () => {
    // Ten failed rules, each about 100,000 bytes of JSON in 50,000 two-byte characters: by
    // characters five would fit, by bytes two do.
    const rules = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, node: 'base', path: '/x', mode: 'required' as const, severity: 'error' as const }));
    const report = await checkDevice(
      { device: 'edge-1', node: 'base' },
      {
        batchId: 'a'.repeat(24),
        treeId: 'b'.repeat(24),
        version: 'v1',
        adapterId: 'lab',
        plan: { variables: {}, nodes: ['base'], rulesByNode: { base: rules } },
      },
      {
        relayGet: async () => [{ result: '200', data: { 'tailf-ncs:config': {} } }] as never,
        evaluate: (_config, _variables, planned) =>
          planned.map((r) => ({ id: r.id, path: r.path, mode: r.mode, severity: r.severity, status: 'fail' as const, message: 'é'.repeat(50_000) })),
        gate: { run: (fetch) => fetch(), pause: () => undefined },
        now: () => new Date('2026-11-25T10:00:00.000Z'),
      },
    );
    expect(report.issues).toHaveLength(2);
    expect(report.issuesOmitted).toBe(8);
    expect(Buffer.byteLength(JSON.stringify(report.issues), 'utf8')).toBeLessThanOrEqual(MAX_ISSUE_BYTES + 2);
    expect(Buffer.byteLength(JSON.stringify(report), 'utf8') + 56).toBeLessThanOrEqual(MAX_REPORT_BYTES);
    expect(report.totals).toEqual({ errors: 10, warnings: 0, infos: 0, passes: 0 });
  });
});

describe('the adapter gate', () => {
  it('never lets more than its limit hold a slot at once, serves every caller in turn, and frees a slot once', async () => {
    const gate = new AdapterGate({ limit: 3 });
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const slot = await gate.hold();
        order.push(i);
        try {
          return await slot.run(async () => {
            most = Math.max(most, ++running);
            await new Promise((r) => setTimeout(r, 1));
            running--;
            return i;
          });
        } finally {
          slot.release();
          slot.release(); // a second release frees nothing more
        }
      }),
    );
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(3);
    expect(gate.peak).toBe(3);
  });

  it('lets a held slot send fetch after fetch, and hands it on when released', async () => {
    const gate = new AdapterGate({ limit: 1 });
    const first = await gate.hold();
    let second: Awaited<ReturnType<AdapterGate['hold']>> | undefined;
    const waiting = gate.hold().then((slot) => (second = slot));
    for (let i = 0; i < 3; i++) expect(await first.run(async () => i)).toBe(i);
    await new Promise((r) => setTimeout(r, 5));
    expect(second).toBeUndefined();
    first.release();
    await waiting;
    expect(await second!.run(async () => 'next')).toBe('next');
    expect(gate.peak).toBe(1);
  });

  it('sends nothing through a slot once it is released', async () => {
    const gate = new AdapterGate({ limit: 1 });
    const slot = await gate.hold();
    slot.release();
    let sent = false;
    await expect(slot.run(async () => (sent = true))).rejects.toThrow(/released/);
    expect(sent).toBe(false);
  });

  it('turns a fetch that throws at once into a rejection', async () => {
    const slot = await new AdapterGate({ limit: 1 }).hold();
    const sent = slot.run(() => {
      throw new Error('no');
    });
    await expect(sent).rejects.toThrow('no');
  });

  it('holds every fetch back while paused, on any slot', async () => {
    let now = 1_000;
    const slept: number[] = [];
    const gate = new AdapterGate({ limit: 2, now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) });
    const [a, b] = [await gate.hold(), await gate.hold()];
    a.pause(500);
    gate.pause(200); // the longest pause wins
    await b.run(async () => undefined);
    await a.run(async () => undefined);
    expect(slept).toEqual([500]);
  });

  it('backs off with full jitter, doubling from 250 ms up to 20 s', () => {
    expect([1, 2, 3, 10].map((a) => backoffMs(a, () => 1))).toEqual([250, 500, 1000, 20_000]);
    expect(backoffMs(4, () => 0)).toBe(0);
  });
});

describe('isoTimestamp', () => {
  it('writes what toISOString writes, within a second, across seconds and in any order', () => {
    const times = [
      Date.UTC(2026, 10, 26, 14, 0, 0, 0),
      Date.UTC(2026, 10, 26, 14, 0, 0, 7),
      Date.UTC(2026, 10, 26, 14, 0, 0, 999),
      Date.UTC(2026, 10, 26, 14, 0, 1, 0),
      Date.UTC(2026, 10, 26, 14, 0, 0, 500),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 1),
      0,
      -1,
      -1001,
      Date.UTC(10_000, 0, 1, 0, 0, 0, 42),
    ];
    for (const t of times) expect(isoTimestamp(new Date(t)), String(t)).toBe(new Date(t).toISOString());
    for (let t = 1_764_000_000_000; t < 1_764_000_003_000; t += 37) expect(isoTimestamp(new Date(t))).toBe(new Date(t).toISOString());
  });
});

describe('configPath', () => {
  it('puts a device name in the RESTCONF path, encoded, and refuses names the relay would refuse', () => {
    expect(configPath('edge 1')).toBe('/restconf/data/tailf-ncs:devices/device=edge%201/config');
    expect(configPath("pe(1)'")).toBe('/restconf/data/tailf-ncs:devices/device=pe%281%29%27/config');
    for (const bad of ['a/b', 'a%2e', '..', 'a\\b', 'x\ny', 'core\ud800', '\udc00edge', 'a\udfff\ud800b']) expect(configPath(bad)).toBeUndefined();
  });

  it('never throws: any string is a path or undefined (lone surrogates included)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (name) => {
        const path = configPath(name);
        if (path !== undefined) expect(decodeURIComponent(path.slice(path.indexOf('=') + 1, -'/config'.length))).toBe(name);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a device check that fails', () => {
  const target = {
    batchId: 'a'.repeat(24),
    treeId: 'b'.repeat(24),
    version: 'v1',
    adapterId: 'lab',
    plan: { variables: {}, nodes: ['base'], rulesByNode: {} },
  };
  const check = (device: string, relayGet: () => Promise<never>) => {
    let fetched = 0;
    const report = checkDevice({ device, node: 'base' }, target, {
      relayGet: () => {
        fetched++;
        return relayGet();
      },
      evaluate: () => [],
      gate: { run: (fetch) => fetch(), pause: () => undefined },
      now: () => new Date('2026-11-25T10:00:00.000Z'),
    });
    return { report, fetched: () => fetched };
  };

  it('grades a name with a lone surrogate error (unaddressable) without fetching', async () => {
    const { report, fetched } = check('core\ud800', () => Promise.reject(new Error('never sent')));
    await expect(report).resolves.toMatchObject({ grade: 'error', reason: expect.stringMatching(/cannot be addressed/) });
    expect(fetched()).toBe(0);
  });

  it.each([
    ['a throttled adapter read', Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException' })],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })],
    ['a table that does not exist', Object.assign(new Error('Cannot do operations on a non-existent table'), { name: 'ResourceNotFoundException' })],
    ['a TypeError of ours', new TypeError('x is undefined')],
    ['the secrets store down (503)', new ServiceUnavailable('The secrets store is unavailable.')],
  ])('fails the check (for the chunk to be retried) on %s before the orchestrator answered', async (_name, error) => {
    const { report } = check('edge-1', () => Promise.reject(error));
    await expect(report).rejects.toBe(error);
  });

  it('grades error, saying the orchestrator answered, on a failure of the relay after the answer', async () => {
    const { report } = check('edge-1', () => Promise.reject(new InternalError('the relay failed on the answer', {}).afterSending()));
    await expect(report).resolves.toMatchObject({
      grade: 'error',
      reason: expect.stringMatching(/^The orchestrator answered, and its answer could not be used/),
    });
  });
});

describe('chunks of a batch', () => {
  const deep = Array.from({ length: 8 }, (_, i) => `${i}`.padEnd(128, 'n')).join('/');
  const plan: BatchPlan = { variables: {}, rulesByNode: {}, nodes: ['base', 'base/core', deep] };
  const entry = chunkEntries(plan);
  const jsonBytes = (chunk: readonly DeviceAssignment[]) => Buffer.byteLength(JSON.stringify(chunk.map(entry)), 'utf8');

  it('holds at most the chunk size, in order, the last one with the rest', () => {
    const devices = Array.from({ length: 2_345 }, (_, i) => ({ device: `edge-${i}`, node: 'base/core' }));
    const chunks = chunkDevices(devices, entry);
    expect(chunks.map((c) => c.length)).toEqual([CHUNK_SIZE, CHUNK_SIZE, 345]);
    expect(chunks.flat()).toEqual(devices);
    expect(chunkDevices(devices.slice(0, 10), entry, 3).map((c) => c.length)).toEqual([3, 3, 3, 1]);
    expect(chunkDevices([], entry)).toEqual([]);
  });

  it('closes a chunk before its stored JSON passes the byte bound, counting UTF-8 bytes', () => {
    // Names of 253 three-byte characters (on an 8-level path of 128-character node names, which
    // the chunk names by its place in the plan): about 760 bytes a device, so far fewer than the
    // chunk size fit in an item.
    const devices = Array.from({ length: 1_200 }, (_, i) => ({ device: `${i}`.padEnd(253, '設'), node: deep }));
    const chunks = chunkDevices(devices, entry);
    expect(chunks.flat()).toEqual(devices);
    expect(chunks.length).toBeGreaterThan(3);
    for (const [i, chunk] of chunks.entries()) {
      expect(jsonBytes(chunk)).toBeLessThanOrEqual(CHUNK_BYTES);
      // Full: one device more would have passed the bound.
      if (i < chunks.length - 1) expect(jsonBytes([...chunk, chunks[i + 1]![0]!])).toBeGreaterThan(CHUNK_BYTES);
    }
  });

  it('measures a device exactly as its chunk item stores it, escapes included', () => {
    // One byte under the bound with a quote to escape, then one byte more than fits.
    const on = (device: string) => ({ device, node: 'base' });
    const fill = Array.from({ length: 3 }, (_, i) => on(`${i}`.padEnd(90_000, 'x')));
    const room = CHUNK_BYTES - jsonBytes(fill) - Buffer.byteLength(',["",0]', 'utf8');
    const exact = on(`"${'y'.repeat(room - 2)}`);
    expect(jsonBytes([...fill, exact])).toBe(CHUNK_BYTES);
    expect(chunkDevices([...fill, exact], entry).map((c) => c.length)).toEqual([4]);
    const over = on(`"${'y'.repeat(room - 1)}`);
    expect(chunkDevices([...fill, over], entry).map((c) => c.length)).toEqual([3, 1]);
  });
});
