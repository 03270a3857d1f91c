/**
 * The embedded secrets store of local mode: one JSON file (`SECRETS_FILE`, under `.local/`),
 * mode 0600 in a 0700 directory, created when first needed.
 *
 * File format: `{ "version": 1, "secrets": { "<path>": { "<key>": "<value>" } } }`.
 *
 * Several function processes may write at once (the local gateway runs each function in its
 * own process), so every change is a read-modify-write under an exclusive lock file
 * (`<file>.lock`, created with O_EXCL), and the new content replaces the old by writing a
 * temporary file and renaming it over the old one: a reader sees the old file or the new
 * one, never half of one. A lock left behind by a crashed process is taken over after
 * {@link LocalStoreOptions.staleLockMs}.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { parseJson } from '../../platform/bounded-json.js';
import { logger } from '../../platform/logger.js';
import type { SecretData, SecretsBackend } from './backend.js';
import { SecretsUnavailable } from './errors.js';

export interface LocalStoreOptions {
  readonly file: string;
  /** How long a writer waits for the lock before giving up (503); default 5000 ms. */
  readonly lockTimeoutMs?: number;
  /** A lock older than this is presumed abandoned; default 10000 ms. */
  readonly staleLockMs?: number;
}

interface StoreFile {
  version: 1;
  secrets: Record<string, Record<string, string>>;
}

const code = (error: unknown): string | undefined => (error as { code?: string }).code;

const fail = (what: string, error?: unknown): never => {
  // Mutation: `?? 'unknown'` → `''` (uncovered) is equivalent: every error of `node:fs` carries a code.
  logger.error(`local secrets store: ${what}`, { backend: 'local', code: error ? (code(error) ?? 'unknown') : undefined });
  throw new SecretsUnavailable();
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The backend's methods over one configuration.
 *
 * Longer than 80 lines on purpose: a factory whose short methods share its client, table and
 * caches through the closure; each method is its own unit (and is tested as one).
 */
export const createLocalBackend = (options: LocalStoreOptions): SecretsBackend => {
  const file = path.resolve(options.file);
  const lockFile = `${file}.lock`;
  const lockTimeoutMs = options.lockTimeoutMs ?? 5_000;
  const staleLockMs = options.staleLockMs ?? 10_000;

  const load = async (): Promise<StoreFile> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (code(error) === 'ENOENT') return { version: 1, secrets: {} };
      return fail('cannot read the file', error);
    }
    try {
      const parsed = parseJson(text) as Partial<StoreFile>;
      // Mutation: `parsed &&` and `typeof parsed === 'object'` → `true` are equivalent: `null.secrets` throws into
      // the same refusal; a number, string or array has no `secrets`.
      if (parsed && typeof parsed === 'object' && parsed.secrets && typeof parsed.secrets === 'object') {
        return { version: 1, secrets: parsed.secrets };
      }
    } catch {
      // fall through: damaged
    }
    return fail('the file is not a secrets store (expected {"version":1,"secrets":{...}})');
  };

  const acquire = async (): Promise<void> => {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 }).catch((error) => fail('cannot create the directory', error));
    const deadline = Date.now() + lockTimeoutMs;
    for (;;) {
      try {
        const handle = await open(lockFile, 'wx', 0o600);
        // Mutation: the content emptied survives: nothing reads it; it is there for an operator looking at a stuck
        // lock.
        await handle.writeFile(`${process.pid}\n`);
        await handle.close();
        return;
      } catch (error) {
        if (code(error) !== 'EEXIST') fail('cannot create the lock file', error);
      }
      const held = await stat(lockFile).catch(() => undefined);
      // Mutation: `>` → `>=` (here and at the deadline below) survives: one millisecond of a clock the test cannot
      // hold still.
      if (held && Date.now() - held.mtimeMs > staleLockMs) {
        // Abandoned by a crashed writer: move it aside (atomic, so only one taker wins) and retry.
        const aside = `${lockFile}.${randomUUID()}.stale`;
        // Mutation: the failure arm → `true` (uncovered) or `undefined` is equivalent: unlinking a lock another
        // writer moved fails into the `catch`, and `undefined` is as false.
        if (
          await rename(lockFile, aside).then(
            () => true,
            () => false,
          )
        )
          await unlink(aside).catch(() => undefined);
        logger.warn('local secrets store: took over an abandoned lock', { backend: 'local' });
        continue;
      }
      if (Date.now() > deadline) fail('timed out waiting for the lock');
      // Mutation: `5 - …` or `/ 20` survives: only how long a writer waits between tries changes (a negative delay is
      // 1 ms), not whether it gets the lock.
      await sleep(5 + Math.random() * 20);
    }
  };

  const release = async (): Promise<void> => {
    await unlink(lockFile).catch(() => undefined);
  };

  const save = async (store: StoreFile): Promise<void> => {
    const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(store, null, 2)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      fail('cannot write the file', error);
    }
  };

  /** Runs one read-modify-write under the lock. */
  const change = async (edit: (store: StoreFile) => void): Promise<void> => {
    await acquire();
    try {
      const store = await load();
      edit(store);
      await save(store);
    } finally {
      await release();
    }
  };

  return {
    kind: 'local',

    async read(secretPath: string): Promise<SecretData | undefined> {
      const store = await load();
      return Object.hasOwn(store.secrets, secretPath) ? store.secrets[secretPath] : undefined;
    },

    async write(secretPath: string, data: Readonly<Record<string, string>>): Promise<void> {
      await change((store) => {
        store.secrets[secretPath] = { ...data };
      });
    },

    async delete(secretPath: string): Promise<void> {
      await change((store) => {
        delete store.secrets[secretPath];
      });
    },

    async health(): Promise<void> {
      const exists = await stat(file).then(
        () => true,
        (error) => (code(error) === 'ENOENT' ? false : fail('cannot stat the file', error)),
      );
      // Created if absent, so that local mode shows a healthy store from the start.
      if (!exists) await change(() => undefined);
      else await load();
    },
  };
};
