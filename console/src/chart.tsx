/** The compliance trend: a hand-drawn SVG line of the pass share per batch, and a table of the same points. */
import { href } from './route.js';
import { type ChartBox, linePath, plot, type TrendPoint } from './trend.js';
import { ScrollBox, When } from './ui.js';

const BOX: ChartBox = { width: 640, height: 240, left: 44, right: 16, top: 12, bottom: 28 };
const TICKS = [0, 25, 50, 75, 100];

/** The trend of `points` (batches with devices), as a chart and a table; a sentence when there is none. */
export const TrendChart = ({ points: all }: { points: readonly TrendPoint[] }) => {
  // A batch that checked no device has no pass share to draw.
  const points = all.filter((point) => point.total > 0);
  if (points.length === 0) return <p class="muted">No completed batch with devices yet: no trend to draw.</p>;
  const plotted = plot(points, BOX);
  const y = (percent: number) => BOX.top + (1 - percent / 100) * (BOX.height - BOX.top - BOX.bottom);
  return (
    <figure class="trend">
      <svg role="img" aria-label="Compliance trend" viewBox={`0 0 ${BOX.width} ${BOX.height}`} class="trend-chart">
        {TICKS.map((tick) => (
          <g key={tick}>
            <line x1={BOX.left} x2={BOX.width - BOX.right} y1={y(tick)} y2={y(tick)} class="trend-grid" />
            <text x={BOX.left - 6} y={y(tick) + 4} class="trend-label" text-anchor="end">
              {tick}%
            </text>
          </g>
        ))}
        <path d={linePath(plotted)} class="trend-line" />
        {plotted.map((p) => (
          <circle key={p.point.batchId} cx={p.x} cy={p.y} r={4} class="trend-dot" />
        ))}
        <text x={BOX.left} y={BOX.height - 8} class="trend-label">
          {new Date(plotted[0]?.point.at ?? '').toLocaleDateString()}
        </text>
        <text x={BOX.width - BOX.right} y={BOX.height - 8} class="trend-label" text-anchor="end">
          {new Date(plotted[plotted.length - 1]?.point.at ?? '').toLocaleDateString()}
        </text>
      </svg>
      <figcaption class="muted">Share of devices graded pass, per batch.</figcaption>
      <ScrollBox>
        <table>
          <caption>Compliance trend points</caption>
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Started</th>
              <th scope="col">Devices</th>
              <th scope="col">Pass</th>
              <th scope="col">Fail</th>
              <th scope="col">Pass share</th>
            </tr>
          </thead>
          <tbody>
            {[...plotted].reverse().map((p) => (
              <tr key={p.point.batchId}>
                <td>
                  <a href={href('batches', p.point.batchId)}>{p.point.batchId}</a>
                </td>
                <td>
                  <When at={p.point.at} />
                </td>
                <td>{p.point.total}</td>
                <td>{p.point.pass}</td>
                <td>{p.point.fail}</td>
                <td>{p.percent.toFixed(1)}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </figure>
  );
};

/** A batch (or a plan's trend item) as a trend point. */
export const trendPointOf = (batch: { batchId: string; started: string; total: number; grades: { pass: number; fail: number } }): TrendPoint => ({
  batchId: batch.batchId,
  at: batch.started,
  total: batch.total,
  pass: batch.grades.pass,
  fail: batch.grades.fail,
});
