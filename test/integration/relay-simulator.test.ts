/**
 * The NSO simulator itself (used by the relay tests and by local mode as adapter `lab-nso`),
 * spoken to with plain fetch over loopback.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultNsoData, startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';

const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const JSON_TYPE = 'application/yang-data+json';
const DEVICES = '/restconf/data/tailf-ncs:devices';

let sim: NsoSimulator;

const call = async (method: string, path: string, options: { body?: unknown; accept?: string; contentType?: string; auth?: string | null } = {}) => {
  const headers: Record<string, string> = { Accept: options.accept ?? JSON_TYPE };
  if (options.auth !== null) headers['Authorization'] = options.auth ?? AUTH;
  if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? JSON_TYPE;
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, headers: res.headers, body: text && type.includes('json') ? JSON.parse(text) : text };
};

const errorTag = (body: { 'ietf-restconf:errors': { error: { 'error-tag': string }[] } }) => body['ietf-restconf:errors'].error[0]!['error-tag'];

beforeAll(async () => {
  sim = await startNsoSimulator();
});
afterAll(async () => {
  await sim.close();
});
afterEach(() => {
  sim.setKnobs({});
  sim.resetData();
  sim.requests.length = 0;
});

describe('NSO simulator: data', () => {
  it('serves the whole datastore at /restconf/data', async () => {
    const res = await call('GET', '/restconf/data');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ 'ietf-restconf:data': defaultNsoData() });
  });

  it('navigates into lists by key and names the target with its module', async () => {
    const device = await call('GET', `${DEVICES}/device=ce0`);
    expect(device.body['tailf-ncs:device']).toHaveLength(1);
    expect(device.body['tailf-ncs:device'][0].name).toBe('ce0');
    const hostname = await call('GET', `${DEVICES}/device=pe0/config/tailf-ned-cisco-ios-xr:hostname`);
    expect(hostname.body).toEqual({ 'tailf-ned-cisco-ios-xr:hostname': 'pe0' });
  });

  it('decodes percent-encoded keys', async () => {
    const res = await call('GET', `${DEVICES}/device=ce0/config/tailf-ned-cisco-ios:interface/GigabitEthernet=0%2F1`);
    expect(res.body).toEqual({ 'tailf-ned-cisco-ios:GigabitEthernet': [{ name: '0/1', description: 'uplink to pe0' }] });
  });

  it('answers 404 with a RESTCONF error for a missing node', async () => {
    const res = await call('GET', `${DEVICES}/device=nope/config`);
    expect(res.status).toBe(404);
    expect(res.type).toBe(JSON_TYPE);
    expect(res.body['ietf-restconf:errors'].error[0]).toMatchObject({ 'error-type': 'application', 'error-tag': 'invalid-value' });
  });

  it('merges with PATCH (204) and keeps what it did not touch', async () => {
    const res = await call('PATCH', `${DEVICES}/device=ce0/config`, {
      body: { 'tailf-ncs:config': { 'tailf-ned-cisco-ios:interface': { Loopback: [{ name: '0', description: 'changed' }, { name: '1' }] } } },
    });
    expect(res.status).toBe(204);
    const loopbacks = (await call('GET', `${DEVICES}/device=ce0/config/tailf-ned-cisco-ios:interface/Loopback=0`)).body;
    expect(loopbacks['tailf-ned-cisco-ios:Loopback'][0]).toMatchObject({ description: 'changed', ip: expect.anything() });
    expect((await call('GET', `${DEVICES}/device=ce0/config/tailf-ned-cisco-ios:interface/Loopback=1`)).status).toBe(200);
    expect((await call('GET', `${DEVICES}/device=ce0/config/tailf-ned-cisco-ios:hostname`)).body).toEqual({ 'tailf-ned-cisco-ios:hostname': 'ce0' });
  });

  it('answers 404 to a PATCH of a missing node', async () => {
    expect((await call('PATCH', `${DEVICES}/device=nope`, { body: { 'tailf-ncs:device': [{ name: 'nope' }] } })).status).toBe(404);
  });

  it('replaces with PUT (204) and creates with PUT (201)', async () => {
    expect((await call('PUT', `${DEVICES}/device=ce0/config`, { body: { 'tailf-ncs:config': { 'tailf-ned-cisco-ios:hostname': 'x' } } })).status).toBe(204);
    expect((await call('GET', `${DEVICES}/device=ce0/config`)).body).toEqual({ 'tailf-ncs:config': { 'tailf-ned-cisco-ios:hostname': 'x' } });
    expect((await call('PUT', `${DEVICES}/device=ce5`, { body: { 'tailf-ncs:device': [{ address: '10.0.0.5' }] } })).status).toBe(201);
    expect((await call('GET', `${DEVICES}/device=ce5`)).body).toEqual({ 'tailf-ncs:device': [{ address: '10.0.0.5', name: 'ce5' }] });
  });

  it('refuses a PUT whose key differs from the URI', async () => {
    const res = await call('PUT', `${DEVICES}/device=ce5`, { body: { 'tailf-ncs:device': [{ name: 'ce6' }] } });
    expect(res.status).toBe(400);
    expect(errorTag(res.body)).toBe('invalid-value');
  });

  it('creates with POST (201, Location) and answers 409 data-exists the second time', async () => {
    const body = { device: [{ name: 'ce7', address: '10.0.0.7' }] };
    const first = await call('POST', DEVICES, { body });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`${DEVICES}/device=ce7`);
    const second = await call('POST', DEVICES, { body });
    expect(second.status).toBe(409);
    expect(errorTag(second.body)).toBe('data-exists');
  });

  it('invokes device actions with POST', async () => {
    expect((await call('POST', `${DEVICES}/device=ce0/check-sync`)).body).toEqual({ 'tailf-ncs:output': { result: 'in-sync' } });
    expect((await call('POST', `${DEVICES}/device=ce0/sync-from`, { body: {} })).body).toEqual({ 'tailf-ncs:output': { result: true } });
    expect((await call('POST', `${DEVICES}/device=nope/sync-from`, { body: {} })).status).toBe(404);
  });

  it('deletes (204), then answers 404 data-missing', async () => {
    expect((await call('DELETE', `${DEVICES}/device=pe0`)).status).toBe(204);
    const again = await call('DELETE', `${DEVICES}/device=pe0`);
    expect(again.status).toBe(404);
    expect(errorTag(again.body)).toBe('data-missing');
    expect(sim.data()['tailf-ncs:devices']).toEqual({
      ...(defaultNsoData()['tailf-ncs:devices'] as object),
      device: [expect.objectContaining({ name: 'ce0' })],
    });
  });

  it('restores its data with resetData', async () => {
    await call('DELETE', DEVICES);
    sim.resetData();
    expect(sim.data()).toEqual(defaultNsoData());
  });
});

describe('NSO simulator: protocol', () => {
  it('answers in the legacy media type when asked', async () => {
    const res = await call('GET', `${DEVICES}/device=ce0/address`, { accept: 'application/vnd.yang.data+json' });
    expect(res.type).toBe('application/vnd.yang.data+json');
    expect(res.body).toEqual({ 'tailf-ncs:address': '10.0.0.10' });
  });

  it('answers XML for +xml media types', async () => {
    const res = await call('GET', `${DEVICES}/device=ce0/address`, { accept: 'application/yang-data+xml' });
    expect(res.type).toBe('application/yang-data+xml');
    expect(res.body).toBe('<address xmlns="urn:tailf-ncs">10.0.0.10</address>');
  });

  it('answers 406 for a media type it cannot produce', async () => {
    expect((await call('GET', DEVICES, { accept: 'text/html' })).status).toBe(406);
  });

  it('answers 415 to a body that is not JSON, and 400 to JSON that does not parse', async () => {
    expect((await call('PATCH', DEVICES, { body: '<devices/>', contentType: 'application/yang-data+xml' })).status).toBe(415);
    const bad = await call('PATCH', DEVICES, { body: '{"x":' });
    expect(bad.status).toBe(400);
    expect(errorTag(bad.body)).toBe('malformed-message');
  });

  it('answers 400 to an unknown query parameter and accepts the RESTCONF ones', async () => {
    expect((await call('GET', `${DEVICES}?depth=1&fields=device`)).status).toBe(200);
    expect((await call('GET', `${DEVICES}?nope=1`)).status).toBe(400);
  });

  it('serves the RESTCONF root resource', async () => {
    expect((await call('GET', '/restconf')).body).toEqual({
      'ietf-restconf:restconf': expect.objectContaining({ 'yang-library-version': expect.any(String) }),
    });
  });

  it('answers 404 outside /restconf', async () => {
    expect((await call('GET', '/api/running/devices')).status).toBe(404);
  });

  it.each([
    ['no credentials', null],
    ['a wrong password', `Basic ${Buffer.from('admin:wrong').toString('base64')}`],
    ['another scheme', 'Bearer abc'],
  ])('answers 401 access-denied to %s', async (_label, auth) => {
    const res = await call('GET', DEVICES, { auth });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(errorTag(res.body)).toBe('access-denied');
  });

  it('logs requests with the Authorization value redacted and the user it identified', async () => {
    await call('PATCH', `${DEVICES}/device=ce0/address?depth=1`, { body: { 'tailf-ncs:address': '10.1.1.1' } });
    expect(sim.requests).toEqual([
      expect.objectContaining({ method: 'PATCH', path: `${DEVICES}/device=ce0/address?depth=1`, body: '{"tailf-ncs:address":"10.1.1.1"}', user: 'admin' }),
    ]);
    expect(sim.requests[0]!.headers['authorization']).toBe('Basic [redacted]');
  });
});

describe('NSO simulator: knobs', () => {
  it('redirects', async () => {
    sim.setKnobs({ redirect: { status: 301, location: 'http://elsewhere.invalid/' } });
    const res = await fetch(`${sim.url}${DEVICES}`, { redirect: 'manual', headers: { Authorization: AUTH } });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('http://elsewhere.invalid/');
  });

  it('fails with the status it is given', async () => {
    sim.setKnobs({ status: 500 });
    const res = await call('GET', DEVICES);
    expect(res.status).toBe(500);
    expect(errorTag(res.body)).toBe('operation-failed');
  });

  it('sends a huge valid JSON body of exactly the size asked', async () => {
    sim.setKnobs({ hugeBodyBytes: 300_000 });
    const res = await fetch(`${sim.url}${DEVICES}`, { headers: { Authorization: AUTH } });
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBe(300_000);
    expect(JSON.parse(text)).toHaveProperty('tailf-ncs:filler');
  });

  it('sends broken JSON under a JSON media type', async () => {
    sim.setKnobs({ malformedJson: true });
    const res = await fetch(`${sim.url}${DEVICES}`, { headers: { Authorization: AUTH } });
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    const text = await res.text();
    expect(() => JSON.parse(text)).toThrow();
  });

  it('resets the connection', async () => {
    sim.setKnobs({ reset: true });
    await expect(fetch(`${sim.url}${DEVICES}`, { headers: { Authorization: AUTH } })).rejects.toThrow();
    expect(sim.requests).toHaveLength(1);
  });

  it('drips the body and still delivers all of it', async () => {
    sim.setKnobs({ dripMs: 5 });
    const res = await call('GET', `${DEVICES}/device=ce0/address`);
    expect(res.body).toEqual({ 'tailf-ncs:address': '10.0.0.10' });
  });

  it('counts every TCP connection it accepts', async () => {
    const before = sim.connections;
    for (let i = 0; i < 3; i++) {
      const socket = connect(sim.port, '127.0.0.1');
      await once(socket, 'connect');
      socket.resume();
      socket.end('GET /restconf HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await once(socket, 'close');
    }
    expect(sim.connections - before).toBe(3);
  });
});
