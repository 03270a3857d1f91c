/** A remediation run: its status and totals, each device's outcome, and (for admins) rolling an applied run back. */
import { api, p, readAll } from '../api.js';
import { href } from '../route.js';
import { jsonText } from '../rules.js';
import type { Remediation, Started } from '../types.js';
import { ConfirmAction, isAdmin, Loading, Page, useLoad, useRefreshWhile, When, ScrollBox } from '../ui.js';

interface RemediationDevice {
  readonly device: string;
  readonly state: string;
  readonly dryRun?: unknown;
  readonly gradeAfter?: string;
  readonly error?: { readonly kind: string; readonly reason: string };
  readonly rollback?: { readonly state: string };
  readonly rules?: readonly { readonly ruleId: string; readonly edits?: readonly string[]; readonly unremediable?: string; readonly exempted?: unknown }[];
}

/** What the run does about each failing rule of a device: its edits, why it cannot, or its exemption. */
const ruleLine = (rule: NonNullable<RemediationDevice['rules']>[number]): string =>
  `${rule.ruleId}: ${rule.edits ? `${rule.edits.length} edits` : rule.unremediable ? `not remediable (${rule.unremediable})` : 'exempted'}`;

/** Whether an admin may roll this run back: an applied run that has ended and was not rolled back already. */
const canRollBack = (run: Remediation): boolean =>
  run.mode === 'apply' && run.status !== 'running' && (run.rollback === undefined || (run.rollback as { status?: string }).status === 'failed');

/** The `#/remediations/<remediationId>` page. */
export const RemediationPage = ({ remediationId }: { remediationId: string }) => {
  const path = p('/configuration_manager/remediations', remediationId);
  const loaded = useLoad(
    async (signal) => ({
      run: await api<Remediation>(path),
      devices: await readAll<RemediationDevice>(`${path}/devices`, {}, { signal, maxItems: 1000 }),
    }),
    [path],
  );
  const run = loaded.data?.run;
  useRefreshWhile(run?.status === 'running' || (run?.rollback as { status?: string } | undefined)?.status === 'running', loaded.reload, loaded.data);
  return (
    <Page title={`Remediation ${remediationId}`}>
      <Loading loaded={loaded}>
        {({ run, devices }) => (
          <>
            <dl class="facts">
              <dt>Batch</dt>
              <dd>
                <a href={href('batches', run.batchId)}>{run.batchId}</a>
              </dd>
              <dt>Mode</dt>
              <dd>{run.mode}</dd>
              <dt>Status</dt>
              <dd>
                <span class={`status status-${run.status}`}>{run.status}</span>
                {run.reason ? ` (${run.reason})` : ''}
              </dd>
              <dt>Started</dt>
              <dd>
                <When at={run.started} />
              </dd>
              <dt>Totals</dt>
              <dd>
                {Object.entries(run.totals ?? {})
                  .map(([key, value]) => `${key} ${value}`)
                  .join(', ')}
              </dd>
              {run.rollback !== undefined && (
                <>
                  <dt>Rollback</dt>
                  <dd>{(run.rollback as { status?: string }).status}</dd>
                </>
              )}
            </dl>
            <div class="actions">
              <button type="button" class="button secondary" onClick={loaded.reload}>
                Refresh
              </button>
              {isAdmin() && canRollBack(run) && (
                <ConfirmAction
                  label="Roll back"
                  heading={`Roll back remediation ${remediationId}?`}
                  danger
                  onConfirm={() => api<Started>(`${path}/rollback`, { method: 'POST' })}
                  onDone={loaded.reload}
                >
                  <p>Applies each changed device's NSO rollback file, returning it to its configuration before this run.</p>
                </ConfirmAction>
              )}
            </div>
            <ScrollBox>
              <table>
                <caption>Devices of the run</caption>
                <thead>
                  <tr>
                    <th scope="col">Device</th>
                    <th scope="col">State</th>
                    <th scope="col">Grade after</th>
                    <th scope="col">Rollback</th>
                    <th scope="col">Detail</th>
                  </tr>
                </thead>
                <tbody>
                  {devices.map((d) => (
                    <tr key={d.device}>
                      <th scope="row">
                        <a href={href('batches', run.batchId, 'devices', d.device)}>{d.device}</a>
                      </th>
                      <td>{d.state}</td>
                      <td>{d.gradeAfter ?? '—'}</td>
                      <td>{d.rollback?.state ?? '—'}</td>
                      <td>
                        {d.error ? `${d.error.kind}: ${d.error.reason}` : ''}
                        {d.rules && d.rules.length > 0 && (
                          <ul class="failures">
                            {d.rules.map((rule) => (
                              <li key={rule.ruleId}>{ruleLine(rule)}</li>
                            ))}
                          </ul>
                        )}
                        {d.dryRun !== undefined && (
                          <details>
                            <summary>Dry-run output</summary>
                            <pre class="output">{jsonText(d.dryRun)}</pre>
                          </details>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          </>
        )}
      </Loading>
    </Page>
  );
};
