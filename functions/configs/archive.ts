/**
 * The configuration archive (`ConfigArchive`): a take's content goes to S3 (content-addressed
 * per device, see keys.ts), then its entry and the device's last take to the DynamoDB index, in
 * that order, so an entry never names content that was not stored.
 *
 * An unchanged configuration (the same SHA-256 as the device's last take) is not uploaded again
 * while its object is younger than {@link REFRESH_DAYS}: the bucket's lifecycle expires an object
 * `configRetentionDays + REFRESH_DAYS + 1` days after it was last written (lifecycle.ts), and an
 * entry `configRetentionDays` after its take, so an object written at most REFRESH_DAYS before
 * a take outlives the take's entry. Content seen again after that is written again, which
 * restarts its lifecycle clock.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../platform/canonical-json.js';
import type { ConfigBlobs } from './blobs.js';
import { configIdOf, objectKeyOf } from './keys.js';
import type { ConfigArchive, RecordedConfig } from './model.js';
import type { ConfigIndex, DeviceSummary } from './store.js';

/** How old a device's object may be before an unchanged take writes it again (days). */
export const REFRESH_DAYS = 7;
const DAY_MS = 24 * 3600 * 1000;

type Take = Parameters<ConfigArchive['record']>[0];

export interface ArchiveDeps {
  readonly blobs: ConfigBlobs;
  readonly index: Pick<ConfigIndex, 'lastTake' | 'putEntry' | 'putLastTake'>;
  /** The active profile's `configRetentionDays`. */
  readonly retentionDays: () => Promise<number>;
}

/** Whether a take of `sha256` needs no upload: the device's last take had it, written recently enough. */
export const isStoredRecently = (last: DeviceSummary | undefined, sha256: string, takenAt: Date): boolean =>
  last !== undefined && last.sha256 === sha256 && takenAt.getTime() - Date.parse(last.storedAt) < REFRESH_DAYS * DAY_MS;

/** The archive, counting what it uploads and what it found unchanged. */
export class ConfigHistory implements ConfigArchive {
  /** Contents uploaded since the archive was made. */
  uploads = 0;
  /** Takes recorded without an upload (unchanged content). */
  unchanged = 0;

  constructor(private readonly deps: ArchiveDeps) {}

  async record(take: Take): Promise<RecordedConfig> {
    const { adapterId, device, source, takenAt } = take;
    const canonical = canonicalJson(take.config);
    const sha256 = createHash('sha256').update(canonical, 'utf8').digest('hex');
    const size = Buffer.byteLength(canonical, 'utf8');
    const configId = configIdOf(source);
    const objectKey = objectKeyOf(adapterId, device, sha256);
    const [last, retentionDays] = await Promise.all([this.deps.index.lastTake(adapterId, device, takenAt), this.deps.retentionDays()]);
    const reused = isStoredRecently(last, sha256, takenAt);
    if (!reused) await this.deps.blobs.put(objectKey, canonical);
    if (reused) this.unchanged++;
    else this.uploads++;
    const at = takenAt.toISOString();
    const expiresAt = Math.floor(takenAt.getTime() / 1000) + retentionDays * 86_400;
    const grade = take.grade === undefined ? {} : { grade: take.grade };
    await this.deps.index.putEntry({
      configId,
      adapterId,
      device,
      takenAt: at,
      sha256,
      size,
      batchId: source.batchId,
      source: source.kind,
      ...grade,
      objectKey,
      expiresAt,
    });
    await this.deps.index.putLastTake(adapterId, {
      device,
      configId,
      takenAt: at,
      sha256,
      ...grade,
      objectKey,
      storedAt: reused ? last!.storedAt : at,
      expiresAt,
    });
    return { configId, sha256, size, uploaded: !reused };
  }
}
