/** Trees, read-only: the list, and a tree's versions with their nodes and rules. */
import { useState } from 'preact/hooks';
import { api, p, readAll } from '../api.js';
import { href, versionAddresses } from '../route.js';
import { expectation } from '../rules.js';
import type { Tree, TreeNode, TreeVersion } from '../types.js';
import { Field, Loading, Page, ScrollBox, useLoad, When } from '../ui.js';

/** The `#/trees` page. */
export const TreesPage = () => {
  const loaded = useLoad((signal) => readAll<Tree>('/configuration_manager/configs', { limit: '100' }, { signal }), []);
  return (
    <Page title="Trees">
      <Loading loaded={loaded}>
        {(trees) =>
          trees.length === 0 ? (
            <p class="muted">No tree yet.</p>
          ) : (
            <ScrollBox>
              <table>
                <caption class="visually-hidden">Configuration trees</caption>
                <thead>
                  <tr>
                    <th scope="col">Tree</th>
                    <th scope="col">Device type</th>
                    <th scope="col">Versions</th>
                    <th scope="col">Updated</th>
                    <th scope="col">Description</th>
                  </tr>
                </thead>
                <tbody>
                  {trees.map((tree) => (
                    <tr key={tree.id}>
                      <th scope="row">
                        <a href={href('trees', tree.id)}>{tree.name}</a>
                      </th>
                      <td>{tree.deviceType}</td>
                      <td>
                        {versionAddresses(tree.versions)
                          .map((v) => v.address)
                          .join(', ')}
                      </td>
                      <td>
                        <When at={tree.lastUpdated} />
                      </td>
                      <td>{tree.description ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          )
        }
      </Loading>
    </Page>
  );
};

const NodeView = ({ node, path }: { node: TreeNode; path: string }) => (
  <li>
    <details open={path.split('/').length < 3}>
      <summary>
        <span class="node-name">{node.name}</span> ({node.rules.length} rules, {node.devices.length} devices
        {node.select?.length ? ', selects by inventory' : ''})
      </summary>
      {node.devices.length > 0 && <p class="muted">Devices: {node.devices.join(', ')}</p>}
      {node.select && node.select.length > 0 && (
        <p class="muted">
          Selects:{' '}
          {node.select
            .map((s) =>
              Object.entries(s)
                .map(([k, v]) => `${k}=${v}`)
                .join(' '),
            )
            .join('; ')}
        </p>
      )}
      {node.rules.length > 0 && (
        <ScrollBox>
          <table>
            <caption class="visually-hidden">Rules of node {path}</caption>
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Path</th>
                <th scope="col">Mode</th>
                <th scope="col">Severity</th>
                <th scope="col">Expects</th>
              </tr>
            </thead>
            <tbody>
              {node.rules.map((rule) => (
                <tr key={rule.id}>
                  <th scope="row">
                    {rule.id}
                    {rule.description && <p class="muted">{rule.description}</p>}
                  </th>
                  <td>
                    <code>{rule.path}</code>
                  </td>
                  <td>{rule.mode}</td>
                  <td>{rule.severity}</td>
                  <td>
                    <code class="value">{expectation(rule)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {node.children.length > 0 && (
        <ul class="nodes">
          {node.children.map((child) => (
            <NodeView key={child.name} node={child} path={`${path}/${child.name}`} />
          ))}
        </ul>
      )}
    </details>
  </li>
);

const VersionView = ({ treeId, version }: { treeId: string; version: string }) => {
  const loaded = useLoad(() => api<TreeVersion>(p('/configuration_manager/configs', treeId, version)), [treeId, version]);
  return (
    <Loading loaded={loaded}>
      {(tree) => (
        <>
          <p class="muted">
            Version {version}, updated <When at={tree.lastUpdated} /> by {tree.lastUpdatedBy}.
          </p>
          <ul class="nodes">
            <NodeView node={tree.root} path={tree.root.name} />
          </ul>
        </>
      )}
    </Loading>
  );
};

/** The `#/trees/<treeId>` page. */
export const TreePage = ({ treeId }: { treeId: string }) => {
  const loaded = useLoad(() => api<Tree>(p('/configuration_manager/configs', treeId)), [treeId]);
  const [version, setVersion] = useState<string | undefined>();
  return (
    <Page title={`Tree ${loaded.data?.name ?? treeId}`}>
      <Loading loaded={loaded}>
        {(tree) => {
          const versions = versionAddresses(tree.versions);
          const chosen = version ?? versions[versions.length - 1]?.address;
          return (
            <>
              <p>
                Device type {tree.deviceType}. {tree.description ?? ''}
              </p>
              {chosen === undefined ? (
                <p class="muted">This tree has no version.</p>
              ) : (
                <>
                  <Field label="Version">
                    {(id) => (
                      <select id={id} value={chosen} onChange={(e) => setVersion(e.currentTarget.value)}>
                        {versions.map((v) => (
                          <option key={v.address} value={v.address}>
                            {v.address}
                          </option>
                        ))}
                      </select>
                    )}
                  </Field>
                  <h2>Nodes and rules</h2>
                  <VersionView treeId={tree.id} version={chosen} />
                </>
              )}
            </>
          );
        }}
      </Loading>
    </Page>
  );
};
