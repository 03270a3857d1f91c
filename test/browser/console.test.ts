/**
 * The console in a real browser: Debian's Chromium (playwright-core) against the local stack
 * as `npm start` serves it, signed in through the local sign-in page as each sample user.
 *
 * One stack for the file (on a free port, data in a temporary directory), seeded through the API (the sample tree, a batch over the local NSO
 * fleet, a plan run twice so its trend and device history exist) plus a completed batch of
 * 10,000 devices written with the compliance store's own writes. Every functional test runs
 * under the CSP the stack serves and fails on any policy violation or console error; only the
 * accessibility check bypasses the policy (to inject axe-core). Screenshots of every page at
 * both widths go to `reports/console/`.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/paths.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../tools/local/config.js';
import { freePort } from '../../tools/local/dynamodb-local.js';
import { documentClientFor } from '../../tools/local/seed.js';
import { startLocalStack, type LocalStack } from '../../tools/local/start.js';
import {
  attributeOf,
  axeContext,
  axeViolations,
  countOf,
  hidden,
  launchChromium,
  PAGE_WAIT_MS,
  shown,
  textOf,
  unexpectedErrors,
  WIDTHS,
  watchedContext,
  type WatchedContext,
} from '../support/browser.js';
import { largeBatchDevice, writeLargeBatch, type LargeBatch } from '../support/large-batch.js';
import { HANG_MS } from '../support/timeouts.js';

/** The sample tree `access-switch-standard`: version 2 asks ce0 for an NTP server it lacks. */
const TREE = '5cb0a3b7e1c4f20012a9d3e1';
const TREE_NAME = 'access-switch-standard';
const ADAPTER = 'lab-nso';
const PLAN_NAME = 'campus-daily';
const SCREENSHOTS = path.join(PROJECT_ROOT, 'reports', 'console');

let dataDir: string;
let stack: LocalStack;
let browser: Browser;
let large: LargeBatch;
/** A batch of the whole local fleet against version 2 (ce0 fails ntp-servers). */
let fleetBatch: string;
let planId: string;
let planBatches: string[];
const opened: WatchedContext[] = [];

const consoleUrl = () => `${stack.baseUrl}/console`;
const admin = () => stack.token(['admin']);

const api = async (method: string, p: string, body?: unknown, token = admin()) => {
  const res = await fetch(`${stack.baseUrl}${p}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
};

/**
 * Reads `p` until `done` holds for its body (also from `beforeAll`, where `expect.poll` is not
 * allowed); the limit only ends a hang.
 */
const until = async (p: string, done: (body: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
  const deadline = Date.now() + HANG_MS / 2;
  for (;;) {
    const { body } = await api('GET', p);
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`${p} still answers ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};
const notRunning = (body: Record<string, unknown>) => body['status'] !== 'running';
const batchPath = (id: string) => `/configuration_manager/compliance_reports/batches/${id}`;

const runBatch = async (body: unknown): Promise<string> => {
  const started = await api('POST', '/configuration_manager/compliance_reports', body);
  expect(started.status).toBe(202);
  const id = started.body['batchId'] as string;
  await until(batchPath(id), notRunning);
  return id;
};

const runPlan = async (): Promise<string> => {
  const run = await api('POST', `/configuration_manager/compliance_plans/${planId}/run`);
  expect(run.status).toBe(202);
  const id = run.body['batchId'] as string;
  await until(batchPath(id), notRunning);
  return id;
};

/** The simulator's console change on a device (its drift route): what NSO's copy does not know. */
const drift = async (device: string, change: unknown): Promise<void> => {
  const res = await fetch(`${stack.simulator!.url}/simulator/devices/${device}/drift`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(change),
  });
  expect(res.ok).toBe(true);
};

const seed = async (): Promise<void> => {
  fleetBatch = await runBatch({ treeId: TREE, version: '2', adapterId: ADAPTER });
  const plan = await api('POST', '/configuration_manager/compliance_plans', {
    name: PLAN_NAME,
    treeId: TREE,
    version: '2',
    adapterId: ADAPTER,
    devices: ['ce0'],
    sync: 'sync-from',
    schedule: 'cron(0 6 * * ? *)',
    timezone: 'Europe/Paris',
    enabled: true,
  });
  expect(plan.status).toBe(201);
  planId = plan.body['planId'] as string;
  // ce0 fails, is fixed on its console, and passes: two trend points and a history with a change.
  const first = await runPlan();
  await drift('ce0', { 'tailf-ned-cisco-ios:ntp': { server: { 'peer-list': [{ name: '10.0.0.1' }] } } });
  const second = await runPlan();
  await drift('ce0', { 'tailf-ned-cisco-ios:ntp': null });
  planBatches = [first, second];
  const client = documentClientFor(new DynamoDBClient({ endpoint: stack.dynamodbEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }));
  large = await writeLargeBatch(client, stack.tables['compliance']!, {
    devices: 10_000,
    treeId: TREE,
    version: '2',
    adapterId: ADAPTER,
    started: new Date(Date.now() - 86_400_000),
  });
};

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'netconfig-console-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
  const port = await freePort();
  // As `npm start` serves it: the assembly of the current sources (built once, then reused while they do not change).
  stack = await startLocalStack({ port, dataDir, log: () => undefined });
  browser = await launchChromium();
  await seed();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Statuses of API answers a test expects the console to show as errors (Chromium logs each failed fetch). */
let expectedStatuses: number[] = [];

afterEach(async () => {
  // Every functional page ran under the served policy: nothing it needed was refused, nothing threw.
  const contexts = opened.splice(0);
  const statuses = expectedStatuses;
  expectedStatuses = [];
  for (const c of contexts) await c.close();
  for (const c of contexts) {
    expect(c.problems.csp, 'Content-Security-Policy violations').toEqual([]);
    expect(unexpectedErrors(c.problems, statuses), 'console errors').toEqual([]);
  }
});

type Role = 'admin' | 'apiread';
type Width = keyof typeof WIDTHS;

/** A fresh context at `width`, its page on the console, signed out. */
const openConsole = async (width: Width = 'desktop'): Promise<Page> => {
  const watched = await watchedContext(browser, { viewport: WIDTHS[width] });
  opened.push(watched);
  const page = await watched.newPage();
  page.setDefaultTimeout(PAGE_WAIT_MS);
  await page.goto(consoleUrl());
  return page;
};

const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

/**
 * Signs in through the local sign-in page as `role`; resolves with the token endpoint's answer
 * (what the console holds in memory) once the console shows its navigation.
 */
const signIn = async (page: Page, role: Role): Promise<Record<string, unknown>> => {
  await shown(heading(page, 'Sign in'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await shown(page.getByRole('heading', { name: 'Sign in (local)' }));
  const tokens = page.waitForResponse((r) => r.url().endsWith('/oauth2/token') && r.request().method() === 'POST');
  await page.getByRole('button', { name: `Sign in as ${role}`, exact: true }).click();
  const answer = await tokens;
  expect(answer.status()).toBe(200);
  await shown(mainNav(page));
  return (await answer.json()) as Record<string, unknown>;
};

/** A console page signed in as `role`. */
const signedIn = async (role: Role, width: Width = 'desktop'): Promise<Page> => {
  const page = await openConsole(width);
  await signIn(page, role);
  return page;
};

/** Goes to a console route in the same document (the tokens live in memory: no reload). */
const visit = async (page: Page, hash: string): Promise<void> => {
  await page.goto(`${consoleUrl()}#${hash}`);
};

/** The answer to the next request of `method` whose path ends with `suffix`. */
const answerTo = (page: Page, method: string, suffix: RegExp): Promise<Response> =>
  page.waitForResponse((r) => r.request().method() === method && suffix.test(new URL(r.url()).pathname));

/** Opens an admin action's dialog, checks it, and confirms. */
const confirmAction = async (page: Page, button: Locator): Promise<void> => {
  await button.click();
  const dialog = page.getByRole('dialog');
  await shown(dialog);
  await shown(dialog.getByRole('heading'));
  await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
  await hidden(dialog);
};

/** `<n> devices` as the status line may write it (with or without a thousands separator). */
const countLine = (n: number): RegExp => new RegExp(`^\\s*${n.toLocaleString('en-US').replace(/,/g, '[,\\u202f\\u00a0 ]?')} devices?\\s*$`);

interface ConsolePage {
  readonly name: string;
  readonly hash: () => string;
  readonly title: () => string;
}

/** Every page of the UI contract, with the seeded data it shows. */
const PAGES: readonly ConsolePage[] = [
  { name: 'overview', hash: () => '/', title: () => 'Fleet overview' },
  { name: 'batches', hash: () => '/batches', title: () => 'Batches' },
  { name: 'batch', hash: () => `/batches/${large.batchId}`, title: () => `Batch ${large.batchId}` },
  { name: 'device', hash: () => `/batches/${planBatches[1]}/devices/ce0`, title: () => 'Device ce0' },
  { name: 'trees', hash: () => '/trees', title: () => 'Trees' },
  { name: 'tree', hash: () => `/trees/${TREE}`, title: () => `Tree ${TREE_NAME}` },
  { name: 'adapters', hash: () => '/adapters', title: () => 'Adapters' },
  { name: 'applications', hash: () => '/applications', title: () => 'Applications' },
  { name: 'plan', hash: () => `/plans/${planId}`, title: () => `Plan ${PLAN_NAME}` },
];

describe('signing in', () => {
  it.each(['admin', 'apiread'] as const)('signs in as %s through the local sign-in page, no token or code left in the URL', async (role) => {
    const page = await openConsole();
    const tokens = await signIn(page, role);
    expect(tokens).toMatchObject({ token_type: 'Bearer' });
    const url = new URL(page.url());
    expect(`${url.origin}${url.pathname}`).toBe(consoleUrl());
    expect(url.search).toBe('');
    for (const secret of ['code=', 'state=', 'token', String(tokens['id_token']), String(tokens['refresh_token'])]) expect(page.url()).not.toContain(secret);
    // Nothing of the session is left in storage another script could read.
    const stored = (await page.evaluate('JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)])')) as string;
    expect(stored).toBe('[[],[]]');
    await textOf(page.getByRole('banner')).toContain(role);
    for (const link of ['Overview', 'Batches', 'Trees', 'Adapters', 'Applications']) await shown(mainNav(page).getByRole('link', { name: link, exact: true }));
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await shown(heading(page, 'Sign in'));
  });

  it('refreshes the token before it expires and keeps working', async () => {
    const watched = await watchedContext(browser, { viewport: WIDTHS.desktop });
    opened.push(watched);
    const page = await watched.newPage();
    page.setDefaultTimeout(PAGE_WAIT_MS);
    // The page's clock, so the token's lifetime passes without waiting for it.
    await page.clock.install();
    await page.goto(consoleUrl());
    const tokens = await signIn(page, 'admin');
    const lifetime = Number(tokens['expires_in']);
    expect(lifetime).toBeGreaterThan(0);
    const refreshed = page.waitForRequest((r) => r.url().endsWith('/oauth2/token') && /grant_type=refresh_token/.test(r.postData() ?? ''));
    await page.clock.fastForward(lifetime * 1000);
    const request = await refreshed;
    expect((await request.response())?.status()).toBe(200);
    // Still signed in, and the API answers the console (with the new token).
    await mainNav(page).getByRole('link', { name: 'Adapters', exact: true }).click();
    await shown(heading(page, 'Adapters'));
    await textOf(page.getByRole('main')).toContain(ADAPTER);
    await countOf(page.getByRole('alert')).toBe(0);
  });
});

describe('every page', () => {
  for (const width of ['desktop', 'phone'] as const) {
    it(`renders every page at ${WIDTHS[width].width} px, without horizontal scrolling`, async () => {
      const page = await signedIn('admin', width);
      for (const p of PAGES) {
        await visit(page, p.hash());
        await shown(heading(page, p.title()));
        await countOf(page.getByRole('heading', { level: 1 })).toBe(1);
        await countOf(page.getByRole('alert')).toBe(0);
        const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
        expect(overflow, `${p.name} scrolls sideways at ${WIDTHS[width].width} px`).toBeLessThanOrEqual(0);
        await page.screenshot({ path: path.join(SCREENSHOTS, `${p.name}-${WIDTHS[width].width}.png`), fullPage: true });
      }
    });
  }

  it('shows the overview with latest grades per tree and plan, and the trend chart with its table', async () => {
    const page = await signedIn('admin');
    await shown(heading(page, 'Fleet overview'));
    const main = page.getByRole('main');
    await textOf(main).toContain(TREE_NAME);
    await textOf(main).toContain(PLAN_NAME);
    await shown(page.getByRole('img', { name: 'Compliance trend' }));
  });

  it('shows a device: expected against actual per rule, and its configurations over time with a diff', async () => {
    const page = await signedIn('admin');
    await visit(page, `/batches/${fleetBatch}/devices/ce0`);
    await shown(heading(page, 'Device ce0'));
    const main = page.getByRole('main');
    await textOf(main).toContain('ntp-servers');
    await textOf(main).toContain('10.0.0.1');
  });

  it('shows a plan: its trend chart and the same points as a table', async () => {
    const page = await signedIn('admin');
    await visit(page, `/plans/${planId}`);
    await shown(heading(page, `Plan ${PLAN_NAME}`));
    await shown(page.getByRole('img', { name: 'Compliance trend' }));
    // Two runs: two points, each a row of the table beside the chart.
    const trend = (await api('GET', `/configuration_manager/compliance_plans/${planId}/trend`)).body;
    const points = trend['items'] as { batchId: string }[];
    expect(points.map((p) => p.batchId)).toEqual(planBatches);
    // The table beside the chart: a header row and one row a point.
    const table = page.getByRole('main').getByRole('table').first();
    await shown(table);
    await countOf(table.locator('tbody tr')).toBe(points.length);
  });

  it('shows an API error as the problem title and detail, not a blank page', async () => {
    const missing = 'f'.repeat(24);
    const problem = await api('GET', batchPath(missing));
    expect(problem.status).toBe(404);
    expectedStatuses = [404];
    const page = await signedIn('admin');
    await visit(page, `/batches/${missing}`);
    const alert = page.getByRole('alert');
    await textOf(alert).toContain(String(problem.body['title']));
    await textOf(alert).toContain(String(problem.body['detail']));
    await shown(mainNav(page));
  });
});

describe('a batch of 10,000 devices', () => {
  const table = (page: Page) => page.getByRole('table', { name: 'Devices', exact: true });
  const status = (page: Page) => page.getByRole('status');
  // Device rows: the spacer rows above and below the window stand for the rest.
  const bodyRows = (page: Page) => table(page).locator('tbody tr:not(.spacer)');

  it('counts, filters by grade, searches by name and sorts, with only the visible rows in the DOM', async () => {
    const page = await signedIn('admin');
    await visit(page, `/batches/${large.batchId}`);
    await shown(heading(page, `Batch ${large.batchId}`));
    await textOf(status(page)).toMatch(countLine(10_000));
    // Virtualized: a screenful of rows, not ten thousand.
    const rendered = await bodyRows(page).count();
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThan(200);

    // By grade: the count is the data's, and every row shown is of that grade.
    await page.getByLabel('Grade', { exact: true }).selectOption('fail');
    await textOf(status(page)).toMatch(countLine(large.grades.fail));
    for (const row of await bodyRows(page).all()) await textOf(row).toContain('fail');

    // By name, within the grade, then alone.
    const search = page.getByLabel('Search devices', { exact: true });
    await search.fill('site042-sw1');
    const matching = large.devices.filter((d) => d.device.includes('site042-sw1'));
    await textOf(status(page)).toMatch(countLine(matching.filter((d) => d.grade === 'fail').length));
    await page.getByLabel('Grade', { exact: true }).selectOption({ label: 'All' });
    await textOf(status(page)).toMatch(countLine(matching.length));
    await countOf(bodyRows(page)).toBe(matching.length);

    // Sorted by name, both ways: the header says which.
    await search.fill('');
    await textOf(status(page)).toMatch(countLine(10_000));
    const sortButton = table(page)
      .getByRole('columnheader')
      .getByRole('button', { name: /device/i });
    // `has` is queried inside each header.
    const header = table(page)
      .getByRole('columnheader')
      .filter({ has: page.getByRole('button', { name: /device/i }) });
    await sortButton.click();
    const first = await header.getAttribute('aria-sort');
    expect(['ascending', 'descending']).toContain(first);
    if (first !== 'descending') await sortButton.click();
    await attributeOf(header, 'aria-sort').toBe('descending');
    await textOf(bodyRows(page).first()).toContain(largeBatchDevice(9_999));
    await sortButton.click();
    await attributeOf(header, 'aria-sort').toBe('ascending');
    await textOf(bodyRows(page).first()).toContain(largeBatchDevice(0));
    expect(await bodyRows(page).count()).toBeLessThan(200);

    // Scrolled to the end, the last device is reachable and the DOM still holds a screenful.
    // A function, not a string: Playwright evaluates a string as an expression and would not call it.
    type Box = { scrollHeight: number; clientHeight: number; scrollTop: number; parentElement: Box | null; ownerDocument: { scrollingElement: Box } };
    await table(page).evaluate((el: Box) => {
      let s: Box | null = el;
      while (s && s.scrollHeight <= s.clientHeight) s = s.parentElement;
      (s ?? el.ownerDocument.scrollingElement).scrollTop = 1e9;
    });
    await shown(table(page).getByText(largeBatchDevice(9_999), { exact: true }));
    expect(await bodyRows(page).count()).toBeLessThan(200);
  });
});

describe('admin actions', () => {
  const dialog = (page: Page) => page.getByRole('dialog');

  it('cancelling a confirmation sends nothing', async () => {
    const page = await signedIn('admin');
    await visit(page, '/adapters');
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() !== 'GET' && r.url().startsWith(stack.baseUrl) && !r.url().includes('/oauth2/')) posts.push(`${r.method()} ${r.url()}`);
    });
    await page.getByRole('button', { name: `Stop adapter ${ADAPTER}`, exact: true }).click();
    await shown(dialog(page));
    await dialog(page).getByRole('button', { name: 'Cancel', exact: true }).click();
    await hidden(dialog(page));
    expect(posts).toEqual([]);
    expect((await api('GET', `/adapters/${ADAPTER}`)).body['state']).not.toBe('STOPPED');
  });

  it('starts a batch from the Batches page', async () => {
    const page = await signedIn('admin');
    await visit(page, '/batches');
    await page.getByRole('button', { name: 'Start batch', exact: true }).click();
    const form = dialog(page);
    await shown(form);
    await form.getByLabel('Tree', { exact: true }).selectOption({ label: TREE_NAME });
    await form.getByLabel('Version', { exact: true }).selectOption('2');
    await form.getByLabel('Adapter', { exact: true }).selectOption(ADAPTER);
    const started = answerTo(page, 'POST', /\/configuration_manager\/compliance_reports$/);
    await form.getByRole('button', { name: 'Confirm', exact: true }).click();
    const answer = await started;
    expect(answer.status()).toBe(202);
    const { batchId } = (await answer.json()) as { batchId: string };
    const batch = await until(batchPath(batchId), notRunning);
    expect(batch).toMatchObject({ batchId, treeId: TREE, version: '2', adapterId: ADAPTER, status: 'completed' });
  });

  it('stops and starts an adapter from the Adapters page', async () => {
    const page = await signedIn('admin');
    await visit(page, '/adapters');
    const stopped = answerTo(page, 'PUT', new RegExp(`/adapters/${ADAPTER}/stop$`));
    await confirmAction(page, page.getByRole('button', { name: `Stop adapter ${ADAPTER}`, exact: true }));
    expect((await stopped).ok()).toBe(true);
    expect((await api('GET', `/adapters/${ADAPTER}`)).body['state']).toBe('STOPPED');
    const started = answerTo(page, 'PUT', new RegExp(`/adapters/${ADAPTER}/start$`));
    await confirmAction(page, page.getByRole('button', { name: `Start adapter ${ADAPTER}`, exact: true }));
    expect((await started).ok()).toBe(true);
    expect((await api('GET', `/adapters/${ADAPTER}`)).body['state']).toBe('RUNNING');
  });

  it('dry-runs and applies remediation from a batch page, then rolls the apply back', async () => {
    // A batch of ce0 alone, failing ntp-servers: the plan's last drift removed its NTP server again, and sync-from brings that into NSO.
    const batchId = await runBatch({ treeId: TREE, version: '2', adapterId: ADAPTER, devices: ['ce0'], sync: 'sync-from' });
    expect((await api('GET', batchPath(batchId))).body['grades']).toMatchObject({ fail: 1 });
    const page = await signedIn('admin');
    await visit(page, `/batches/${batchId}`);
    await shown(heading(page, `Batch ${batchId}`));

    // Each start opens the run's page; the API's run is checked over HTTP.
    const remediate = async (button: string, mode: string): Promise<string> => {
      await visit(page, `/batches/${batchId}`);
      await shown(heading(page, `Batch ${batchId}`));
      const posted = answerTo(page, 'POST', /\/remediations$/);
      await confirmAction(page, page.getByRole('button', { name: button, exact: true }));
      const answer = await posted;
      expect(answer.status()).toBe(202);
      const { remediationId } = (await answer.json()) as { remediationId: string };
      await shown(heading(page, `Remediation ${remediationId}`));
      const run = await until(`/configuration_manager/remediations/${remediationId}`, notRunning);
      expect(run).toMatchObject({ remediationId, batchId, mode, status: 'completed' });
      return remediationId;
    };
    await remediate('Dry-run remediation', 'dry-run');
    const applied = await remediate('Apply remediation', 'apply');

    // The run's page, read again now that it ended, offers the rollback.
    await visit(page, `/batches/${batchId}`);
    await visit(page, `/remediations/${applied}`);
    const rolledBack = answerTo(page, 'POST', /\/rollback$/);
    await confirmAction(page, page.getByRole('button', { name: 'Roll back', exact: true }));
    expect((await rolledBack).status()).toBe(202);
    const run = await until(`/configuration_manager/remediations/${applied}`, (r) => {
      const rollback = r['rollback'] as { status?: string } | undefined;
      return rollback !== undefined && rollback.status !== 'running';
    });
    expect(run['rollback']).toMatchObject({ status: 'completed' });
  });
});

describe('apiread', () => {
  it('sees no admin action, and the API refuses one with its token', async () => {
    const page = await openConsole();
    const tokens = await signIn(page, 'apiread');
    const actions = ['Start batch', `Stop adapter ${ADAPTER}`, `Start adapter ${ADAPTER}`, 'Dry-run remediation', 'Apply remediation', 'Roll back'];
    for (const hash of ['/batches', '/adapters', `/batches/${fleetBatch}`]) {
      await visit(page, hash);
      await textOf(page.getByRole('main')).toMatch(/\S/);
      await countOf(page.getByRole('alert')).toBe(0);
      for (const name of actions) await countOf(page.getByRole('button', { name, exact: true })).toBe(0);
    }
    // The console's own token, sent as the console sends it: refused.
    const refused = await api(
      'POST',
      '/configuration_manager/compliance_reports',
      { treeId: TREE, version: '2', adapterId: ADAPTER },
      String(tokens['id_token']),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect((await api('PUT', `/adapters/${ADAPTER}/stop`, undefined, String(tokens['id_token']))).status).toBe(403);
  });
});

describe('keyboard', () => {
  /** Presses Tab (or Shift+Tab) until `target` has focus (at most `limit` times); false when it never does. */
  const tabTo = async (page: Page, target: Locator, key: 'Tab' | 'Shift+Tab' = 'Tab', limit = 60): Promise<boolean> => {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press(key);
      if (await target.evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement)) return true;
    }
    return false;
  };

  it('reaches the navigation and the actions with Tab and activates them with Enter', async () => {
    const page = await signedIn('admin');
    await shown(heading(page, 'Fleet overview'));
    const batches = mainNav(page).getByRole('link', { name: 'Batches', exact: true });
    expect(await tabTo(page, batches)).toBe(true);
    await page.keyboard.press('Enter');
    await shown(heading(page, 'Batches'));
    const start = page.getByRole('button', { name: 'Start batch', exact: true });
    expect(await tabTo(page, start)).toBe(true);
    await page.keyboard.press('Enter');
    await shown(page.getByRole('dialog'));
    await page.keyboard.press('Escape');
    await hidden(page.getByRole('dialog'));
    // Back up to the navigation, above the page.
    const adapters = mainNav(page).getByRole('link', { name: 'Adapters', exact: true });
    expect(await tabTo(page, adapters, 'Shift+Tab')).toBe(true);
    await page.keyboard.press('Enter');
    await shown(heading(page, 'Adapters'));
  });
});

describe('accessibility', () => {
  it('axe-core finds no serious or critical violation on any page, at either width', async () => {
    const findings: string[] = [];
    for (const width of ['desktop', 'phone'] as const) {
      // The only context that bypasses the CSP: axe-core is added as a script tag.
      const context = await axeContext(browser, { viewport: WIDTHS[width] });
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(PAGE_WAIT_MS);
        await page.goto(consoleUrl());
        await shown(heading(page, 'Sign in'));
        for (const f of await axeViolations(page)) findings.push(`sign-in ${width}: ${f.id} (${f.impact}) ${f.help}: ${f.targets.join(', ')}`);
        await signIn(page, 'admin');
        for (const p of PAGES) {
          await visit(page, p.hash());
          await shown(heading(page, p.title()));
          for (const f of await axeViolations(page)) findings.push(`${p.name} ${width}: ${f.id} (${f.impact}) ${f.help}: ${f.targets.join(', ')}`);
        }
        await visit(page, '/batches');
        await page.getByRole('button', { name: 'Start batch', exact: true }).click();
        await shown(page.getByRole('dialog'));
        for (const f of await axeViolations(page)) findings.push(`start-batch dialog ${width}: ${f.id} (${f.impact}) ${f.help}: ${f.targets.join(', ')}`);
      } finally {
        await context.close();
      }
    }
    expect(findings).toEqual([]);
  });
});
