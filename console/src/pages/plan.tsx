/** A compliance plan: its settings, its trend over the batches it ran, and their history. */
import { api, p } from '../api.js';
import { TrendChart, trendPointOf } from '../chart.js';
import { href } from '../route.js';
import type { Plan, Tree, TrendItem } from '../types.js';
import { Loading, Page, useLoad, When, ScrollBox } from '../ui.js';
import { GradeCells, GradeHeaders } from './grades.js';

/** The `#/plans/<planId>` page. */
export const PlanPage = ({ planId }: { planId: string }) => {
  const loaded = useLoad(async () => {
    const [plan, trend] = await Promise.all([
      api<Plan>(p('/configuration_manager/compliance_plans', planId)),
      api<{ items: TrendItem[] }>(p('/configuration_manager/compliance_plans', planId, 'trend')),
    ]);
    // The tree's name, for people; a tree deleted since leaves its id (the plan then says it is broken).
    const tree = await api<Tree>(p('/configuration_manager/configs', plan.treeId)).catch(() => undefined);
    return { plan, trend: trend.items, treeName: tree?.name ?? plan.treeId };
  }, [planId]);
  return (
    <Page title={`Plan ${loaded.data?.plan.name ?? planId}`}>
      <Loading loaded={loaded}>
        {({ plan, trend, treeName }) => {
          const completed = trend.filter((item) => item.status === 'completed');
          return (
            <>
              <dl class="facts">
                <dt>Tree</dt>
                <dd>
                  <a href={href('trees', plan.treeId)}>{treeName}</a> version {plan.version}
                </dd>
                <dt>Adapter</dt>
                <dd>{plan.adapterId}</dd>
                <dt>Schedule</dt>
                <dd>
                  {plan.schedule ?? 'on demand'}
                  {plan.enabled ? '' : ' (disabled)'}
                </dd>
                <dt>Next run</dt>
                <dd>
                  <When at={plan.nextRunAt} />
                </dd>
                {plan.broken && (
                  <>
                    <dt>Broken</dt>
                    <dd>
                      {plan.broken.reason}: {plan.broken.detail}
                    </dd>
                  </>
                )}
              </dl>
              <h2>Trend</h2>
              <TrendChart points={completed.map(trendPointOf)} />
              <h2>History</h2>
              {trend.length === 0 ? (
                <p class="muted">The plan has not run yet.</p>
              ) : (
                <ScrollBox>
                  <table>
                    <caption class="visually-hidden">The plan's batches, newest first</caption>
                    <thead>
                      <tr>
                        <th scope="col">Batch</th>
                        <th scope="col">Status</th>
                        <th scope="col">Started</th>
                        <th scope="col">Devices</th>
                        <GradeHeaders />
                      </tr>
                    </thead>
                    <tbody>
                      {[...trend].reverse().map((item) => (
                        <tr key={item.batchId}>
                          <th scope="row">
                            <a href={href('batches', item.batchId)}>{item.batchId}</a>
                          </th>
                          <td>{item.status}</td>
                          <td>
                            <When at={item.started} />
                          </td>
                          <td class="number">{item.total}</td>
                          <GradeCells grades={item.grades} />
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </ScrollBox>
              )}
            </>
          );
        }}
      </Loading>
    </Page>
  );
};
