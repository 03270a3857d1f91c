/** The embedded file store of local mode, on a real file system, written by several processes at once. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretsUnavailable } from '../../functions/secrets/errors.js';
import { createLocalBackend } from '../../functions/secrets/local.js';
import { readReference } from '../../functions/secrets/resolve.js';

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'netconfig-secrets-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('local secrets store', () => {
  it('creates the file (and its directory) with mode 0600 on first write', async () => {
    const file = path.join(dir, 'nested', '.local', 'secrets.json');
    const backend = createLocalBackend({ file });
    await expect(backend.read('a')).resolves.toBeUndefined();
    await backend.write('netconfig/adapters/nso lab', { password: 'pw' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, secrets: { 'netconfig/adapters/nso lab': { password: 'pw' } } });
    await expect(readReference(backend, '$VAULT_netconfig/adapters/nso lab#password')).resolves.toBe('pw');
  });

  it('keeps 0600 after a rewrite even if someone widened the mode, and leaves no temporary or lock file', async () => {
    const file = path.join(dir, 'mode.json');
    const backend = createLocalBackend({ file });
    await backend.write('a', { password: '1' });
    await import('node:fs/promises').then((fs) => fs.chmod(file, 0o644));
    await backend.write('b', { password: '2' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).filter((f) => f.startsWith('mode.json'))).toEqual(['mode.json']);
  });

  it('deletes a secret', async () => {
    const backend = createLocalBackend({ file: path.join(dir, 'delete.json') });
    await backend.write('a', { password: '1' });
    await backend.delete('a');
    await expect(backend.read('a')).resolves.toBeUndefined();
  });

  it('health creates the file when absent', async () => {
    const file = path.join(dir, 'health.json');
    await createLocalBackend({ file }).health();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('answers 503 (not a crash, not an empty store) when the file is damaged', async () => {
    const file = path.join(dir, 'damaged.json');
    await writeFile(file, '{"version":1,"secrets":', { mode: 0o600 });
    const backend = createLocalBackend({ file });
    await expect(backend.read('a')).rejects.toBeInstanceOf(SecretsUnavailable);
    await expect(backend.write('a', { password: 'x' })).rejects.toBeInstanceOf(SecretsUnavailable);
    expect(await readFile(file, 'utf8')).toBe('{"version":1,"secrets":');
  });

  it('takes over a lock abandoned by a crashed writer', async () => {
    const file = path.join(dir, 'stale.json');
    await writeFile(`${file}.lock`, '99999\n');
    const old = new Date(Date.now() - 60_000);
    await utimes(`${file}.lock`, old, old);
    const backend = createLocalBackend({ file, staleLockMs: 10_000 });
    await backend.write('a', { password: '1' });
    await expect(backend.read('a')).resolves.toEqual({ password: '1' });
  });

  it('gives up with 503 while a live lock is held past the wait limit', async () => {
    const file = path.join(dir, 'busy.json');
    await writeFile(`${file}.lock`, `${process.pid}\n`);
    const backend = createLocalBackend({ file, lockTimeoutMs: 200, staleLockMs: 600_000 });
    await expect(backend.write('a', { password: '1' })).rejects.toBeInstanceOf(SecretsUnavailable);
  });

  it('loses no write when several processes and concurrent calls write at once', async () => {
    const file = path.join(dir, 'concurrent.json');
    const writer = path.resolve(import.meta.dirname, '../support/local-secrets-writer.ts');
    const processes = ['p1', 'p2', 'p3'].map((prefix) => run(process.execPath, ['--import', 'tsx', writer, file, prefix, '15'], { timeout: 60_000 }));
    const backend = createLocalBackend({ file, lockTimeoutMs: 20_000 });
    const inProcess = Array.from({ length: 15 }, (_, i) => backend.write(`here/${i}`, { password: `here-${i}` }));
    await Promise.all([...processes, ...inProcess]);
    const store = JSON.parse(await readFile(file, 'utf8')) as { secrets: Record<string, { password: string }> };
    expect(Object.keys(store.secrets)).toHaveLength(60);
    for (const prefix of ['p1', 'p2', 'p3', 'here']) {
      for (let i = 0; i < 15; i++) expect(store.secrets[`${prefix}/${i}`]).toEqual({ password: `${prefix}-${i}` });
    }
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  }, 90_000);
});
