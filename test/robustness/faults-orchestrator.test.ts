/**
 * An orchestrator that misbehaves in every way the simulator can (hangs, resets, redirects,
 * 5xx, slow drips, 50 MB bodies, broken JSON), one fault after another through the relay's
 * real handler: each answers the relay's documented status before the function deadline, the
 * very next call succeeds, and after rounds of all of them the process holds no more memory
 * or sockets than after the first round. The relay tests cover each status on its own; this
 * file covers the drips that still make it, the 50 MB bodies and the health afterwards.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NsoKnobs } from '../../tools/simulators/nso-simulator.js';
import { apiEvent, lambdaContext } from '../../tools/simulators/api-events.js';
import { mib, settledMemory } from '../support/memory.js';
import { CONFIG_PATH, RELAY_RESOURCE, startRelayWorld, type RelayWorld } from '../support/robustness.js';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const MB = 1024 * 1024;
let world: RelayWorld;
let relay: Handler;
let healthy: string;

const getConfig = (context = lambdaContext(10_000)) =>
  relay(
    apiEvent({
      method: 'POST',
      resource: RELAY_RESOURCE,
      pathParameters: { adapterId: 'lab' },
      body: { params: { method: 'GET', path: CONFIG_PATH, accept: 'application/yang-data+json' }, body: {} },
    }),
    context,
  );

interface Fault {
  readonly name: string;
  readonly knobs: NsoKnobs;
  /** Time the function has left when it starts. */
  readonly remainingMs?: number;
  readonly status: number;
  /** The orchestrator's status inside a 200, when it answered. */
  readonly result?: string;
}

const FAULTS: readonly Fault[] = [
  { name: 'hangs', knobs: { delayMs: 60_000 }, remainingMs: 1_500, status: 504 },
  { name: 'resets the connection', knobs: { reset: true }, status: 502 },
  { name: 'redirects (301)', knobs: { redirect: { status: 301, location: 'http://169.254.169.254/latest' } }, status: 502 },
  { name: 'redirects (308)', knobs: { redirect: { status: 308, location: '/restconf/data' } }, status: 502 },
  { name: 'answers 500', knobs: { status: 500 }, status: 200, result: '500' },
  { name: 'answers 503', knobs: { status: 503 }, status: 200, result: '503' },
  { name: 'drips past the deadline', knobs: { dripMs: 200 }, remainingMs: 1_500, status: 504 },
  { name: 'sends 50 MB without a length', knobs: { hugeBodyBytes: 50 * MB }, status: 502 },
  { name: 'declares and sends 50 MB', knobs: { hugeBodyBytes: 50 * MB, hugeBodyDeclared: true }, status: 502 },
  { name: 'sends broken JSON', knobs: { malformedJson: true }, status: 502 },
];

const openSockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

/** One fault, then a normal call: the fault's status inside the deadline, then the healthy answer. */
const survive = async (fault: Fault): Promise<void> => {
  world.nso.setKnobs(fault.knobs);
  const context = lambdaContext(fault.remainingMs ?? 10_000);
  const res = await getConfig(context);
  world.nso.setKnobs({});
  expect(res.statusCode, `${fault.name}: ${res.body.slice(0, 200)}`).toBe(fault.status);
  expect(context.getRemainingTimeInMillis(), fault.name).toBeGreaterThan(0);
  if (fault.status >= 400) {
    // The relay's own answer, naming the adapter, not the function's last-resort timeout.
    expect((JSON.parse(res.body) as { detail: string }).detail, fault.name).toContain("'lab'");
  } else {
    expect((JSON.parse(res.body) as { result: string }[])[0]!.result).toBe(fault.result);
  }
  const next = await getConfig();
  expect(next.statusCode, `after ${fault.name}`).toBe(200);
  expect(next.body, `after ${fault.name}`).toBe(healthy);
};

beforeAll(async () => {
  world = await startRelayWorld();
  relay = (await import('../../functions/relay/handlers/rest-action.js')).handler as Handler;
  healthy = (await getConfig()).body;
});

afterAll(async () => {
  await world?.close();
});

afterEach(() => {
  world.nso.setKnobs({});
});

describe('an orchestrator that drips its answer', () => {
  it('is waited for when the whole answer arrives inside the deadline: the body is complete', async () => {
    world.nso.setKnobs({ dripMs: 5 });
    const res = await getConfig();
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(healthy);
    // It did drip: the answer is longer than one 16-byte chunk.
    expect(healthy.length).toBeGreaterThan(16 * 10);
  });
});

describe('an orchestrator that misbehaves in every way, in turn', () => {
  it.each(FAULTS.map((f) => [f.name, f] as const))(
    '%s: the documented status in time, and the next call succeeds',
    async (_name, fault) => {
      await survive(fault);
    },
    30_000,
  );

  it('leaves the process as it found it after three rounds of every fault: memory and sockets back to the first round’s', async () => {
    // The first round warms everything up (pools, caches, JIT); later rounds must not add to it.
    for (const fault of FAULTS) await survive(fault);
    const warm = await settledMemory();
    const warmSockets = openSockets();
    for (let round = 0; round < 3; round++) for (const fault of FAULTS) await survive(fault);
    const after = await settledMemory();
    const afterSockets = openSockets();
    console.log(
      `faults: 3 rounds of ${FAULTS.length} orchestrator faults, 6 answers of 50 MB among them: heap ${mib(warm.heapUsed)} -> ${mib(after.heapUsed)}, ` +
        `external ${mib(warm.external)} -> ${mib(after.external)}, rss ${mib(warm.rss)} -> ${mib(after.rss)}, TCP sockets ${warmSockets} -> ${afterSockets}`,
    );
    // 300 MB went past the relay; what it keeps must not grow with it.
    expect(after.heapUsed - warm.heapUsed).toBeLessThan(8 * MB);
    expect(after.external - warm.external).toBeLessThan(8 * MB);
    expect(afterSockets).toBeLessThanOrEqual(warmSockets + 2);
    expect((await getConfig()).body).toBe(healthy);
  }, 180_000);
});
