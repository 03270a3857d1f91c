/**
 * The keys and items of a plan's history in the compliance table (see history-store.ts for the
 * layout): shared by the batch store, which writes a plan batch's trend point with the batch, and
 * the history store.
 */
import type { DeltaChange, DevicePoint, TrendPoint } from './history-model.js';
import type { StoredState } from './history.js';

/** The partition of a plan's trend. */
export const trendPk = (planId: string): string => `P#${planId}`;
/** A trend point's sort key: its batch's start, then its id (two batches may start in the same millisecond). */
export const trendSk = (started: string, batchId: string): string => `T#${started}#${batchId}`;
/** The partition of one device's history in a plan. */
export const devicePk = (planId: string, device: string): string => `P#${planId}#D#${device}`;
/** A device point's sort key. */
export const pointSk = (at: string, batchId: string): string => `H#${at}#${batchId}`;
/** A delta row's sort key in its batch's partition: one class's rows are a range, by device. */
export const deltaSk = (change: DeltaChange, device: string): string => `X#${change}#${device}`;
export const STATE_SK = 'STATE';

/** A trend point's item. */
export const trendPointItem = (planId: string, point: Omit<TrendPoint, 'delta'> & Partial<Pick<TrendPoint, 'delta'>>, expiresAt: number) => ({
  pk: trendPk(planId),
  sk: trendSk(point.started, point.batchId),
  batchId: point.batchId,
  kind: point.kind,
  status: point.status,
  started: point.started,
  ...(point.finished ? { finished: point.finished } : {}),
  total: point.total,
  grades: point.grades,
  totals: point.totals,
  ...(point.delta ? { delta: point.delta } : {}),
  expiresAt,
});

/** A device's point of one batch: its item in the device's partition. */
export const devicePointItem = (planId: string, device: string, point: DevicePoint, expiresAt: number) => ({
  pk: devicePk(planId, device),
  sk: pointSk(point.at, point.batchId),
  ...point,
  expiresAt,
});

/** A device's `STATE` item: its stored state as JSON (its size is bounded: see `MAX_DEVICE_RULES`). */
export const deviceStateItem = (planId: string, device: string, state: StoredState, expiresAt: number) => ({
  pk: devicePk(planId, device),
  sk: STATE_SK,
  state: JSON.stringify(state),
  expiresAt,
});
