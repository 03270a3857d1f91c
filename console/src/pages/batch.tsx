/** A batch: its status and counts, its devices table, and (for admins) remediation of its findings. */
import { useEffect, useState } from 'preact/hooks';
import { api, p } from '../api.js';
import { batchReports } from '../reports.js';
import { href } from '../route.js';
import type { DeviceRow } from '../table.js';
import type { Batch, Report, Started } from '../types.js';
import { ConfirmAction, ErrorAlert, isAdmin, Loading, Page, useLoad, useRefreshWhile, When, ScrollBox } from '../ui.js';
import { DevicesTable } from './devices-table.js';
import { GradeCells, GradeHeaders } from './grades.js';

const rowOf = (report: Report): DeviceRow => ({
  device: report.device,
  grade: report.grade,
  errors: report.totals.errors,
  warnings: report.totals.warnings,
  reportId: report.reportId,
  ...(report.score !== undefined ? { score: report.score } : {}),
  ...(report.node !== undefined ? { node: report.node } : {}),
});

const devicesOf = (form: FormData): { devices?: string[] } => {
  const devices = String(form.get('devices') ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  return devices.length ? { devices } : {};
};

const Remediate = ({ batchId, mode }: { batchId: string; mode: 'dry-run' | 'apply' }) => (
  <ConfirmAction
    label={mode === 'apply' ? 'Apply remediation' : 'Dry-run remediation'}
    heading={mode === 'apply' ? `Apply remediation to batch ${batchId}` : `Dry-run remediation of batch ${batchId}`}
    danger={mode === 'apply'}
    onConfirm={(form) =>
      api<Started>(p('/configuration_manager/compliance_reports/batches', batchId, 'remediations'), {
        method: 'POST',
        idempotent: true,
        body: { mode, ...devicesOf(form), ...(mode === 'apply' && form.get('commitQueue') === 'on' ? { commitQueue: true } : {}) },
      })
    }
    onDone={(started) => started.remediationId && location.assign(href('remediations', started.remediationId))}
  >
    <p>
      {mode === 'apply'
        ? 'Pushes the changes that fix the failing rules to the devices through the NSO. Every changed device can be rolled back afterwards.'
        : 'Computes the changes that would fix the failing rules and shows them per device; nothing is committed.'}{' '}
      Left empty, Devices means every failing device of the batch.
    </p>
    <label class="field">
      Devices (optional, comma separated)
      <input name="devices" type="text" autoComplete="off" />
    </label>
    {mode === 'apply' && (
      <label class="check">
        <input name="commitQueue" type="checkbox" /> Commit through the NSO commit queue
      </label>
    )}
  </ConfirmAction>
);

const Devices = ({ batch }: { batch: Batch }) => {
  const [rows, setRows] = useState<DeviceRow[]>([]);
  const [progress, setProgress] = useState<{ more: boolean; error?: unknown }>({ more: true });
  useEffect(() => {
    const controller = new AbortController();
    batchReports(
      batch.batchId,
      batch.status !== 'running',
      (reports, more) => {
        setRows(reports.map(rowOf));
        setProgress({ more });
      },
      controller.signal,
    ).catch((error: unknown) => controller.signal.aborted || setProgress({ more: false, error }));
    return () => controller.abort();
  }, [batch.batchId, batch.status]);
  return (
    <section aria-labelledby="devices-title">
      <h2 id="devices-title">Devices</h2>
      {progress.error !== undefined && <ErrorAlert error={progress.error} />}
      {progress.more && (
        <p class="muted">
          Reading reports: {rows.length} of {batch.total}…
        </p>
      )}
      <DevicesTable batchId={batch.batchId} rows={rows} loading={progress.more} />
    </section>
  );
};

/** The `#/batches/<batchId>` page. */
export const BatchPage = ({ batchId }: { batchId: string }) => {
  const loaded = useLoad(() => api<Batch>(p('/configuration_manager/compliance_reports/batches', batchId)), [batchId]);
  useRefreshWhile(loaded.data?.status === 'running', loaded.reload, loaded.data);
  return (
    <Page title={`Batch ${batchId}`}>
      <Loading loaded={loaded}>
        {(batch) => (
          <>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <span class={`status status-${batch.status}`}>{batch.status}</span>
                {batch.reason ? ` (${batch.reason})` : ''}
              </dd>
              <dt>Kind</dt>
              <dd>{batch.kind}</dd>
              {batch.treeId && (
                <>
                  <dt>Tree</dt>
                  <dd>
                    <a href={href('trees', batch.treeId)}>{batch.treeId}</a> version {batch.version}
                  </dd>
                </>
              )}
              {batch.planId && (
                <>
                  <dt>Plan</dt>
                  <dd>
                    <a href={href('plans', batch.planId)}>{batch.planId}</a>
                  </dd>
                </>
              )}
              <dt>Adapter</dt>
              <dd>{batch.adapterId}</dd>
              <dt>Progress</dt>
              <dd>
                {batch.done} of {batch.total} devices
              </dd>
              <dt>Started</dt>
              <dd>
                <When at={batch.started} />
              </dd>
              <dt>Finished</dt>
              <dd>
                <When at={batch.finished} />
              </dd>
              <dt>Rule results</dt>
              <dd>
                {batch.totals.errors} errors, {batch.totals.warnings} warnings, {batch.totals.infos} infos, {batch.totals.passes} passes
              </dd>
            </dl>
            <ScrollBox>
              <table>
                <caption>Devices by grade</caption>
                <thead>
                  <tr>
                    <GradeHeaders />
                  </tr>
                </thead>
                <tbody>
                  <tr>
                    <GradeCells grades={batch.grades} />
                  </tr>
                </tbody>
              </table>
            </ScrollBox>
            <div class="actions">
              <button type="button" class="button secondary" onClick={loaded.reload}>
                Refresh
              </button>
              {isAdmin() && batch.kind === 'compliance' && batch.status === 'completed' && (
                <>
                  <Remediate batchId={batch.batchId} mode="dry-run" />
                  <Remediate batchId={batch.batchId} mode="apply" />
                </>
              )}
            </div>
            <Devices batch={batch} />
          </>
        )}
      </Loading>
    </Page>
  );
};
