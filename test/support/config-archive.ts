/**
 * A configuration archive for tests of what records into one (`ConfigArchive`): it keeps every
 * call, names a take as the contract says (the same source and device give the same id), and
 * can be told to fail.
 */
import { createHash } from 'node:crypto';
import type { ConfigArchive, RecordedConfig } from '../../functions/configs/model.js';

export type Take = Parameters<ConfigArchive['record']>[0];

export class RecordingArchive implements ConfigArchive {
  /** Every call, failed ones included, oldest first. */
  readonly calls: Take[] = [];
  /** The entries kept, by configId. */
  readonly entries = new Map<string, Take>();
  /** Decides whether a call fails (it is still counted in `calls`). */
  failWhen: (take: Take) => boolean = () => false;

  async record(take: Take): Promise<RecordedConfig> {
    this.calls.push(take);
    if (this.failWhen(take)) throw Object.assign(new Error('the archive is unreachable'), { name: 'TimeoutError' });
    const json = JSON.stringify(take.config);
    const sha256 = createHash('sha256').update(json).digest('hex');
    const configId = createHash('sha256')
      .update(`${take.source.kind}|${take.source.batchId}|${take.source.batchStarted}|${take.adapterId}|${take.device}`)
      .digest('hex')
      .slice(0, 32);
    this.entries.set(configId, take);
    return { configId, sha256, size: Buffer.byteLength(json), uploaded: true };
  }

  /** Calls per device. */
  callsPerDevice(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const take of this.calls) counts.set(take.device, (counts.get(take.device) ?? 0) + 1);
    return counts;
  }
}
