/** Batches: the list, newest first, page by page; admins start a compliance batch here. */
import { useState } from 'preact/hooks';
import { api, type Page as ApiPage, readAll } from '../api.js';
import { href, versionAddresses } from '../route.js';
import type { Adapter, Batch, Started, Tree } from '../types.js';
import { ConfirmAction, ErrorAlert, Field, isAdmin, Loading, Page, ScrollBox, useLoad, When } from '../ui.js';

const StartBatchFields = ({ trees, adapters }: { trees: readonly Tree[]; adapters: readonly Adapter[] }) => {
  const [treeId, setTreeId] = useState(trees[0]?.id ?? '');
  const versions = versionAddresses(trees.find((tree) => tree.id === treeId)?.versions ?? []);
  return (
    <div class="fields">
      <Field label="Tree">
        {(id) => (
          <select id={id} name="treeId" required value={treeId} onChange={(e) => setTreeId(e.currentTarget.value)}>
            {trees.map((tree) => (
              <option key={tree.id} value={tree.id}>
                {tree.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Version">
        {(id) => (
          <select id={id} name="version" required key={treeId}>
            {[...versions].reverse().map((version) => (
              <option key={version.address} value={version.address}>
                {version.address}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Adapter">
        {(id) => (
          <select id={id} name="adapterId" required>
            {adapters
              .filter((adapter) => !adapter.problem)
              .map((adapter) => (
                <option key={adapter.name} value={adapter.name}>
                  {adapter.name}
                </option>
              ))}
          </select>
        )}
      </Field>
      <label class="field">
        Devices (optional, comma separated)
        <input name="devices" type="text" autoComplete="off" aria-describedby="start-devices-hint" />
      </label>
      <p id="start-devices-hint" class="muted">
        Left empty, the batch checks every device the chosen tree version assigns.
      </p>
      <Field label="Sync">
        {(id) => (
          <select id={id} name="sync">
            <option value="check">check (report drift from the NSO)</option>
            <option value="none">none</option>
            <option value="sync-from">sync-from (pull from devices first)</option>
          </select>
        )}
      </Field>
    </div>
  );
};

const StartBatch = ({ onStarted }: { onStarted: (batchId: string) => void }) => {
  const choices = useLoad(
    async (signal) => ({
      trees: await readAll<Tree>('/configuration_manager/configs', { limit: '100' }, { signal }),
      adapters: await readAll<Adapter>('/adapters', {}, { signal }),
    }),
    [],
  );
  if (choices.error !== undefined) return <ErrorAlert error={choices.error} />;
  if (!choices.data) return null;
  const { trees, adapters } = choices.data;
  return (
    <ConfirmAction
      label="Start batch"
      heading="Start a compliance batch"
      onConfirm={(form) => {
        const devices = String(form.get('devices') ?? '')
          .split(',')
          .map((d) => d.trim())
          .filter(Boolean);
        return api<Started>('/configuration_manager/compliance_reports', {
          method: 'POST',
          idempotent: true,
          body: {
            treeId: form.get('treeId'),
            version: form.get('version'),
            adapterId: form.get('adapterId'),
            sync: form.get('sync'),
            ...(devices.length ? { devices } : {}),
          },
        });
      }}
      onDone={(started) => started.batchId && onStarted(started.batchId)}
    >
      <StartBatchFields trees={trees} adapters={adapters} />
    </ConfirmAction>
  );
};

/** The `#/batches` page. */
export const BatchesPage = () => {
  const [pages, setPages] = useState<Batch[][]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [moreError, setMoreError] = useState<unknown>();
  const first = useLoad(async () => {
    const page = await api<ApiPage<Batch>>('/configuration_manager/compliance_reports/batches', { query: { limit: '50' } });
    setPages([]);
    setCursor(page.next);
    return page.items;
  }, []);
  const more = async () => {
    setMoreError(undefined);
    try {
      const page = await api<ApiPage<Batch>>('/configuration_manager/compliance_reports/batches', { query: { limit: '50', cursor } });
      setPages((previous) => [...previous, page.items]);
      setCursor(page.next);
    } catch (error) {
      setMoreError(error);
    }
  };
  return (
    <Page title="Batches">
      {isAdmin() && (
        <div class="actions">
          <StartBatch onStarted={(batchId) => location.assign(href('batches', batchId))} />
        </div>
      )}
      <Loading loaded={first}>
        {(items) => {
          const batches = [...items, ...pages.flat()];
          if (batches.length === 0) return <p class="muted">No batch yet.</p>;
          return (
            <>
              <ScrollBox>
                <table>
                  <caption class="visually-hidden">Batches, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Batch</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Tree</th>
                      <th scope="col">Adapter</th>
                      <th scope="col">Status</th>
                      <th scope="col">Devices</th>
                      <th scope="col">Pass</th>
                      <th scope="col">Fail</th>
                      <th scope="col">Started</th>
                    </tr>
                  </thead>
                  <tbody>
                    {batches.map((b) => (
                      <tr key={b.batchId}>
                        <th scope="row">
                          <a href={href('batches', b.batchId)}>{b.batchId}</a>
                        </th>
                        <td>{b.kind}</td>
                        <td>{b.treeId ? `${b.treeId} ${b.version ?? ''}` : '—'}</td>
                        <td>{b.adapterId}</td>
                        <td>
                          <span class={`status status-${b.status}`}>{b.status}</span>
                        </td>
                        <td class="number">
                          {b.done}/{b.total}
                        </td>
                        <td class="number">{b.grades.pass}</td>
                        <td class="number">{b.grades.fail}</td>
                        <td>
                          <When at={b.started} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
              {moreError !== undefined && <ErrorAlert error={moreError} />}
              {cursor && (
                <button type="button" class="button secondary" onClick={more}>
                  Load more batches
                </button>
              )}
            </>
          );
        }}
      </Loading>
    </Page>
  );
};
