/**
 * The local assembly is reused only while none of its inputs changed: the key is a content
 * hash of the functions, the CDK app, the lockfile and the project's configuration.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assemblyKey, guardCacheDir } from '../../tools/local/assembly-cache.js';
import { handlerModules } from '../../tools/local/bundles.js';

let root: string;
const write = (file: string, text: string) => {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
};

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'netconfig-assembly-key-'));
  write('functions/trees/get.ts', 'export const handler = async () => ({ statusCode: 200 });\n');
  write('functions/trees/model.ts', 'export const x = 1;\n');
  write('infra/stack.ts', 'export {};\n');
  write('package-lock.json', '{}\n');
  write('cdk.json', '{}\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('assemblyKey', () => {
  it('is stable while nothing changes', () => {
    expect(assemblyKey(root)).toBe(assemblyKey(root));
  });

  it.each([
    ['a function source', 'functions/trees/model.ts', 'export const x = 2;\n'],
    ['a new module', 'functions/trees/store.ts', 'export {};\n'],
    ['the CDK app', 'infra/stack.ts', 'export const y = 1;\n'],
    ['a deploy configuration', 'deploy/config.example.json', '{}\n'],
    ['the lockfile', 'package-lock.json', '{"lockfileVersion":3}\n'],
    ['the CDK configuration', 'cdk.json', '{"app":"x"}\n'],
    ['the TypeScript configuration', 'tsconfig.json', '{}\n'],
  ])('changes with %s', (_what, file, text) => {
    const before = assemblyKey(root);
    write(file, text);
    expect(assemblyKey(root)).not.toBe(before);
  });

  it('changes when a module moves, its content the same', () => {
    const before = assemblyKey(root);
    rmSync(path.join(root, 'functions/trees/model.ts'));
    write('functions/trees/models.ts', 'export const x = 1;\n');
    expect(assemblyKey(root)).not.toBe(before);
  });

  it('ignores what builds nothing: tests, docs, data', () => {
    const before = assemblyKey(root);
    write('test/unit/x.test.ts', 'x\n');
    write('docs/x.md', 'x\n');
    write('.local/state.json', '{}\n');
    expect(assemblyKey(root)).toBe(before);
  });
});

describe('guardCacheDir', () => {
  it('makes the cache for its owner only, and refuses one others may write to', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'start-cache-'));
    try {
      const cache = path.join(dir, 'cache');
      guardCacheDir(cache);
      expect(statSync(cache).mode & 0o777).toBe(0o700);
      chmodSync(cache, 0o777);
      expect(() => guardCacheDir(cache)).toThrow(/writable by others \(mode 777\)/);
      chmodSync(cache, 0o755);
      expect(() => guardCacheDir(cache)).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('handlerModules', () => {
  it('lists the modules that export a handler, by path under functions/', () => {
    write('functions/authorizer/handler.ts', 'const handler = 1;\nexport { handler };\n');
    write('functions/compliance/batch.ts', 'export async function handler() {}\n');
    expect(handlerModules(root)).toEqual(['authorizer/handler', 'compliance/batch', 'trees/get']);
  });
});
