/** The NSO simulator's sync actions and its drift route, spoken to over HTTP as NSO is. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';

let sim: NsoSimulator;
const auth = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

const post = async (path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { Authorization: auth, Accept: 'application/yang-data+json', ...(body ? { 'Content-Type': 'application/yang-data+json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};
const output = (r: { json: Record<string, unknown> }) => r.json['tailf-ncs:output'] as Record<string, unknown>;
const device = (name: string, action: string) => `/restconf/data/tailf-ncs:devices/device=${name}/${action}`;

beforeAll(async () => {
  sim = await startNsoSimulator({ fleet: { devices: 6, outOfSyncEvery: 3 } });
});
afterAll(async () => sim?.close());
beforeEach(() => {
  sim.resetData();
  sim.setKnobs({});
});

describe('the NSO simulator sync actions', () => {
  it("answers check-sync per device and per group, compare-config's diff, and sync-from makes NSO's copy the device's", async () => {
    // Fleet devices 2 and 5 start out of sync; ce0 follows NSO's copy.
    expect(output(await post(device('ce0', 'check-sync')))).toEqual({ result: 'in-sync' });
    expect(output(await post(device(fleetName(2), 'check-sync')))).toEqual({ result: 'out-of-sync' });
    const group = await post('/restconf/data/tailf-ncs:devices/check-sync', { input: { device: [fleetName(1), fleetName(2), fleetName(5)] } });
    expect(output(group)).toEqual({
      'sync-result': [
        { device: fleetName(1), result: 'in-sync' },
        { device: fleetName(2), result: 'out-of-sync' },
        { device: fleetName(5), result: 'out-of-sync' },
      ],
    });
    expect(output(await post(device('ce0', 'compare-config'), { input: { outformat: 'cli' } }))).toEqual({});
    const diff = output(await post(device(fleetName(2), 'compare-config'), { input: { outformat: 'cli' } }))['diff'] as string;
    expect(diff).toMatch(/^\+ +"host": "198.51.100.7"$/m);
    expect(diff).toMatch(/^- +"host": "10.0.0.50"$/m);
    expect(output(await post(device(fleetName(2), 'sync-from')))).toEqual({ result: true });
    expect(output(await post(device(fleetName(2), 'check-sync')))).toEqual({ result: 'in-sync' });
    expect(JSON.stringify(sim.data())).toContain('198.51.100.7');
    const all = output(await post('/restconf/data/tailf-ncs:devices/sync-from', {}))['sync-result'] as { result: unknown }[];
    expect(all).toHaveLength(8);
    expect(all.every((r) => r.result === true)).toBe(true);
  });

  it('refuses a group naming a device NSO does not have (400), and answers 404 for an unknown device', async () => {
    expect((await post('/restconf/data/tailf-ncs:devices/check-sync', { input: { device: ['nope'] } })).status).toBe(400);
    expect((await post(device('nope', 'check-sync'))).status).toBe(404);
  });

  it('changes a device behind NSO back through its route, and only there', async () => {
    const drift = await fetch(`${sim.url}/simulator/devices/ce0/drift`, {
      method: 'POST',
      body: JSON.stringify({ 'tailf-ned-cisco-ios:hostname': 'console' }),
    });
    expect(drift.status).toBe(200);
    expect(((await drift.json()) as Record<string, unknown>)['tailf-ned-cisco-ios:hostname']).toBe('console');
    expect(sim.deviceConfig('ce0')?.['tailf-ned-cisco-ios:hostname']).toBe('console');
    expect(JSON.stringify(sim.data())).not.toContain('console');
    expect(output(await post(device('ce0', 'check-sync')))).toEqual({ result: 'out-of-sync' });
    expect((await fetch(`${sim.url}/simulator/devices/ce0/drift`, { method: 'POST', body: '[1]' })).status).toBe(400);
    expect((await fetch(`${sim.url}/simulator/devices/nope/drift`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${sim.url}/simulator/devices/ce0/config`)).status).toBe(200);
    sim.drift('pe0', { 'tailf-ned-cisco-ios-xr:hostname': 'pe0-console' });
    expect(output(await post(device('pe0', 'check-sync')))).toEqual({ result: 'out-of-sync' });
  });

  it('misbehaves on its knobs: no actions, unsupported, failures', async () => {
    sim.setKnobs({ noSyncActions: 501 });
    expect((await post(device('ce0', 'check-sync'))).status).toBe(501);
    sim.setKnobs({ checkSyncUnsupported: ['ce0'] });
    expect(output(await post(device('ce0', 'check-sync')))).toEqual({ result: 'unsupported' });
    expect(output(await post(device('pe0', 'check-sync')))).toEqual({ result: 'in-sync' });
    sim.setKnobs({ syncFailure: {} });
    expect(output(await post(device('ce0', 'check-sync')))).toMatchObject({ result: 'error', info: expect.any(String) });
    expect(output(await post(device('ce0', 'sync-from')))).toMatchObject({ result: false });
    expect(output(await post(device('ce0', 'compare-config')))).toEqual({ info: expect.stringContaining('Failed to connect') });
    sim.setKnobs({ syncFailure: { status: 503, actions: ['sync-from'] } });
    expect((await post(device('ce0', 'sync-from'))).status).toBe(503);
    expect(output(await post(device('ce0', 'check-sync')))).toEqual({ result: 'in-sync' });
  });
});
