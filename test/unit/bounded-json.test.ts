/**
 * The one door external JSON comes in by (functions/platform/bounded-json.ts): the depth bound at
 * its edges, at depths no recursive walk survives, against a recursive count, and that no
 * function parses JSON any other way.
 */
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonTooDeep, MAX_JSON_DEPTH, jsonNestsDeeperThan, parseJson } from '../../functions/platform/bounded-json.js';
import { PROJECT_ROOT } from '../../infra/paths.js';

/** `depth` arrays inside each other, around `inner`. */
const nested = (depth: number, inner = ''): string => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

const depthOf = (value: unknown): number =>
  value === null || typeof value !== 'object' ? 0 : 1 + Math.max(0, ...(Array.isArray(value) ? value : Object.values(value)).map(depthOf));

describe('parseJson', () => {
  it('accepts JSON nested exactly to the limit and refuses one level more', () => {
    expect(depthOf(parseJson(nested(MAX_JSON_DEPTH)))).toBe(MAX_JSON_DEPTH);
    expect(() => parseJson(nested(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeep);
    const objects = (depth: number): string => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
    expect(depthOf(parseJson(objects(MAX_JSON_DEPTH)))).toBe(MAX_JSON_DEPTH);
    expect(() => parseJson(objects(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeep);
  });

  it('refuses a text nested a million levels with JsonTooDeep, never a RangeError', () => {
    const error = (() => {
      try {
        parseJson(nested(1_000_000, '{"a":1}'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(JsonTooDeep);
    expect((error as JsonTooDeep).maxDepth).toBe(MAX_JSON_DEPTH);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: `${'['.repeat(500)}\\"{${'{'.repeat(500)}`, t: ['"[', '\\'] });
    expect(parseJson(text, 2)).toEqual(JSON.parse(text));
  });

  it('leaves text that is not JSON to JSON.parse (SyntaxError)', () => {
    expect(() => parseJson('{"a": [1, 2')).toThrow(SyntaxError);
    expect(() => parseJson('')).toThrow(SyntaxError);
  });

  it('agrees with JSON.parse and a recursive depth count on any JSON text', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 10 }), fc.integer({ min: 0, max: 11 }), (value, max) => {
        const text = JSON.stringify(value);
        expect(jsonNestsDeeperThan(text, max)).toBe(depthOf(value) > max);
        if (depthOf(value) > max) expect(() => parseJson(text, max)).toThrow(JsonTooDeep);
        else expect(parseJson(text, max)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('agrees on pretty-printed text with strings full of brackets, quotes and backslashes', () => {
    const noisy = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ' ', '\n') });
    fc.assert(
      fc.property(
        fc.letrec((tie) => ({
          v: fc.oneof({ depthSize: 'small' }, noisy, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(noisy, tie('v'), { maxKeys: 3 })),
        })).v,
        (value) => {
          const text = JSON.stringify(value, null, 2);
          const depth = depthOf(value);
          expect(jsonNestsDeeperThan(text, depth)).toBe(false);
          if (depth > 0) expect(jsonNestsDeeperThan(text, depth - 1)).toBe(true);
        },
      ),
    );
  });
});

/**
 * Functions that read back data the service wrote itself (after it came in through `parseJson`)
 * and may use `JSON.parse` directly. Anything else parsing JSON must go through the door.
 */
const READS_OWN_DATA = new Set([
  'functions/platform/bounded-json.ts', // the door itself
  'functions/trees/version-service.ts', // a copy of a stored version's content
  'functions/trees/version-store.ts', // a stored version's body
  'functions/compliance/history-store.ts', // stored device states
  'functions/compliance/store.ts', // stored reports
  'functions/compliance/plan.ts', // stored plans and chunks
  'functions/authorizer/usage.ts', // the usage-plan mapping the stack writes into the authorizer's environment
  'functions/configs/diff.ts', // the JSON text of the lines it rendered itself from a stored configuration
  'functions/remediation/store.ts', // a stored run's list keys, a device's stored patch and rules
  'functions/console/service.ts', // the console build's manifest, shipped in the function's bundle
]);

const sources = (dir: string): string[] =>
  readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });

describe('JSON from outside', () => {
  it('enters the functions only through parseJson', () => {
    const parsers = sources('functions').filter((file) => /JSON\.parse\(|\.json\(\)/.test(readFileSync(path.join(PROJECT_ROOT, file), 'utf8')));
    expect(new Set(parsers)).toEqual(READS_OWN_DATA);
  });
});
