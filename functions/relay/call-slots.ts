/**
 * The cap on relay calls in flight through one adapter, across every container
 * (`maxConcurrentCallsPerAdapter` of the active profile; 0, the default, means no cap and no
 * cost). Lambda runs one call per container, so the count lives in DynamoDB: one item per
 * adapter holding a lease per call in flight (`leases.<id> = <until, epoch ms>`), in the
 * relay's table of short-lived records (the idempotency table, `pk = "LEASES#<adapter>"`, which
 * no idempotency key can take: those start with an operation id).
 *
 * - Taking a slot is one conditional update: it adds a lease only while fewer than the cap are
 *   held. When the cap is reached, leases past their time (a container that died mid-call) are
 *   removed and the update is tried once more; then the call is refused with 429 `adapter-busy`
 *   and `Retry-After: 1`, before anything is sent.
 * - A lease lasts until the function's own deadline (the call cannot outlive it), and is
 *   removed as soon as the call ends, whatever its outcome.
 * - The item expires a day after its last use (the table's time to live).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '../platform/logger.js';
import { HttpProblem } from '../platform/problem.js';

/** 429: the adapter already carries as many calls as the active profile allows. */
export class AdapterBusy extends HttpProblem {
  constructor(adapter: string, limit: number) {
    super(
      429,
      'adapter-busy',
      'Too Many Requests',
      `The adapter ${adapter} already carries ${limit} call${limit === 1 ? '' : 's'} at once, the most the active profile allows (maxConcurrentCallsPerAdapter); nothing was sent. Retry shortly.`,
      { adapter, limit },
      { 'Retry-After': '1' },
    );
  }
}

export interface CallSlots {
  /** Takes a slot for one call (throws {@link AdapterBusy} when none is free); returns its release. */
  acquire(adapter: string, limit: number, leaseMs: number): Promise<() => Promise<void>>;
}

const DAY_SECONDS = 86_400;
const name = (error: unknown): string | undefined => (error as { name?: string } | null)?.name;

export const createCallSlots = (client: Pick<DynamoDBDocumentClient, 'send'>, tableName: string, now: () => number = Date.now): CallSlots => {
  const keyOf = (adapter: string) => ({ pk: `LEASES#${adapter}` });

  /** Adds the lease if fewer than `limit` are held; false when the cap is reached. */
  const take = async (adapter: string, id: string, until: number, limit: number, first = true): Promise<boolean> => {
    try {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keyOf(adapter),
          UpdateExpression: 'SET leases.#id = :until, expiresAt = :ttl',
          ConditionExpression: 'size(leases) < :limit',
          ExpressionAttributeNames: { '#id': id },
          ExpressionAttributeValues: { ':until': until, ':ttl': Math.floor(now() / 1000) + DAY_SECONDS, ':limit': limit },
        }),
      );
      return true;
    } catch (error) {
      if (name(error) !== 'ConditionalCheckFailedException') throw error;
      if (!first) return false;
    }
    // The cap is reached, or there is no item yet (the condition fails on a missing map): make
    // the item unless it exists (another call may have made it meanwhile), then try once more.
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...keyOf(adapter), leases: {}, expiresAt: Math.floor(now() / 1000) + DAY_SECONDS },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (name(error) !== 'ConditionalCheckFailedException') throw error;
    }
    return take(adapter, id, until, limit, false);
  };

  /** Removes the leases past their time; true when it removed any. */
  const sweep = async (adapter: string): Promise<boolean> => {
    const item = (await client.send(new GetCommand({ TableName: tableName, Key: keyOf(adapter), ConsistentRead: true }))).Item;
    const leases = (item?.['leases'] ?? {}) as Record<string, unknown>;
    const expired = Object.entries(leases)
      .filter(([, until]) => typeof until !== 'number' || until < now())
      .map(([id]) => id)
      .slice(0, 100);
    if (expired.length === 0) return false;
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keyOf(adapter),
        UpdateExpression: `REMOVE ${expired.map((_, i) => `leases.#e${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(expired.map((id, i) => [`#e${i}`, id])),
      }),
    );
    return true;
  };

  return {
    async acquire(adapter, limit, leaseMs) {
      const id = randomUUID();
      const until = now() + leaseMs;
      if (!(await take(adapter, id, until, limit)) && !((await sweep(adapter)) && (await take(adapter, id, until, limit)))) {
        throw new AdapterBusy(adapter, limit);
      }
      return async () => {
        try {
          await client.send(
            new UpdateCommand({ TableName: tableName, Key: keyOf(adapter), UpdateExpression: 'REMOVE leases.#id', ExpressionAttributeNames: { '#id': id } }),
          );
        } catch (error) {
          // The lease ends at its time anyway; the next caller that finds the cap reached sweeps it.
          logger.warn('relay call slot not released', { adapter, error });
        }
      };
    },
  };
};
