/**
 * Load through the local gateway (`startLocalStack`: the synthesized stack, the authorizer,
 * one pool of worker-thread environments per function, DynamoDB Local, the NSO simulator as
 * adapter `lab-nso`): a mixed workload of tree reads, lists, creates and relays at 50
 * concurrent keep-alive connections. No 5xx, no failed request, every created tree readable
 * afterwards, and the functions' memory flat between the end of the warm-up and the end.
 *
 * `ROBUSTNESS_REQUESTS` sets the number of requests (default 20,000). The numbers are printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../tools/local/dynamodb-local.js';
import { SIMULATOR_ADAPTER, startLocalStack, type LocalStack } from '../../tools/local/start.js';
import { synthesize } from '../../tools/local/synth.js';
import { mib } from '../support/memory.js';

const TOTAL = Number(process.env['ROBUSTNESS_REQUESTS'] ?? 20_000);
const CONNECTIONS = 50;
/** The first tenth warms every function up (cold starts, JIT, pools); memory is compared after it. */
const WARMUP = Math.max(CONNECTIONS * 4, Math.floor(TOTAL / 10));
const MINUTES = 60_000;

type Operation = 'getTree' | 'listTrees' | 'createTree' | 'relay';
/** Out of 20: 10 reads, 3 lists, 3 creates, 4 relays. */
const MIX: readonly Operation[] = [
  ...Array<Operation>(10).fill('getTree'),
  ...Array<Operation>(3).fill('listTrees'),
  ...Array<Operation>(3).fill('createTree'),
  ...Array<Operation>(4).fill('relay'),
];
/** The function (its label in the template) behind each operation. */
const LABELS: Readonly<Record<string, Operation>> = { GetTree: 'getTree', ListTrees: 'listTrees', CreateTree: 'createTree', RelayRestAction: 'relay' };
const EXPECTED: Readonly<Record<Operation, number>> = { getTree: 200, listTrees: 200, createTree: 201, relay: 200 };

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
}

let outDir: string;
let dataDir: string;
let stack: LocalStack;
let token: string;
const newAgent = () => new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
let agent = newAgent();
/**
 * Fresh connections for the next phase. Between phases the connections sit idle while memory
 * is sampled, and the gateway closes idle ones after 5 s: a request sent on one just as it
 * closes fails before it reaches the server (the keep-alive race every HTTP client has).
 */
const reconnect = () => {
  agent.destroy();
  agent = newAgent();
};
const logCounts = new Map<string, number>();
const problems: string[] = [];
/** The gateway's own lines: why it answered a 5xx itself (a function error, its timeout, a crash). */
const gatewayLines: string[] = [];

const send = (method: string, pathAndQuery: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${stack.baseUrl}${pathAndQuery}`,
      {
        method,
        agent,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
          ...extraHeaders,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

interface MemorySnapshot {
  /** Per function: live heap (after a full collection) of its busiest environment, bytes. */
  readonly live: Record<string, number>;
  /** Per function: heap in use (garbage included) of each environment, bytes. */
  readonly used: Record<string, number[]>;
  readonly rss: number;
}

/**
 * Samples while the stack is idle. A full collection in every environment costs about half a
 * second each (a heap snapshot), so it runs in the busiest environment of each function only
 * (the oldest: the pool hands work to the oldest idle one); the others are read as they are.
 */
const snapshot = async (): Promise<MemorySnapshot> => {
  const used = Object.fromEntries(Object.entries(await stack.functionHeaps()).filter(([, h]) => h.length > 0));
  const live = Object.fromEntries(
    Object.entries(await stack.functionHeaps({ collectGarbage: true, limit: 1 }))
      .filter(([, h]) => h.length > 0)
      .map(([label, [bytes]]) => [label, bytes!]),
  );
  return { live, used, rss: process.memoryUsage().rss };
};

/**
 * Flat: the busiest environment's live heap grew by at most this between the end of the
 * warm-up and the end. Not zero: V8's optimizing compiler keeps adding code while a function
 * warms up (measured in-process: about 1 MiB over a function's first ~7,500 invocations, all
 * of it code, then flat), and each environment here serves only a few hundred.
 */
const FLAT_MARGIN_BYTES = 3 * 1024 * 1024;

beforeAll(async () => {
  outDir = mkdtempSync(path.join(tmpdir(), 'netconfig-load-cdk-'));
  dataDir = mkdtempSync(path.join(tmpdir(), 'netconfig-load-data-'));
  const port = await freePort();
  await synthesize({ outDir, port });
  stack = await startLocalStack({
    port,
    dataDir,
    cdkOut: outDir,
    // Thousands of info lines: counted, and only failures kept.
    log: (label, stream, line) => {
      logCounts.set(label, (logCounts.get(label) ?? 0) + 1);
      if (label === 'gateway') gatewayLines.push(line.slice(0, 300));
      if (stream === 'stderr' || /"level":"(?:error|warn)"/.test(line)) problems.push(`[${label}] ${line.slice(0, 300)}`);
    },
  });
  token = stack.token(['admin'], { sub: 'load-test', ttlSeconds: 3600 });
}, 10 * MINUTES);

afterAll(async () => {
  agent.destroy();
  await stack?.stop();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 2 * MINUTES);

describe('Idempotency-Key through the local gateway', () => {
  it('replays a create and a relay: one tree, one call to the orchestrator', async () => {
    const key = { 'Idempotency-Key': `gateway-${Date.now()}` };
    const body = { name: `idempotent-through-gateway-${Date.now()}`, deviceType: 'x' };
    const first = await send('POST', '/configuration_manager/configs', body, key);
    const again = await send('POST', '/configuration_manager/configs', body, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['location']).toBe(first.headers['location']);

    const sent = stack.simulator!.requests.length;
    const action = { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0/sync-from', accept: 'application/yang-data+json' }, body: {} };
    const relayed = await send('POST', `/orch_manager/restAction/${SIMULATOR_ADAPTER}`, action, key);
    const replayed = await send('POST', `/orch_manager/restAction/${SIMULATOR_ADAPTER}`, action, key);
    expect(relayed.status).toBe(200);
    expect(replayed.body).toBe(relayed.body);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(stack.simulator!.requests.length).toBe(sent + 1);

    const reused = await send('POST', '/configuration_manager/configs', { ...body, name: `${body.name}-other` }, key);
    expect(reused.status).toBe(422);
    expect(reused.headers['content-type']).toBe('application/problem+json');
  });
});

describe(`a mixed workload of ${TOTAL} requests at ${CONNECTIONS} connections through the local gateway`, () => {
  it(
    'answers every request as it should, keeps every tree it created, and the functions’ memory stays flat',
    async () => {
      const seeded = await send('GET', '/configuration_manager/configs?limit=100');
      expect(seeded.status).toBe(200);
      const treeIds: string[] = (JSON.parse(seeded.body) as { items: { id: string }[] }).items.map((t) => t.id);
      expect(treeIds.length).toBeGreaterThan(0);
      const created = new Map<string, string>();
      const latencies: number[] = [];
      const byStatus = new Map<string, number>();
      const unexpected: string[] = [];
      let networkErrors = 0;
      const networkErrorCodes: string[] = [];
      const counts = new Map<Operation, number>();

      const one = async (i: number): Promise<void> => {
        const op = MIX[i % MIX.length]!;
        counts.set(op, (counts.get(op) ?? 0) + 1);
        const started = performance.now();
        let answer: Answer;
        try {
          switch (op) {
            case 'getTree':
              answer = await send('GET', `/configuration_manager/configs/${treeIds[i % treeIds.length]}`);
              break;
            case 'listTrees':
              answer = await send('GET', '/configuration_manager/configs?limit=20');
              break;
            case 'createTree':
              answer = await send('POST', '/configuration_manager/configs', {
                name: `load-${i}`,
                deviceType: 'cisco-ios-xr',
                description: `created by request ${i}`,
              });
              break;
            case 'relay':
              answer = await send('POST', `/orch_manager/restAction/${SIMULATOR_ADAPTER}`, {
                params: { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=ce0/config', accept: 'application/yang-data+json' },
                body: {},
              });
              break;
          }
        } catch (error) {
          networkErrors++;
          if (networkErrorCodes.length < 10) networkErrorCodes.push(`${op} #${i}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
          return;
        }
        latencies.push(performance.now() - started);
        byStatus.set(`${op} ${answer.status}`, (byStatus.get(`${op} ${answer.status}`) ?? 0) + 1);
        if (answer.status !== EXPECTED[op]) {
          if (unexpected.length < 20) unexpected.push(`${op} ${answer.status} ${answer.body.slice(0, 200)}`);
          return;
        }
        if (op === 'createTree') created.set((JSON.parse(answer.body) as { id: string }).id, `load-${i}`);
      };

      /** Requests `from` to `to` (exclusive) over {@link CONNECTIONS} connections; resolves when all are answered. */
      const phase = async (from: number, to: number): Promise<number> => {
        let next = from;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: CONNECTIONS }, async () => {
            while (next < to) await one(next++);
          }),
        );
        return (performance.now() - started) / 1000;
      };

      const warmupSeconds = await phase(0, WARMUP);
      let sampling = performance.now();
      const warm = await snapshot();
      reconnect();
      const seconds = await phase(WARMUP, TOTAL);
      const end = await snapshot();
      sampling = performance.now() - sampling - seconds * 1000;
      reconnect();

      // Every created tree, read back.
      const ids = [...created.keys()];
      let unreadable = 0;
      let cursor = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (cursor < ids.length) {
            const id = ids[cursor++]!;
            const read = await send('GET', `/configuration_manager/configs/${id}`);
            if (read.status !== 200 || (JSON.parse(read.body) as { name: string }).name !== created.get(id)) unreadable++;
          }
        }),
      );

      const sorted = [...latencies].sort((a, b) => a - b);
      const fivexx = [...byStatus].filter(([k]) => / 5\d\d$/.test(k)).reduce((n, [, c]) => n + c, 0);
      const largest = (heaps: readonly number[] | undefined) => (heaps?.length ? Math.max(...heaps) : 0);
      const memory = Object.fromEntries(
        Object.entries(end.live).map(([label, bytes]) => [
          label,
          `${warm.used[label]?.length ?? 0} -> ${end.used[label]?.length ?? 0} envs; busiest live ${mib(warm.live[label] ?? 0)} -> ${mib(bytes)}; largest in use ${mib(largest(warm.used[label]))} -> ${mib(largest(end.used[label]))}`,
        ]),
      );
      // With the environments sharing the work, each served about (invocations / environments).
      const detectable = Object.fromEntries(
        Object.entries(LABELS).map(([label, op]) => {
          const perEnvironment =
            ((counts.get(op) ?? 0) - Math.round((WARMUP * MIX.filter((m) => m === op).length) / MIX.length)) / Math.max(1, end.used[label]?.length ?? 1);
          return [label, `${Math.round(perEnvironment)} invocations/env -> ${(FLAT_MARGIN_BYTES / Math.max(1, perEnvironment) / 1024).toFixed(1)} KiB`];
        }),
      );
      console.log(
        [
          `load: ${TOTAL} requests at ${CONNECTIONS} connections: warm-up ${WARMUP} in ${warmupSeconds.toFixed(1)} s, then ${TOTAL - WARMUP} in ${seconds.toFixed(1)} s (${((TOTAL - WARMUP) / seconds).toFixed(0)} req/s)`,
          `load: mix ${JSON.stringify(Object.fromEntries(counts))}; answers ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`,
          `load: 5xx ${fivexx}, other unexpected answers ${unexpected.length}, network errors ${networkErrors} ${networkErrorCodes.join('; ')}`,
          `load: latency p50 ${percentile(sorted, 50).toFixed(1)} ms, p90 ${percentile(sorted, 90).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms`,
          `load: created ${created.size} trees, unreadable afterwards ${unreadable}`,
          `load: function heaps, warm-up end -> end: ${JSON.stringify(memory, null, 1)}`,
          `load: "flat" = busiest environment's live heap grows <= ${mib(FLAT_MARGIN_BYTES)}, which catches leaks above, per invocation: ${JSON.stringify(detectable)}`,
          `load: gateway process (all functions' threads) rss ${mib(warm.rss)} -> ${mib(end.rss)}; memory sampling took ${(sampling / 1000).toFixed(1)} s`,
        ].join('\n'),
      );

      expect(unexpected, `${unexpected.join('\n')}\n${gatewayLines.slice(0, 20).join('\n')}\n${problems.slice(0, 10).join('\n')}`).toEqual([]);
      expect(networkErrors).toBe(0);
      expect(fivexx).toBe(0);
      expect(latencies).toHaveLength(TOTAL);
      expect(created.size).toBe(byStatus.get('createTree 201'));
      expect(unreadable).toBe(0);
      // Flat: each function's busiest environment may not hold more than FLAT_MARGIN_BYTES more
      // live heap at the end than after the warm-up (the detectable leak per invocation is printed).
      // Every function that served the load has both figures: a missing one fails, never skips.
      const measured = [...new Set([...Object.keys(LABELS), ...Object.keys(warm.live), ...Object.keys(end.live)])].sort();
      for (const label of measured) {
        const before = warm.live[label];
        const after = end.live[label];
        expect(before, `${label}: no live heap after the warm-up`).toEqual(expect.any(Number));
        expect(after, `${label}: no live heap at the end`).toEqual(expect.any(Number));
        expect(after, `${label}: ${memory[label]}`).toBeLessThanOrEqual(before! + FLAT_MARGIN_BYTES);
      }
    },
    30 * MINUTES,
  );
});
