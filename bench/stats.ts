/**
 * The benchmark's arithmetic, free of I/O: percentiles over samples, paired comparisons, and
 * the fixed-width table `npm run bench` prints. Every figure the bench reports goes through
 * these functions, so they are unit-tested (`test/unit/bench-stats.test.ts`).
 */

/** The figures reported for one series of measurements. */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * The `p`-th percentile (0–100) of `samples`, by linear interpolation between the closest
 * ranks (the definition of numpy's default and of Excel's PERCENTILE.INC): the median of
 * `[1, 2, 3, 4]` is 2.5. Throws on an empty series or a `p` outside 0–100.
 */
export const percentile = (samples: readonly number[], p: number): number => {
  if (samples.length === 0) throw new RangeError('percentile of an empty series');
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be from 0 to 100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low]!;
  return lowValue + (sorted[high]! - lowValue) * (rank - low);
};

/** The median (50th percentile). */
export const median = (samples: readonly number[]): number => percentile(samples, 50);

/** n, median, p90, p99, min, max and mean of a non-empty series. */
export const summarize = (samples: readonly number[]): Summary => {
  if (samples.length === 0) throw new RangeError('summary of an empty series');
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const s of samples) {
    if (s < min) min = s;
    if (s > max) max = s;
    sum += s;
  }
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    min,
    max,
    mean: sum / samples.length,
  };
};

/**
 * Element-wise differences `a[i] - b[i]` of two series measured in alternation (run i of A
 * next to run i of B), so that drift of the machine cancels out pair by pair.
 */
export const pairedDifferences = (a: readonly number[], b: readonly number[]): number[] => {
  if (a.length !== b.length) throw new RangeError(`paired series differ in length: ${a.length} and ${b.length}`);
  return a.map((value, i) => value - b[i]!);
};

/**
 * `numerator / denominator`, or `undefined` when the denominator is not a positive number
 * (a ratio over a floor of zero or less says nothing).
 */
export const ratio = (numerator: number, denominator: number): number | undefined =>
  denominator > 0 && Number.isFinite(numerator) ? numerator / denominator : undefined;

/**
 * The order in which variants run in round `round` of an alternated series: the list rotated
 * by the round number, so every variant runs in every position equally often and none always
 * runs first (right after a pause) or last.
 */
export const rotation = <T>(variants: readonly T[], round: number): T[] => {
  if (variants.length === 0) return [];
  const shift = ((round % variants.length) + variants.length) % variants.length;
  return [...variants.slice(shift), ...variants.slice(0, shift)];
};

/** A number for the table: fixed decimals, `–` for a missing value. */
export const formatNumber = (value: number | undefined, decimals = 1): string =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(decimals);

/** Bytes as KiB with one decimal (`412.3 KiB`). */
export const formatBytes = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

export type Align = 'left' | 'right';

/**
 * A plain-text table: a header row, a rule, then the rows, columns padded to their widest
 * cell. Columns are right-aligned (numbers) unless `align` says otherwise; the first column
 * is left-aligned by default. Rows shorter than the header are padded with empty cells.
 */
export const formatTable = (header: readonly string[], rows: readonly (readonly string[])[], align: readonly Align[] = []): string => {
  const columns = header.length;
  const cells = [header, ...rows].map((row) => Array.from({ length: columns }, (_, i) => row[i] ?? ''));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...cells.map((row) => [...row[i]!].length)));
  const alignment = (i: number): Align => align[i] ?? (i === 0 ? 'left' : 'right');
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => {
        const pad = ' '.repeat(widths[i]! - [...cell].length);
        return alignment(i) === 'left' ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
};

/** The verdict of one target: what was measured, the limit, and whether it holds. */
export interface TargetResult {
  readonly name: string;
  /** What was measured, in words with its unit (`1.07×`, `23.4 µs`). */
  readonly measured: string;
  readonly limit: string;
  readonly pass: boolean;
}

/**
 * Checks `value <= limit`. A missing value (a floor of zero, a measurement that could not be
 * made) fails: a target is only met when it was shown to be met.
 */
export const atMost = (name: string, value: number | undefined, limit: number, unit: string, decimals = 2): TargetResult => ({
  name,
  measured: value === undefined || !Number.isFinite(value) ? 'not measured' : `${value.toFixed(decimals)}${unit}`,
  limit: `≤ ${limit.toFixed(decimals)}${unit}`,
  pass: value !== undefined && Number.isFinite(value) && value <= limit,
});
