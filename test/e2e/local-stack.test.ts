/**
 * `npm start` end to end: the real stack synthesized once for this run (`cdk synth -c
 * local=true`), served by `startLocalStack` with DynamoDB Local, the secrets store, the token
 * issuer and the NSO simulator, exercised over HTTP as a user would. Then stopped and started
 * again on the same data, and finally run as the `npm start` command and stopped with Ctrl-C.
 *
 * Every request goes through a recording proxy (the walkthroughs' curl and `npm run smoke`
 * included), and the last test holds each answer to what openapi.json documents for it.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removedRoutes, successorLinks } from '../../functions/api/removed.js';
import { PROJECT_ROOT } from '../../infra/paths.js';
import type { LocalState } from '../../tools/local/config.js';
import { freePort } from '../../tools/local/dynamodb-local.js';
import { runSeedCli } from '../../tools/local/seed.js';
import { LOCAL_FLEET, startLocalStack, type LocalStack } from '../../tools/local/start.js';
import { standardsDevices } from '../../tools/simulators/nso-standards.js';
import { synthesize } from '../../tools/local/synth.js';
import { markedScript, shellBlockUnder, shellCommands, splitMarked } from '../support/doc-commands.js';
import { checkExchanges, OpenApiSchemas, readOpenApi } from '../support/openapi-conformance.js';
import { accessLogEntries, recordingFetch, startRecordingProxy, unrecorded, type Exchange, type RecordingProxy } from '../support/recording.js';

let outDir: string;
let dataDir: string;
let port: number;
let stack: LocalStack | undefined;
const logs: string[] = [];
/** In front of the stack: what this suite sends to it goes through here and is recorded. */
let proxy: RecordingProxy;
/** Exchanges with stacks the proxy is not in front of (the `npm start` command's). */
const direct: Exchange[] = [];
/** The stage base URL, through the recording proxy. */
const base = () => `${proxy.origin}/v1`;

const isAlive = (pid: number | undefined): boolean => {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** How often this suite started the stack (each start registers the NSO simulator through the API). */
let starts = 0;
const start = () => {
  starts += 1;
  return startLocalStack({ port, dataDir, cdkOut: outDir, log: (label, _s, line) => logs.push(`[${label}] ${line}`) });
};

beforeAll(async () => {
  outDir = mkdtempSync(path.join(tmpdir(), 'netconfig-cdk-out-'));
  dataDir = mkdtempSync(path.join(tmpdir(), 'netconfig-local-'));
  port = await freePort();
  await synthesize({ outDir, port });
  stack = await start();
  proxy = await startRecordingProxy(`http://127.0.0.1:${port}`);
});

afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
  rmSync(outDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

const api = async (method: string, p: string, init: { token?: string; body?: unknown; raw?: string | Buffer } = {}) => {
  const headers: Record<string, string> = {};
  if (init.token) headers['Authorization'] = `Bearer ${init.token}`;
  if (init.body !== undefined || init.raw !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base()}${p}`, {
    method,
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : init.raw !== undefined ? { body: init.raw } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown> & unknown[]) : undefined };
};

const expectProblem = (r: { status: number; headers: Headers; body: unknown }, status: number, slug: string) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.body).toMatchObject({ type: `urn:netconfig:problem:${slug}`, status, requestId: r.headers.get('x-amzn-requestid') });
};

describe('npm start (the local stack)', () => {
  it('serves the stage base URL and the issuer JWKS the authorizer is configured with', async () => {
    expect(stack!.baseUrl).toBe(`http://127.0.0.1:${port}/v1`);
    const res = await fetch(`${proxy.origin}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    const jwks = (await res.json()) as { keys: { kty: string; kid: string; d?: string }[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256' });
    expect(jwks.keys[0]!.d).toBeUndefined();
  });

  it('creates a tree with an admin token and reads it back', async () => {
    const admin = stack!.token(['admin']);
    const created = await api('POST', '/configuration_manager/configs', { token: admin, body: { name: `e2e-${Date.now()}`, deviceType: 'cisco-ios' } });
    expect(created.status).toBe(201);
    const id = (created.body as unknown as { id: string }).id;
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    // Location resolves against the request URL to the tree itself.
    const location = new URL(created.headers.get('location')!, `${stack!.baseUrl}/configuration_manager/configs`);
    expect(location.href).toBe(`${stack!.baseUrl}/configuration_manager/configs/${id}`);
    const read = await api('GET', `/configuration_manager/configs/${id}`, { token: stack!.token(['apiread']) });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('loaded the sample trees on the first start', async () => {
    expect(stack!.firstStart).toBe(true);
    const list = await api('GET', '/configuration_manager/configs', { token: stack!.token(['apiread']) });
    expect(list.status).toBe(200);
    const names = ((list.body as unknown as { items: { name: string }[] }).items ?? []).map((t) => t.name);
    expect(names).toContain('access-switch-standard');
  });

  it('registered the NSO simulator as adapter lab-nso, its password kept in the local secrets store', async () => {
    const adapter = await api('GET', '/adapters/lab-nso', { token: stack!.token(['admin']) });
    expect(adapter.status).toBe(200);
    expect(adapter.body).toMatchObject({ name: 'lab-nso', type: 'nso', baseUrl: stack!.simulator!.url });
    const password = (adapter.body as unknown as { auth: { password: string } }).auth.password;
    expect(password).toMatch(/^\$VAULT_/);
    // The store is the data directory's, not the project's `.local/`.
    const secretsFile = path.join(dataDir, 'secrets.json');
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    expect(Object.keys((JSON.parse(readFileSync(secretsFile, 'utf8')) as { secrets: object }).secrets).length).toBeGreaterThan(0);
  });

  it('relays to the simulator through adapter lab-nso, and reads the change back', async () => {
    const admin = stack!.token(['admin']);
    const hostname = `ce0-e2e-${Date.now()}`;
    const config = '/restconf/data/tailf-ncs:devices/device=ce0/config';
    const patch = await api('POST', '/orch_manager/restAction/lab-nso', {
      token: admin,
      body: {
        params: { path: config, method: 'PATCH', accept: 'application/yang-data+json', contentType: 'application/yang-data+json' },
        body: { 'tailf-ncs:config': { 'tailf-ned-cisco-ios:hostname': hostname } },
      },
    });
    expect(patch.status).toBe(200);
    expect(patch.body).toEqual([{ result: '204' }]);
    const read = await api('POST', '/orch_manager/restAction/lab-nso', {
      token: admin,
      body: { params: { path: `${config}/tailf-ned-cisco-ios:hostname`, method: 'GET', accept: 'application/yang-data+json' }, body: {} },
    });
    expect(read.status).toBe(200);
    expect(read.body).toEqual([{ result: '200', data: { 'tailf-ned-cisco-ios:hostname': hostname } }]);
    const seen = stack!.simulator!.requests.filter((r) => r.path.startsWith(config));
    expect(seen.map((r) => r.method)).toEqual(['PATCH', 'GET']);
    // The password went through the secrets store and back: the simulator's basic auth accepted it.
    expect(seen.every((r) => r.user === 'admin')).toBe(true);
  });

  it('answers a removed route with 410, its problem body and successor Link, without a token', async () => {
    const r = await api('GET', '/providers');
    expect(r.status).toBe(410);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.headers.get('link')).toBe('</v1/adapters>; rel="successor-version"');
    // Concrete and stage-qualified: the removed route's parameter fills the replacement's, one link per alternative.
    expect((await api('GET', '/config/property/id/42')).headers.get('link')).toBe('</v1/profiles/42>; rel="successor-version"');
    expect((await api('GET', '/health/module/lab-nso')).headers.get('link')).toBe(
      '</v1/health/adapters/lab-nso>; rel="successor-version", </v1/health/applications/lab-nso>; rel="successor-version"',
    );
    // A link followed with a token reaches the live route.
    const followed = await fetch(new URL('/v1/health/adapters/lab-nso', base()), { headers: { Authorization: `Bearer ${stack!.token(['apiread'])}` } });
    expect(followed.status).toBe(200);
    expect(r.body).toMatchObject({
      type: 'urn:netconfig:problem:route-removed',
      status: 410,
      route: 'GET /providers',
      removedIn: '2021.2',
      replacement: ['GET /adapters'],
    });
    expect((await api('DELETE', '/isAlive')).status).toBe(410);
  });

  it('answers 410 to a removed route whatever the body, for every common media type', async () => {
    for (const [type, body] of [
      ['text/plain', 'hello'],
      ['application/xml', '<a/>'],
      ['application/x-www-form-urlencoded', 'a=1'],
      ['application/json', '{"x":1}'],
    ]) {
      const res = await fetch(`${base()}/modules/load`, { method: 'POST', headers: { 'Content-Type': type! }, body: body! });
      expect(res.status, type).toBe(410);
      expect(await res.json()).toMatchObject({ route: 'POST /modules/load', replacement: [] });
    }
    // A media type no template reads: the 415 problem, not a 500.
    const odd = await fetch(`${base()}/modules/load`, { method: 'POST', headers: { 'Content-Type': 'application/cbor' }, body: 'x' });
    expect(odd.status).toBe(415);
    expect(odd.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers 401 without a token, 403 to apiread on the relay, 404 to an unknown route, 413 to an oversized body', async () => {
    expectProblem(await api('GET', '/configuration_manager/configs'), 401, 'unauthorized');
    expectProblem(await api('GET', '/configuration_manager/configs', { token: 'not-a-jwt' }), 401, 'unauthorized');
    const relay = { params: { path: '/restconf/data', accept: 'application/yang-data+json' }, body: {} };
    expectProblem(await api('POST', '/orch_manager/restAction/lab-nso', { token: stack!.token(['apiread']), body: relay }), 403, 'forbidden');
    expectProblem(await api('GET', '/no/such/route', { token: stack!.token(['admin']) }), 404, 'not-found');
    expectProblem(
      await api('POST', '/configuration_manager/configs', { token: stack!.token(['admin']), raw: Buffer.alloc(11 * 1024 * 1024, 0x20) }),
      413,
      'too-large',
    );
  });

  /** Runs the first sh block under `heading` of `page` as a reader would, on this stack; returns each command's output. */
  const runDocBlock = async (page: string, heading: string): Promise<string[]> => {
    const commands = shellCommands(shellBlockUnder(readFileSync(path.join(PROJECT_ROOT, page), 'utf8'), heading));
    // The pages' stack listens on port 3000; this one on a free port, with its own data directory.
    const script = markedScript(commands.map((c) => ({ ...c, command: c.command.replace('http://127.0.0.1:3000/v1', base()) })));
    const child = spawn('bash', ['-c', script], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NETCONFIG_LOCAL_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(exit, stderr).toBe(0);
    const results = splitMarked(stdout, commands.length);
    results.forEach(({ output, code }, i) => {
      const { command, expects } = commands[i]!;
      expect(code, `${command}\n${output}\n${stderr}`).toBe(0);
      const trimmed = output.trim();
      if (expects !== undefined) {
        // `curl -si` prints the status line; `curl -s` a problem body with the same status.
        const status = /^HTTP\/[\d.]+ (\d{3})/.exec(trimmed)?.[1] ?? /"status":\s*(\d{3})/.exec(trimmed)?.[1];
        expect(Number(status), `${command}\n${output}`).toBe(expects);
      } else if (trimmed.startsWith('{')) {
        expect(trimmed, command).not.toMatch(/urn:netconfig:problem:/);
      }
    });
    return results.map((r) => r.output);
  };

  it('runs the README walkthrough as written, every command answering what the page says', async () => {
    const outputs = await runDocBlock('README.md', '## Walkthrough');
    // The tree the walkthrough created is the one it read back.
    expect(outputs.find((o) => o.includes('"name":"my-tree"'))).toBeDefined();
  });

  it('runs the compliance walkthrough as written: the batch completes and reports the failing device', async () => {
    for (const [page, heading] of [['docs/compliance.md', '## Walkthrough on the local stack']] as const) {
      const outputs = await runDocBlock(page, heading);
      expect(
        outputs.find((o) => o.includes('"status":"completed"')),
        page,
      ).toMatch(/"fail":1/);
      expect(
        outputs.find((o) => o.includes('"items"')),
        page,
      ).toContain('"device":"ce0"');
    }
  });

  it('runs the standards walkthrough as written: each std-*-pass device passes, each std-*-fail device fails its own rule only', async () => {
    const outputs = await runDocBlock('docs/trees.md', '## Rules from public standards');
    const json = <T>(o: string | undefined): T => JSON.parse(o!.trim()) as T;
    // Seven rules are errors (a device failing one scores 88.2, review), three warnings (94.1, pass).
    expect(json(outputs.find((o) => o.includes('"status":"completed"')))).toMatchObject({ total: 20, done: 20, grades: { pass: 13, review: 7 } });
    const reports = json<{ items: { device: string; issues?: { ruleId: string }[] }[] }>(outputs.at(-1)).items;
    const failed = Object.fromEntries(reports.map((r) => [r.device, (r.issues ?? []).map((i) => i.ruleId)]));
    expect(failed).toEqual(Object.fromEntries(standardsDevices().map((d) => [d.name, d.outcome === 'fail' ? [d.rule] : []])));
  });

  it('runs the console walkthrough as written: the page, its settings and a hashed asset, each with its caching', async () => {
    const outputs = await runDocBlock('docs/console.md', '## Looking at it with curl');
    const [, page, settings, , asset] = outputs;
    expect(page).toMatch(/^cache-control: no-cache\r?$/im);
    expect(page).toMatch(/^content-security-policy: default-src 'none'; script-src 'self'/im);
    expect(page).toMatch(/src="\/v1\/console\/assets\/[A-Za-z0-9_-]+\.js"/);
    expect(JSON.parse(settings!.trim())).toMatchObject({ clientId: expect.any(String), authorizationEndpoint: expect.stringContaining('/oauth2/authorize') });
    expect(asset).toMatch(/^cache-control: public, max-age=31536000, immutable\r?$/im);
    expect(asset).toMatch(/^content-type: (text|application)\/javascript/im);
  });

  it('runs a compliance batch end to end: the durable function started through the Lambda API, run by the local runner', async () => {
    const admin = stack!.token(['admin']);
    const grades: Record<string, string> = {};
    for (const version of ['1', '2']) {
      const started = await api('POST', '/configuration_manager/compliance_reports', {
        token: admin,
        body: { treeId: '5cb0a3b7e1c4f20012a9d3e1', version, adapterId: 'lab-nso' },
      });
      expect(started.status).toBe(202);
      const batchPath = new URL(started.headers.get('location')!, base()).pathname.replace(/^\/v1/, '');
      let batch = await api('GET', batchPath, { token: admin });
      // Polled: the batch runs in another process. No count: the project's timeout catches a hang.
      while (batch.body?.['status'] === 'running') {
        await new Promise((r) => setTimeout(r, 250));
        batch = await api('GET', batchPath, { token: admin });
      }
      expect(batch.body).toMatchObject({ status: 'completed', total: 1, done: 1 });
      const reports = await api('GET', `${batchPath}/reports`, { token: stack!.token(['apiread']) });
      const [report] = reports.body!['items'] as { device: string; grade: string }[];
      expect(report?.device).toBe('ce0');
      grades[version] = report!.grade;
    }
    // The sample tree's version 1 holds what the simulator's ce0 has; version 2 does not.
    expect(grades).toEqual({ '1': 'pass', '2': 'fail' });
  });

  it('passes npm run smoke against it, and fails it (exit 1, each failure named) without a token or through an unknown adapter', async () => {
    const smoke = async (args: string[], token?: string) => {
      const child = spawn('npm', ['run', '--silent', 'smoke', '--', ...args], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, NETCONFIG_TOKEN: token ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      return { code, out };
    };
    const good = await smoke([base(), 'lab-nso'], stack!.token(['admin']));
    expect(good.code, good.out).toBe(0);
    expect(good.out.match(/^pass /gm)).toHaveLength(5);
    expect(good.out).toContain('all 5 checks passed');
    const bad = await smoke([base(), 'no-such-adapter']);
    expect(bad.code, bad.out).toBe(1);
    expect(bad.out).toMatch(/^FAIL {2}trees can be read with the token: NETCONFIG_TOKEN is not set$/m);
    expect(bad.out).toMatch(/^pass {2}GET \/status/m);
    expect((await smoke(['not-a-url'])).code).toBe(2);
  });

  it('answers each live operation, and its usual refusals, as a client of openapi.json expects (checked at the end)', async () => {
    const admin = stack!.token(['admin']);
    const expectStatus = async (method: string, p: string, status: number, init: { body?: unknown; raw?: string; token?: string } = {}) => {
      const r = await api(method, p, { token: admin, ...init });
      expect(r.status, `${method} ${p}: ${JSON.stringify(r.body)}`).toBe(status);
      return r.body as unknown as Record<string, unknown>;
    };
    // Trees, versions, nodes, export and import.
    const name = `tour-${Date.now()}`;
    const tree = await expectStatus('POST', '/configuration_manager/configs', 201, { body: { name, deviceType: 'cisco-ios' } });
    const t = `/configuration_manager/configs/${String(tree['id'])}`;
    await expectStatus('POST', t, 201, { body: { name: 'v2', base: 'initial' } });
    await expectStatus('PUT', `${t}/v2`, 200, { body: { variables: { ntp1: '10.0.0.1' } } });
    const rule = { id: 'ntp', path: '/tailf-ned-cisco-ios:ntp/server/peer-list', mode: 'required', severity: 'error', value: [{ name: '{{ntp1}}' }] };
    await expectStatus('PUT', `${t}/v2/nodes/base/wan`, 201, { body: { devices: ['ce9'], rules: [rule] } });
    await expectStatus('PUT', `${t}/v2/nodes/base/wan`, 200, { body: { devices: ['ce9', 'ce8'] } });
    await expectStatus('GET', `${t}/v2/nodes/base/wan`, 200);
    await expectStatus('GET', `${t}/v2`, 200);
    const exported = await expectStatus('GET', `/configuration_manager/exports/${String(tree['id'])}`, 200);
    const copy = await expectStatus('POST', '/configuration_manager/imports', 201, { body: { ...exported, name: `${name}-copy` } });
    await expectStatus('DELETE', `${t}/v2/nodes/base/wan`, 204);
    await expectStatus('DELETE', `${t}/v2`, 204);
    await expectStatus('DELETE', t, 204);
    await expectStatus('DELETE', `/configuration_manager/configs/${String(copy['id'])}`, 204);
    // Adapters and their lifecycle.
    const adapter = `tour-${Date.now()}`;
    const body = { type: 'nso', baseUrl: stack!.simulator!.url, auth: { type: 'basic', username: 'admin', password: 'not-the-password' } };
    await expectStatus('GET', '/adapters', 200);
    await expectStatus('GET', '/schema/adapters/lab-nso', 200);
    await expectStatus('POST', '/adapters', 201, { body: { name: adapter, ...body } });
    await expectStatus('PUT', `/adapters/${adapter}`, 200, { body });
    for (const action of ['stop', 'start', 'restart']) await expectStatus('PUT', `/adapters/${adapter}/${action}`, 200);
    await expectStatus('PUT', `/adapters/${adapter}/loglevel`, 200, { body: { level: 'debug' } });
    await expectStatus('DELETE', `/adapters/${adapter}`, 204);
    await expectStatus('GET', `/adapters/${adapter}/changelogs?limit=2`, 200);
    for (const p of ['/applications/orch_manager/changelogs', '/application/orch_manager/changelogs']) await expectStatus('GET', p, 200);
    // Profiles and applications (the active profile and every application are as they were after).
    const profile = `tour-${Date.now()}`;
    await expectStatus('GET', '/schema/profiles', 200);
    await expectStatus('POST', '/profiles', 201, { body: { id: profile, logLevel: 'info' } });
    await expectStatus('GET', '/profiles', 200);
    await expectStatus('PUT', `/profiles/${profile}`, 200, { body: { logLevel: 'warn' } });
    await expectStatus('PUT', `/profiles/${profile}/active`, 200);
    await expectStatus('DELETE', `/profiles/${profile}`, 409);
    await expectStatus('PUT', '/profiles/default/active', 200);
    await expectStatus('GET', `/profiles/${profile}`, 200);
    await expectStatus('DELETE', `/profiles/${profile}`, 204);
    await expectStatus('GET', '/applications', 200);
    await expectStatus('GET', '/schema/applications/configuration_manager', 200);
    const app = (await expectStatus('GET', '/applications/configuration_manager', 200)) as { settings: Record<string, unknown>; logLevel: string };
    await expectStatus('PUT', '/applications/configuration_manager', 200, { body: app.settings });
    await expectStatus('PUT', '/applications/configuration_manager/loglevel', 200, { body: { level: app.logLevel } });
    for (const action of ['stop', 'start', 'restart']) await expectStatus('PUT', `/applications/configuration_manager/${action}`, 200);
    for (const p of ['/health/applications', '/health/applications/configuration_manager']) await expectStatus('GET', p, 200);
    // apiread reads one application, never its changelogs: the policy's explicit Deny, as the gateway applies it.
    const reader = stack!.token(['apiread']);
    await expectStatus('GET', '/applications/orch_manager', 200, { token: reader });
    await expectStatus('GET', '/applications/orch_manager/changelogs', 403, { token: reader });
    await expectStatus('GET', '/applications/orch_manager/changelogs/', 403, { token: reader });
    // Health and compliance reports.
    for (const p of ['/health/system', '/health/server', '/health/adapters']) await expectStatus('GET', p, 200);
    const started = await expectStatus('POST', '/configuration_manager/compliance_reports', 202, {
      body: { treeId: '5cb0a3b7e1c4f20012a9d3e1', version: '1', adapterId: 'lab-nso' },
    });
    const batch = `/configuration_manager/compliance_reports/batches/${String(started['batchId'])}`;
    while ((await expectStatus('GET', batch, 200))['status'] === 'running') await new Promise((r) => setTimeout(r, 250));
    const [report] = (await expectStatus('GET', `${batch}/reports?limit=1`, 200))['items'] as { reportId: string }[];
    await expectStatus('GET', `/configuration_manager/compliance_reports/${report!.reportId}`, 200);
    // Refusals: invalid, unknown, not JSON, taken, stopped.
    await expectStatus('GET', '/configuration_manager/configs/not-an-id', 400);
    await expectStatus('GET', '/configuration_manager/configs/000000000000000000000000', 404);
    await expectStatus('POST', '/configuration_manager/configs', 400, { body: { name: '', deviceType: 'cisco-ios', extra: 1 } });
    const notJson = await fetch(`${base()}/configuration_manager/configs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    expect(notJson.status).toBe(415);
    await expectStatus('POST', '/adapters', 409, { body: { name: 'lab-nso', ...body } });
    await expectStatus('GET', '/adapters/no-such-adapter', 404);
    await expectStatus('GET', '/health/adapters/no-such-adapter', 404);
    await expectStatus('POST', '/orch_manager/restAction/no-such-adapter', 404, {
      body: { params: { path: '/restconf/data', accept: 'application/yang-data+json' }, body: {} },
    });
    await expectStatus('GET', '/configuration_manager/configs?limit=0', 400);
  });

  it('follows every replacement of every 410 to a live route, and every Link to one of them', async () => {
    const admin = stack!.token(['admin']);
    // Objects of each kind that exist, made for this test (its stop, start and delete calls must not touch lab-nso or `default`).
    const adapter = `link-follow-${Date.now()}`;
    const profile = `link-follow-${Date.now()}`;
    const created = await api('POST', '/adapters', {
      token: admin,
      body: { name: adapter, type: 'nso', baseUrl: stack!.simulator!.url, auth: { type: 'basic', username: 'admin', password: 'link-follow' } },
    });
    expect(created.status).toBe(201);
    expect((await api('POST', '/profiles', { token: admin, body: { id: profile } })).status).toBe(201);
    const value: Record<string, string> = { adapters: adapter, applications: 'configuration_manager', application: 'configuration_manager', profiles: profile };
    // `/x/:param…` filled with an existing object of the kind its collection names.
    const concrete = (p: string) => p.replace(/\/(\w+)\/:\w+/g, (_m, kind: string) => `/${kind}/${value[kind] ?? value['adapters']}`);
    const replacements = removedRoutes.flatMap((route) => {
      const [first] = route.replacement;
      const defaultMethod = first && /^[A-Z]+ /.test(first) ? first.split(' ')[0]! : 'GET';
      return route.replacement.map((r) => (/^[A-Z]+ /.test(r) ? r : `${defaultMethod} ${r}`));
    });
    // Destructive calls last, so that every other call meets the objects alive (and a started application).
    const order = (r: string) => (r.startsWith('DELETE') ? 2 : r.includes('/stop') ? 1 : 0);
    const unique = [...new Set(replacements)].sort((a, b) => order(a) - order(b));
    expect(unique.length).toBeGreaterThan(25);
    try {
      for (const replacement of unique) {
        const [method, p] = replacement.split(' ') as [string, string];
        const r = await api(method, concrete(p), { token: admin, ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) });
        expect([404, 405, 410], `${replacement} → ${concrete(p)}: ${r.status} ${JSON.stringify(r.body)}`).not.toContain(r.status);
        if (p.includes('/stop')) await api('PUT', concrete(p.replace('/stop', '/start')), { token: admin });
      }
    } finally {
      await api('PUT', '/applications/configuration_manager/start', { token: admin });
      await api('PUT', '/profiles/default/active', { token: admin });
    }
    // Each removed route's Links name concrete, stage-qualified replacement paths (own parameters filled with a value).
    for (const route of removedRoutes) {
      const path = route.path.replace(/\{\w+\}/g, 'x1');
      const r = await api(
        route.method === 'ANY' ? 'GET' : route.method,
        path,
        route.method === 'GET' || route.method === 'DELETE' || route.method === 'ANY' ? {} : { body: {} },
      );
      expect(r.status, path).toBe(410);
      const links = (r.headers.get('link') ?? '').split(', ').filter(Boolean);
      const targets = route.replacement.map((x) => `</v1${x.replace(/^[A-Z]+ /, '').replace(/:\w+/g, 'x1')}>; rel="successor-version"`);
      for (const link of links) expect(targets, `${route.method} ${route.path}`).toContain(link);
      expect(links.length, `${route.method} ${route.path}`).toBe(successorLinks(route).length);
    }
  });

  it('runs the drift and history walkthroughs as written: out-of-sync after a drift, graded after sync-from, kept, history and diffs', async () => {
    for (const [page, heading, changed] of [['docs/compliance.md', '## Walkthrough: drift and history', 'console-admin']] as const) {
      const commands = shellCommands(shellBlockUnder(readFileSync(path.join(PROJECT_ROOT, page), 'utf8'), heading));
      const outputs = await runDocBlock(page, heading);
      /** What the first command that contains `text` printed. */
      const outputOf = (text: string): string => {
        const index = commands.findIndex((c) => c.command.includes(text));
        expect(index, `${page}: a command with ${text}`).toBeGreaterThanOrEqual(0);
        return outputs[index]!;
      };
      const json = <T>(o: string | undefined): T => JSON.parse(o!.trim()) as T;
      type Report = { device: string; grade: string; score?: number; sync: { mode: string; result: string }; diff?: string; configId?: string };
      const reportsOf = (o: string) => json<{ items: Report[] }>(o).items;
      const runs = outputs.filter((_, i) => commands[i]!.command.startsWith('run ')).map(reportsOf);
      expect(runs, page).toHaveLength(4);
      const [before, drifted, synced, backup] = runs as [Report[], Report[], Report[], Report[]];
      // In sync, graded, its configuration named.
      expect(before, page).toEqual([
        expect.objectContaining({ device: 'ce0', grade: 'pass', sync: expect.objectContaining({ mode: 'check', result: 'in-sync' }) }),
      ]);
      // After the drift: out-of-sync, no score, NSO's diff with the changed line.
      expect(drifted, page).toEqual([expect.objectContaining({ device: 'ce0', grade: 'out-of-sync', sync: expect.objectContaining({ mode: 'check' }) })]);
      expect(drifted[0]!.score, page).toBeUndefined();
      expect(drifted[0]!.diff, page).toMatch(new RegExp(`^\\+.*${changed}`, 'm'));
      // sync-from: graded on the device's configuration, and the report says so.
      expect(synced, page).toEqual([
        expect.objectContaining({ device: 'ce0', grade: 'pass', sync: expect.objectContaining({ mode: 'sync-from', result: 'synced' }) }),
      ]);
      const [beforeId, afterId] = [before[0]!.configId!, synced[0]!.configId!];
      expect(beforeId < afterId, page).toBe(true);
      expect(backup.length, page).toBeGreaterThanOrEqual(1);
      expect(
        backup.every((r) => r.grade === 'kept' && r.configId),
        page,
      ).toBe(true);
      const backupId = backup.find((r) => r.device === 'ce0')!.configId!;
      // The device list names ce0 with its last take.
      const devices = json<{ items: { device: string; configId: string }[] }>(outputOf('/configuration_manager/devices?adapterId=')).items;
      expect(devices.find((d) => d.device === 'ce0')?.configId, page).toBe(backupId);
      // The history, newest first: the backup's take, then sync-from's.
      const history = json<{ items: { configId: string; takenAt: string; sha256: string; source: string }[] }>(outputOf('/ce0/configs')).items;
      expect(
        history.slice(0, 2).map((h) => h.configId),
        page,
      ).toEqual([backupId, afterId]);
      expect(
        history.map((h) => h.takenAt),
        page,
      ).toEqual(
        history
          .map((h) => h.takenAt)
          .sort()
          .reverse(),
      );
      expect(history[0]!.sha256, page).toBe(history[1]!.sha256);
      // One take: the configuration as NSO gave it, the drifted member in it.
      const take = json<{ configId: string; config: Record<string, unknown> }>(outputOf(`/configs/$AFTER"`));
      expect(take.configId, page).toBe(afterId);
      expect(JSON.stringify(take.config), page).toContain(changed);
      // The diff of the two takes: a patch adding the drifted member, and a unified diff with its + line.
      const patch = json<{ op: string; path: string; value?: unknown }[]>(outputOf('/diff?against=$BEFORE"'));
      expect(patch.length, page).toBeGreaterThan(0);
      expect(
        patch.some((op) => op.op === 'add' && JSON.stringify(op).includes(changed)),
        JSON.stringify(patch),
      ).toBe(true);
      const unified = outputOf('format=unified').trim();
      expect(unified, page).toMatch(new RegExp(`^--- configs/${beforeId}`, 'm'));
      expect(unified, page).toMatch(new RegExp(`^\\+\\+\\+ configs/${afterId}`, 'm'));
      expect(unified, page).toMatch(new RegExp(`^\\+.*${changed}`, 'm'));
      // The secret the drift put on the device is shown by the simulator, and by no answer of the service.
      const service = outputs.filter((_, i) => !commands[i]!.command.includes('/drift'));
      expect(
        service.filter((o) => o.includes('Console-Secret-7')),
        page,
      ).toEqual([]);
      // A backup without devices: every device the simulator's NSO knows, read a page at a time.
      const fleet = Array.from({ length: LOCAL_FLEET.devices }, (_, i) => `edge-${String(i).padStart(5, '0')}`);
      const standards = standardsDevices().map((d) => d.name);
      expect(backup.map((r) => r.device).sort()).toEqual(['ce0', ...fleet, 'pe0', ...standards].sort());
      // The batch's counts, the grade filter, the next page, a take against itself.
      expect(json(outputOf('/batches/$B"')), page).toMatchObject({ status: 'completed', sync: 'check', grades: { 'out-of-sync': 1 } });
      expect(reportsOf(outputOf('?grade=out-of-sync')).map((r) => [r.device, r.grade])).toEqual([['ce0', 'out-of-sync']]);
      const older = json<{ items: { configId: string }[] }>(outputOf('&cursor=')).items;
      expect(older.length).toBeGreaterThan(0);
      expect(older.every((h) => h.configId < history.at(-1)!.configId)).toBe(true);
      expect(json(outputOf('against=$AFTER"'))).toEqual([]);
    }
  });

  it('runs the remediation walkthroughs as written: fails, dry-run, apply fixes it, passes, rollback, fails again', async () => {
    for (const [page, heading] of [['docs/compliance.md', '## Walkthrough: remediation']] as const) {
      const commands = shellCommands(shellBlockUnder(readFileSync(path.join(PROJECT_ROOT, page), 'utf8'), heading));
      const outputs = await runDocBlock(page, heading);
      const json = <T>(o: string | undefined): T => JSON.parse(o!.trim()) as T;
      /** What the calls of a walkthrough function printed (`batch`, `remediate …`), not its definition. */
      const outputsOf = (name: string): string[] => outputs.filter((_, i) => commands[i]!.command === name || commands[i]!.command.startsWith(`${name} `));
      type Grades = { status: string; grades: Record<string, number> };
      type Run = { remediationId: string; mode: string; status: string; totals: Record<string, number>; rollback?: { status: string } };
      type Device = {
        device: string;
        state: string;
        patch?: { 'ietf-yang-patch:yang-patch': { edit: { target: string; operation: string }[] } };
        dryRun?: string;
        rollbackId?: number;
        gradeAfter?: string;
      };
      // The three batches: fails, passes after the apply, fails after the rollback.
      const batches = outputsOf('batch').map((o) => json<Grades>(o));
      expect(
        batches.map((b) => [b.status, b.grades['fail'], b.grades['pass']]),
        page,
      ).toEqual([
        ['completed', 1, 0],
        ['completed', 0, 1],
        ['completed', 1, 0],
      ]);
      const [dryRun, applied] = outputsOf('remediate').map((o) => json<Run>(o)) as [Run, Run];
      expect(dryRun, page).toMatchObject({ mode: 'dry-run', status: 'completed', totals: { planned: 1, dryRun: 1, applied: 0 } });
      expect(applied, page).toMatchObject({ mode: 'apply', status: 'completed', totals: { planned: 1, applied: 1, fixed: 1 } });
      // The dry-run's device: the patch merges the NTP server, and NSO's output names it.
      const devicePages = outputs
        .filter((_, i) => /\/remediations\/\$(R|APPLIED)\/devices"/.test(commands[i]!.command))
        .map((o) => json<{ items: Device[] }>(o).items);
      const [dry] = devicePages[0]!;
      expect(dry, page).toMatchObject({ device: 'ce0', state: 'dry-run' });
      expect(dry!.patch!['ietf-yang-patch:yang-patch'].edit, page).toEqual([
        expect.objectContaining({
          operation: 'merge',
          target: expect.stringContaining('/tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:ntp/server/peer-list=10.0.0.1'),
        }),
      ]);
      expect(dry!.dryRun, page).toContain('10.0.0.1');
      // The rollback: accepted, then completed with the device rolled back.
      const rollback = outputs.findIndex((_, i) => commands[i]!.command.includes('/rollback"'));
      expect(json(outputs[rollback]!.split('\n')[0]), page).toMatchObject({ remediationId: applied.remediationId, status: 'running' });
      // The applied device's record, the run after its rollback, the audit trail.
      const [fixed] = devicePages[1]!;
      expect(fixed, page).toMatchObject({ device: 'ce0', state: 'fixed', rollbackId: expect.any(Number), gradeAfter: 'pass' });
      const after = json<Run>(outputs[commands.findIndex((c) => c.command.startsWith('curl') && c.command.endsWith('/remediations/$APPLIED"'))]);
      expect(after, page).toMatchObject({ rollback: { status: 'completed' }, totals: { rolledBack: 1 } });
      const trail = json<{ items: { action: string; changes: { field: string; to: unknown }[] }[] }>(outputs.at(-1)).items;
      expect(trail.slice(0, 6).map((e) => e.action)).toEqual([
        'rollback-ended',
        'rollback-started',
        'remediation-ended',
        'remediation-started',
        'remediation-ended',
        'remediation-started',
      ]);
      const ended = trail.find((e) => e.action === 'rollback-ended')!;
      expect(ended.changes).toEqual(
        expect.arrayContaining([
          { field: 'rollbackIds', to: [fixed!.rollbackId] },
          { field: 'devices', to: ['ce0'] },
        ]),
      );
    }
  });

  it('keeps the events put on the template’s compliance bus in events.jsonl and on GET /events, and prints a line for each', async () => {
    const buses = Object.values(stack!.model.eventBuses);
    expect(buses).toHaveLength(1);
    const client = new EventBridgeClient({ endpoint: stack!.events.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const detail = {
      eventId: 'e2e-batch:edge-00007',
      planId: 'nightly',
      batchId: 'e2e-batch',
      device: 'edge-00007',
      change: 'fixed',
      from: 'fail',
      to: 'pass',
      at: '2026-11-27T10:00:00.000Z',
    };
    const out = await client.send(
      new PutEventsCommand({
        Entries: [{ Source: 'netconfig.compliance', DetailType: 'Device Compliance Changed', Detail: JSON.stringify(detail), EventBusName: buses[0] }],
      }),
    );
    client.destroy();
    expect(out.FailedEntryCount).toBe(0);
    const kept = readFileSync(stack!.eventsFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; detail: unknown });
    expect(kept.at(-1)).toMatchObject({ id: out.Entries![0]!.EventId, detail });
    const listed = (await (await fetch(`${stack!.events.url}/events`)).json()) as { id: string }[];
    expect(listed.map((e) => e.id)).toContain(out.Entries![0]!.EventId);
    expect(logs).toContain('[events] Device Compliance Changed: edge-00007 fail → pass (batch e2e-batch, plan nightly)');
  });

  it('runs the plans walkthrough as written: fails, fixed, newly failing, with delta, trend, history, CSV and events', async () => {
    const [page, heading] = ['docs/compliance.md', '## Walkthrough: plans'] as const;
    const commands = shellCommands(shellBlockUnder(readFileSync(path.join(PROJECT_ROOT, page), 'utf8'), heading));
    const outputs = await runDocBlock(page, heading);
    const json = <T>(o: string | undefined): T => JSON.parse(o!.trim()) as T;
    /** What the first command that contains `text` (from the `from`th command on) printed. */
    const outputOf = (text: string, from = 0): string => {
      const index = commands.findIndex((c, i) => i >= from && c.command.includes(text));
      expect(index, `${page}: a command with ${text}`).toBeGreaterThanOrEqual(0);
      return outputs[index]!;
    };
    type Batch = { batchId: string; planId?: string; status: string; grades: Record<string, number> };
    const runs = outputs.filter((_, i) => commands[i]!.command === 'run').map((o) => json<Batch>(o));
    expect(
      runs.map((b) => [b.status, b.grades['fail'], b.grades['pass']]),
      page,
    ).toEqual([
      ['completed', 1, 0],
      ['completed', 0, 1],
      ['completed', 1, 0],
    ]);
    const planId = runs[0]!.planId!;
    expect(planId).toMatch(/^[0-9a-f]{24}$/);
    expect(runs.every((b) => b.planId === planId)).toBe(true);
    // The plan as created: the next 06:00 in Paris, in UTC.
    const plan = json<{ planId: string; enabled: boolean; nextRunAt: string }>(outputOf('/compliance_plans/$PLAN"'));
    expect(plan).toMatchObject({ planId, enabled: true });
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(new Date(plan.nextRunAt))).toBe('06:00');
    expect(Date.parse(plan.nextRunAt)).toBeGreaterThan(Date.now() - 60_000);
    // The second batch's delta: ce0 fixed, against the first.
    const fixed = json<{ previousBatchId: string; counts: Record<string, number>; items: { device: string; change: string; from: string; to: string }[] }>(
      outputOf('/delta"'),
    );
    expect(fixed.previousBatchId).toBe(runs[0]!.batchId);
    expect(fixed.counts).toMatchObject({ fixed: 1, 'newly-failing': 0, changed: 0, new: 0, gone: 0 });
    expect(fixed.items).toEqual([expect.objectContaining({ device: 'ce0', change: 'fixed', from: 'fail', to: 'pass' })]);
    // The third batch's delta as CSV: a header, then ce0 newly failing.
    const csv = outputOf('Accept: text/csv').trim().split('\r\n');
    const header = csv[0]!.split(',');
    expect(csv).toHaveLength(2);
    const row = Object.fromEntries(csv[1]!.split(',').map((cell, i) => [header[i], cell]));
    expect(row).toMatchObject({ device: 'ce0', change: 'newly-failing', from: 'pass', to: 'fail' });
    // The plan's batches, newest first.
    const listed = json<{ items: Batch[] }>(outputOf('/batches?planId=$PLAN"')).items;
    expect(listed.map((b) => b.batchId)).toEqual(runs.map((b) => b.batchId).reverse());
    // The trend: three points, oldest first, delta counts from the second on; the CSV has a row each.
    type Point = { batchId: string; status: string; started: string; grades: Record<string, number>; delta?: Record<string, number> };
    const trend = json<{ items: Point[] }>(outputOf('/trend"')).items;
    expect(trend.map((p) => [p.batchId, p.status, p.grades['fail'], p.grades['pass']])).toEqual(
      runs.map((b) => [b.batchId, 'completed', b.grades['fail'], b.grades['pass']]),
    );
    expect(trend.map((p) => [p.delta?.['fixed'], p.delta?.['newly-failing']])).toEqual([
      [0, 0],
      [1, 0],
      [0, 1],
    ]);
    const trendCsv = outputOf('/trend?format=csv"').trim().split('\r\n');
    expect(trendCsv).toHaveLength(4);
    expect(trendCsv.slice(1).map((line) => line.split(',')[trendCsv[0]!.split(',').indexOf('batchId')])).toEqual(runs.map((b) => b.batchId));
    // ce0's history: fail, pass, fail newest first; ntp-servers failing since the third batch.
    type History = {
      points: { batchId: string; grade: string }[];
      rules: { ruleId: string; failing: boolean; firstFailedAt?: string; lastChangedAt: string }[];
    };
    const history = json<History>(outputOf('/devices/ce0"'));
    expect(history.points.map((p) => [p.batchId, p.grade])).toEqual(runs.map((b, i) => [b.batchId, ['fail', 'pass', 'fail'][i]]).reverse());
    const ntp = history.rules.find((r) => r.ruleId === 'ntp-servers')!;
    expect(ntp).toMatchObject({ failing: true });
    expect(ntp.firstFailedAt).toBe(ntp.lastChangedAt);
    expect(Date.parse(ntp.firstFailedAt!)).toBeGreaterThanOrEqual(Date.parse(trend[2]!.started));
    // The events of the three batches, in order: each batch's end, and ce0's changes in the second and third.
    const events = outputOf('events.jsonl')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { 'detail-type': string; detail: { batchId: string; device?: string; change?: string } });
    expect(events.map((e) => [e['detail-type'], e.detail.batchId, e.detail.change])).toEqual([
      ['Compliance Batch Completed', runs[0]!.batchId, undefined],
      ['Device Compliance Changed', runs[1]!.batchId, 'fixed'],
      ['Compliance Batch Completed', runs[1]!.batchId, undefined],
      ['Device Compliance Changed', runs[2]!.batchId, 'newly-failing'],
      ['Compliance Batch Completed', runs[2]!.batchId, undefined],
    ]);
    // Paused: no next run. Deleted: 204, and its trend is still there.
    const put = commands.findIndex((c) => c.command.includes('-X PUT'));
    expect(json(outputs[put])).toMatchObject({ planId, enabled: false });
    expect(json<object>(outputs[put])).not.toHaveProperty('nextRunAt');
    expect(json<{ items: { planId: string }[] }>(outputOf('"$BASE/configuration_manager/compliance_plans"', put)).items.map((p) => p.planId)).toContain(planId);
    expect(outputOf('-X DELETE')).toMatch(/^HTTP\/[\d.]+ 204/);
    expect(json<{ items: Point[] }>(outputs.at(-1)).items.map((p) => p.batchId)).toEqual(runs.map((b) => b.batchId));
  });

  it('runs the exemptions walkthrough as written: ce0 passes with ntp-servers exempted, fails once it is deleted, each change in the changelog', async () => {
    const [page, heading] = ['docs/compliance.md', '## Walkthrough: exemptions'] as const;
    const commands = shellCommands(shellBlockUnder(readFileSync(path.join(PROJECT_ROOT, page), 'utf8'), heading));
    const outputs = await runDocBlock(page, heading);
    const json = <T>(o: string | undefined): T => JSON.parse(o!.trim()) as T;
    type Report = { device: string; grade: string; score?: number; totals: Record<string, number>; issues: { ruleId: string }[]; exempted?: unknown[] };
    const reports = outputs.filter((_, i) => commands[i]!.command === 'batch').map((o) => json<{ items: Report[] }>(o).items);
    expect(reports.map((items) => items.map((r) => [r.device, r.grade]))).toEqual([[['ce0', 'pass']], [['ce0', 'fail']]]);
    const [exempted, counted] = [reports[0]![0]!, reports[1]![0]!];
    // Exempted: evaluated (it fails), listed with the exemption, outside issues, score and totals.
    expect(exempted.exempted).toEqual([
      {
        ruleId: 'ntp-servers',
        node: expect.any(String),
        severity: 'error',
        outcome: 'fail',
        exemption: {
          exemptionId: expect.stringMatching(/^[0-9a-f]{24}$/),
          ruleId: 'ntp-servers',
          until: expect.any(String),
          reason: 'NTP migration, CHG-1234',
          by: expect.any(String),
        },
      },
    ]);
    expect(exempted.issues.map((i) => i.ruleId)).not.toContain('ntp-servers');
    expect(exempted.score).toBe(100);
    // Deleted: the rule counts again.
    expect(counted.exempted).toBeUndefined();
    expect(counted.issues.map((i) => i.ruleId)).toContain('ntp-servers');
    expect(counted.totals['errors']! - exempted.totals['errors']!).toBe(1);
    const listed = json<{ items: { exemptionId: string; ruleId: string; devices: string[] }[] }>(
      outputs[commands.findIndex((c) => c.command.startsWith('curl -s -H') && c.command.endsWith('"$EXEMPTIONS"'))],
    );
    expect(listed.items[0]).toMatchObject({ ruleId: 'ntp-servers', devices: ['ce0'] });
    const replaced = json<{ reason: string; createdAt: string; updatedAt: string }>(outputs[commands.findIndex((c) => c.command.includes('-X PUT'))]);
    expect(replaced.reason).toBe('NTP migration, CHG-1240');
    type Entry = { kind: string; action: string; changes: { field: string; from?: unknown; to?: unknown }[] };
    const trail = json<{ items: Entry[] }>(outputs.at(-1)).items;
    expect(trail.slice(0, 3).map((e) => [e.kind, e.action])).toEqual([
      ['tree', 'exemption-deleted'],
      ['tree', 'exemption-replaced'],
      ['tree', 'exemption-created'],
    ]);
    const id = listed.items[0]!.exemptionId;
    expect(trail[1]!.changes).toEqual([{ field: `${id}.reason`, from: 'NTP migration, CHG-1234', to: 'NTP migration, CHG-1240' }]);
  });

  it('writes the state file that npm run seed uses to load trees into the running stack', async () => {
    const state = JSON.parse(readFileSync(stack!.stateFile, 'utf8')) as LocalState;
    expect(state).toMatchObject({ baseUrl: stack!.baseUrl, dynamodbEndpoint: stack!.dynamodbEndpoint, tables: stack!.tables, pid: process.pid });
    expect(Object.keys(state.tables)).toEqual(expect.arrayContaining(['adapters', 'trees']));
    const seedFile = path.join(dataDir, 'seed.json');
    const tree = {
      id: 'abcdefabcdefabcdefabcdef',
      name: 'seeded-by-e2e',
      deviceType: 'cisco-ios',
      versions: ['initial', 'draft', 'draft'],
      created: '2020-01-02T03:04:05.678Z',
      lastUpdated: '2020-01-02T03:04:05.678Z',
    };
    writeFileSync(seedFile, JSON.stringify({ trees: [tree] }));
    const out: string[] = [];
    expect(await runSeedCli([seedFile], { stateFile: stack!.stateFile, out: (t) => out.push(t), err: (t) => out.push(t) })).toBe(0);
    const read = await api('GET', `/configuration_manager/configs/${tree.id}`, { token: stack!.token(['apiread']) });
    expect(read.body).toEqual(tree);
  });

  it('stops everything it started, the Java process included, and keeps the data for the next start', async () => {
    const javaPid = stack!.dynamodbPid;
    const before = await api('GET', '/configuration_manager/configs/abcdefabcdefabcdefabcdef', { token: stack!.token(['admin']) });
    expect(before.status).toBe(200);
    await stack!.stop();
    expect(isAlive(javaPid)).toBe(false);
    expect(() => statSync(stack!.stateFile)).toThrow();
    await expect(fetch(`${stack!.baseUrl}/status`)).rejects.toThrow();

    stack = await start();
    expect(stack.firstStart).toBe(false);
    const after = await api('GET', '/configuration_manager/configs/abcdefabcdefabcdefabcdef', { token: stack.token(['admin']) });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    // The adapter now points at this start's simulator.
    const adapter = await api('GET', '/adapters/lab-nso', { token: stack.token(['admin']) });
    expect(adapter.body).toMatchObject({ baseUrl: stack.simulator!.url });
  });

  it('refuses a second stack on the same data directory while one runs', async () => {
    const outcome = await startLocalStack({ port: 0, dataDir, cdkOut: outDir, log: () => undefined }).then(
      async (second) => {
        await second.stop();
        return 'started a second stack';
      },
      (error: Error) => error.message,
    );
    expect(outcome).toMatch(/already uses/);
  });
});

describe('the npm start command', () => {
  it('prints the base URL, a ready line and a curl example, and stops everything on Ctrl-C', async () => {
    const cliDir = mkdtempSync(path.join(tmpdir(), 'netconfig-cli-'));
    const cliPort = await freePort();
    const tsx = createRequire(path.join(PROJECT_ROOT, 'package.json')).resolve('tsx/cli');
    const child = spawn(process.execPath, [tsx, 'tools/local/start.ts', '--cdk-out', outDir], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, PORT: String(cliPort), NETCONFIG_LOCAL_DIR: cliDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      // Polled until it says so or exits; no deadline of its own, the project's timeout catches a hang.
      while (!output.includes('Local stack ready') && child.exitCode === null) await new Promise((r) => setTimeout(r, 250));
      expect(output).toContain('Local stack ready');
      expect(output).toContain(`Base URL: http://127.0.0.1:${cliPort}/v1`);
      // The S3 server of the configuration history answers where the banner says, with the template's bucket on it.
      const s3 = /S3 \(configuration history\): (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      expect(s3, output).toBeDefined();
      const buckets = await fetch(`${s3}/`);
      expect(buckets.status).toBe(200);
      expect(await buckets.text()).toMatch(/<Bucket><Name>[^<]+<\/Name>/);
      const token = /export TOKEN=(\S+)/.exec(output)?.[1];
      expect(output).toContain('curl -s -H "Authorization: Bearer $TOKEN" "$BASE/configuration_manager/configs"');
      const res = await recordingFetch(direct)(`http://127.0.0.1:${cliPort}/v1/configuration_manager/configs`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      // Its access log (on stdout) has no request this suite sent unrecorded: only the stack's own registration of the simulator.
      const requestId = direct.at(-1)!.requestId!;
      while (!output.includes(requestId) && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      expect(unrecorded(output.split('\n'), '/v1', direct).map((e) => `${e.httpMethod} ${e.path}`)).toEqual(['PUT /v1/adapters/lab-nso']);
      const state = JSON.parse(readFileSync(path.join(cliDir, 'state.json'), 'utf8')) as LocalState;
      expect(state.dataDir).toBe(cliDir);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      // DynamoDB Local is gone: its port no longer answers.
      await expect(fetch(state.dynamodbEndpoint, { method: 'POST' })).rejects.toThrow();
      await expect(fetch(`${s3}/`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${cliPort}/v1/status`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(cliDir, { recursive: true, force: true });
    }
  });
});

describe('what the suite was answered', () => {
  it('was recorded whole: every request the gateway logged under the stage went through the recorder', () => {
    expect(accessLogEntries(logs, '/v1').length).toBeGreaterThan(50);
    // But one the stack sends itself: at each start, it registers the NSO simulator through the API.
    const missed = unrecorded(logs, '/v1', proxy.exchanges);
    expect(missed.map((e) => `${e.httpMethod} ${e.path}`)).toEqual(Array(starts).fill('PUT /v1/adapters/lab-nso'));
    // Their answer is unseen here; its status is one the operation documents.
    const documented = Object.keys((readOpenApi()['paths'] as Record<string, Record<string, { responses: object }>>)['/adapters/{name}']!['put']!.responses);
    for (const e of missed) expect(documented).toContain(String(e.status));
  });

  it('is, answer by answer, what openapi.json documents for the operation and status: status, content type and body', () => {
    const doc = readOpenApi();
    const result = checkExchanges(new OpenApiSchemas(doc), [...proxy.exchanges, ...direct]);
    expect(result.problems).toEqual([]);
    expect(result.checked).toBeGreaterThan(50);
    // The walkthroughs, the smoke run and the tests above reach every live operation (a new route needs a call in the tour above).
    const live = Object.entries(doc['paths'] as Record<string, Record<string, { deprecated?: boolean }>>).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !op.deprecated)
        .map(([method]) => `${method.toUpperCase()} ${p}`),
    );
    expect(live.filter((op) => !result.operations.has(op))).toEqual([]);
  });
});
