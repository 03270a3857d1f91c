/** The embedded file store of local mode, on a real file system, written by several processes at once. */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretsUnavailable } from '../../functions/outbound/secrets/errors.js';
import { createLocalBackend } from '../../functions/outbound/secrets/local.js';
import { readReference } from '../../functions/outbound/secrets/resolve.js';
import { stdoutDuring } from '../support/stdout.js';
import { HANG_MS } from '../support/timeouts.js';

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
    const processes = ['p1', 'p2', 'p3'].map((prefix) => run(process.execPath, ['--import', 'tsx', writer, file, prefix, '15'], { timeout: HANG_MS }));
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

  it('replaces the data of a secret as a whole, keeps the others, and reads only its own paths', async () => {
    const file = path.join(dir, 'replace.json');
    const backend = createLocalBackend({ file });
    await backend.write('a', { user: 'u', password: '1' });
    await backend.write('b', { password: '2' });
    await backend.write('a', { password: '3' });
    await backend.delete('b');
    await backend.delete('never-there');
    await expect(backend.read('a')).resolves.toEqual({ password: '3' });
    await expect(backend.read('b')).resolves.toBeUndefined();
    for (const inherited of ['constructor', 'toString', 'hasOwnProperty']) await expect(backend.read(inherited), inherited).resolves.toBeUndefined();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, secrets: { a: { password: '3' } } });
  });

  it('answers 503 for a file that is JSON but not a store, and says what it expected', async () => {
    for (const [name, text] of [
      ['null', 'null'],
      ['array', '[]'],
      ['number', '5'],
      ['no-secrets', '{"version":1}'],
      ['secrets-text', '{"version":1,"secrets":"a"}'],
      ['secrets-null', '{"version":1,"secrets":null}'],
    ] as const) {
      const file = path.join(dir, `not-a-store-${name}.json`);
      await writeFile(file, text, { mode: 0o600 });
      const out = await stdoutDuring(() => expect(createLocalBackend({ file }).read('a'), name).rejects.toBeInstanceOf(SecretsUnavailable));
      expect(out.entries(), name).toEqual([
        expect.objectContaining({
          level: 'error',
          message: 'local secrets store: the file is not a secrets store (expected {"version":1,"secrets":{...}})',
          backend: 'local',
        }),
      ]);
      expect(out.entries()[0], name).not.toHaveProperty('code');
    }
  });

  it('answers 503 and logs the system error code when the file cannot be read, stat-ed or its directory created', async () => {
    const folder = path.join(dir, 'is-a-directory.json');
    await mkdir(folder);
    const unreadable = await stdoutDuring(() => expect(createLocalBackend({ file: folder }).read('a')).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(unreadable.entries()).toEqual([
      expect.objectContaining({ level: 'error', message: 'local secrets store: cannot read the file', backend: 'local', code: 'EISDIR' }),
    ]);
    const blocker = path.join(dir, 'plain-file');
    await writeFile(blocker, '');
    const under = createLocalBackend({ file: path.join(blocker, 'secrets.json') });
    const health = await stdoutDuring(() => expect(under.health()).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(health.entries()).toEqual([expect.objectContaining({ message: 'local secrets store: cannot stat the file', code: 'ENOTDIR' })]);
    const write = await stdoutDuring(() => expect(under.write('a', { password: 'x' })).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(write.entries()).toEqual([
      expect.objectContaining({ message: 'local secrets store: cannot create the directory', code: expect.stringMatching(/^(ENOTDIR|EEXIST)$/) }),
    ]);
  });

  it('health reads an existing file as it is (a damaged one is unhealthy) and does not rewrite it', async () => {
    const file = path.join(dir, 'health-existing.json');
    const backend = createLocalBackend({ file });
    await backend.write('a', { password: '1' });
    const before = await stat(file);
    await backend.health();
    const after = await stat(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await readdir(dir)).not.toContain('health-existing.json.lock');
    await writeFile(file, 'damaged');
    await expect(stdoutDuring(() => backend.health())).rejects.toBeInstanceOf(SecretsUnavailable);
    expect(await readFile(file, 'utf8')).toBe('damaged');
  });

  it('presumes a lock abandoned after 10 s by default, not before, and says so in the log', async () => {
    const file = path.join(dir, 'default-stale.json');
    const lock = `${file}.lock`;
    await writeFile(lock, '99999\n');
    // Half the default age: "not before" holds with seconds to spare on a loaded machine.
    const recent = new Date(Date.now() - 5_000);
    await utimes(lock, recent, recent);
    const waiting = await stdoutDuring(() =>
      expect(createLocalBackend({ file, lockTimeoutMs: 300 }).write('a', { password: '1' })).rejects.toBeInstanceOf(SecretsUnavailable),
    );
    expect(waiting.entries()).toEqual([
      expect.objectContaining({ level: 'error', message: 'local secrets store: timed out waiting for the lock', backend: 'local' }),
    ]);
    expect(waiting.entries()[0]).not.toHaveProperty('code');
    const old = new Date(Date.now() - 11_000);
    await utimes(lock, old, old);
    const taken = await stdoutDuring(() => createLocalBackend({ file }).write('a', { password: '1' }));
    expect(taken.entries()).toEqual([
      expect.objectContaining({ level: 'warn', message: 'local secrets store: took over an abandoned lock', backend: 'local' }),
    ]);
    expect((await readdir(dir)).filter((f) => f.startsWith('default-stale.json'))).toEqual(['default-stale.json']);
  });

  it('waits for a live lock to be released rather than failing at once', async () => {
    const file = path.join(dir, 'released.json');
    const lock = `${file}.lock`;
    await writeFile(lock, `${process.pid}\n`);
    // A minute to wait: the lock is released while the write waits, however slow the machine.
    const backend = createLocalBackend({ file, lockTimeoutMs: 60_000 });
    const write = backend.write('a', { password: '1' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await rm(lock);
    await write;
    await expect(backend.read('a')).resolves.toEqual({ password: '1' });
  });

  it('answers 503, and logs why, when the lock file cannot be created (a name too long for it)', async () => {
    // The store's own name fits the file system's 255 bytes; with ".lock" it does not.
    const file = path.join(dir, `${'l'.repeat(246)}.json`);
    const backend = createLocalBackend({ file, lockTimeoutMs: 200 });
    await expect(backend.read('a')).resolves.toBeUndefined();
    const out = await stdoutDuring(() => expect(backend.write('a', { password: 'x' })).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toEqual([
      expect.objectContaining({ level: 'error', message: 'local secrets store: cannot create the lock file', code: 'ENAMETOOLONG' }),
    ]);
  });

  it('answers 503, logs why, and leaves the store and the lock as they were when the new content cannot be written', async () => {
    // The lock's name fits; the temporary file's (name, process id, a UUID) does not.
    const file = path.join(dir, `${'t'.repeat(215)}.json`);
    const backend = createLocalBackend({ file });
    const out = await stdoutDuring(() => expect(backend.write('a', { password: 'x' })).rejects.toBeInstanceOf(SecretsUnavailable));
    expect(out.entries()).toEqual([expect.objectContaining({ level: 'error', message: 'local secrets store: cannot write the file', code: 'ENAMETOOLONG' })]);
    expect((await readdir(dir)).filter((f) => f.startsWith('t'.repeat(215)))).toEqual([]);
  });

  it('closes every file it opens', async () => {
    const backend = createLocalBackend({ file: path.join(dir, 'handles.json') });
    await backend.write('warm', { password: '0' });
    const open = async () => (await readdir('/dev/fd')).length;
    const before = await open();
    for (let i = 0; i < 20; i++) await backend.write(`a${i}`, { password: String(i) });
    // A little slack for descriptors the test runner itself may open meanwhile; a leak is one per write.
    expect(await open()).toBeLessThanOrEqual(before + 3);
  });
});
