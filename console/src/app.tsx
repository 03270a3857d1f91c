/** The console's frame: signed-out page, header with the user and sign-out, main navigation and the current page. */
import { useEffect, useState } from 'preact/hooks';
import { currentSession, onSessionChange, signIn, signOut } from './auth.js';
import { BatchPage } from './pages/batch.js';
import { BatchesPage } from './pages/batches.js';
import { DevicePage } from './pages/device.js';
import { AdaptersPage, ApplicationsPage } from './pages/operations.js';
import { OverviewPage } from './pages/overview.js';
import { PlanPage } from './pages/plan.js';
import { RemediationPage } from './pages/remediation.js';
import { TreePage, TreesPage } from './pages/trees.js';
import { parseRoute, type Route } from './route.js';
import { ErrorAlert, headingFocusPending, Page } from './ui.js';

const NAV = [
  { label: 'Overview', hash: '#/', pages: ['overview', 'plan'] },
  { label: 'Batches', hash: '#/batches', pages: ['batches', 'batch', 'device', 'remediation'] },
  { label: 'Trees', hash: '#/trees', pages: ['trees', 'tree'] },
  { label: 'Adapters', hash: '#/adapters', pages: ['adapters'] },
  { label: 'Applications', hash: '#/applications', pages: ['applications'] },
] as const;

const PageOf = ({ route }: { route: Route }) => {
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'batches':
      return <BatchesPage />;
    case 'batch':
      return <BatchPage batchId={route.batchId} />;
    case 'device':
      return <DevicePage batchId={route.batchId} device={route.device} />;
    case 'trees':
      return <TreesPage />;
    case 'tree':
      return <TreePage treeId={route.treeId} />;
    case 'adapters':
      return <AdaptersPage />;
    case 'applications':
      return <ApplicationsPage />;
    case 'plan':
      return <PlanPage planId={route.planId} />;
    case 'remediation':
      return <RemediationPage remediationId={route.remediationId} />;
    default:
      return (
        <Page title="Page not found">
          <p>
            Nothing is at this address. <a href="#/">Go to the fleet overview</a>.
          </p>
        </Page>
      );
  }
};

const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => {
      headingFocusPending();
      setRoute(parseRoute(location.hash));
      window.scrollTo(0, 0);
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
};

/** The signed-out page. */
export const SignedOut = ({ error }: { error?: unknown }) => {
  const [failure, setFailure] = useState(error);
  return (
    <main id="main" class="signed-out">
      <Page title="Sign in">
        {failure !== undefined && <ErrorAlert error={failure} />}
        <p>Sign in with your organisation's account to see the fleet's compliance.</p>
        <button type="button" class="button" onClick={() => void signIn().catch(setFailure)}>
          Sign in
        </button>
      </Page>
    </main>
  );
};

/** The whole console. `error` is a failed sign-in to show on the signed-out page. */
export const App = ({ error }: { error?: unknown }) => {
  const [session, setSession] = useState(currentSession);
  const route = useRoute();
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  if (!session) return <SignedOut error={error} />;
  const role = session.roles.includes('admin') ? 'admin' : (session.roles[0] ?? 'no role');
  return (
    <>
      <header class="top">
        <p class="brand">Network configuration console</p>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.hash}>
                <a href={item.hash} aria-current={(item.pages as readonly string[]).includes(route.page) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="user">
          <span>
            {session.name} <span class="role">({role})</span>
          </span>
          <button type="button" class="button secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        <PageOf route={route} />
      </main>
    </>
  );
};
