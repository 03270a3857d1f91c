/**
 * Reports mask device secrets (functions/compliance/shown.ts): a device checked with the real
 * evaluator against rules that fail at, above, below and beside its secrets, in every mode and
 * with excerpts cut short, yields a report in which no secret appears, in `expected`,
 * `actual` or `message`, while the grade is the one the real values give and what is no secret
 * is shown as it is.
 */
import { describe, expect, it } from 'vitest';
import { checkDevice } from '../../functions/compliance/check.js';
import type { PlanRule, ReportIssue } from '../../functions/compliance/model.js';
import { shownIssue } from '../../functions/compliance/shown.js';
import { holdsSecret } from '../../functions/platform/redaction.js';
import { evaluateRules } from '../../functions/trees/rules.js';

const SECRETS = {
  enable: '$9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM',
  admin: '$1$mERr$hx5rVt7rPNoS4wqbXKX7m0',
  ops: 'OpsPlain-Pass1',
  community: 'S3cretCommunity',
  vty: '0822455D0A16544541',
  root: '$6$Xo0Q$2vLw0Cq1R5GZUu3M1eVbN0wHkYtJpLmQrSs',
  banner: '$1$bAnr$Qq0vS9wYy1x2Z3c4d5e6f.',
  rule: 'RuleWantsThis-7',
  long: 'L0ngDeviceSecret-'.repeat(200),
  blob: 'BlobPassword-33',
};

const config = {
  hostname: 'r1',
  'tailf-ned-cisco-ios:enable': { secret: { type: '9', secret: SECRETS.enable } },
  'tailf-ned-cisco-ios:username': [
    { name: 'admin', privilege: 15, secret: { type: '5', secret: SECRETS.admin } },
    { name: 'ops', password: { enc: '0', password: SECRETS.ops } },
  ],
  'tailf-ned-cisco-ios:snmp-server': { community: [{ name: SECRETS.community, RO: [null] }] },
  'tailf-ned-cisco-ios:line': { vty: [{ first: 0, last: 4, password: { type: '7', secret: SECRETS.vty } }] },
  'junos:system': { 'root-authentication': { 'encrypted-password': SECRETS.root } },
  'tailf-ned-cisco-ios:banner': { motd: `call the NOC; enable secret 5 ${SECRETS.banner}` },
  long: { secret: SECRETS.long },
  big: { password: SECRETS.blob, filler: 'f'.repeat(3000) },
};

const rule = (id: string, path: string, mode: PlanRule['mode'], value?: PlanRule['value']): PlanRule => ({
  id,
  node: 'base',
  path,
  mode,
  severity: 'error',
  ...(value !== undefined ? { value } : {}),
});

const RULES: readonly PlanRule[] = [
  rule('enable-exact', '/tailf-ned-cisco-ios:enable/secret/secret', 'exact', SECRETS.rule),
  rule('enable-type', '/tailf-ned-cisco-ios:enable', 'required', { secret: { type: '8' } }),
  rule('users', '/tailf-ned-cisco-ios:username', 'exact', [{ name: 'admin' }]),
  rule('no-community', '/tailf-ned-cisco-ios:snmp-server/community', 'disallowed'),
  rule('vty-required', '/tailf-ned-cisco-ios:line/vty', 'required', [{ password: { secret: SECRETS.rule } }]),
  rule('root-exact', '/junos:system', 'exact', {}),
  rule('banner', '/tailf-ned-cisco-ios:banner/motd', 'exact', 'authorised access only'),
  rule('long', '/long/secret', 'exact', 'short'),
  rule('big', '/big', 'exact', []),
  rule('hostname', '/hostname', 'required', 'r2'),
  // Passes on the real values: masking is for what is shown, never for what is graded.
  rule('enable-real', '/tailf-ned-cisco-ios:enable/secret/secret', 'exact', SECRETS.enable),
  rule('community-real', '/tailf-ned-cisco-ios:snmp-server/community', 'required', [{ name: SECRETS.community }]),
];

const check = (rules: readonly PlanRule[] = RULES) =>
  checkDevice(
    { device: 'edge-1', node: 'base' },
    {
      batchId: 'a'.repeat(24),
      treeId: 'b'.repeat(24),
      version: 'v1',
      adapterId: 'lab',
      plan: { variables: {}, rulesByNode: { base: rules }, nodes: ['base'] },
    },
    {
      relayGet: async () => [{ result: '200', data: { 'tailf-ncs:config': config } }] as never,
      evaluate: evaluateRules,
      gate: { run: (fetch) => fetch(), pause: () => undefined },
      now: () => new Date('2026-11-25T10:00:00.000Z'),
    },
  );

describe('a report of a device with secrets', () => {
  it('holds none of them, in any field of any issue', async () => {
    const report = await check();
    const text = JSON.stringify(report);
    for (const [name, secret] of Object.entries(SECRETS)) {
      expect(holdsSecret(text, [secret]), name).toBe(false);
      // A long secret cut short in an excerpt: not even its start.
      expect(text, name).not.toContain(secret.slice(0, 12));
    }
  });

  it('would hold them without the masking (the check can fail)', () => {
    const verdicts = evaluateRules(config, {}, RULES);
    const raw = JSON.stringify(verdicts);
    for (const name of ['enable', 'admin', 'ops', 'community', 'vty', 'root', 'banner', 'rule', 'blob'] as const)
      expect(raw, name).toContain(SECRETS[name].slice(0, 12));
  });

  it('is graded on the real values: the rules the real secrets satisfy pass', async () => {
    const report = await check();
    expect(report.issues.map((i) => i.ruleId)).toEqual([
      'enable-exact',
      'enable-type',
      'users',
      'no-community',
      'vty-required',
      'root-exact',
      'banner',
      'long',
      'big',
      'hostname',
    ]);
    expect(report.totals).toEqual({ errors: 10, warnings: 0, infos: 0, passes: 2 });
    expect(report.score).toBe(16.7);
  });

  it('shows what is no secret as it is, and the masked values as [redacted]', async () => {
    const report = await check();
    const byId = (id: string) => report.issues.find((i) => i.ruleId === id)!;
    expect(byId('hostname')).toMatchObject({ expected: 'r2', actual: 'r1', message: 'expected the string "r2", found the string "r1"' });
    expect(byId('enable-exact')).toMatchObject({
      at: '/tailf-ned-cisco-ios:enable/secret/secret',
      expected: '[redacted]',
      actual: '[redacted]',
      message: 'expected the string "[redacted]", found the string "[redacted]"',
    });
    expect(byId('root-exact')).toMatchObject({ at: '/junos:system/root-authentication', actual: { 'encrypted-password': '[redacted]' } });
    expect(byId('banner')).toMatchObject({ expected: 'authorised access only', actual: 'call the NOC; enable secret [redacted]' });
    expect(byId('banner').message).toBe('expected the string "authorised access only", found the string "call the NOC; enable secret [redacted]"');
    expect(byId('long')).toMatchObject({
      expected: '[redacted]',
      actual: '[redacted]',
      truncated: ['actual'],
      message: 'expected the string "[redacted]", found the string "[redacted]"',
    });
    expect(byId('big').truncated).toEqual(['actual']);
    expect(byId('big').actual).toMatch(/^\{"password":"\[redacted\]","filler":"fff/);
  });

  it('masks once: a shown issue shown again is the same', async () => {
    const report = await check();
    for (const issue of report.issues) expect(shownIssue(issue)).toEqual(issue);
  });

  it('returns an issue with nothing to mask as it is', () => {
    const issue: ReportIssue = {
      ruleId: 'r',
      node: 'base',
      path: '/mtu',
      severity: 'info',
      mode: 'exact',
      message: 'expected the number 1500, found the number 9000',
      at: '/mtu',
      expected: 1500,
      actual: 9000,
    };
    expect(shownIssue(issue)).toEqual(issue);
  });

  it('masks a number at a secret path in the message too', () => {
    const issue: ReportIssue = {
      ruleId: 'r',
      node: 'base',
      path: '/ntp/authentication-key',
      severity: 'info',
      mode: 'exact',
      message: 'expected the number 424242, found the number 171717',
      at: '/ntp/authentication-key',
      expected: 424242,
      actual: 171717,
    };
    expect(shownIssue(issue)).toMatchObject({
      expected: '[redacted]',
      actual: '[redacted]',
      message: 'expected the number [redacted], found the number [redacted]',
    });
  });
});

/** Rules over several places whose failing matches quote secrets. */
const WILDCARD_RULES: readonly PlanRule[] = [
  // ops' plain password fails the pattern; admin has none there.
  { ...rule('passwords', '/tailf-ned-cisco-ios:username/*/password/password', 'required'), pattern: '^\\$9\\$' },
  // The enable secret holds, and match none lists it.
  { ...rule('enable-none', '/tailf-ned-cisco-ios:enable/*/secret', 'required'), match: 'none', pattern: '.' },
  // A long secret in a listed failure: cut in the excerpt, not quoted in the message.
  { ...rule('long-any', '/long/*', 'exact'), oneOf: ['short'] },
  { ...rule('communities', '/tailf-ned-cisco-ios:snmp-server/community/*/name', 'required'), oneOf: ['public'] },
];

describe('a report listing failing matches of a device with secrets', () => {
  it('lists them by concrete pointer with none of the secrets, and carries the counts', async () => {
    const report = await check(WILDCARD_RULES);
    expect(report.issues.map((i) => [i.ruleId, i.matches, i.failures?.map((f) => f.at)])).toEqual([
      ['passwords', 2, ['/tailf-ned-cisco-ios:username/0/password/password', '/tailf-ned-cisco-ios:username/1/password/password']],
      ['enable-none', 1, ['/tailf-ned-cisco-ios:enable/secret/secret']],
      ['long-any', 1, ['/long/secret']],
      ['communities', 1, ['/tailf-ned-cisco-ios:snmp-server/community/0/name']],
    ]);
    const text = JSON.stringify(report);
    for (const [name, secret] of Object.entries(SECRETS)) {
      expect(holdsSecret(text, [secret]), name).toBe(false);
      expect(text, name).not.toContain(secret.slice(0, 12));
    }
    expect(report.issues[1]?.failures?.[0]).toMatchObject({ actual: '[redacted]' });
  });

  it('would hold them without the masking (the check can fail)', () => {
    const raw = JSON.stringify(evaluateRules(config, {}, WILDCARD_RULES));
    for (const name of ['ops', 'enable', 'community', 'long'] as const) expect(raw, name).toContain(SECRETS[name].slice(0, 12));
  });
});
