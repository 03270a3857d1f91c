/** Fleet overview: the latest grades per tree and per plan, and the trend of one tree's batches. */
import { useState } from 'preact/hooks';
import { api, readAll } from '../api.js';
import { TrendChart, trendPointOf } from '../chart.js';
import { href } from '../route.js';
import { latestPerTree } from '../trend.js';
import type { Batch, Plan, Tree } from '../types.js';
import { Field, Loading, Page, ScrollBox, useLoad, When } from '../ui.js';
import { GradeCells, GradeHeaders } from './grades.js';

/** How many of the newest batches the overview reads. */
const RECENT_BATCHES = 400;

const TreeTrend = ({ batches, trees, names }: { batches: readonly Batch[]; trees: readonly Batch[]; names: ReadonlyMap<string, string> }) => {
  const [treeId, setTreeId] = useState(trees[0]?.treeId ?? '');
  const points = batches.filter((b) => b.kind === 'compliance' && b.status === 'completed' && b.treeId === treeId).map(trendPointOf);
  return (
    <section aria-labelledby="trend-title">
      <h2 id="trend-title">Trend</h2>
      <Field label="Tree">
        {(id) => (
          <select id={id} value={treeId} onChange={(e) => setTreeId(e.currentTarget.value)}>
            {trees.map((b) => (
              <option key={b.treeId} value={b.treeId}>
                {names.get(b.treeId ?? '') ?? b.treeId}
              </option>
            ))}
          </select>
        )}
      </Field>
      <TrendChart points={points} />
    </section>
  );
};

/** The `#/` page. */
export const OverviewPage = () => {
  const loaded = useLoad(async (signal) => {
    const [batches, plans, trees] = await Promise.all([
      readAll<Batch>('/configuration_manager/compliance_reports/batches', { limit: '200', kind: 'compliance' }, { maxItems: RECENT_BATCHES, signal }),
      readAll<Plan>('/configuration_manager/compliance_plans', { limit: '100' }, { signal }),
      readAll<Tree>('/configuration_manager/configs', { limit: '100' }, { signal }),
    ]);
    const planBatches = await Promise.all(
      plans.map((plan) =>
        plan.lastBatch
          ? (batches.find((b) => b.batchId === plan.lastBatch?.batchId) ??
            api<Batch>(`/configuration_manager/compliance_reports/batches/${encodeURIComponent(plan.lastBatch.batchId)}`).catch(() => undefined))
          : undefined,
      ),
    );
    return { batches, plans, planBatches, names: new Map(trees.map((tree) => [tree.id, tree.name])) };
  }, []);
  return (
    <Page title="Fleet overview">
      <Loading loaded={loaded}>
        {({ batches, plans, planBatches, names }) => {
          const trees = latestPerTree(batches);
          return (
            <>
              <section aria-labelledby="trees-title">
                <h2 id="trees-title">Latest grades per tree</h2>
                {trees.length === 0 ? (
                  <p class="muted">No compliance batch has completed yet. Start one from the Batches page.</p>
                ) : (
                  <ScrollBox>
                    <table>
                      <caption class="visually-hidden">Latest grades per tree</caption>
                      <thead>
                        <tr>
                          <th scope="col">Tree</th>
                          <th scope="col">Version</th>
                          <th scope="col">Batch</th>
                          <th scope="col">Finished</th>
                          <th scope="col">Devices</th>
                          <GradeHeaders />
                        </tr>
                      </thead>
                      <tbody>
                        {trees.map((b) => (
                          <tr key={b.treeId}>
                            <th scope="row">
                              <a href={href('trees', b.treeId ?? '')}>{names.get(b.treeId ?? '') ?? b.treeId}</a>
                            </th>
                            <td>{b.version}</td>
                            <td>
                              <a href={href('batches', b.batchId)}>{b.batchId}</a>
                            </td>
                            <td>
                              <When at={b.finished} />
                            </td>
                            <td class="number">{b.total}</td>
                            <GradeCells grades={b.grades} />
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </ScrollBox>
                )}
              </section>
              {plans.length > 0 && (
                <section aria-labelledby="plans-title">
                  <h2 id="plans-title">Latest grades per plan</h2>
                  <ScrollBox>
                    <table>
                      <caption class="visually-hidden">Latest grades per plan</caption>
                      <thead>
                        <tr>
                          <th scope="col">Plan</th>
                          <th scope="col">Tree</th>
                          <th scope="col">Last batch</th>
                          <th scope="col">Devices</th>
                          <GradeHeaders />
                        </tr>
                      </thead>
                      <tbody>
                        {plans.map((plan, index) => {
                          const batch = planBatches[index];
                          return (
                            <tr key={plan.planId}>
                              <th scope="row">
                                <a href={href('plans', plan.planId)}>{plan.name}</a>
                              </th>
                              <td>
                                {names.get(plan.treeId) ?? plan.treeId} {plan.version}
                              </td>
                              <td>{batch ? <a href={href('batches', batch.batchId)}>{batch.batchId}</a> : 'not run yet'}</td>
                              <td class="number">{batch?.total ?? '—'}</td>
                              {batch ? <GradeCells grades={batch.grades} /> : <td colSpan={6}>—</td>}
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  </ScrollBox>
                </section>
              )}
              {trees.length > 0 && <TreeTrend batches={batches} trees={trees} names={names} />}
            </>
          );
        }}
      </Loading>
    </Page>
  );
};
