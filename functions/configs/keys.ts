/**
 * The names of a take: its `configId` (from its batch, so a batch that runs a device again
 * writes the same entry), and the S3 key of its content (by adapter, device and hash).
 */
import { createHash } from 'node:crypto';
import type { ConfigSource } from './model.js';

/**
 * A configuration id: the batch's start, compact (`20261127T094242123Z`), `-`, the batch id.
 * Sorted as text, a device's ids are in the order of their batches' starts.
 */
export const CONFIG_ID_PATTERN = '^[0-9]{8}T[0-9]{9}Z-[A-Za-z0-9_-]{1,64}$';

/** The configuration id of what `source` takes of a device: the same on every run of the batch. */
export const configIdOf = (source: ConfigSource): string => {
  const started = new Date(source.batchStarted);
  if (Number.isNaN(started.getTime())) throw new RangeError(`batchStarted is not a time: ${source.batchStarted}`);
  return `${started.toISOString().replace(/[-:.]/g, '')}-${source.batchId}`;
};

/** S3's longest key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;

/**
 * The object key of a device's content: `configs/<adapter>/<device>/<sha256>.json.gz`, names
 * percent-encoded (an operator can find a device's objects by prefix). A device whose name would
 * make the key longer than S3 allows is named by the SHA-256 of its name instead (`~<hex>`).
 * Keys are per device, not global by hash: an object is rewritten when the device's take is
 * older than the refresh window (see archive.ts), which a key shared by devices could not tell.
 */
export const objectKeyOf = (adapterId: string, device: string, sha256: string): string => {
  const key = `configs/${encodeURIComponent(adapterId)}/${encodeURIComponent(device)}/${sha256}.json.gz`;
  if (Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES) return key;
  return `configs/${encodeURIComponent(adapterId)}/~${createHash('sha256').update(device, 'utf8').digest('hex')}/${sha256}.json.gz`;
};
