/** The sync step before grading (functions/compliance/sync.ts) and its reports, against a fake relay and gate: every mode and answer. */
import { describe, expect, it } from 'vitest';
import { checkDevice, type CheckDeps, type CheckTarget } from '../../functions/compliance/check.js';
import type { FetchGate } from '../../functions/compliance/gate.js';
import { MAX_DIFF_BYTES, type SyncMode } from '../../functions/compliance/model.js';
import { MAX_NSO_TEXT, nsoText, shownDiff, SYNC_GROUP, syncStep, type RelayPost, type SyncStep } from '../../functions/compliance/sync.js';
import { GatewayTimeout, ServiceUnavailable } from '../../functions/platform/problem.js';
import type { RestActionResult } from '../../functions/relay/service.js';
import { excerptOf, SECRET_CORPUS } from '../support/secret-corpus.js';

const target: CheckTarget = {
  batchId: 'a'.repeat(24),
  treeId: 'b'.repeat(24),
  version: 'v1',
  adapterId: 'lab',
  plan: { variables: {}, nodes: ['base'], rulesByNode: { base: [{ id: 'r', node: 'base', path: '/x', mode: 'required', severity: 'error' }] } },
};

/** A gate that sends at once and counts its pauses. */
const gate = (): FetchGate & { pauses: number; sent: number } => {
  const g = {
    pauses: 0,
    sent: 0,
    run: <T>(fetch: () => Promise<T>) => {
      g.sent++;
      return fetch();
    },
    pause: () => void g.pauses++,
  };
  return g;
};

type Answer = RestActionResult[] | Error;
/** A relay POST answering by path (`(path, body) => answer`), recording each request. */
const relay = (answer: (path: string, body: Record<string, unknown>) => Answer) => {
  const sent: { path: string; body: Record<string, unknown> }[] = [];
  const post: RelayPost = async (_adapter, path, body) => {
    sent.push({ path, body });
    const a = answer(path, body);
    if (a instanceof Error) throw a;
    return a;
  };
  return { post, sent };
};
const ok = (output: Record<string, unknown>): RestActionResult[] => [{ result: '200', data: { 'tailf-ncs:output': output } } as RestActionResult];
const status = (code: number): RestActionResult[] => [{ result: String(code), data: {} } as RestActionResult];
const grouped = (results: (device: string) => Record<string, unknown>) => (_path: string, body: Record<string, unknown>) =>
  ok({ 'sync-result': ((body['input'] as { device: string[] }).device ?? []).map((device) => ({ device, ...results(device) })) });
const names = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`);
const step = (mode: SyncMode, post: RelayPost, devices = names(3)): SyncStep => syncStep(mode, target, devices, post, 2);
const GROUP_PATH = '/restconf/data/tailf-ncs:devices/check-sync';

describe('sync none', () => {
  it('asks nothing and says the device was not checked', async () => {
    const r = relay(() => new Error('never'));
    expect(await step('none', r.post).before('d0', gate())).toEqual({ sync: { mode: 'none', result: 'not-checked' } });
    expect(r.sent).toHaveLength(0);
  });
});

describe('sync check', () => {
  it('asks check-sync for a group of the chunk in one request, the device leaf-list as input', async () => {
    const r = relay(grouped(() => ({ result: 'in-sync' })));
    const devices = names(SYNC_GROUP + 5);
    const s = step('check', r.post, devices);
    const g = gate();
    const verdicts = await Promise.all(devices.map((d) => s.before(d, g)));
    expect(verdicts.every((v) => 'sync' in v && v.sync.result === 'in-sync' && Object.keys(v).length === 1)).toBe(true);
    expect(r.sent.map((x) => x.path)).toEqual([GROUP_PATH, GROUP_PATH]);
    expect(r.sent[0]!.body).toEqual({ input: { device: devices.slice(0, SYNC_GROUP) } });
    expect(r.sent[1]!.body).toEqual({ input: { device: devices.slice(SYNC_GROUP) } });
    expect(g.sent).toBe(2);
  });

  it('gives an out-of-sync device compare-config diff, its secrets masked', async () => {
    const diff = '-  "hostname": "a"\n+  "hostname": "b"\n+  "secret": "drift-Secret-42"\n';
    const r = relay((path, body) => (path === GROUP_PATH ? grouped((d) => ({ result: d === 'd1' ? 'out-of-sync' : 'in-sync' }))(path, body) : ok({ diff })));
    const s = step('check', r.post);
    const verdict = await s.before('d1', gate());
    expect(r.sent[1]).toEqual({ path: '/restconf/data/tailf-ncs:devices/device=d1/compare-config', body: { input: { outformat: 'cli' } } });
    expect(verdict).toEqual({ sync: { mode: 'check', result: 'out-of-sync' }, diff: expect.stringContaining('"hostname": "b"') });
    expect((verdict as { diff: string }).diff).not.toContain('drift-Secret-42');
    expect((verdict as { diff: string }).diff).toContain('[redacted]');
    expect(await s.before('d0', gate())).toEqual({ sync: { mode: 'check', result: 'in-sync' } });
  });

  it('cuts a diff past its bound on a character boundary and says so', async () => {
    const diff = `+ ${'é'.repeat(MAX_DIFF_BYTES)}\n`;
    const r = relay((path, body) => (path === GROUP_PATH ? grouped(() => ({ result: 'out-of-sync' }))(path, body) : ok({ diff })));
    const verdict = (await step('check', r.post).before('d0', gate())) as { diff: string; diffTruncated?: true };
    expect(verdict.diffTruncated).toBe(true);
    expect(Buffer.byteLength(verdict.diff, 'utf8')).toBeLessThanOrEqual(MAX_DIFF_BYTES);
    expect(Buffer.byteLength(verdict.diff, 'utf8')).toBeGreaterThan(MAX_DIFF_BYTES - 4);
    expect(verdict.diff).not.toContain('\uFFFD');
  });

  it('lets compare-config decide where NSO answers unsupported: empty output in sync, a diff out of sync', async () => {
    const r = relay((path, body) =>
      path === GROUP_PATH ? grouped(() => ({ result: 'unsupported' }))(path, body) : ok(path.includes('device=d2') ? { diff: '+ x\n' } : {}),
    );
    const s = step('check', r.post);
    expect(await s.before('d0', gate())).toEqual({ sync: { mode: 'check', result: 'in-sync', note: expect.stringContaining('compare-config') } });
    expect(await s.before('d2', gate())).toMatchObject({ sync: { result: 'out-of-sync' }, diff: '+ x\n' });
    expect(r.sent.filter((x) => x.path.endsWith('/compare-config'))).toHaveLength(2);
  });

  it('never takes a compare-config answer it cannot read as in sync: NSO info (200), another shape', async () => {
    const info = 'Failed to connect to device d0: connection refused password=hunter2';
    const cases: [Answer, string][] = [
      [ok({ info }), 'Failed to connect to device d0'],
      [ok({ diff: null }), 'another shape'],
      [ok({ result: 'in-sync', info: 'partial' }), 'partial'],
      [[{ result: '200', data: { unexpected: true } } as RestActionResult], 'another shape'],
    ];
    for (const [answer, says] of cases) {
      const r = relay((path, body) => (path === GROUP_PATH ? grouped(() => ({ result: 'unsupported' }))(path, body) : answer));
      const verdict = await step('check', r.post).before('d0', gate());
      expect(verdict).toMatchObject({
        sync: { mode: 'check', result: 'not-checked' },
        failure: { kind: 'sync-failed', reason: expect.stringContaining(says) },
      });
      expect(JSON.stringify(verdict)).not.toContain('hunter2');
    }
    // In sync only on no output: 204, an empty body, an empty output, an explicitly empty diff.
    for (const answer of [status(204), [{ result: '200' } as RestActionResult], ok({}), ok({ diff: '' })]) {
      const r = relay((path, body) => (path === GROUP_PATH ? grouped(() => ({ result: 'unsupported' }))(path, body) : answer));
      expect(await step('check', r.post).before('d0', gate())).toMatchObject({ sync: { result: 'in-sync' } });
    }
  });

  it('keeps out-of-sync when check-sync said so and compare-config fails or is absent, with a note', async () => {
    for (const answer of [ok({ info: 'Failed to connect to device d0' }), status(404), status(501), status(500), new GatewayTimeout('no answer in 10 s')]) {
      const r = relay((path, body) => (path === GROUP_PATH ? grouped(() => ({ result: 'out-of-sync' }))(path, body) : answer));
      expect(await step('check', r.post).before('d0', gate())).toEqual({
        sync: { mode: 'check', result: 'out-of-sync', note: expect.stringContaining("NSO's diff could not be read") },
        diff: '',
      });
    }
  });

  it('bounds and masks every NSO text a reason quotes: a hostile 400 KB check-sync result and info', async () => {
    const hostile = `password=hunter2 ${'x'.repeat(400_000)}`;
    for (const entry of [{ result: hostile }, { result: 'error', info: hostile }, { result: { nested: hostile } }]) {
      const r = relay(grouped(() => entry));
      const verdict = (await step('check', r.post).before('d0', gate())) as { failure: { kind: string; reason: string } };
      expect(verdict.failure.kind).toBe('sync-failed');
      expect(verdict.failure.reason).not.toContain('hunter2');
      expect(verdict.failure.reason.length).toBeLessThan(2 * MAX_NSO_TEXT + 200);
      expect(verdict.failure.reason).toContain('…');
    }
    const from = relay(grouped(() => ({ result: false, info: hostile })));
    const reason = ((await step('sync-from', from.post).before('d0', gate())) as { failure: { reason: string } }).failure.reason;
    expect(reason).not.toContain('hunter2');
    expect(reason.length).toBeLessThan(MAX_NSO_TEXT + 200);
    // A short text is kept whole, masked.
    expect(nsoText('Failed: secret=abc')).toBe('Failed: secret=[redacted]');
  });

  it("reports NSO's error result as the device's failure, its info masked", async () => {
    const r = relay(grouped(() => ({ result: 'error', info: 'connect failed password=hunter2' })));
    const verdict = await step('check', r.post).before('d0', gate());
    expect(verdict).toMatchObject({ sync: { mode: 'check', result: 'not-checked' }, failure: { kind: 'sync-failed' } });
    const reason = (verdict as { failure: { reason: string } }).failure.reason;
    expect(reason).toContain('check-sync: error');
    expect(reason).not.toContain('hunter2');
  });

  it('gives every device of a group a 5xx answer as its failure, and retries busy answers after a pause', async () => {
    let busy = 2;
    const r = relay((path, body) => {
      if ((body['input'] as { device: string[] }).device.includes('d0')) return status(500);
      return busy-- > 0 ? status(503) : grouped(() => ({ result: 'in-sync' }))(path, body);
    });
    const s = step('check', r.post, ['d0', 'd1']);
    expect(await s.before('d0', gate())).toMatchObject({ failure: { kind: 'status', reason: expect.stringContaining('500 to check-sync') } });
    expect(await s.before('d1', gate())).toMatchObject({ failure: { kind: 'status' } });
    const g = gate();
    expect(await step('check', r.post, ['d5']).before('d5', g)).toEqual({ sync: { mode: 'check', result: 'in-sync' } });
    expect(g.pauses).toBe(2);
  });

  it('grades as none would, with a note, when the orchestrator has no check-sync (404 or 501, confirmed by one device), and asks nothing more', async () => {
    for (const code of [404, 501]) {
      const r = relay(() => status(code));
      const s = step('check', r.post, names(60));
      for (const d of names(60))
        expect(await s.before(d, gate())).toEqual({ sync: { mode: 'check', result: 'not-checked', note: expect.stringContaining(`answered ${code}`) } });
      expect(r.sent.map((x) => x.path)).toEqual([GROUP_PATH, '/restconf/data/tailf-ncs:devices/device=d0/check-sync']);
    }
  });

  it('asks device by device when the grouped request is answered 404 or 501 but a device has its own check-sync (a proxy, a bad name)', async () => {
    for (const code of [404, 501]) {
      const r = relay((path) => (path === GROUP_PATH ? status(code) : ok({ result: path.includes('device=d1') ? 'error' : 'in-sync' })));
      const s = step('check', r.post, names(3));
      expect(await s.before('d0', gate())).toEqual({ sync: { mode: 'check', result: 'in-sync' } });
      expect(await s.before('d1', gate())).toMatchObject({ failure: { kind: 'sync-failed' } });
      expect(await s.before('d2', gate())).toEqual({ sync: { mode: 'check', result: 'in-sync' } });
      expect(r.sent.map((x) => x.path)).toEqual([GROUP_PATH, ...names(3).map((d) => `/restconf/data/tailf-ncs:devices/device=${d}/check-sync`)]);
    }
  });

  it('asks device by device when the grouped input is refused (400), and for a device the group answer left out', async () => {
    const r = relay((path, body) => {
      if (path === GROUP_PATH) return (body['input'] as { device: string[] }).device.includes('d0') ? status(400) : ok({ 'sync-result': [] });
      return ok({ result: path.includes('device=d1') ? 'out-of-sync' : 'in-sync' });
    });
    const s = step('check', r.post, ['d0', 'd1']);
    expect(await s.before('d0', gate())).toEqual({ sync: { mode: 'check', result: 'in-sync' } });
    expect(r.sent.map((x) => x.path)).toEqual([GROUP_PATH, '/restconf/data/tailf-ncs:devices/device=d0/check-sync']);
    // A device asked on its own that the orchestrator does not have the action for: graded, with a note.
    const absent = relay((path) => (path === GROUP_PATH ? ok({ 'sync-result': [] }) : status(404)));
    expect(await step('check', absent.post, ['x']).before('x', gate())).toMatchObject({
      sync: { result: 'not-checked', note: expect.stringContaining('404') },
    });
  });

  it("makes a timeout the device's failure and fails the chunk on a fault of ours before NSO answered", async () => {
    const timedOut = relay(() => new GatewayTimeout('The orchestrator did not answer within 10 s.'));
    expect(await step('check', timedOut.post).before('d0', gate())).toMatchObject({ failure: { kind: 'timeout' } });
    const ours = relay(() => new ServiceUnavailable('The secrets store is unavailable.'));
    await expect(step('check', ours.post).before('d0', gate())).rejects.toBeInstanceOf(ServiceUnavailable);
    const crash = relay(() => new Error('socket hang up before sending'));
    await expect(step('check', crash.post).before('d0', gate())).rejects.toThrow('socket hang up');
  });
});

describe("NSO's compare-config diff in a report", () => {
  const shown = (diff: string) => shownDiff(diff).diff;

  it('masks every line of a block named like a secret, keeping markers, indentation and braces (NSO CLI, brace-nested)', () => {
    const diff = [
      ' devices {',
      '     device ce0 {',
      '         config {',
      '             ios:crypto {',
      '                 isakmp {',
      '-                    key mykey123 address 1.1.1.1;',
      '+                    key {',
      '+                        name mykey456;',
      '+                    }',
      '                 }',
      '                 pki {',
      '                     certificate chain TP {',
      '+                        certificate ca 01;',
      '                     }',
      '                 }',
      '             }',
      '             ios:username admin {',
      '-                password {',
      '-                    enc-type 0;',
      '-                    value hunter2;',
      '-                }',
      '             }',
      '             ios:snmp-server {',
      '-                community private {',
      '-                    RW;',
      '-                }',
      '+                host 10.0.0.1 public {',
      '+                    version 2c;',
      '+                }',
      '             }',
      '         }',
      '     }',
      ' }',
    ].join('\n');
    const out = shown(diff);
    for (const secret of ['mykey123', 'mykey456', 'hunter2', 'private', 'public', 'RW;']) expect(out).not.toContain(secret);
    expect(out).toContain(['+                    key {', '+                        [redacted];', '+                    }'].join('\n'));
    expect(out).toContain(
      ['-                password {', '-                    [redacted];', '-                    [redacted];', '-                }'].join('\n'),
    );
    expect(out).toContain('-                community [redacted] {\n-                    [redacted];\n-                }');
    expect(out).toContain('+                host 10.0.0.1 [redacted] {\n+                    version 2c;\n+                }');
    // What names no secret stays readable.
    for (const kept of ['             ios:username admin {', '+                        certificate ca 01;', '                     certificate chain TP {'])
      expect(out).toContain(kept);
    expect(out.split('\n')).toHaveLength(diff.split('\n').length);
  });

  it('masks Junos-style blocks and IOS-style indented blocks closed by !', () => {
    const junos =
      ' snmp {\n-    community OldComm {\n-        authorization read-only;\n-        clients {\n-            10.0.0.0/8;\n-        }\n-    }\n+    community NewComm {\n+        authorization read-write;\n+    }\n }';
    const junosOut = shown(junos);
    expect(junosOut).not.toMatch(/OldComm|NewComm|10\.0\.0\.0/);
    expect(junosOut).toContain('-    community [redacted] {\n-        [redacted];\n-        [redacted] {\n-            [redacted];\n-        }\n-    }');
    const ios = [
      ' key chain OSPF',
      '  key 1',
      '-  key-string 7 110A1016141D5A5E57',
      '+  key-string 7 0822455D0A16',
      '   cryptographic-algorithm hmac-sha-256',
      '  !',
      ' !',
      ' interface GigabitEthernet0/1',
      '+ description uplink',
      ' !',
    ].join('\n');
    const iosOut = shown(ios);
    expect(iosOut).not.toMatch(/110A1016141D5A5E57|0822455D0A16|hmac-sha-256/);
    expect(iosOut.split('\n')).toEqual([
      ' key [redacted]',
      '  [redacted]',
      '-  [redacted]',
      '+  [redacted]',
      '   [redacted]',
      '  !',
      ' !',
      ' interface GigabitEthernet0/1',
      '+ description uplink',
      ' !',
    ]);
  });

  it('hides every CLI secret of the corpus in a diff of it, added, removed or unchanged, at any depth', () => {
    const cliEntries = SECRET_CORPUS.filter((entry) => entry.form === 'cli');
    expect(cliEntries.length).toBeGreaterThan(20);
    for (const entry of cliEntries) {
      const lines = excerptOf(entry, entry.secret).split('\n');
      for (const marker of ['+', '-', ' '])
        for (const indent of ['', '    ']) {
          const out = shown(['  devices {', ...lines.map((line) => `${marker}${indent}${line}`), ' }'].join('\n'));
          expect(out, `${entry.platform}: ${entry.template}`).not.toContain(entry.secret);
        }
    }
  });
});

describe('sync sync-from', () => {
  it('has NSO take the device configuration first, in groups, and reports a refusal as the device failure', async () => {
    const r = relay(grouped((d) => (d === 'd1' ? { result: false, info: 'Failed to connect to device d1' } : { result: true })));
    const s = step('sync-from', r.post);
    expect(await s.before('d0', gate())).toEqual({ sync: { mode: 'sync-from', result: 'synced' } });
    expect(r.sent[0]!.path).toBe('/restconf/data/tailf-ncs:devices/sync-from');
    expect(await s.before('d1', gate())).toMatchObject({ failure: { kind: 'sync-failed', reason: expect.stringContaining('Failed to connect') } });
  });

  it('needs the relay POST', () => {
    expect(() => syncStep('sync-from', target, [], undefined)).toThrow('needs the relay');
  });
});

describe('a report after the sync step', () => {
  const deps = (sync: SyncStep): CheckDeps => ({
    relayGet: async () => [{ result: '200', data: { 'tailf-ncs:config': { x: 1 } } }] as RestActionResult[],
    evaluate: (_c, _v, rules) => rules.map((r) => ({ id: r.id, path: r.path, mode: r.mode, severity: r.severity, status: 'pass' as const, message: 'ok' })),
    gate: gate(),
    now: () => new Date('2026-11-27T10:00:00.000Z'),
    sync,
  });
  const device = { device: 'd0', node: 'base' };

  it('of an out-of-sync device: grade out-of-sync, the diff, no score, no rule evaluated', async () => {
    const report = await checkDevice(device, target, deps({ before: async () => ({ sync: { mode: 'check', result: 'out-of-sync' }, diff: '+ x\n' }) }));
    expect(report).toEqual({
      batchId: target.batchId,
      device: 'd0',
      treeId: target.treeId,
      version: 'v1',
      node: 'base',
      sync: { mode: 'check', result: 'out-of-sync' },
      grade: 'out-of-sync',
      totals: { errors: 0, warnings: 0, infos: 0, passes: 0 },
      issues: [],
      diff: '+ x\n',
      checkedAt: '2026-11-27T10:00:00.000Z',
    });
  });

  it('of a device in sync: graded, and says how sync was checked; of a failed action: grade error with its reason', async () => {
    const graded = await checkDevice(device, target, deps({ before: async () => ({ sync: { mode: 'sync-from', result: 'synced' } }) }));
    expect(graded).toMatchObject({ grade: 'pass', score: 100, sync: { mode: 'sync-from', result: 'synced' } });
    const failed = await checkDevice(
      device,
      target,
      deps({ before: async () => ({ sync: { mode: 'check', result: 'not-checked' }, failure: { kind: 'timeout', reason: 'no answer' } }) }),
    );
    expect(failed).toMatchObject({ grade: 'error', reason: 'no answer', sync: { result: 'not-checked' } });
    expect(failed).not.toHaveProperty('score');
  });
});
