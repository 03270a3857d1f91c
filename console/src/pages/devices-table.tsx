/**
 * The batch devices table: sort, grade filter and name search over every device, with only the
 * rows in view in the DOM (fixed row height, a spacer row above and below), so 10,000 devices
 * stay responsive. Spacer heights are set through the CSSOM (Preact's style object writes
 * `element.style`), which the console's CSP (`style-src 'self'`) allows, unlike a style attribute.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { href } from '../route.js';
import { type DeviceRow, GRADES, type Grade, rowWindow, type SortDirection, type SortKey, visibleRows } from '../table.js';
import { Field, GradeBadge } from '../ui.js';

/** Must equal `.devices-table tbody tr` height in styles.css. */
export const ROW_HEIGHT = 40;

const COLUMNS: readonly { key: SortKey; label: string }[] = [
  { key: 'device', label: 'Device' },
  { key: 'grade', label: 'Grade' },
  { key: 'score', label: 'Score' },
  { key: 'errors', label: 'Errors' },
  { key: 'warnings', label: 'Warnings' },
];

/** The devices of batch `batchId`. */
export const DevicesTable = ({ batchId, rows, loading }: { batchId: string; rows: readonly DeviceRow[]; loading: boolean }) => {
  const [grade, setGrade] = useState<Grade | ''>('');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; direction: SortDirection }>({ key: 'device', direction: 'ascending' });
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(600);
  const scroller = useRef<HTMLDivElement>(null);
  const shown = useMemo(() => visibleRows(rows, { grade, search, ...sort }), [rows, grade, search, sort]);
  const view = rowWindow(shown.length, scrollTop, viewport, ROW_HEIGHT);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setViewport(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  // A new filter or order starts at the top.
  useEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0;
    setScrollTop(0);
  }, [grade, search, sort]);

  const sortBy = (key: SortKey) =>
    setSort((previous) => ({ key, direction: previous.key === key && previous.direction === 'ascending' ? 'descending' : 'ascending' }));

  return (
    <div class="devices">
      <div class="filters">
        <label class="field">
          Search devices
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} autoComplete="off" />
        </label>
        <Field label="Grade">
          {(id) => (
            <select id={id} value={grade} onChange={(e) => setGrade(e.currentTarget.value as Grade | '')}>
              <option value="">All</option>
              {GRADES.map((g) => (
                <option key={g} value={g}>
                  {g}
                </option>
              ))}
            </select>
          )}
        </Field>
        <p role="status" class="count">
          {shown.length} devices
        </p>
      </div>
      <div class="virtual-scroll" ref={scroller} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}>
        <table aria-label="Devices" aria-rowcount={shown.length + 1} class="devices-table">
          <thead>
            <tr aria-rowindex={1}>
              {COLUMNS.map((column) => (
                <th key={column.key} scope="col" aria-sort={sort.key === column.key ? sort.direction : 'none'} class={column.key === 'device' ? '' : 'number'}>
                  <button type="button" class="sort" onClick={() => sortBy(column.key)}>
                    {column.label}
                    <span aria-hidden="true" class="sort-mark">
                      {sort.key === column.key ? (sort.direction === 'ascending' ? '▲' : '▼') : ''}
                    </span>
                  </button>
                </th>
              ))}
              <th scope="col">Node</th>
            </tr>
          </thead>
          <tbody>
            {view.padTop > 0 && (
              <tr class="spacer">
                <td colSpan={6} style={{ height: `${view.padTop}px` }} />
              </tr>
            )}
            {shown.slice(view.start, view.end).map((row, offset) => (
              <tr key={row.reportId} aria-rowindex={view.start + offset + 2}>
                <th scope="row">
                  <a href={href('batches', batchId, 'devices', row.device)}>{row.device}</a>
                </th>
                <td>
                  <GradeBadge grade={row.grade} />
                </td>
                <td class="number">{row.score === undefined ? '—' : row.score}</td>
                <td class="number">{row.errors}</td>
                <td class="number">{row.warnings}</td>
                <td>{row.node ?? '—'}</td>
              </tr>
            ))}
            {view.padBottom > 0 && (
              <tr class="spacer">
                <td colSpan={6} style={{ height: `${view.padBottom}px` }} />
              </tr>
            )}
          </tbody>
        </table>
        {shown.length === 0 && !loading && <p class="muted empty">{rows.length === 0 ? 'This batch has no device report.' : 'No device matches.'}</p>}
      </div>
    </div>
  );
};
