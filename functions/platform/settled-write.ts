/**
 * Conditional writes whose outcome is settled before anyone acts on it. The SDK resends a write
 * whose answer did not come in time; when the first attempt had landed, the resent one meets it
 * and its condition ("only if new", "only at this revision") refuses it. Without a read-back the
 * caller would report a conflict, or a failure, for a write that is stored. Each such write
 * carries a write id of its own, and when DynamoDB refuses it or does not confirm it, one
 * consistent read of the item tells whether that very write landed.
 */
import { randomUUID } from 'node:crypto';
import { transientReason } from './transient.js';

/** The attribute that names the write that last stored an item. */
export const WRITE_ID_ATTRIBUTE = 'writeId';

/** A fresh write id: unique to one logical write, the same across the SDK's resends of it. */
export const newWriteId = (): string => randomUUID();

/** Whether `item` (as read back) holds the write `writeId`. */
export const holdsWrite = (item: Record<string, unknown> | undefined, writeId: string): boolean => item?.[WRITE_ID_ATTRIBUTE] === writeId;

/** Whether an error leaves a write's outcome open: anything but a definite answer from DynamoDB. */
export const unconfirmed = (error: unknown): boolean => transientReason(error) !== undefined || (error as { name?: string } | null)?.name === 'AbortError';

/** Whether DynamoDB refused a single-item write by its condition. */
export const conditionFailed = (error: unknown): boolean => (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';

/**
 * Runs `write` (which answers `refused` when its condition failed) and settles its outcome: a
 * refusal, or a failure that leaves the outcome open, is resolved by `readBack` (a consistent
 * read) and `landed`. Answers `done` when the write is stored, `refused` when it was refused
 * and did not land; rethrows an unconfirmed failure when the read-back shows it did not land.
 * A failing read-back propagates (the caller's own unavailable answer).
 */
export const settleWrite = async (
  write: () => Promise<'done' | 'refused'>,
  readBack: () => Promise<Record<string, unknown> | undefined>,
  landed: (item: Record<string, unknown> | undefined) => boolean,
): Promise<'done' | 'refused'> => {
  let outcome: 'done' | 'refused';
  try {
    outcome = await write();
  } catch (error) {
    if (!unconfirmed(error)) throw error;
    if (landed(await readBack())) return 'done';
    throw error;
  }
  return outcome === 'refused' && landed(await readBack()) ? 'done' : outcome;
};

/** `send` as a write that answers `refused` on a failed condition, for {@link settleWrite}. */
export const refusedOnCondition = async (send: () => Promise<unknown>): Promise<'done' | 'refused'> => {
  try {
    await send();
    return 'done';
  } catch (error) {
    if (conditionFailed(error)) return 'refused';
    throw error;
  }
};
