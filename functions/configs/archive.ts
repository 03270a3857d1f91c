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
 *
 * Takes are recorded in groups: a batch records thousands of devices a minute, and three index
 * requests per device (read the last take, write the entry, write the last take) cost more than
 * the rest of the batch's work. The takes of one adapter recorded within {@link GROUP_LINGER_MS}
 * of each other, up to {@link GROUP_SIZE}, share one `BatchGetItem` of their last takes, their
 * uploads run in parallel, and their entries then last takes go 25 to a `BatchWriteItem`. A
 * failure fails every take of the group (none was half-written: entries follow their uploads).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../platform/canonical-json.js';
import type { ConfigBlobs } from './blobs.js';
import { configIdOf, objectKeyOf } from './keys.js';
import type { ConfigArchive, RecordedConfig } from './model.js';
import type { ConfigIndex, DeviceSummary, StoredEntry } from './store.js';

/** How old a device's object may be before an unchanged take writes it again (days). */
export const REFRESH_DAYS = 7;
const DAY_MS = 24 * 3600 * 1000;
/** Takes recorded together at most: one `BatchWriteItem` of entries, one of last takes. */
export const GROUP_SIZE = 25;
/** Longest a take waits for others to be recorded with it (ms): a batch at full speed fills a group sooner. */
export const GROUP_LINGER_MS = 10;

type Take = Parameters<ConfigArchive['record']>[0];

/** A take waiting for its group, hashed, and what its `record` call resolves or rejects. */
interface Pending {
  readonly take: Take;
  readonly canonical: string;
  readonly sha256: string;
  readonly resolve: (recorded: RecordedConfig) => void;
  readonly reject: (error: unknown) => void;
}

export interface ArchiveDeps {
  readonly blobs: ConfigBlobs;
  readonly index: Pick<ConfigIndex, 'lastTakes' | 'putTakes'>;
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

  /** Takes waiting for their group, by adapter, and the timer that sends each group. */
  readonly #waiting = new Map<string, { readonly takes: Pending[]; readonly timer: NodeJS.Timeout }>();
  /** Groups being recorded, with their adapter and devices: a group with one of those devices waits for them. */
  readonly #sending = new Set<{ readonly adapterId: string; readonly devices: ReadonlySet<string>; readonly done: Promise<unknown> }>();

  constructor(private readonly deps: ArchiveDeps) {}

  record(take: Take): Promise<RecordedConfig> {
    const canonical = canonicalJson(take.config);
    const sha256 = createHash('sha256').update(canonical, 'utf8').digest('hex');
    return new Promise((resolve, reject) => {
      const { adapterId, device } = take;
      // A device is read and written once per request: a second take of it starts the next group.
      if (this.#waiting.get(adapterId)?.takes.some((p) => p.take.device === device)) this.#send(adapterId);
      let group = this.#waiting.get(adapterId);
      if (!group) this.#waiting.set(adapterId, (group = { takes: [], timer: setTimeout(() => this.#send(adapterId), GROUP_LINGER_MS) }));
      group.takes.push({ take, canonical, sha256, resolve, reject });
      if (group.takes.length >= GROUP_SIZE) this.#send(adapterId);
    });
  }

  /** Records the adapter's waiting takes as one group. */
  #send(adapterId: string): void {
    const group = this.#waiting.get(adapterId);
    if (!group) return;
    this.#waiting.delete(adapterId);
    clearTimeout(group.timer);
    const devices = new Set(group.takes.map((p) => p.take.device));
    // A device's later take reads its last take only once the earlier one has written it.
    const before = [...this.#sending].filter((g) => g.adapterId === adapterId && [...devices].some((d) => g.devices.has(d))).map((g) => g.done);
    const done = Promise.allSettled(before).then(() => this.#recordGroup(adapterId, group.takes));
    const sending = { adapterId, devices, done };
    this.#sending.add(sending);
    void done.then(
      () => this.#sending.delete(sending),
      () => this.#sending.delete(sending),
    );
    done.then(
      (recorded) => {
        for (const [i, p] of group.takes.entries()) p.resolve(recorded[i]!);
      },
      (error: unknown) => {
        for (const p of group.takes) p.reject(error);
      },
    );
  }

  /** Uploads what changed, then writes the entries and last takes of a group of distinct devices. */
  async #recordGroup(adapterId: string, group: readonly Pending[]): Promise<RecordedConfig[]> {
    const earliest = new Date(Math.min(...group.map((p) => p.take.takenAt.getTime())));
    const [lasts, retentionDays] = await Promise.all([
      this.deps.index.lastTakes(
        adapterId,
        group.map((p) => p.take.device),
        earliest,
      ),
      this.deps.retentionDays(),
    ]);
    const made = group.map(({ take, canonical, sha256 }) => {
      const { device, source, takenAt } = take;
      const last = lasts.get(device);
      const reused = isStoredRecently(last, sha256, takenAt);
      const configId = configIdOf(source);
      const objectKey = objectKeyOf(adapterId, device, sha256);
      const at = takenAt.toISOString();
      const expiresAt = Math.floor(takenAt.getTime() / 1000) + retentionDays * 86_400;
      const grade = take.grade === undefined ? {} : { grade: take.grade };
      const size = Buffer.byteLength(canonical, 'utf8');
      const entry: StoredEntry = {
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
      };
      // A take without a grade (a backup's) keeps the last compliance grade the device got.
      const lastGrade = take.grade !== undefined ? grade : last?.grade !== undefined ? { grade: last.grade } : {};
      const summary: DeviceSummary = { device, configId, takenAt: at, sha256, ...lastGrade, objectKey, storedAt: reused ? last!.storedAt : at, expiresAt };
      // A later batch's take stays the device's last (the earlier batch may record after it).
      const later = last !== undefined && last.configId > configId;
      return { canonical, reused, objectKey, entry, ...(later ? {} : { last: summary }), recorded: { configId, sha256, size, uploaded: !reused } };
    });
    await Promise.all(
      made.map(async ({ reused, objectKey, canonical }) => {
        if (reused) this.unchanged++;
        else {
          await this.deps.blobs.put(objectKey, canonical);
          this.uploads++;
        }
      }),
    );
    await this.deps.index.putTakes(adapterId, made);
    return made.map((m) => m.recorded);
  }
}
