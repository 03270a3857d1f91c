/**
 * A real browser for the console's tests: Debian's Chromium (`/usr/bin/chromium`, which
 * `.ci/run` installs with apt) driven headless by playwright-core. Playwright never downloads a
 * browser here. Each test gets a fresh context (its own storage, no token left from another
 * test), and every page of it reports Content-Security-Policy violations and console errors,
 * so a functional test proves the console runs under the policy the stack serves.
 *
 * Only {@link axeViolations} opens a context that bypasses the policy: axe-core is injected as
 * a script tag, which the console's `script-src 'self'` would (rightly) refuse.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Where Debian's package puts Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Chromium's flags: no sandbox (containers run as root), no GPU, and none of the background
 * traffic (updates, sync, QUIC probes) that floods refused connections on a machine without internet.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The two widths the console must be usable at: a laptop and a phone. */
export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/**
 * Starts headless Chromium. Fails (never skips) when the browser is not installed: a
 * browser test that silently does not run proves nothing.
 */
export const launchChromium = async (executablePath = CHROMIUM): Promise<Browser> => {
  if (!existsSync(executablePath)) {
    throw new Error(`${executablePath} is missing: install Debian's Chromium (apt-get install chromium; .ci/run does it) to run the browser tests`);
  }
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
};

/** What went wrong in a page that the page itself cannot show: policy violations and errors. */
export interface PageProblems {
  /** `securitypolicyviolation` events: the directive and what it blocked. */
  readonly csp: string[];
  /** Console errors and uncaught exceptions. */
  readonly errors: string[];
}

/** A browser context whose pages record their {@link PageProblems}. */
export interface WatchedContext {
  readonly context: BrowserContext;
  readonly problems: PageProblems;
  /** A new page of the context. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** The binding a page calls with each `securitypolicyviolation` event it sees. */
const CSP_BINDING = '__reportCspViolation';

/**
 * A fresh context (enforcing the page's CSP) whose pages report every CSP violation (the DOM
 * event, via an init script Playwright injects outside the policy, and Chromium's console
 * message) and every console error or uncaught exception.
 */
export const watchedContext = async (browser: Browser, options: BrowserContextOptions = {}): Promise<WatchedContext> => {
  if (options.bypassCSP) throw new Error('functional tests run under the console CSP: bypassCSP is only for the accessibility check');
  const context = await browser.newContext({ ...options, bypassCSP: false });
  const problems: PageProblems = { csp: [], errors: [] };
  await context.exposeBinding(CSP_BINDING, (_source, text: string) => {
    problems.csp.push(text);
  });
  // A string, not a function: the test project has no DOM types, and the page is Chromium's.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => {
      window.${CSP_BINDING}(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' (' + e.sourceFile + ':' + e.lineNumber + ')');
    }, true);`,
  });
  const watch = (page: Page): void => {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const text = message.text();
      if (/Content.Security.Policy/i.test(text)) problems.csp.push(text);
      else problems.errors.push(text);
    });
    page.on('pageerror', (error) => problems.errors.push(`uncaught: ${error.message}`));
  };
  context.on('page', watch);
  return { context, problems, newPage: () => context.newPage(), close: () => context.close() };
};

/** Chromium's console line for a response with an error status (fetch logs one for each). */
export const FAILED_RESOURCE = /^Failed to load resource: the server responded with a status of (\d{3})/;

/**
 * The console errors other than the failed responses of the given statuses (a test that asks
 * for a missing device expects Chromium's 404 line, nothing else).
 */
export const unexpectedErrors = (problems: PageProblems, expectedStatuses: readonly number[] = []): string[] =>
  problems.errors.filter((text) => {
    const failed = FAILED_RESOURCE.exec(text);
    return !(failed && expectedStatuses.includes(Number(failed[1])));
  });

/** One axe-core finding, as much of it as a failure message needs. */
export interface AxeFinding {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  readonly targets: string[];
}

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * A context for the accessibility check only: it bypasses the CSP so axe-core's source
 * (from node_modules) can be added as a script tag. No functional assertion belongs here.
 */
export const axeContext = (browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> =>
  browser.newContext({ ...options, bypassCSP: true });

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA, and best practices). */
export const axeViolations = async (page: Page): Promise<AxeFinding[]> => {
  if (!(await page.evaluate('typeof axe === "object"'))) await page.addScriptTag({ path: AXE_SOURCE });
  const results = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as { violations: unknown[] };
  return (results.violations as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
};

/**
 * How long the locator helpers wait at most. playwright-core has no `expect` of its own (that
 * is @playwright/test's): these wait on the page's state the way its matchers do, and the
 * timeout only ends a hang.
 */
export const PAGE_WAIT_MS = 60_000;
const POLL = { timeout: PAGE_WAIT_MS, interval: 50 };

/** Resolves when the locator's one element is visible. */
export const shown = (locator: Locator): Promise<void> => locator.waitFor({ state: 'visible', timeout: PAGE_WAIT_MS });
/** Resolves when the locator matches nothing visible. */
export const hidden = (locator: Locator): Promise<void> => locator.waitFor({ state: 'hidden', timeout: PAGE_WAIT_MS });
/** The element's text, polled until the matcher after it holds. */
export const textOf = (locator: Locator) => expect.poll(async () => (await locator.textContent()) ?? '', POLL);
/** How many elements match, polled until the matcher after it holds. */
export const countOf = (locator: Locator) => expect.poll(() => locator.count(), POLL);
/** An attribute of the element, polled until the matcher after it holds. */
export const attributeOf = (locator: Locator, name: string) => expect.poll(() => locator.getAttribute(name), POLL);
