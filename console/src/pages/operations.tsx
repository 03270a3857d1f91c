/** Adapters and applications: their state and health; admins stop and start adapters. */
import { ApiError, api, p, readAll } from '../api.js';
import type { Adapter, AdapterHealth, Application, ApplicationHealth } from '../types.js';
import { ConfirmAction, ErrorAlert, isAdmin, Loading, Page, useLoad, When, ScrollBox } from '../ui.js';

const AdapterAction = ({ name, action, onDone }: { name: string; action: 'stop' | 'start'; onDone: () => void }) => (
  <ConfirmAction
    label={`${action === 'stop' ? 'Stop' : 'Start'} adapter ${name}`}
    heading={`${action === 'stop' ? 'Stop' : 'Start'} adapter ${name}?`}
    danger={action === 'stop'}
    onConfirm={() => api<Adapter>(p('/adapters', name, action), { method: 'PUT' })}
    onDone={onDone}
  >
    <p>
      {action === 'stop'
        ? 'A stopped adapter relays nothing: batches and remediations through it are refused until it is started.'
        : 'The adapter relays to its NSO again.'}
    </p>
  </ConfirmAction>
);

/** Every adapter's probe, page by page (the health answer lists them under `adapters`). */
const adaptersHealth = async (signal: AbortSignal): Promise<AdapterHealth[]> => {
  const probes: AdapterHealth[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<{ adapters: AdapterHealth[]; next?: string }>('/health/adapters', { query: { limit: '20', cursor } });
    probes.push(...page.adapters);
    cursor = page.next;
  } while (cursor && !signal.aborted);
  return probes;
};

/** The `#/adapters` page. */
export const AdaptersPage = () => {
  const admin = isAdmin();
  const loaded = useLoad(
    async (signal) => {
      if (!admin) {
        // An adapter's settings are an admin's (GET /adapters); a reader sees each adapter through its health.
        const health = await adaptersHealth(signal);
        return {
          adapters: health.map((h): Adapter => ({ name: h.name, ...(h.state === 'RUNNING' || h.state === 'STOPPED' ? { state: h.state } : {}) })),
          health,
        };
      }
      const [adapters, health] = await Promise.all([readAll<Adapter>('/adapters', {}, { signal }), adaptersHealth(signal).catch((error: unknown) => error)]);
      return { adapters, health };
    },
    [admin],
  );
  return (
    <Page title="Adapters">
      <Loading loaded={loaded}>
        {({ adapters, health }) => {
          const probes = Array.isArray(health) ? new Map(health.map((h) => [h.name, h])) : new Map<string, AdapterHealth>();
          return (
            <>
              {!Array.isArray(health) && <ErrorAlert error={health} />}
              {adapters.length === 0 ? (
                <p class="muted">No adapter is registered.</p>
              ) : (
                <ScrollBox>
                  <table>
                    <caption class="visually-hidden">Adapters</caption>
                    <thead>
                      <tr>
                        <th scope="col">Adapter</th>
                        <th scope="col">Type</th>
                        <th scope="col">State</th>
                        <th scope="col">Health</th>
                        <th scope="col">Checked</th>
                        {admin && <th scope="col">Actions</th>}
                      </tr>
                    </thead>
                    <tbody>
                      {adapters.map((adapter) => {
                        const probe = probes.get(adapter.name);
                        return (
                          <tr key={adapter.name}>
                            <th scope="row">
                              {adapter.name}
                              {adapter.baseUrl && <p class="muted">{adapter.baseUrl}</p>}
                            </th>
                            <td>{adapter.type ?? '—'}</td>
                            <td>
                              {adapter.problem ? (
                                `unusable: ${adapter.problem}`
                              ) : (
                                <span class={`state state-${adapter.state ?? 'RUNNING'}`}>{adapter.state ?? 'RUNNING'}</span>
                              )}
                            </td>
                            <td>
                              {probe ? (
                                <>
                                  <span class={`health health-${probe.status}`}>{probe.status}</span>
                                  {probe.latencyMs !== undefined && ` ${probe.latencyMs} ms`}
                                  {probe.reason && <p class="muted">{probe.reason}</p>}
                                </>
                              ) : (
                                '—'
                              )}
                            </td>
                            <td>
                              <When at={probe?.checkedAt} />
                            </td>
                            {admin && (
                              <td>
                                {!adapter.problem && (
                                  <AdapterAction name={adapter.name} action={adapter.state === 'STOPPED' ? 'start' : 'stop'} onDone={loaded.reload} />
                                )}
                              </td>
                            )}
                          </tr>
                        );
                      })}
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

/** The health of the applications: a 503 (one stopped or down) carries the same list in its problem. */
const applicationsHealth = async (): Promise<{ applications: ApplicationHealth[]; problem?: ApiError }> => {
  try {
    return await api<{ applications: ApplicationHealth[] }>('/health/applications');
  } catch (error) {
    if (error instanceof ApiError && error.status === 503 && Array.isArray(error.body['applications'])) {
      return { applications: error.body['applications'] as ApplicationHealth[], problem: error };
    }
    throw error;
  }
};

/** The `#/applications` page. */
export const ApplicationsPage = () => {
  const loaded = useLoad(async () => {
    const [list, health] = await Promise.all([api<{ items: Application[] }>('/applications'), applicationsHealth()]);
    return { applications: list.items, health };
  }, []);
  return (
    <Page title="Applications">
      <Loading loaded={loaded}>
        {({ applications, health }) => {
          const byName = new Map(health.applications.map((h) => [h.name, h]));
          return (
            <>
              {health.problem && <ErrorAlert error={health.problem} />}
              <ScrollBox>
                <table>
                  <caption class="visually-hidden">Applications</caption>
                  <thead>
                    <tr>
                      <th scope="col">Application</th>
                      <th scope="col">State</th>
                      <th scope="col">Health</th>
                      <th scope="col">Dependencies</th>
                      <th scope="col">Log level</th>
                    </tr>
                  </thead>
                  <tbody>
                    {applications.map((application) => {
                      const h = byName.get(application.name);
                      return (
                        <tr key={application.name}>
                          <th scope="row">
                            {application.name}
                            {application.description && <p class="muted">{application.description}</p>}
                          </th>
                          <td>
                            <span class={`state state-${application.state}`}>{application.state}</span>
                          </td>
                          <td>{h ? <span class={`health health-${h.status}`}>{h.status}</span> : '—'}</td>
                          <td>
                            {h?.dependencies
                              ? Object.entries(h.dependencies)
                                  .map(([name, d]) => `${name} ${d.status}${d.latencyMs !== undefined ? ` (${d.latencyMs} ms)` : ''}`)
                                  .join(', ')
                              : '—'}
                          </td>
                          <td>{application.logLevel ?? '—'}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </ScrollBox>
            </>
          );
        }}
      </Loading>
    </Page>
  );
};
