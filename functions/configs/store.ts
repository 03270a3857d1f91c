/**
 * The configuration history's index in DynamoDB (`tableSpecs.configs`): per device one entry per
 * take (`D#<adapterId>#<device>`, `C#<configId>`), and per adapter one item per device naming its
 * last take (`A#<adapterId>`, `D#<device>`), which the device list reads and the archive
 * compares a new take with. Both expire with the take (`expiresAt`); reads skip what has expired
 * but DynamoDB has not removed yet.
 */
import { BatchGetCommand, BatchWriteCommand, GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../platform/dynamo.js';
import { requiredEnv } from '../platform/env.js';
import { tableEnv } from '../platform/tables.js';
import type { ConfigEntry, ConfigSourceKind } from './model.js';

/** A take's entry as stored: the history's fields, where its content is, when it expires. */
export interface StoredEntry extends ConfigEntry {
  readonly objectKey: string;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** A device's last take, as the adapter's device list keeps it. */
export interface DeviceSummary {
  readonly device: string;
  readonly configId: string;
  readonly takenAt: string;
  readonly sha256: string;
  readonly grade?: string;
  readonly objectKey: string;
  /** When `objectKey` was last written (ISO 8601): the archive rewrites content older than its refresh window. */
  readonly storedAt: string;
  readonly expiresAt: number;
}

/** Where a page starts: the sort key after which it reads. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next?: string;
}

const devicePk = (adapterId: string, device: string): string => `D#${adapterId}#${device}`;
const adapterPk = (adapterId: string): string => `A#${adapterId}`;
const entrySk = (configId: string): string => `C#${configId}`;
const summarySk = (device: string): string => `D#${device}`;
const epochSeconds = (now: Date): number => Math.floor(now.getTime() / 1000);

/** Keys one `BatchGetItem` reads at most. */
export const MAX_GET = 100;
/** Sends of a batch request's unprocessed part before the index counts as unavailable. */
const MAX_SENDS = 8;

/** Waits before the `attempt`-th resend of what DynamoDB left unprocessed (none before the first send). */
const pauseBefore = async (attempt: number): Promise<void> => {
  if (attempt >= MAX_SENDS) throw new Error('The configuration index kept leaving requests unprocessed (throttled); retry later.');
  if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
};

const entryOf = (item: Record<string, unknown>): StoredEntry => ({
  configId: item['configId'] as string,
  adapterId: item['adapterId'] as string,
  device: item['device'] as string,
  takenAt: item['takenAt'] as string,
  sha256: item['sha256'] as string,
  size: item['size'] as number,
  batchId: item['batchId'] as string,
  source: item['source'] as ConfigSourceKind,
  ...(typeof item['grade'] === 'string' ? { grade: item['grade'] } : {}),
  objectKey: item['objectKey'] as string,
  expiresAt: item['expiresAt'] as number,
});

const summaryOf = (item: Record<string, unknown>): DeviceSummary => ({
  device: item['device'] as string,
  configId: item['configId'] as string,
  takenAt: item['takenAt'] as string,
  sha256: item['sha256'] as string,
  ...(typeof item['grade'] === 'string' ? { grade: item['grade'] } : {}),
  objectKey: item['objectKey'] as string,
  storedAt: item['storedAt'] as string,
  expiresAt: item['expiresAt'] as number,
});

/** The history's index. */
export class ConfigIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** The device's last take, when one has not expired. */
  async lastTake(adapterId: string, device: string, now: Date): Promise<DeviceSummary | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk: adapterPk(adapterId), sk: summarySk(device) } }));
    return Item && (Item['expiresAt'] as number) > epochSeconds(now) ? summaryOf(Item) : undefined;
  }

  /**
   * The last takes, unexpired at `now`, of up to {@link MAX_GET} distinct devices of an adapter, by
   * device, in one `BatchGetItem` (what DynamoDB leaves unprocessed is asked again).
   */
  async lastTakes(adapterId: string, devices: readonly string[], now: Date): Promise<Map<string, DeviceSummary>> {
    if (devices.length > MAX_GET) throw new RangeError(`at most ${MAX_GET} devices are read at once`);
    const found = new Map<string, DeviceSummary>();
    let keys: Record<string, unknown>[] = devices.map((device) => ({ pk: adapterPk(adapterId), sk: summarySk(device) }));
    for (let attempt = 0; keys.length > 0; attempt++) {
      await pauseBefore(attempt);
      const answer = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys } } }));
      for (const item of answer.Responses?.[this.tableName] ?? []) {
        if ((item['expiresAt'] as number) > epochSeconds(now)) found.set(item['device'] as string, summaryOf(item));
      }
      keys = answer.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
    }
    return found;
  }

  /**
   * Writes takes of distinct devices: every entry first (replacing the one of an earlier run of
   * the same batch), then the devices' last takes that are given, 25 to a `BatchWriteItem`, so no
   * last take names an entry that was not written. The caller leaves out a last take when the
   * device's is a later batch's (two batches of one adapter may run at once).
   */
  async putTakes(adapterId: string, takes: readonly { readonly entry: StoredEntry; readonly last?: DeviceSummary }[]): Promise<void> {
    await this.#putAll(takes.map(({ entry }) => ({ pk: devicePk(adapterId, entry.device), sk: entrySk(entry.configId), ...entry })));
    await this.#putAll(takes.flatMap(({ last }) => (last ? [{ pk: adapterPk(adapterId), sk: summarySk(last.device), ...last }] : [])));
  }

  /** Puts items 25 to a request, in parallel, sending back what DynamoDB leaves unprocessed with a growing pause. */
  async #putAll(items: readonly Record<string, unknown>[]): Promise<void> {
    const outcomes = await Promise.allSettled(
      Array.from({ length: Math.ceil(items.length / 25) }, async (_, n) => {
        let pending = items.slice(n * 25, n * 25 + 25).map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          await pauseBefore(attempt);
          const answer = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }));
          pending = (answer.UnprocessedItems?.[this.tableName] ?? []) as typeof pending;
        }
      }),
    );
    // Settled only when every request has: no write of a call is on its way when it fails.
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** One take's entry, unless it has expired. */
  async getEntry(adapterId: string, device: string, configId: string, now: Date): Promise<StoredEntry | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk: devicePk(adapterId, device), sk: entrySk(configId) } }));
    return Item && (Item['expiresAt'] as number) > epochSeconds(now) ? entryOf(Item) : undefined;
  }

  /** A page of a device's takes, newest first, starting after the take `after` (a configId). */
  async listEntries(adapterId: string, device: string, o: { readonly limit: number; readonly after?: string; readonly now: Date }): Promise<Page<StoredEntry>> {
    const page = await this.#page(devicePk(adapterId, device), 'C#', false, o.limit, o.after === undefined ? undefined : entrySk(o.after), o.now);
    return { items: page.items.map(entryOf), ...(page.next ? { next: page.next.slice(2) } : {}) };
  }

  /** A page of an adapter's devices by name, starting after the device `after`. */
  async listDevices(adapterId: string, o: { readonly limit: number; readonly after?: string; readonly now: Date }): Promise<Page<DeviceSummary>> {
    const page = await this.#page(adapterPk(adapterId), 'D#', true, o.limit, o.after === undefined ? undefined : summarySk(o.after), o.now);
    return { items: page.items.map(summaryOf), ...(page.next ? { next: page.next.slice(2) } : {}) };
  }

  /**
   * Up to `limit` unexpired items of a partition whose sort keys start with `prefix`, after
   * `afterSk`; `next` is the sort key of the last item given when more may follow. Expired items
   * are skipped by a filter, so a page may take several reads.
   */
  async #page(pk: string, prefix: string, forward: boolean, limit: number, afterSk: string | undefined, now: Date) {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined = afterSk === undefined ? undefined : { pk, sk: afterSk };
    do {
      const answer = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: 'expiresAt > :now',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix, ':now': epochSeconds(now) },
          ScanIndexForward: forward,
          Limit: limit - items.length + 1,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(answer.Items ?? []));
      start = answer.LastEvaluatedKey;
    } while (start && items.length <= limit);
    const more = items.length > limit || start !== undefined;
    const shown = items.slice(0, limit);
    return { items: shown, next: more && shown.length ? (shown.at(-1)!['sk'] as string) : undefined };
  }
}

/** The index in the table the stack names (`CONFIGS_TABLE`). */
export const createConfigIndex = (client: DynamoDBDocumentClient = documentClient, tableName = requiredEnv(tableEnv('configs'))): ConfigIndex =>
  new ConfigIndex(client, tableName);
