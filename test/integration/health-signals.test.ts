/**
 * The signals of a relay call, end to end through the relay's handler: the log line carries
 * the API Gateway request id as correlation id and no secret; the EMF line counts the call by
 * adapter and result class with its latency; the orchestrator call is its own X-Ray subsegment.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdapterStore } from '../../functions/adapters/store.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { documentClient } from '../../functions/platform/dynamo.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { stdoutDuring } from '../support/stdout.js';

type Handler = Parameters<typeof invoke>[0];
const PASSWORD = 'Relay-Pa55word!';
const TRACE_ROOT = '1-66aa0000-0123456789abcdef01234567';
let nso: NsoSimulator;
let dir: string;
let relay: Handler;
let daemon: UdpSocket;
const datagrams: string[] = [];

const relayEvent = (path = '/restconf/data/tailf-ncs:devices/device=ce0') =>
  apiEvent({
    method: 'POST',
    resource: '/orch_manager/restAction/{adapterId}',
    pathParameters: { adapterId: 'lab-nso' },
    body: { params: { path, accept: 'application/yang-data+json', method: 'GET' }, body: {} },
  });

/** Every line written to stdout while `fn` runs, parsed. */
const captured = async (fn: () => Promise<unknown>) => {
  const out = await stdoutDuring(fn);
  return { raw: out.raw(), lines: out.entries() };
};

beforeAll(async () => {
  const tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'health-signals-'));
  nso = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD } });
  daemon = createSocket('udp4');
  daemon.on('message', (msg) => datagrams.push(msg.toString('utf8')));
  daemon.bind(0, '127.0.0.1');
  await once(daemon, 'listening');

  const secretsFile = path.join(dir, 'secrets.json');
  await createLocalBackend({ file: secretsFile }).write('netconfig/adapters/lab-nso', { password: PASSWORD });
  await createAdapterStore(documentClient, tables['adapters']).put(
    {
      name: 'lab-nso',
      type: 'nso',
      baseUrl: nso.url,
      auth: { type: 'basic', username: 'admin', password: '$VAULT_netconfig/adapters/lab-nso#password' },
      timeoutMs: 500,
    },
    new Date().toISOString(),
  );
  for (const [k, v] of Object.entries({
    SECRETS_BACKEND: 'local',
    SECRETS_FILE: secretsFile,
    LOCAL_MODE: 'true',
    LOG_LEVEL: 'debug',
    METRICS_DISABLED: 'false',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
  })) {
    vi.stubEnv(k, v);
  }
  vi.resetModules();
  relay = (await import('../../functions/relay/handlers/rest-action.js')).handler;
});

afterEach(() => {
  nso.setKnobs({});
  vi.stubEnv('_X_AMZN_TRACE_ID', '');
});

afterAll(async () => {
  vi.unstubAllEnvs();
  await nso.close();
  daemon.close();
  await rm(dir, { recursive: true, force: true });
});

describe('signals of a relay call', () => {
  it('logs every line with the request id as correlation id, and never the password or the Authorization value', async () => {
    const event = relayEvent();
    let status = 0;
    const { lines, raw } = await captured(async () => {
      status = (await invoke(relay, event)).status;
    });
    expect(status).toBe(200);
    const logs = lines.filter((l) => !('_aws' in l));
    const call = logs.find((l) => l['message'] === 'relay call');
    expect(call).toMatchObject({
      level: 'info',
      correlationId: event.requestContext.requestId,
      operation: 'relayRestAction',
      adapter: 'lab-nso',
      upstreamStatus: 200,
    });
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line['correlationId']).toBe(event.requestContext.requestId);
    for (const secret of [PASSWORD, Buffer.from(`admin:${PASSWORD}`).toString('base64'), 'Basic ']) expect(raw).not.toContain(secret);
  });

  it('counts the call by adapter and result class, with its latency, in one EMF line per dimension set', async () => {
    const ok = await captured(() => invoke(relay, relayEvent()));
    const calls = ok.lines.find((l) => 'RelayCalls' in l);
    expect(calls).toMatchObject({ Service: 'netconfig', Adapter: 'lab-nso', ResultClass: '2xx', RelayCalls: 1 });
    expect(calls!['_aws'].CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Netconfig', Metrics: [{ Name: 'RelayCalls', Unit: 'Count' }] });
    expect(ok.lines.find((l) => 'RelayLatency' in l)).toMatchObject({ Adapter: 'lab-nso', RelayLatency: expect.any(Number) });

    nso.setKnobs({ status: 503 });
    const failed = await captured(() => invoke(relay, relayEvent()));
    expect(failed.lines.find((l) => 'RelayCalls' in l)).toMatchObject({ ResultClass: '5xx' });

    nso.setKnobs({ delayMs: 2_000 });
    const slow = await captured(() => invoke(relay, relayEvent()));
    expect(slow.lines.find((l) => 'RelayCalls' in l)).toMatchObject({ ResultClass: 'timeout' });
  });

  it('sends the orchestrator call to X-Ray as its own subsegment, without the query or credentials', async () => {
    datagrams.length = 0;
    vi.stubEnv('_X_AMZN_TRACE_ID', `Root=${TRACE_ROOT};Parent=0123456789abcdef;Sampled=1`);
    await captured(() => invoke(relay, relayEvent('/restconf/data/tailf-ncs:devices?depth=1')));
    for (let i = 0; i < 50 && datagrams.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(datagrams).toHaveLength(1);
    const doc = JSON.parse(datagrams[0]!.split('\n')[1]!) as Record<string, any>;
    expect(doc).toMatchObject({
      name: 'orchestrator lab-nso',
      type: 'subsegment',
      trace_id: TRACE_ROOT,
      parent_id: '0123456789abcdef',
      http: { request: { method: 'GET', url: `${nso.url}/restconf/data/tailf-ncs:devices` }, response: { status: 200 } },
      annotations: { adapter: 'lab-nso', purpose: 'relay' },
    });
    expect(datagrams[0]).not.toContain('depth');
    expect(datagrams[0]).not.toContain(PASSWORD);
  });
});
