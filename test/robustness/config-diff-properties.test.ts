/**
 * Properties of configuration diffs (functions/configs/diff.ts) over generated configurations:
 * objects, lists of keyed entries, member names and strings with `/`, `~`, unicode and the names
 * that touch prototypes, numbers. The patch is applied by an RFC 6902 applier written here from
 * the RFC (own properties only, so `__proto__` is a member like any other), and by fast-json-patch
 * where no member is named `__proto__` (which it refuses to write).
 */
import { applyPatch as applyTextPatch, formatPatch, structuredPatch } from 'diff';
import fc from 'fast-check';
import { applyPatch } from 'fast-json-patch/commonjs/core.js';
import { describe, expect, it } from 'vitest';
import { configPatch, type JsonPatchOperation, maskedConfigPatch, unifiedConfigDiff } from '../../functions/configs/diff.js';
import { canonicalJson } from '../../functions/platform/canonical-json.js';
import { REDACTED, redact } from '../../functions/platform/redaction.js';
import type { JsonValue } from '../../functions/trees/config-model.js';

type Mutable = JsonValue[] | { [name: string]: JsonValue };

const NAMES = ['name', 'a/b', '~', '~1', '~0/~1', '', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'ĝrüße', '名前', '😀', 'mtu', '0', '-'];
const name = fc.oneof(fc.constantFrom(...NAMES), fc.string({ unit: 'grapheme', maxLength: 6 }));
const text = fc.oneof(fc.constantFrom('a/b', '~1', '~0', 'ü', '🚀', '', '"quoted"', 'line\nbreak'), fc.string({ unit: 'grapheme', maxLength: 10 }));
const scalar = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
  fc.boolean(),
  fc.constant(null),
);

/** An object built with own data properties (`Object.fromEntries`), so `__proto__` is a member, as `JSON.parse` makes it. */
const objectOf = (member: fc.Arbitrary<JsonValue>) =>
  fc.array(fc.tuple(name, member), { maxLength: 5 }).map((entries) => Object.fromEntries(entries) as JsonValue);

const { config } = fc.letrec<{ config: JsonValue; value: JsonValue; keyedList: JsonValue }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('config'), tie('keyedList'), fc.array(tie('value'), { maxLength: 4 })),
  config: objectOf(tie('value')),
  // NSO's lists: entries keyed by a `name` member.
  keyedList: fc
    .uniqueArray(fc.tuple(text, objectOf(tie('value'))), { selector: ([key]) => key, maxLength: 4 })
    .map((entries) => entries.map(([key, rest]) => ({ ...(rest as object), name: key }) as JsonValue)),
}));

/**
 * `base` changed at some places, as picked by `choices`: a member kept, replaced by the one of
 * `other`, removed, or added from `other`; so that two configurations share most of their tree.
 */
const blend = (base: JsonValue, other: JsonValue, choices: readonly number[]): JsonValue => {
  let at = 0;
  const next = (): number => choices[at++ % choices.length]!;
  const walk = (a: JsonValue, b: JsonValue): JsonValue => {
    if (a === null || typeof a !== 'object' || b === null || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return next() === 0 ? b : a;
    if (Array.isArray(a)) {
      const list = b as readonly JsonValue[];
      const length = [a.length, list.length, Math.max(0, a.length - 1)][next() % 3]!;
      return Array.from({ length }, (_, i) => (i < a.length ? (i < list.length ? walk(a[i]!, list[i]!) : a[i]!) : list[i]!));
    }
    const left = a as Record<string, JsonValue>;
    const right = b as Record<string, JsonValue>;
    const names = [...new Set([...Object.keys(left), ...Object.keys(right)])];
    const entries = names.flatMap((key): [string, JsonValue][] => {
      const choice = next();
      if (!Object.hasOwn(left, key)) return choice === 0 ? [] : [[key, right[key]!]];
      if (!Object.hasOwn(right, key)) return choice === 2 ? [] : [[key, left[key]!]];
      return choice === 2 ? [] : [[key, choice === 1 ? walk(left[key]!, right[key]!) : left[key]!]];
    });
    return Object.fromEntries(entries) as JsonValue;
  };
  return walk(base, other);
};

const pair = fc.oneof(
  fc.tuple(config, config),
  fc.tuple(config, config, fc.array(fc.nat(3), { minLength: 1, maxLength: 32 })).map(([a, b, choices]) => [a, blend(a, b, choices)] as const),
);

const copy = (value: JsonValue): JsonValue => JSON.parse(JSON.stringify(value)) as JsonValue;

/** RFC 6901 tokens. */
const tokensOf = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));

/** RFC 6902 `add`, `remove`, `replace` on own properties: the reference the library is checked against. */
const applyRfc6902 = (document: JsonValue, patch: readonly JsonPatchOperation[]): JsonValue => {
  let root = document;
  for (const operation of patch) {
    const tokens = tokensOf(operation.path);
    if (tokens.length === 0) {
      if (operation.op === 'remove') throw new Error('remove of the root');
      root = operation.value;
      continue;
    }
    let parent = root as Mutable;
    for (const token of tokens.slice(0, -1)) {
      if (!Object.hasOwn(parent, token)) throw new Error(`no ${operation.path}`);
      parent = (parent as Record<string, JsonValue>)[token] as Mutable;
    }
    const last = tokens.at(-1)!;
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (!/^(?:0|[1-9]\d*|-)$/.test(last) || index > parent.length) throw new Error(`bad index ${operation.path}`);
      if (operation.op === 'add') parent.splice(index, 0, operation.value);
      else if (operation.op === 'remove') parent.splice(index, 1);
      else parent[index] = operation.value;
    } else if (operation.op === 'remove') {
      if (!Object.hasOwn(parent, last)) throw new Error(`no ${operation.path}`);
      delete parent[last];
    } else {
      if (operation.op === 'replace' && !Object.hasOwn(parent, last)) throw new Error(`no ${operation.path}`);
      Object.defineProperty(parent, last, { value: operation.value, enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
};

const hasProtoMember = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && (Object.hasOwn(value, '__proto__') || Object.values(value).some(hasProtoMember));

describe('configPatch, for generated configurations', () => {
  it('turns a copy of `against` into `config` (RFC 6902 applier, and fast-json-patch where it may)', () => {
    fc.assert(
      fc.property(pair, ([against, config]) => {
        const patch = configPatch(against, config);
        expect(canonicalJson(applyRfc6902(copy(against), copy(patch as JsonValue) as unknown as JsonPatchOperation[]))).toBe(canonicalJson(config));
        if (!hasProtoMember(against) && !hasProtoMember(config)) {
          const applied = applyPatch(copy(against), copy(patch as JsonValue) as never, true, false).newDocument as JsonValue;
          expect(canonicalJson(applied)).toBe(canonicalJson(config));
        }
      }),
      { numRuns: 400 },
    );
    expect(({} as Record<string, unknown>).name).toBeUndefined();
  });

  it('is empty for equal configurations, and only for them', () => {
    fc.assert(
      fc.property(pair, ([against, config]) => {
        expect(configPatch(against, copy(against))).toEqual([]);
        expect(configPatch(against, config).length === 0).toBe(canonicalJson(against) === canonicalJson(config));
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * `JSON.stringify(value, null, 2)` with members sorted by name, written out here: an object
 * enumerates integer-like names (`"0"`) first whatever order they were added in.
 */
const prettyAt = (value: JsonValue, indent: string): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  const parts = Array.isArray(value)
    ? value.map((entry: JsonValue) => `${inner}${prettyAt(entry, inner)}`)
    : Object.keys(value)
        .sort()
        .map((key) => `${inner}${JSON.stringify(key)}: ${prettyAt((value as Record<string, JsonValue>)[key]!, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return parts.length === 0 ? `${open}${close}` : `${open}\n${parts.join(',\n')}\n${indent}${close}`;
};
const pretty = (value: JsonValue): string => `${prettyAt(value, '')}\n`;
const unmasked = (value: JsonValue): boolean => canonicalJson(redact(value, { maxDepth: 1000 })) === canonicalJson(value);

describe('unifiedConfigDiff, for generated configurations', () => {
  const labels = { against: { name: 'configs/a' }, config: { name: 'configs/b' } };

  it('has hunks exactly when the configurations differ, and patches one pretty-printed configuration into the other', () => {
    fc.assert(
      fc.property(pair, ([against, config]) => {
        const diff = unifiedConfigDiff(against, config, labels, Number.POSITIVE_INFINITY);
        expect(diff.includes('\n@@ ')).toBe(canonicalJson(against) !== canonicalJson(config));
        // Where masking changes nothing, the diff is an exact patch of one pretty text into the other.
        if (unmasked(against) && unmasked(config)) expect(applyTextPatch(pretty(against), diff)).toBe(pretty(config));
      }),
      { numRuns: 300 },
    );
  });

  it('is as short as the line diff of the whole pretty-printed texts, with full context: setting the shared head and tail aside loses nothing', () => {
    fc.assert(
      fc.property(pair, ([against, config]) => {
        fc.pre(unmasked(against) && unmasked(config));
        const diff = unifiedConfigDiff(against, config, labels, Number.POSITIVE_INFINITY);
        const whole = structuredPatch('configs/a', 'configs/b', pretty(against), pretty(config), undefined, undefined, { context: 3 });
        const expected = formatPatch(whole, { includeIndex: false, includeUnderline: false, includeFileHeaders: true });
        expect(changeCount(diff)).toBe(changeCount(expected));
        const oldLength = pretty(against).split('\n').length - 1;
        for (const hunk of hunksOf(diff)) {
          // Three lines of context, fewer only at the start or the end of the text.
          expect(hunk.leading === 3 || hunk.oldStart <= 1).toBe(true);
          expect(hunk.trailing === 3 || hunk.oldStart - 1 + hunk.oldLines >= oldLength).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

const changeCount = (diff: string): number => diff.split('\n').filter((line) => /^[-+]/.test(line) && !/^(?:---|\+\+\+) /.test(line)).length;

/** Each hunk of a unified diff: where it starts in the old text, its old length, and its leading and trailing context lines. */
const hunksOf = (diff: string) =>
  diff
    .split('\n@@ ')
    .slice(1)
    .map((text) => {
      const [header, ...lines] = text.replace(/\n$/, '').split('\n');
      const [, oldStart, oldLines] = /^-(\d+)(?:,(\d+))?/.exec(header!)!;
      const context = (ordered: string[]): number => ordered.findIndex((line) => !line.startsWith(' '));
      return {
        oldStart: Number(oldStart),
        oldLines: oldLines === undefined ? 1 : Number(oldLines),
        leading: context(lines),
        trailing: context([...lines].reverse()),
      };
    });

/** A secret nobody could mistake for anything else in a diff. */
const secretValue = fc.stringMatching(/^[A-Za-z0-9]{10,16}$/).map((s) => `Sx${s}`);
const SECRET_NAMES = ['password', 'secret', 'community', 'key', 'auth-key', 'ike-psk', 'api_token', 'encrypted-password'];

/** A configuration whose secret members hold values from `secrets` (as strings, inside objects or lists). */
const withSecrets = (secrets: readonly string[]) =>
  fc
    .tuple(config, fc.array(fc.tuple(fc.constantFrom(...SECRET_NAMES), fc.nat(secrets.length - 1), fc.nat(2)), { minLength: 1, maxLength: 6 }))
    .map(([base, placed]) => {
      const out: Record<string, JsonValue> = { ...(base as Record<string, JsonValue>) };
      placed.forEach(([secretName, index, shape], i) => {
        const value = secrets[index]!;
        const held: JsonValue = [value, { value }, [{ name: value }]][shape]!;
        out[`section-${i}`] = { [secretName]: held };
      });
      return out as JsonValue;
    });

describe('masking, for generated configurations', () => {
  it('never shows a secret value in a patch or a unified diff, and every changed secret still shows with the marker', () => {
    fc.assert(
      fc.property(
        fc
          .uniqueArray(secretValue, { minLength: 2, maxLength: 4 })
          .chain((secrets) => fc.tuple(fc.constant(secrets), withSecrets(secrets), withSecrets(secrets))),
        ([secrets, against, config]) => {
          const patch = JSON.stringify(maskedConfigPatch(against, config));
          const diff = unifiedConfigDiff(against, config, { against: { name: 'configs/a' }, config: { name: 'configs/b' } }, Number.POSITIVE_INFINITY);
          for (const secret of secrets) {
            expect(patch).not.toContain(secret);
            expect(diff).not.toContain(secret);
          }
          // Each operation that touches a secret is kept, its value the marker.
          const real = configPatch(against, config);
          const masked = JSON.parse(patch) as JsonPatchOperation[];
          expect(masked).toHaveLength(real.length);
          real.forEach((operation, i) => {
            const touchesSecret = secrets.some((secret) => JSON.stringify(operation).includes(secret));
            if (touchesSecret && operation.op !== 'remove') expect(JSON.stringify(masked[i])).toContain(REDACTED);
          });
          if (real.some((operation) => secrets.some((secret) => JSON.stringify(operation).includes(secret)))) {
            expect(diff.split('\n').some((line) => /^[-+] /.test(line) && line.includes(REDACTED))).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
