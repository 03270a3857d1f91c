/**
 * No test may skip itself. A suite that is skipped when a file it needs is missing (or a
 * condition turns false) reports green while testing nothing: it must fail instead, saying
 * what is missing. This scans every test source for the ways vitest offers to skip.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';

const TEST_ROOT = path.join(PROJECT_ROOT, 'test');

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.[cm]?[jt]s$/.test(entry.name) ? [full] : [];
  });

/**
 * `describe.skip`, `it.skipIf(…)`, `test.runIf(…)`, `.todo`, `.only`, `xit`/`xdescribe`, and a
 * test skipping itself at run time (`ctx.skip()`, `context.skip()`, `skip` taken from the context).
 */
const SKIPPING = [
  /\b(?:describe|suite|it|test|bench)(?:\.\w+)*\.(?:skip|skipIf|runIf|todo|only)\b/,
  /\bx(?:it|describe|test)\s*\(/,
  /\b(?:ctx|context|task)\.skip\s*\(/,
  /\{\s*skip\s*[,}]/,
];
/** This file, which names every pattern on purpose. */
const SELF = path.join(TEST_ROOT, 'unit', 'test-hygiene.test.ts');

const skippingLines = (text: string): string[] =>
  text.split('\n').flatMap((line, i) => (SKIPPING.some((re) => re.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));

describe('test hygiene', () => {
  it('finds the test sources', () => {
    const files = sources(TEST_ROOT);
    expect(files.length).toBeGreaterThan(50);
    expect(files).toContain(SELF);
  });

  it('recognises every way of skipping', () => {
    for (const line of [
      `describe.skip('x', () => {})`,
      `describe.runIf(present)('x', () => {})`,
      `describe.skipIf(!present)('x', () => {})`,
      `it.skip('x', () => {})`,
      `it.todo('x')`,
      `it.only('x', () => {})`,
      `test.concurrent.skip('x', () => {})`,
      `it.skip.each([1])('x', () => {})`,
      `xit('x', () => {})`,
      `it('x', (ctx) => { if (!found) ctx.skip(); })`,
      `it('x', ({ skip }) => { skip(); })`,
    ]) {
      expect(skippingLines(line), line).toHaveLength(1);
    }
    expect(skippingLines(`it('skips nothing: the word skip in a name', () => { expect(skipped).toBe(0); })`)).toEqual([]);
  });

  it('no test source skips a test, a suite, or itself: a missing prerequisite fails instead', () => {
    const found = sources(TEST_ROOT)
      .filter((file) => file !== SELF)
      .flatMap((file) => skippingLines(readFileSync(file, 'utf8')).map((line) => `${path.relative(PROJECT_ROOT, file)}:${line}`));
    expect(found).toEqual([]);
  });
});
