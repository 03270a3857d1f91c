/**
 * Configuration diffs (functions/configs/diff.ts): the JSON Patch and where fast-json-patch needs
 * help, the unified diff's shape, the edit limit, the format choice, and masking of secrets in
 * both forms (the corpus of real secret forms included).
 */
import { describe, expect, it } from 'vitest';
import {
  configDiff,
  configPatch,
  DIFF_MEDIA_TYPES,
  DiffTooLarge,
  diffFormatOf,
  MAX_UNIFIED_DIFF_LINES,
  MAX_UNIFIED_EDIT_LINES,
  maskedConfigPatch,
  unifiedConfigDiff,
} from '../../functions/configs/diff.js';
import { REDACTED } from '../../functions/platform/redaction.js';
import type { JsonValue } from '../../functions/trees/config-model.js';
import { excerptOf, SECRET_CORPUS } from '../support/secret-corpus.js';

const LABELS = { against: { name: 'configs/c-old', header: '2026-11-01T10:00:00.000Z' }, config: { name: 'configs/c-new' } };

/** The `-` and `+` lines of a unified diff (its `---`/`+++` headers left out). */
const changedLines = (diff: string): string[] => diff.split('\n').filter((line) => /^[-+]/.test(line) && !/^(?:---|\+\+\+) /.test(line));
const hunkCount = (diff: string): number => diff.split('\n').filter((line) => line.startsWith('@@ ')).length;

const ROUTER: JsonValue = {
  hostname: 'r1',
  interface: { GigabitEthernet: [{ name: '0/1', description: 'uplink', mtu: 1500 }] },
  'ntp-server': ['10.0.0.1'],
};

describe('configPatch', () => {
  it('is empty for equal configurations, however their members are ordered', () => {
    expect(configPatch(ROUTER, structuredClone(ROUTER))).toEqual([]);
    expect(configPatch({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toEqual([]);
  });

  it('names each changed leaf by its RFC 6901 pointer, escaping `/` and `~`', () => {
    expect(configPatch({ 'a/b': 1, 'c~d': 2, '~1': 3, '': 4 }, { 'a/b': 9, 'c~d': 2, '~1': 8, '': 7 })).toEqual(
      expect.arrayContaining([
        { op: 'replace', path: '/a~1b', value: 9 },
        { op: 'replace', path: '/~01', value: 8 },
        { op: 'replace', path: '/', value: 7 },
      ]),
    );
  });

  it('replaces the whole document when the roots are not both objects or both arrays (fast-json-patch gives [] for two scalars)', () => {
    expect(configPatch(1, 2)).toEqual([{ op: 'replace', path: '', value: 2 }]);
    expect(configPatch('a', 'a')).toEqual([]);
    expect(configPatch({ a: 1 }, [1])).toEqual([{ op: 'replace', path: '', value: [1] }]);
    expect(configPatch(null, { a: 1 })).toEqual([{ op: 'replace', path: '', value: { a: 1 } }]);
  });

  it('writes `__proto__` and `constructor` members as members, polluting no prototype', () => {
    const against = JSON.parse('{"a":1}') as JsonValue;
    const config = JSON.parse('{"a":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as JsonValue;
    expect(configPatch(against, config)).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/__proto__', value: { polluted: true } },
        { op: 'add', path: '/constructor', value: { prototype: { polluted: true } } },
      ]),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('compares arrays entry by entry', () => {
    expect(configPatch({ l: [1, 2] }, { l: [1, 2, 3] })).toEqual([{ op: 'add', path: '/l/2', value: 3 }]);
    expect(configPatch({ l: [1, 2, 3] }, { l: [1] })).toEqual([
      { op: 'remove', path: '/l/2' },
      { op: 'remove', path: '/l/1' },
    ]);
  });
});

describe('unifiedConfigDiff', () => {
  it('has the two headers naming both configurations and no hunk for equal configurations', () => {
    const diff = unifiedConfigDiff(ROUTER, structuredClone(ROUTER), LABELS);
    expect(diff).toBe('--- configs/c-old\t2026-11-01T10:00:00.000Z\n+++ configs/c-new\n');
    expect(hunkCount(unifiedConfigDiff({ b: 1, a: [1, { y: 2, x: 1 }] }, { a: [1, { x: 1, y: 2 }], b: 1 }, LABELS))).toBe(0);
  });

  it('shows a changed leaf as one `-` and one `+` line, with three lines of context', () => {
    const changed = structuredClone(ROUTER) as { hostname: string };
    changed.hostname = 'r2';
    const diff = unifiedConfigDiff(ROUTER, changed, LABELS);
    expect(changedLines(diff)).toEqual(['-  "hostname": "r1",', '+  "hostname": "r2",']);
    expect(hunkCount(diff)).toBe(1);
    expect(diff).toContain(
      ['@@ -1,5 +1,5 @@', ' {', '-  "hostname": "r1",', '+  "hostname": "r2",', '   "interface": {', '     "GigabitEthernet": [', '       {', ''].join('\n'),
    );
  });

  it('prints each configuration as JSON.stringify(…, null, 2) of its canonical member order', () => {
    const diff = unifiedConfigDiff({}, { b: [1, {}], a: { d: [], c: 'x' } }, LABELS);
    const added = changedLines(diff)
      .filter((line) => line.startsWith('+'))
      .map((line) => line.slice(1));
    expect(added.join('\n')).toBe(JSON.stringify({ a: { c: 'x', d: [] }, b: [1, {}] }, null, 2));
  });

  it('refuses with 422 past the edit limit, and the JSON Patch still answers', () => {
    const against = { l: Array.from({ length: 10 }, (_, i) => i) };
    const config = { l: Array.from({ length: 10 }, (_, i) => i + 100) };
    expect(() => unifiedConfigDiff(against, config, LABELS, 5)).toThrow(DiffTooLarge);
    const problem = (() => {
      try {
        unifiedConfigDiff(against, config, LABELS, 5);
      } catch (error) {
        return error as DiffTooLarge;
      }
      return undefined;
    })();
    expect(problem?.status).toBe(422);
    expect(problem?.toBody()).toMatchObject({ type: 'urn:netconfig:problem:diff-too-large', status: 422 });
    expect(problem?.detail).toContain('more than 5 lines');
    expect(new DiffTooLarge(`differ in more than ${MAX_UNIFIED_EDIT_LINES} lines`).detail).toContain('more than 2000 lines');
    expect(changedLines(unifiedConfigDiff(against, config, LABELS, 20))).toHaveLength(20);
    expect(configPatch(against, config)).toHaveLength(10);
  });
});

describe('the lines the unified diff compares', () => {
  // Each list entry is one line: the configurations below print as about `length` lines.
  const list = (length: number, changedAt: readonly number[] = []): JsonValue => ({
    l: Array.from({ length }, (_, i) => (changedAt.includes(i) ? i + 0.5 : i)),
  });

  it('sets the shared head and tail aside, so one change in a configuration past the bound still answers, numbered in the whole text', () => {
    const length = MAX_UNIFIED_DIFF_LINES;
    const middle = length / 2;
    const diff = unifiedConfigDiff(list(length), list(length, [middle]), LABELS);
    // Line 1 is `{`, line 2 `"l": [`, so entry i is on line i + 3; the hunk starts 3 lines above it.
    expect(diff).toContain(`@@ -${middle} ,7 +${middle} ,7 @@`.replaceAll(' ,', ','));
    expect(changedLines(diff)).toEqual([`-    ${middle},`, `+    ${middle + 0.5},`]);
  });

  it('refuses with 422 once the lines between the first and the last change pass the bound, whatever the number of changes', () => {
    // Each side prints as length + 4 lines, all of them between the first and the last change: 2 past the bound.
    const length = MAX_UNIFIED_DIFF_LINES / 2 - 3;
    const problem = (() => {
      try {
        unifiedConfigDiff(list(length), list(length, [0, length - 1]), LABELS);
      } catch (error) {
        return error as DiffTooLarge;
      }
      return undefined;
    })();
    expect(problem).toBeInstanceOf(DiffTooLarge);
    expect(problem?.toBody()).toMatchObject({ type: 'urn:netconfig:problem:diff-too-large', status: 422 });
    expect(problem?.detail).toContain(`span ${2 * (length + 4)} lines`);
    // One line fewer on each side (the bound exactly), and the same two changes answer.
    expect(changedLines(unifiedConfigDiff(list(length - 1), list(length - 1, [0, length - 2]), LABELS))).toHaveLength(4);
  });
});

describe('the format a request asks for', () => {
  it('is the JSON Patch by default or by name, the unified diff for `unified`, and nothing else', () => {
    expect(diffFormatOf(undefined)).toBe('json-patch');
    expect(diffFormatOf('json-patch')).toBe('json-patch');
    expect(diffFormatOf('unified')).toBe('unified');
    expect(diffFormatOf('Unified')).toBeUndefined();
    expect(diffFormatOf('')).toBeUndefined();
  });

  it('answers each format with its media type and masked body', () => {
    const against = { hostname: 'r1', password: 'old-Pw-1' };
    const config = { hostname: 'r1', password: 'new-Pw-2' };
    const patch = configDiff(against, config, 'json-patch', LABELS);
    expect(patch.contentType).toBe('application/json-patch+json');
    expect(JSON.parse(patch.body)).toEqual([{ op: 'replace', path: '/password', value: REDACTED }]);
    const unified = configDiff(against, config, 'unified', LABELS);
    expect(unified.contentType).toBe(DIFF_MEDIA_TYPES.unified);
    expect(changedLines(unified.body)).toEqual([`-  "password": "${REDACTED}"`, `+  "password": "${REDACTED}"`]);
  });
});

describe('masking', () => {
  const against: JsonValue = {
    hostname: 'r1',
    enable: { secret: { type: '9', secret: '$9$old$abcdefgh' } },
    snmp: { community: [{ name: 'Comm-Old-1', ro: true }] },
    users: [{ name: 'ops', password: 'Old-Pass-1' }],
    banner: 'hello',
  };
  const config: JsonValue = {
    hostname: 'r1',
    enable: { secret: { type: '9', secret: '$9$new$ijklmnop' } },
    snmp: { community: [{ name: 'Comm-New-2', ro: true }] },
    users: [{ name: 'ops', password: 'New-Pass-2' }],
    banner: 'hello',
    'tacacs-key': { value: 'Tac-New-3' },
  };
  const secrets = ['$9$old$abcdefgh', '$9$new$ijklmnop', 'Comm-Old-1', 'Comm-New-2', 'Old-Pass-1', 'New-Pass-2', 'Tac-New-3'];

  it('keeps an operation for each changed secret, its value masked, indexes kept and member names below the secret masked', () => {
    expect(maskedConfigPatch(against, config)).toEqual(
      expect.arrayContaining([
        { op: 'replace', path: `/enable/secret/${REDACTED}`, value: REDACTED },
        { op: 'replace', path: `/snmp/community/0/${REDACTED}`, value: REDACTED },
        { op: 'replace', path: '/users/0/password', value: REDACTED },
        { op: 'add', path: '/tacacs-key', value: REDACTED },
      ]),
    );
    expect(maskedConfigPatch(against, config)).toHaveLength(configPatch(against, config).length);
  });

  it('masks secrets inside an added or replaced subtree and in member names', () => {
    const patch = maskedConfigPatch({ a: {} }, { a: { user: { name: 'u', password: 'Deep-Pass-9' } }, $9$keyname$x: 1 } as JsonValue);
    expect(patch).toEqual(
      expect.arrayContaining([
        { op: 'add', path: '/a/user', value: { name: 'u', password: REDACTED } },
        { op: 'add', path: `/${REDACTED}`, value: 1 },
      ]),
    );
    expect(JSON.stringify(patch)).not.toContain('Deep-Pass-9');
    expect(JSON.stringify(patch)).not.toContain('keyname');
  });

  it('shows a changed secret in the unified diff as a `-` and a `+` line reading the marker', () => {
    const diff = unifiedConfigDiff(against, config, LABELS);
    for (const secret of secrets) expect(diff).not.toContain(secret);
    const lines = changedLines(diff);
    expect(lines).toContain(`-    "secret": "${REDACTED}"`);
    expect(lines).toContain(`+    "secret": "${REDACTED}"`);
    expect(lines).toContain(`-    "community": "${REDACTED}"`);
    expect(lines).toContain(`+      "password": "${REDACTED}"`);
    expect(lines).toContain(`+  "tacacs-key": "${REDACTED}",`);
    // Unchanged lines stay out of the changes.
    expect(lines.some((line) => line.includes('hostname'))).toBe(false);
  });

  it('shows no change where only the real values of two members masked alike agree (the line compares real values)', () => {
    // The same masked text on both sides, different real names: still a change.
    const diff = unifiedConfigDiff({ $1$aaaa$x: 1 } as JsonValue, { $1$bbbb$y: 1 } as JsonValue, LABELS);
    expect(changedLines(diff)).toEqual([`-  "${REDACTED}": 1`, `+  "${REDACTED}": 1`]);
  });

  describe.each(SECRET_CORPUS.map((entry) => [`${entry.platform}: ${entry.template.slice(0, 48)}`, entry] as const))('corpus %s', (_, entry) => {
    /** The excerpt as a configuration holds it: NSO JSON parsed, any other text as a string member. */
    const configWith = (secret: string): JsonValue =>
      entry.platform === 'nso-json' && entry.form === 'json'
        ? (JSON.parse(excerptOf(entry, secret)) as JsonValue)
        : { hostname: 'r1', cli: excerptOf(entry, secret) };
    const replacement = `${entry.secret.slice(0, 4)}Zq7Xw${entry.secret.slice(4)}`;
    const spellings = (secret: string) => [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];

    it('shows neither the old nor the new secret, and still shows the change', () => {
      const before = configWith(entry.secret);
      const after = configWith(replacement);
      const patch = JSON.stringify(maskedConfigPatch(before, after));
      const diff = unifiedConfigDiff(before, after, LABELS);
      for (const text of [patch, diff]) for (const spelling of [...spellings(entry.secret), ...spellings(replacement)]) expect(text).not.toContain(spelling);
      expect(configPatch(before, after).length).toBeGreaterThan(0);
      expect(patch).toContain(REDACTED);
      expect(changedLines(diff).length).toBeGreaterThanOrEqual(2);
      expect(changedLines(diff).every((line) => line.includes(REDACTED))).toBe(true);
    });
  });
});
