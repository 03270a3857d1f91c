/** The batch devices table's logic, DOM-free: filtering, sorting and the window of rows to render. */

/** The grades a report can carry, best first (the order the Grade filter lists them). */
export const GRADES = ['pass', 'review', 'fail', 'error', 'out-of-sync', 'kept'] as const;
export type Grade = (typeof GRADES)[number];

/** One row of the devices table. */
export interface DeviceRow {
  readonly device: string;
  readonly grade: Grade;
  readonly score?: number;
  readonly errors: number;
  readonly warnings: number;
  readonly node?: string;
  readonly reportId: string;
}

export type SortKey = 'device' | 'grade' | 'score' | 'errors' | 'warnings';
export type SortDirection = 'ascending' | 'descending';

// One collator for every comparison: `localeCompare` with options builds one per call, too slow for 10,000 rows.
const names = new Intl.Collator(undefined, { numeric: true });

const compareKey =
  (key: SortKey) =>
  (a: DeviceRow, b: DeviceRow): number => {
    switch (key) {
      case 'device':
        return names.compare(a.device, b.device);
      case 'grade':
        return GRADES.indexOf(a.grade) - GRADES.indexOf(b.grade);
      case 'score':
        // A report without a score (an error) sorts below every scored one.
        return (a.score ?? -1) - (b.score ?? -1);
      default:
        return a[key] - b[key];
    }
  };

/**
 * The rows matching a grade (`''` for all) and a case-insensitive search on the device name,
 * sorted by `key` (ties by device name, so the order is stable across loads).
 */
export const visibleRows = (
  rows: readonly DeviceRow[],
  { grade, search, key, direction }: { grade: Grade | ''; search: string; key: SortKey; direction: SortDirection },
): DeviceRow[] => {
  const needle = search.trim().toLowerCase();
  const byKey = compareKey(key);
  const byDevice = compareKey('device');
  const sign = direction === 'ascending' ? 1 : -1;
  return rows
    .filter((row) => (grade === '' || row.grade === grade) && (needle === '' || row.device.toLowerCase().includes(needle)))
    .sort((a, b) => sign * byKey(a, b) || byDevice(a, b));
};

/** The slice of rows to put in the DOM and the space above and below it, in pixels. */
export interface RowWindow {
  readonly start: number;
  readonly end: number;
  readonly padTop: number;
  readonly padBottom: number;
}

/**
 * The rows a scrolled viewport shows, with `overscan` rows either side so a fast scroll or a
 * keyboard move never reveals an empty band. Rows have one fixed height (the stylesheet's).
 */
export const rowWindow = (count: number, scrollTop: number, viewport: number, rowHeight: number, overscan = 10): RowWindow => {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const shown = Math.ceil(Math.max(0, viewport) / rowHeight) + 1;
  const start = Math.max(0, Math.min(count, first - overscan));
  const end = Math.max(start, Math.min(count, first + shown + overscan));
  return { start, end, padTop: start * rowHeight, padBottom: (count - end) * rowHeight };
};
