/**
 * The configuration history's index in DynamoDB (`tableSpecs.configs`): per device one entry per
 * take (`D#<adapterId>#<device>`, `C#<configId>`), and per adapter one item per device naming its
 * last take (`A#<adapterId>`, `D#<device>`), which the device list reads and the archive
 * compares a new take with. Both expire with the take (`expiresAt`); reads skip what has expired
 * but DynamoDB has not removed yet.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
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

  /** Writes a take's entry (replacing the one of an earlier run of the same batch). */
  async putEntry(entry: StoredEntry): Promise<void> {
    const { adapterId, device, configId } = entry;
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: { pk: devicePk(adapterId, device), sk: entrySk(configId), ...entry } }));
  }

  /**
   * Makes `summary` the device's last take, unless a later batch's take is there already (two
   * batches of one adapter may run at once, and the earlier may finish last).
   */
  async putLastTake(adapterId: string, summary: DeviceSummary): Promise<void> {
    const names = Object.keys(summary);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: adapterPk(adapterId), sk: summarySk(summary.device) },
          // A take without a grade (a backup's) keeps the last compliance grade the device got.
          UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
          ConditionExpression: 'attribute_not_exists(pk) OR #configId <= :configId',
          ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
          ExpressionAttributeValues: Object.fromEntries(names.map((n) => [`:${n}`, summary[n as keyof DeviceSummary]])),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
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
