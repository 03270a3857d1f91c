/**
 * Remediation's NSO client (functions/remediation/nso.ts) against the NSO simulator over
 * loopback, through the relay's own client: dry-run, commit, the rollback files, and every
 * answer that must not be taken for success; a dry-run's output masked where it comes in, and
 * kept so in the store and the route's answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Adapter } from '../../functions/adapters/model.js';
import { createHttpClient, OutboundError } from '../../functions/outbound/http-client.js';
import { DEFAULT_LIMITS } from '../../functions/relay/service.js';
import type { DeviceFailure } from '../../functions/compliance/check.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../functions/platform/dynamo.js';
import { createNsoTransactions, type NsoClientDeps } from '../../functions/remediation/nso.js';
import { listRemediationDevices } from '../../functions/remediation/service.js';
import { DynamoRemediationStore } from '../../functions/remediation/store.js';
import { createTables } from '../../tools/local/table-copies.js';
import { formatTarget, type YangPatch, type YangPatchEdit } from '../../functions/remediation/patch.js';
import { fleetName } from '../../tools/simulators/nso-fleet.js';
import { startNsoSimulator, type NsoSimulator } from '../../tools/simulators/nso-simulator.js';

const PASSWORD = 'remediate-Pa55-word';
const CLASSIC = 'nso-classic';
const SIX_SEVEN = 'nso-67';
/** Index 3 lacks the MOTD banner; index 7 has one NTP server and the HTTP server on; index 2 (and 6) is out of sync. */
const [BANNERLESS, FAILING, DRIFTED] = [fleetName(3), fleetName(7), fleetName(2)] as const;
const OPTIONS = { commitQueue: false, label: 'remediation-0123456789abcdef01234567-edge-00003', comment: 'remediation by alice of batch b1' };

let sim: NsoSimulator;
let deps: NsoClientDeps;
const adapters = new Map<string, Adapter>();

const adapter = (name: string, extra: Partial<Adapter> = {}): Adapter => ({
  name,
  type: 'nso',
  baseUrl: sim.url,
  auth: { type: 'basic', username: 'admin', password: '$VAULT_nso#password' },
  state: 'RUNNING',
  created: '2026-01-01T00:00:00.000Z',
  lastUpdated: '2026-01-01T00:00:00.000Z',
  ...extra,
});

const patchOf = (patchId: string, ...edits: Omit<YangPatchEdit, 'edit-id'>[]): YangPatch => ({
  'ietf-yang-patch:yang-patch': { 'patch-id': patchId, edit: edits.map((e, i) => ({ 'edit-id': `edit-${i + 1}`, ...e })) },
});
const banner = (device = BANNERLESS): YangPatch =>
  patchOf('banner', {
    operation: 'merge',
    target: formatTarget(device, [{ name: 'tailf-ned-cisco-ios:banner' }]),
    value: { 'tailf-ned-cisco-ios:banner': { motd: 'Authorized access only' } },
  });
/** A patch adding user `ops` to the bannerless device with `secret` as its password. */
const userWith = (secret: string): YangPatch =>
  patchOf('user', {
    operation: 'merge',
    target: formatTarget(BANNERLESS, [{ name: 'tailf-ned-cisco-ios:username' }]),
    value: { 'tailf-ned-cisco-ios:username': [{ name: 'ops', password: { secret } }] },
  });
const configOf = (device: string) => sim.deviceConfig(device) as Record<string, unknown>;
const isFailure = (value: object): value is DeviceFailure => 'kind' in value;

beforeAll(async () => {
  sim = await startNsoSimulator({ credentials: { username: 'admin', password: PASSWORD }, fleet: { devices: 10, outOfSyncEvery: 4 } });
  adapters.set(CLASSIC, adapter(CLASSIC));
  adapters.set(SIX_SEVEN, adapter(SIX_SEVEN, { nsoCommitParams: 'params' }));
  deps = {
    adapters: { get: async (name) => adapters.get(name) },
    secrets: { resolve: async () => PASSWORD },
    client: createHttpClient({ allowLoopback: true }),
    remainingTimeMs: () => 60_000,
    log: () => undefined,
    limits: { ...DEFAULT_LIMITS, maxBodyBytes: 64 * 1024 },
    sleep: async () => undefined,
  };
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setKnobs({});
  sim.resetData();
  sim.requests.length = 0;
});

describe('dry-run', () => {
  it("answers NSO's native output and changes nothing", async () => {
    const before = sim.data();
    const answer = await createNsoTransactions(deps).dryRun(CLASSIC, banner());
    expect(answer).toEqual({ output: expect.stringContaining('+  "tailf-ned-cisco-ios:banner": {') });
    expect((answer as { output: string }).output).toContain('Authorized access only');
    expect(sim.data()).toEqual(before);
    expect(sim.rollbackFiles()).toEqual([]);
    expect(sim.requests.map((r) => [r.method, r.path, r.headers['content-type']])).toEqual([
      ['PATCH', '/restconf/data?dry-run=native', 'application/yang-patch+json'],
    ]);
  });

  it('masks secrets in the output and cuts a long one', async () => {
    const secret = 'Sup3r-secret-value';
    const user = userWith(secret);
    const masked = await createNsoTransactions(deps).dryRun(CLASSIC, user);
    expect(JSON.stringify(masked)).not.toContain(secret);
    const long = patchOf('long', {
      operation: 'merge',
      target: formatTarget(BANNERLESS, [{ name: 'tailf-ned-cisco-ios:banner' }]),
      value: { 'tailf-ned-cisco-ios:banner': { motd: 'x'.repeat(70_000) } },
    });
    const cut = await createNsoTransactions({ ...deps, limits: DEFAULT_LIMITS }).dryRun(CLASSIC, long);
    expect(cut).toMatchObject({ truncated: true });
    expect(Buffer.byteLength((cut as { output: string }).output)).toBeLessThanOrEqual(60_000);
  });

  it('answers an empty output when the patch changes nothing', async () => {
    const same = patchOf('same', {
      operation: 'merge',
      target: formatTarget(BANNERLESS, [{ name: 'tailf-ned-cisco-ios:hostname' }]),
      value: { 'tailf-ned-cisco-ios:hostname': BANNERLESS },
    });
    expect(await createNsoTransactions(deps).dryRun(CLASSIC, same)).toEqual({ output: '' });
  });
});

describe('a dry-run output holding a secret', () => {
  it('is masked once, where NSO answers: the stored record and the route answer hold no secret', async () => {
    const secret = 'Dry-run-S3cret-value';
    const user = userWith(secret);
    const answer = await createNsoTransactions(deps).dryRun(CLASSIC, user);
    if (isFailure(answer)) throw new Error(answer.reason);
    // NSO's answer shows the password block, its content masked.
    expect(answer.output).toMatch(/"password": \{\n\+\s+\[redacted\]/);
    expect(answer.output).not.toContain(secret);

    // The engine keeps the client's output as it is (engine.ts `remediate`), in the production store.
    const table = (await createTables())['compliance']!;
    const store = new DynamoRemediationStore(documentClient, table);
    const remediationId = 'd'.repeat(24);
    await store.create({
      remediationId,
      batchId: 'b'.repeat(24),
      adapterId: CLASSIC,
      treeId: 'a'.repeat(24),
      version: 'v1',
      mode: 'dry-run',
      commitQueue: false,
      listKeys: {},
      devices: [{ device: BANNERLESS, node: 'base' }],
      startedBy: { subject: 'alice', roles: ['admin'] },
      started: '2026-11-27T10:00:00.000Z',
      expiresAt: 2_000_000_000,
    });
    const record = { device: BANNERLESS, state: 'dry-run', patch: user, rules: [], dryRun: answer.output, updatedAt: '2026-11-27T10:00:01.000Z' } as const;
    await store.putUncounted(remediationId, [{ record, node: 'base' }]);
    const item = await documentClient.send(new GetCommand({ TableName: table, Key: { pk: `M#${remediationId}`, sk: `D#${BANNERLESS}` } }));
    expect(item.Item?.['dryRun']).toBe(answer.output);
    expect(JSON.stringify(item.Item)).not.toContain(secret);

    // What GET …/remediations/{remediationId}/devices answers.
    const page = await listRemediationDevices(store, remediationId, { limit: 10 });
    expect(page.items).toMatchObject([{ device: BANNERLESS, state: 'dry-run', dryRun: answer.output }]);
    expect(JSON.stringify(page)).not.toContain(secret);
  });
});

describe('commit and rollback', () => {
  it('commits with a rollback id, the label and comment kept; the configuration shows the change', async () => {
    const nso = createNsoTransactions(deps);
    const answer = await nso.commit(CLASSIC, banner(), OPTIONS);
    expect(answer).toEqual({ rollbackId: 10000 });
    expect(configOf(BANNERLESS)['tailf-ned-cisco-ios:banner']).toEqual({ motd: 'Authorized access only' });
    expect(sim.rollbackFiles()).toMatchObject([{ fixedNumber: 10000, label: OPTIONS.label, comment: OPTIONS.comment }]);
    expect(sim.requests[0]!.path).toBe(
      `/restconf/data?rollback-id=true&rollback-label=${OPTIONS.label}&rollback-comment=remediation%20by%20alice%20of%20batch%20b1`,
    );
    expect(await nso.findRollback(CLASSIC, OPTIONS.label)).toEqual({ rollbackId: 10000 });
  });

  it('finds the one rollback file with the label, none for an unknown label, and never guesses between two', async () => {
    const nso = createNsoTransactions(deps);
    await nso.commit(CLASSIC, banner(), OPTIONS);
    await nso.commit(CLASSIC, banner(fleetName(1)), { ...OPTIONS, label: 'other' });
    expect(await nso.findRollback(CLASSIC, OPTIONS.label)).toEqual({ rollbackId: 10000 });
    expect(sim.requests.at(-1)!.path).toBe('/restconf/data/tailf-rollback:rollback-files/file?fields=fixed-number;label;creator');
    expect(await nso.findRollback(CLASSIC, 'remediation-none')).toEqual({});
    await nso.commit(CLASSIC, banner(fleetName(4)), OPTIONS);
    expect(await nso.findRollback(CLASSIC, OPTIONS.label)).toEqual({
      kind: 'commit-unknown',
      reason: expect.stringContaining(`2 rollback files labelled '${OPTIONS.label}' (10002, 10000)`),
    });
  });

  it("takes no file another NSO user wrote with the label: only the adapter's user's commits count", async () => {
    // Another operator plants a file with our label before the commit.
    sim.commitAs('mallory', banner(fleetName(1)), `?rollback-label=${OPTIONS.label}`);
    const nso = createNsoTransactions(deps);
    expect(await nso.findRollback(CLASSIC, OPTIONS.label)).toEqual({});
    // A commit whose answer is lost is found by its label among the planted one: ours only.
    const losing = {
      ...deps.client,
      send: async (request: Parameters<typeof deps.client.send>[0]) => {
        const response = await deps.client.send(request);
        if (request.method === 'PATCH') throw new OutboundError('timeout', 'no answer in time');
        return response;
      },
    };
    expect(await createNsoTransactions({ ...deps, client: losing }).commit(CLASSIC, banner(), OPTIONS)).toEqual({ rollbackId: 10001 });
    expect(sim.rollbackFiles().map((f) => [f.fixedNumber, f.creator, f.label])).toEqual([
      [10000, 'mallory', OPTIONS.label],
      [10001, 'admin', OPTIONS.label],
    ]);
    // An NSO that names no creator: the label alone tells.
    sim.setKnobs({
      answer: {
        match: (p) => p.includes('rollback-files'),
        status: 200,
        body: JSON.stringify({ 'tailf-rollback:file': [{ 'fixed-number': 7, label: OPTIONS.label }] }),
      },
    });
    expect(await nso.findRollback(CLASSIC, OPTIONS.label)).toEqual({ rollbackId: 7 });
  });

  it('applies a rollback file: the configuration is restored, and NSO keeps a new rollback file', async () => {
    const nso = createNsoTransactions(deps);
    const before = configOf(FAILING);
    const fix = patchOf(
      'fix',
      {
        operation: 'replace',
        target: formatTarget(FAILING, [{ name: 'tailf-ned-cisco-ios:ntp' }, { name: 'server' }, { name: 'peer-list' }]),
        value: { 'peer-list': [{ name: '10.0.0.1' }, { name: '10.0.0.2' }] },
      },
      { operation: 'remove', target: formatTarget(FAILING, [{ name: 'tailf-ned-cisco-ios:ip' }, { name: 'http' }, { name: 'server' }]) },
    );
    const committed = await nso.commit(CLASSIC, fix, OPTIONS);
    expect(configOf(FAILING)).not.toEqual(before);
    expect(await nso.applyRollback(CLASSIC, (committed as { rollbackId: number }).rollbackId)).toEqual({});
    expect(configOf(FAILING)).toEqual(before);
    expect(sim.rollbackFiles().map((f) => f.fixedNumber)).toEqual([10000, 10001]);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: '/restconf/data/tailf-rollback:rollback-files/apply-rollback-file' });
    expect(JSON.parse(sim.requests.at(-1)!.body)).toEqual({ input: { 'fixed-number': 10000, selective: [null] } });
  });

  describe('another operator commits between the remediation and its rollback', () => {
    const domain = (device: string): YangPatch =>
      patchOf('bob', {
        operation: 'merge',
        target: formatTarget(device, [{ name: 'tailf-ned-cisco-ios:ip-domain' }]),
        value: { 'tailf-ned-cisco-ios:ip-domain': { name: 'example.net' } },
      });
    const bobsBanner = patchOf('bob', {
      operation: 'merge',
      target: formatTarget(fleetName(1), [{ name: 'tailf-ned-cisco-ios:banner' }]),
      value: { 'tailf-ned-cisco-ios:banner': { motd: 'Maintenance by bob' } },
    });
    /** The remediation's commit, then bob's on the same device (another member) and on another device. */
    const interleaved = async (): Promise<number> => {
      const committed = await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS);
      sim.commitAs('bob', domain(BANNERLESS));
      sim.commitAs('bob', bobsBanner);
      return (committed as { rollbackId: number }).rollbackId;
    };

    it("the rollback undoes the remediation's changes only: bob's commits stay, on the same device and another", async () => {
      const rollbackId = await interleaved();
      expect(await createNsoTransactions(deps).applyRollback(CLASSIC, rollbackId)).toEqual({});
      expect(configOf(BANNERLESS)).not.toHaveProperty('tailf-ned-cisco-ios:banner');
      expect(configOf(BANNERLESS)['tailf-ned-cisco-ios:ip-domain']).toEqual({ name: 'example.net' });
      expect(configOf(fleetName(1))['tailf-ned-cisco-ios:banner']).toMatchObject({ motd: 'Maintenance by bob' });
    });

    it("without selective, NSO applies every file from the newest back: bob's commits are undone too", async () => {
      const before = configOf(fleetName(1));
      const rollbackId = await interleaved();
      const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
      const applied = await fetch(`${sim.url}/restconf/data/tailf-rollback:rollback-files/apply-rollback-file`, {
        method: 'POST',
        headers: { Authorization: auth, 'Content-Type': 'application/yang-data+json' },
        body: JSON.stringify({ input: { 'fixed-number': rollbackId } }),
      });
      expect(applied.status).toBe(204);
      expect(configOf(BANNERLESS)).not.toHaveProperty('tailf-ned-cisco-ios:banner');
      expect(configOf(BANNERLESS)).not.toHaveProperty('tailf-ned-cisco-ios:ip-domain');
      expect(configOf(fleetName(1))).toEqual(before);
    });
  });

  it('an unknown rollback file is a failure NSO tells of', async () => {
    expect(await createNsoTransactions(deps).applyRollback(CLASSIC, 4242)).toEqual({
      kind: 'refused',
      reason: 'NSO answered 400 to the apply-rollback-file of 4242: rollback file not found',
    });
  });

  it('goes through the commit queue when asked, and answers its item', async () => {
    const answer = await createNsoTransactions(deps).commit(CLASSIC, banner(), { ...OPTIONS, commitQueue: true });
    expect(answer).toEqual({ rollbackId: 10000, commitQueueId: expect.stringMatching(/^[0-9]+$/) });
    expect(sim.requests[0]!.path).toContain('&commit-queue=sync');
  });

  it("NSO 6.7's form: the commit parameters in one params value, for dry-run, commit and its label", async () => {
    const nso = createNsoTransactions(deps);
    expect(await nso.dryRun(SIX_SEVEN, banner())).toMatchObject({ output: expect.stringContaining('banner') });
    expect(await nso.commit(SIX_SEVEN, banner(), { ...OPTIONS, comment: 'by a/b, c=d & e' })).toEqual({ rollbackId: 10000 });
    expect(sim.requests.map((r) => r.path)).toEqual([
      '/restconf/data?params=dry-run=native',
      `/restconf/data?params=rollback-id=true,rollback-label=${OPTIONS.label},rollback-comment=by%20a/b%2C%20c%3Dd%20%26%20e`,
    ]);
    expect(sim.rollbackFiles()[0]).toMatchObject({ label: OPTIONS.label, comment: 'by a/b, c=d & e' });
    expect(await nso.findRollback(SIX_SEVEN, OPTIONS.label)).toEqual({ rollbackId: 10000 });
  });
});

describe('failures', () => {
  it("a commit NSO refuses for the device is the device's failure with NSO's message; nothing changes", async () => {
    sim.setKnobs({ commitFailure: { devices: [BANNERLESS] } });
    const before = sim.data();
    const answer = await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS);
    expect(answer).toEqual({ kind: 'refused', reason: expect.stringContaining(`Failed to connect to device ${BANNERLESS}`) });
    expect(sim.data()).toEqual(before);
    expect(sim.rollbackFiles()).toEqual([]);
    // A dry-run sends nothing to the device: the knob does not fail it.
    expect(await createNsoTransactions(deps).dryRun(CLASSIC, banner())).not.toHaveProperty('kind');
  });

  it('a commit to a device changed behind NSO is refused', async () => {
    const answer = await createNsoTransactions(deps).commit(CLASSIC, banner(DRIFTED), OPTIONS);
    expect(answer).toEqual({ kind: 'refused', reason: expect.stringContaining('out of sync') });
  });

  it('a patch with one refused edit is refused whole, the edit named', async () => {
    const before = sim.data();
    const bad = patchOf(
      'bad',
      {
        operation: 'merge',
        target: formatTarget(BANNERLESS, [{ name: 'tailf-ned-cisco-ios:banner' }]),
        value: { 'tailf-ned-cisco-ios:banner': { motd: 'x' } },
      },
      { operation: 'delete', target: formatTarget(BANNERLESS, [{ name: 'tailf-ned-cisco-ios:snmp-server' }]) },
    );
    for (const answer of [await createNsoTransactions(deps).commit(CLASSIC, bad, OPTIONS), await createNsoTransactions(deps).dryRun(CLASSIC, bad)]) {
      expect(answer).toEqual({ kind: 'refused', reason: expect.stringContaining('edit edit-2:') });
    }
    expect(sim.data()).toEqual(before);
  });

  it('busy answers are retried a bounded number of times', async () => {
    sim.setKnobs({ busy: { status: 503, count: 2 } });
    expect(await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS)).toEqual({ rollbackId: 10000 });
    sim.setKnobs({ busy: { status: 429, count: 10 } });
    const answer = await createNsoTransactions({ ...deps, maxBusyRetries: 2 }).dryRun(CLASSIC, banner());
    expect(answer).toEqual({ kind: 'busy', reason: 'NSO answered 429 to the dry-run after 2 retries.' });
    expect(sim.requests.filter((r) => r.method === 'PATCH')).toHaveLength(3 + 3);
  });

  it('a failure of ours before NSO answered throws', async () => {
    const broken = { ...deps, adapters: { get: async () => Promise.reject(new Error('adapters table unreachable')) } };
    await expect(createNsoTransactions(broken).commit(CLASSIC, banner(), OPTIONS)).rejects.toThrow('adapters table unreachable');
    expect(sim.requests).toEqual([]);
  });
});

describe('hostile answers never count as success', () => {
  const answering = (body: string, status = 200) => sim.setKnobs({ answer: { match: () => true, status, body } });

  it.each([
    ['an empty object', '{}'],
    ['no rollback member', '{"tailf-restconf:result":{}}'],
    ['a rollback id that is text', '{"tailf-restconf:result":{"rollback":{"id":"ten"}}}'],
    ['a negative rollback id', '{"tailf-restconf:result":{"rollback":{"id":-1}}}'],
    ['a fractional rollback id', '{"tailf-restconf:result":{"rollback":{"id":1.5}}}'],
    ['a result that is a list', '{"tailf-restconf:result":[{"rollback":{"id":1}}]}'],
  ])('a 2xx commit with %s is commit-unconfirmed, naming the label', async (_, body) => {
    answering(body);
    const answer = await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS);
    expect(answer).toEqual({ kind: 'commit-unconfirmed', reason: expect.stringContaining(`'${OPTIONS.label}'`) });
  });

  it('a commit NSO accepted without a readable rollback id is found by its label when it landed', async () => {
    for (const [status, body] of [
      [200, '{}'],
      [204, ''],
    ] as const) {
      sim.resetData();
      // The commit lands in NSO; the answer that comes back does not say its rollback id.
      const hiding = {
        ...deps.client,
        send: async (request: Parameters<typeof deps.client.send>[0]) => {
          const response = await deps.client.send(request);
          return request.method === 'PATCH' ? { ...response, status, body: Buffer.from(body) } : response;
        },
      };
      expect(await createNsoTransactions({ ...deps, client: hiding }).commit(CLASSIC, banner(), OPTIONS)).toEqual({ rollbackId: 10000 });
    }
  });

  it('a 204 commit (no body) is commit-unconfirmed', async () => {
    sim.setKnobs({ answer: { match: () => true, status: 204, body: '' } });
    expect(await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS)).toMatchObject({ kind: 'commit-unconfirmed' });
  });

  it('a failed commit queue item is no success', async () => {
    answering('{"tailf-restconf:result":{"rollback":{"id":10007},"commit-queue":{"id":1,"status":"failed"}}}');
    const answer = await createNsoTransactions(deps).commit(CLASSIC, banner(), { ...OPTIONS, commitQueue: true });
    // NSO's database holds it all the same: the rollback id goes with the failure.
    expect(answer).toEqual({ kind: 'commit-queue-failed', reason: expect.stringContaining('10007'), rollbackId: 10007 });
  });

  it.each([
    ['no dry-run-result', '{}'],
    ['a device that is not name and data', '{"dry-run-result":{"native":{"device":[{"name":1,"data":{}}]}}}'],
    ['devices that are no list', '{"dry-run-result":{"native":{"device":"ce0"}}}'],
  ])('a dry-run answer with %s is malformed', async (_, body) => {
    answering(body);
    expect(await createNsoTransactions(deps).dryRun(CLASSIC, banner())).toMatchObject({ kind: 'malformed' });
  });

  it('a huge answer to a commit: it may have landed, so the rollback file is looked for; unreadable, it is unconfirmed', async () => {
    sim.setKnobs({ hugeBodyBytes: 1024 * 1024 });
    const answer = await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS);
    expect(answer).toEqual({ kind: 'commit-unconfirmed', reason: expect.stringContaining(`'${OPTIONS.label}'`) });
    expect(sim.requests.map((r) => r.method)).toEqual(['PATCH', 'GET']);
  });

  it('a commit whose answer is lost is found by its label when it landed', async () => {
    // The commit reaches NSO and lands; its answer never comes back (a timeout after sending).
    const losing = {
      ...deps.client,
      send: async (request: Parameters<typeof deps.client.send>[0]) => {
        const response = await deps.client.send(request);
        if (request.method === 'PATCH') throw new OutboundError('timeout', 'no answer in time');
        return response;
      },
    };
    const nso = createNsoTransactions({ ...deps, client: losing });
    expect(await nso.commit(CLASSIC, banner(), OPTIONS)).toEqual({ rollbackId: 10000 });
    // Refused before anything was sent: nothing can have landed, nothing is looked up.
    const refused = { ...deps.client, send: async () => Promise.reject(new OutboundError('connect', 'refused').beforeSending()) };
    sim.requests.length = 0;
    expect(await createNsoTransactions({ ...deps, client: refused }).commit(CLASSIC, banner(), OPTIONS)).toMatchObject({ kind: 'unreachable' });
    expect(sim.requests).toEqual([]);
    const tooDeep = `{"a":${'['.repeat(200)}${']'.repeat(200)}}`;
    sim.setKnobs({ answer: { match: (p) => p.startsWith('/restconf/data?'), status: 200, body: tooDeep } });
    // The knob answered instead of NSO: nothing landed, no file has the label, the failure stands.
    expect(await createNsoTransactions(deps).commit(CLASSIC, banner(), { ...OPTIONS, label: 'remediation-y' })).toMatchObject({ kind: 'too-deep' });
  });

  it('rollback files of the wrong shape are no answer', async () => {
    answering('{"tailf-rollback:file":{"label":"x"}}');
    expect(await createNsoTransactions(deps).findRollback(CLASSIC, OPTIONS.label)).toMatchObject({ kind: 'malformed' });
    // A file with the label whose number cannot be read may be the commit: unknown, never "none".
    answering('{"tailf-rollback:file":[{"fixed-number":"x","label":"remediation-0123456789abcdef01234567-edge-00003"}]}');
    expect(await createNsoTransactions(deps).findRollback(CLASSIC, OPTIONS.label)).toMatchObject({ kind: 'commit-unknown' });
  });

  it('an error text from NSO is masked and cut', async () => {
    const secret = 'Leaked-Pa55word';
    answering(JSON.stringify({ 'ietf-restconf:errors': { error: [{ 'error-message': `password ${secret} ${'y'.repeat(5000)}` }] } }), 400);
    const answer = (await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS)) as DeviceFailure;
    expect(isFailure(answer)).toBe(true);
    expect(answer.reason).not.toContain(secret);
    expect(answer.reason.length).toBeLessThan(400);
  });
});

describe('the simulator speaks NSO over HTTP', () => {
  const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
  const call = (method: string, path: string, body?: unknown, contentType = 'application/yang-data+json') =>
    fetch(`${sim.url}${path}`, {
      method,
      headers: { Authorization: auth, Accept: 'application/yang-data+json', ...(body === undefined ? {} : { 'Content-Type': contentType }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('lists rollback files newest first, with the fields asked for, and applies one by its place', async () => {
    const nso = createNsoTransactions(deps);
    await nso.commit(CLASSIC, banner(), OPTIONS);
    await nso.commit(CLASSIC, banner(fleetName(1)), { ...OPTIONS, label: 'second' });
    const list = await call('GET', '/restconf/data/tailf-rollback:rollback-files/file?fields=fixed-number;label');
    expect(await list.json()).toEqual({
      'tailf-rollback:file': [
        { 'fixed-number': 10001, label: 'second' },
        { 'fixed-number': 10000, label: OPTIONS.label },
      ],
    });
    const whole = (await (await call('GET', '/restconf/data/tailf-rollback:rollback-files')).json()) as Record<string, { file: unknown[] }>;
    expect(whole['tailf-rollback:rollback-files']!.file[0]).toMatchObject({ id: 0, 'fixed-number': 10001, creator: 'admin', via: 'rest' });
    // `id` 1 is the older commit: the first device loses its banner again, the second keeps it.
    expect((await call('POST', '/restconf/data/tailf-rollback:rollback-files/apply-rollback-file', { input: { id: 1 } })).status).toBe(204);
    expect(configOf(BANNERLESS)).not.toHaveProperty('tailf-ned-cisco-ios:banner');
    expect(configOf(fleetName(1))).toHaveProperty('tailf-ned-cisco-ios:banner');
  });

  it('refuses query parameters on the action, writes to the file list, and a patch that is no YANG Patch', async () => {
    const apply = await call('POST', '/restconf/data/tailf-rollback:rollback-files/apply-rollback-file?rollback-id=true', { input: { 'fixed-number': 1 } });
    expect(apply.status).toBe(400);
    expect((await call('DELETE', '/restconf/data/tailf-rollback:rollback-files/file')).status).toBe(405);
    const notPatch = await call('PATCH', '/restconf/data', { 'ietf-yang-patch:yang-patch': { 'patch-id': 'p', edit: [] } }, 'application/yang-patch+json');
    expect(notPatch.status).toBe(400);
    expect(await notPatch.json()).toMatchObject({ 'ietf-restconf:errors': { error: [{ 'error-tag': 'malformed-message' }] } });
  });

  it('a committed patch shows in the device configuration read over RESTCONF', async () => {
    await createNsoTransactions(deps).commit(CLASSIC, banner(), OPTIONS);
    const read = await call('GET', `/restconf/data/tailf-ncs:devices/device=${BANNERLESS}/config`);
    expect(await read.json()).toMatchObject({ 'tailf-ncs:config': { 'tailf-ned-cisco-ios:banner': { motd: 'Authorized access only' } } });
  });
});
