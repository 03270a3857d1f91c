/** The trend chart's geometry and the overview's choice of batches, DOM-free. */
import type { Batch } from './types.js';

/** One batch on the trend: when, and its devices by grade. */
export interface TrendPoint {
  readonly batchId: string;
  readonly at: string;
  readonly total: number;
  readonly pass: number;
  readonly fail: number;
}

/** The share of a point's devices that pass, 0 to 100 (0 for a batch of no devices). */
export const passPercent = (point: TrendPoint): number => (point.total > 0 ? (100 * point.pass) / point.total : 0);

/** A plotted point: its place in the box and the share it stands for. */
export interface Plotted {
  readonly x: number;
  readonly y: number;
  readonly percent: number;
  readonly point: TrendPoint;
}

/** The chart box: its size and the inner margins for the axes' labels. */
export interface ChartBox {
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

/**
 * Places points by time (x, oldest left; equal times, or a single point, spread evenly) and pass
 * share (y, 0 % at the bottom, 100 % at the top).
 */
export const plot = (points: readonly TrendPoint[], box: ChartBox): Plotted[] => {
  const sorted = [...points].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const times = sorted.map((point) => Date.parse(point.at));
  const first = times[0] ?? 0;
  const span = (times[times.length - 1] ?? 0) - first;
  const innerWidth = box.width - box.left - box.right;
  const innerHeight = box.height - box.top - box.bottom;
  return sorted.map((point, index) => {
    const share = span > 0 ? ((times[index] as number) - first) / span : sorted.length > 1 ? index / (sorted.length - 1) : 0.5;
    const percent = passPercent(point);
    return { x: box.left + share * innerWidth, y: box.top + (1 - percent / 100) * innerHeight, percent, point };
  });
};

/** The SVG path through plotted points (`M x y L x y …`), rounded to tenths. */
export const linePath = (plotted: readonly Plotted[]): string =>
  plotted.map((p, index) => `${index === 0 ? 'M' : 'L'}${Math.round(p.x * 10) / 10} ${Math.round(p.y * 10) / 10}`).join(' ');

/** The newest completed compliance batch of each tree, newest first (`batches` come newest first). */
export const latestPerTree = (batches: readonly Batch[]): Batch[] => {
  const seen = new Map<string, Batch>();
  for (const batch of batches) {
    if (batch.kind === 'compliance' && batch.status === 'completed' && batch.treeId && !seen.has(batch.treeId)) seen.set(batch.treeId, batch);
  }
  return [...seen.values()];
};
