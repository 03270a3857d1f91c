/**
 * The read side of the configuration history: an adapter's devices, a device's takes, one
 * configuration. Configurations are stored as NSO gave them and shown with secret members
 * masked (`redact`), to every reader, as reports and logs are.
 */
import { createHash } from 'node:crypto';
import { MAX_JSON_DEPTH, parseJson } from '../platform/bounded-json.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../platform/cursor.js';
import { NotFound, UnprocessableContent } from '../platform/problem.js';
import { redact } from '../platform/redaction.js';
import type { JsonValue } from '../trees/config-model.js';
import type { ConfigBlobs } from './blobs.js';
import { configDiff, type DiffFormat } from './diff.js';
import { CONFIG_ID_PATTERN } from './keys.js';
import type { ConfigEntry } from './model.js';
import type { ConfigIndex, StoredEntry } from './store.js';

/** Items per page: default and most. */
export const CONFIG_PAGE_LIMIT = { default: 50, max: 200 } as const;

export interface ReadDeps {
  readonly index: ConfigIndex;
  readonly blobs: ConfigBlobs;
  readonly now: () => Date;
}

interface PageQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** A device as the list shows it: its last take. */
export interface KnownDevice {
  readonly device: string;
  readonly configId: string;
  readonly takenAt: string;
  readonly grade?: string;
}

const CONFIG_ID = new RegExp(CONFIG_ID_PATTERN);

/**
 * What a cursor names its list by: a digest of the list's scope (adapter and device), not the
 * scope itself, so that a cursor stays short whatever the names (a device name of 253 CJK
 * characters is 759 bytes; with the adapter's, twice over the cursor's bound).
 */
const scopeTag = (scope: string): string => createHash('sha256').update(scope, 'utf8').digest('base64url').slice(0, 16);

/** The cursor of the page after `at` in the list `scope`. */
const cursorOf = (scope: string, at: string): string => encodeCursor({ s: scopeTag(scope), at });

/** The cursor's fields, checked to belong to this list (`scope`); a cursor of another list is a 400. */
const after = (cursor: string | undefined, scope: string, valid: (at: string) => boolean): string | undefined => {
  if (cursor === undefined) return undefined;
  const fields = decodeCursor(cursor, ['s', 'at'], (f) => f.s === scopeTag(scope) && valid(f.at));
  if (!fields) throw invalidCursor();
  return fields.at;
};

/** The devices with a configuration in the history of an adapter, by name: `{ items, next? }`. */
export const listDevices = async (
  deps: Pick<ReadDeps, 'index' | 'now'>,
  adapterId: string,
  query: PageQuery,
): Promise<{ items: KnownDevice[]; next?: string }> => {
  const scope = `devices#${adapterId}`;
  const from = after(query.cursor, scope, () => true);
  const page = await deps.index.listDevices(adapterId, { limit: query.limit, ...(from !== undefined ? { after: from } : {}), now: deps.now() });
  return {
    items: page.items.map(({ device, configId, takenAt, grade }) => ({ device, configId, takenAt, ...(grade !== undefined ? { grade } : {}) })),
    ...(page.next !== undefined ? { next: cursorOf(scope, page.next) } : {}),
  };
};

const shownEntry = ({ objectKey: _key, expiresAt: _expires, ...entry }: StoredEntry): ConfigEntry => entry;

/** A device's takes, newest first: `{ items, next? }`. 404 when the history has none of it. */
export const listConfigs = async (
  deps: Pick<ReadDeps, 'index' | 'now'>,
  adapterId: string,
  device: string,
  query: PageQuery,
): Promise<{ items: ConfigEntry[]; next?: string }> => {
  const scope = `configs#${adapterId}#${device}`;
  const from = after(query.cursor, scope, (at) => CONFIG_ID.test(at));
  const page = await deps.index.listEntries(adapterId, device, { limit: query.limit, ...(from !== undefined ? { after: from } : {}), now: deps.now() });
  if (from === undefined && page.items.length === 0) throw unknownDevice(adapterId, device);
  return {
    items: page.items.map(shownEntry),
    ...(page.next !== undefined ? { next: cursorOf(scope, page.next) } : {}),
  };
};

const unknownDevice = (adapterId: string, device: string): NotFound =>
  new NotFound(`The configuration history of adapter '${adapterId}' has no device '${device}' (or its configurations expired).`);

/**
 * One take and its configuration as NSO gave it, unmasked: for the views that compare
 * configurations before showing them (a diff masks what it shows). 404 when the take is unknown
 * or expired, or its content has expired (a retention shortened after it was taken).
 */
export const loadConfig = async (deps: ReadDeps, adapterId: string, device: string, configId: string): Promise<{ entry: ConfigEntry; config: unknown }> => {
  const entry = await deps.index.getEntry(adapterId, device, configId, deps.now());
  if (!entry) throw new NotFound(`Device '${device}' of adapter '${adapterId}' has no configuration '${configId}' (or it expired).`);
  const canonical = await deps.blobs.get(entry.objectKey);
  if (canonical === undefined) throw new NotFound(`The content of configuration '${configId}' of device '${device}' has expired.`);
  // The store's integrity, not the request's: a content that is not the take's is never served (500, logged).
  if (createHash('sha256').update(canonical, 'utf8').digest('hex') !== entry.sha256) {
    throw new Error(`Integrity: the content of configuration '${configId}' of device '${device}' (${entry.objectKey}) does not have the take's SHA-256.`);
  }
  return { entry: shownEntry(entry), config: parseJson(canonical) };
};

/**
 * Bytes of an answer that carries configurations at most: Lambda answers at most 6 MB, and the
 * gateway adds its own headers. A JSON Patch of two large, very different configurations can
 * pass it, and so can one configuration (the history keeps up to 16 MB (blobs.ts `MAX_CONTENT_BYTES`) of
 * it, and masking can lengthen short secrets).
 */
export const MAX_ANSWER_BYTES = 5_000_000;

/**
 * One take with its configuration, secret members masked: `{ ...entry, config }`. 422
 * (`config-too-large`) when the answer would pass {@link MAX_ANSWER_BYTES}: such a configuration
 * can still be compared with another take (the diff answers what changed).
 */
export const readConfig = async (deps: ReadDeps, adapterId: string, device: string, configId: string): Promise<ConfigEntry & { config: unknown }> => {
  const { entry, config } = await loadConfig(deps, adapterId, device, configId);
  const shown = { ...entry, config: redact(config, { maxDepth: MAX_JSON_DEPTH }) };
  const bytes = Buffer.byteLength(JSON.stringify(shown), 'utf8');
  if (bytes > MAX_ANSWER_BYTES)
    throw new UnprocessableContent(
      `Configuration '${configId}' of device '${device}' is ${bytes} bytes as JSON, more than an answer may be (${MAX_ANSWER_BYTES}): compare it with another take instead (…/diff?against=).`,
      'config-too-large',
    );
  return shown;
};

/**
 * The diff from take `against` to take `configId` of one device, in `format`, secret values
 * masked: computed on the real values (a changed secret shows, masked) and never cached.
 * 404 when either take is unknown; 422 (`diff-too-large`) when the unified diff has too many
 * changed lines or the answer would pass {@link MAX_ANSWER_BYTES}.
 */
export const diffConfigs = async (
  deps: ReadDeps,
  adapterId: string,
  device: string,
  configId: string,
  against: string,
  format: DiffFormat,
): Promise<{ readonly contentType: string; readonly body: string }> => {
  const [from, to] = await Promise.all([loadConfig(deps, adapterId, device, against), loadConfig(deps, adapterId, device, configId)]);
  const labels = {
    against: { name: `configs/${against}`, header: from.entry.takenAt },
    config: { name: `configs/${configId}`, header: to.entry.takenAt },
  };
  const answer = configDiff(from.config as JsonValue, to.config as JsonValue, format, labels);
  if (Buffer.byteLength(answer.body, 'utf8') > MAX_ANSWER_BYTES)
    throw new UnprocessableContent(
      `The diff is larger than an answer may be (${MAX_ANSWER_BYTES} bytes): compare takes closer in time, or read both configurations.`,
      'diff-too-large',
    );
  return answer;
};
