/** A device in a batch: rule by rule what was expected and found, its plan history, and its stored configurations with diffs. */
import { useState } from 'preact/hooks';
import { api, apiText, p, readAll } from '../api.js';
import { diffLines, diffStats } from '../diff.js';
import { deviceReport } from '../reports.js';
import { href } from '../route.js';
import { expectation, inheritedRules, jsonText, ruleOutcomes } from '../rules.js';
import type { Batch, DevicePoint, Issue, Report, StoredConfig, TreeVersion } from '../types.js';
import { ErrorAlert, Field, GradeBadge, Loading, Page, ScrollBox, useLoad, When } from '../ui.js';

const IssueRow = ({ issue }: { issue: Issue }) => (
  <tr>
    <th scope="row">{issue.ruleId}</th>
    <td>
      <span class={`severity severity-${issue.severity}`}>{issue.severity}</span>
    </td>
    <td>{issue.mode}</td>
    <td>
      <code>{issue.at ?? issue.path}</code>
    </td>
    <td>
      <code class="value">{jsonText(issue.expected)}</code>
    </td>
    <td>
      <code class="value">{jsonText(issue.actual)}</code>
    </td>
    <td>
      {issue.message}
      {issue.matches !== undefined && <p class="muted">{issue.matches} matching entries</p>}
      {issue.failures && issue.failures.length > 0 && (
        <details>
          <summary>{issue.failures.length + (issue.failuresOmitted ?? 0)} failing entries</summary>
          <ul class="failures">
            {issue.failures.map((failure) => (
              <li key={failure.at}>
                <code>{failure.at}</code>: {failure.message}
                {failure.expected !== undefined && ` (expected ${jsonText(failure.expected)}, found ${jsonText(failure.actual)})`}
              </li>
            ))}
            {issue.failuresOmitted ? <li>and {issue.failuresOmitted} more</li> : null}
          </ul>
        </details>
      )}
    </td>
  </tr>
);

/**
 * Every rule the device's node inherits (as the version reads now), with what was expected and
 * found: a failing rule shows its issues' values (variables resolved), a passing one the rule as
 * written.
 */
const EveryRule = ({ report }: { report: Report }) => {
  const { treeId, version, node } = report;
  const loaded = useLoad(
    async () => (treeId && version && node ? api<TreeVersion>(p('/configuration_manager/configs', treeId, version)) : undefined),
    [treeId, version],
  );
  if (!treeId || !version || !node) return null;
  if (loaded.error !== undefined) return <ErrorAlert error={loaded.error} />;
  if (!loaded.data) return <p class="muted">Loading…</p>;
  const rules = inheritedRules(loaded.data.root, node);
  if (!rules)
    return (
      <p class="muted">
        Node {node} is no longer in version {version}: only the failing rules are shown.
      </p>
    );
  return (
    <ScrollBox>
      <table>
        <caption>Every rule of node {node}: expected against actual</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Outcome</th>
            <th scope="col">Defined on</th>
            <th scope="col">Path</th>
            <th scope="col">Expected</th>
            <th scope="col">Actual</th>
          </tr>
        </thead>
        <tbody>
          {ruleOutcomes(rules, report.issues, report.exempted).map(({ node: definedOn, rule, outcome, issues }) => (
            <tr key={rule.id}>
              <th scope="row">{rule.id}</th>
              <td>
                <GradeBadge grade={outcome} />
              </td>
              <td>{definedOn}</td>
              <td>
                <code>{rule.path}</code>
              </td>
              <td>
                <code class="value">
                  {outcome === 'fail' && issues.some((issue) => issue.expected !== undefined)
                    ? issues.map((issue) => jsonText(issue.expected)).join('; ')
                    : `${rule.mode === 'disallowed' ? 'absent ' : ''}${expectation(rule)}`}
                </code>
              </td>
              <td>
                <code class="value">
                  {outcome === 'fail' ? issues.map((issue) => jsonText(issue.actual)).join('; ') : outcome === 'pass' ? 'as expected' : 'exempted'}
                </code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
};

const Rules = ({ report }: { report: Report }) => (
  <section aria-labelledby="rules-title">
    <h2 id="rules-title">Rules</h2>
    <p>
      {report.totals.passes} rules pass, {report.totals.errors} errors, {report.totals.warnings} warnings, {report.totals.infos} infos.
      {report.reason ? ` ${report.reason}` : ''}
    </p>
    <EveryRule report={report} />
    {report.issues.length === 0 ? (
      <p class="muted">No rule fails on this device.</p>
    ) : (
      <ScrollBox>
        <table>
          <caption>Issues of the failing rules</caption>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Severity</th>
              <th scope="col">Mode</th>
              <th scope="col">Path</th>
              <th scope="col">Expected</th>
              <th scope="col">Actual</th>
              <th scope="col">Issue</th>
            </tr>
          </thead>
          <tbody>
            {report.issues.map((issue) => (
              <IssueRow key={`${issue.ruleId}${issue.node}${issue.at ?? ''}`} issue={issue} />
            ))}
          </tbody>
        </table>
      </ScrollBox>
    )}
    {report.issuesOmitted ? <p class="muted">{report.issuesOmitted} more issues were not stored.</p> : null}
    {report.exempted && report.exempted.length > 0 && (
      <ScrollBox>
        <table>
          <caption>Exempted rules</caption>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Outcome</th>
              <th scope="col">Until</th>
              <th scope="col">Reason</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {report.exempted.map((e) => (
              <tr key={e.exemption.exemptionId}>
                <th scope="row">{e.ruleId}</th>
                <td>{e.outcome}</td>
                <td>
                  <When at={e.exemption.until} />
                </td>
                <td>{e.exemption.reason}</td>
                <td>{e.exemption.by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
    )}
  </section>
);

const PlanHistory = ({ planId, device }: { planId: string; device: string }) => {
  const loaded = useLoad(
    async () =>
      (await api<{ points: DevicePoint[] }>(p('/configuration_manager/compliance_plans', planId, 'devices', device), { query: { limit: '400' } })).points,
    [planId, device],
  );
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History in plan {planId}</h2>
      <Loading loaded={loaded}>
        {(points) => (
          <ScrollBox>
            <table>
              <caption class="visually-hidden">Grades of this device in the plan's batches</caption>
              <thead>
                <tr>
                  <th scope="col">Checked</th>
                  <th scope="col">Batch</th>
                  <th scope="col">Grade</th>
                  <th scope="col">Failing rules</th>
                </tr>
              </thead>
              <tbody>
                {points.map((point) => (
                  <tr key={point.batchId}>
                    <td>
                      <When at={point.at} />
                    </td>
                    <td>
                      <a href={href('batches', point.batchId, 'devices', device)}>{point.batchId}</a>
                    </td>
                    <td>
                      <GradeBadge grade={point.grade} />
                    </td>
                    <td>{point.failing?.join(', ') || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
      </Loading>
    </section>
  );
};

const DiffView = ({ base, configId, against }: { base: string; configId: string; against: string }) => {
  const loaded = useLoad(() => apiText(p(base, configId, 'diff'), { query: { against, format: 'unified' }, accept: 'text/x-diff' }), [configId, against]);
  return (
    <Loading loaded={loaded}>
      {(text) => {
        const lines = diffLines(text);
        const stats = diffStats(lines);
        return (
          <>
            <p>
              {stats.added} lines added, {stats.removed} removed.
            </p>
            <ScrollBox label="Configuration diff" class="diff-box">
              <pre class="diff">
                {lines.map((line, index) => (
                  <span key={index} class={`diff-${line.kind}`}>
                    {line.text}
                    {'\n'}
                  </span>
                ))}
              </pre>
            </ScrollBox>
          </>
        );
      }}
    </Loading>
  );
};

const Configs = ({ adapterId, device }: { adapterId: string; device: string }) => {
  const base = p('/configuration_manager/devices', adapterId, device, 'configs');
  const loaded = useLoad(() => readAll<StoredConfig>(base, {}, { maxItems: 200 }), [base]);
  const [pair, setPair] = useState<{ from: string; to: string } | undefined>();
  return (
    <section aria-labelledby="configs-title">
      <h2 id="configs-title">Configurations over time</h2>
      <Loading loaded={loaded}>
        {(configs) => {
          if (configs.length === 0) return <p class="muted">No configuration of this device is stored.</p>;
          const newest = configs[0] as StoredConfig;
          const chosen = pair ?? (configs[1] ? { from: configs[1].configId, to: newest.configId } : undefined);
          return (
            <>
              <ScrollBox>
                <table>
                  <caption class="visually-hidden">Stored configurations, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Taken</th>
                      <th scope="col">Source</th>
                      <th scope="col">Batch</th>
                      <th scope="col">Grade</th>
                      <th scope="col">Size</th>
                    </tr>
                  </thead>
                  <tbody>
                    {configs.map((config) => (
                      <tr key={config.configId}>
                        <td>
                          <When at={config.takenAt} />
                        </td>
                        <td>{config.source}</td>
                        <td>
                          <a href={href('batches', config.batchId)}>{config.batchId}</a>
                        </td>
                        <td>{config.grade ? <GradeBadge grade={config.grade} /> : '—'}</td>
                        <td class="number">{config.size} B</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
              {chosen ? (
                <>
                  <h3>Diff</h3>
                  <div class="filters">
                    {(['from', 'to'] as const).map((end) => (
                      <Field key={end} label={end === 'from' ? 'Compare from' : 'Compare to'}>
                        {(id) => (
                          <select id={id} value={chosen[end]} onChange={(e) => setPair({ ...chosen, [end]: e.currentTarget.value })}>
                            {configs.map((config) => (
                              <option key={config.configId} value={config.configId}>
                                {new Date(config.takenAt).toLocaleString()} ({config.source})
                              </option>
                            ))}
                          </select>
                        )}
                      </Field>
                    ))}
                  </div>
                  {chosen.from === chosen.to ? (
                    <p class="muted">Choose two different configurations.</p>
                  ) : (
                    <DiffView base={base} configId={chosen.to} against={chosen.from} />
                  )}
                </>
              ) : (
                <p class="muted">Only one configuration is stored: nothing to compare yet.</p>
              )}
            </>
          );
        }}
      </Loading>
    </section>
  );
};

/** The `#/batches/<batchId>/devices/<device>` page. */
export const DevicePage = ({ batchId, device }: { batchId: string; device: string }) => {
  const loaded = useLoad(
    async (signal) => {
      const [batch, report] = await Promise.all([
        api<Batch>(p('/configuration_manager/compliance_reports/batches', batchId)),
        deviceReport(batchId, device, signal),
      ]);
      return { batch, report };
    },
    [batchId, device],
  );
  return (
    <Page title={`Device ${device}`}>
      <p>
        <a href={href('batches', batchId)}>Back to batch {batchId}</a>
      </p>
      <Loading loaded={loaded}>
        {({ batch, report }) => (
          <>
            {report ? (
              <>
                <dl class="facts">
                  <dt>Grade</dt>
                  <dd>
                    <GradeBadge grade={report.grade} />
                    {report.score !== undefined ? ` score ${report.score}` : ''}
                  </dd>
                  <dt>Node</dt>
                  <dd>{report.node ?? '—'}</dd>
                  <dt>Checked</dt>
                  <dd>
                    <When at={report.checkedAt} />
                  </dd>
                  {report.sync && (
                    <>
                      <dt>Sync</dt>
                      <dd>
                        {report.sync.mode}: {report.sync.result}
                        {report.sync.note ? ` (${report.sync.note})` : ''}
                      </dd>
                    </>
                  )}
                </dl>
                <Rules report={report} />
              </>
            ) : (
              <ErrorAlert error={new Error(`Batch ${batchId} has no report for device ${device}.`)} />
            )}
            {batch.planId && <PlanHistory planId={batch.planId} device={device} />}
            <Configs adapterId={batch.adapterId} device={device} />
          </>
        )}
      </Loading>
    </Page>
  );
};
