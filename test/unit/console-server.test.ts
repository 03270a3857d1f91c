/**
 * The console's server side: the build (deterministic, hashed names, no inline code, the
 * first-load budget) and the three public routes' handlers on the built files (headers,
 * absolute asset URLs under the base path, unknown and crafted asset names refused).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { buildConsole, buildConsoleFiles, type BuiltConsole } from '../../console/build.js';
import { basePathOf, CONSOLE_ENV, consoleEnvironment, contentSecurityPolicy, type ConsoleConfig } from '../../functions/console/model.js';
import { apiEvent, invoke as invokeParsed } from '../../tools/simulators/api-events.js';

/** The budget: at most 200 KB of compressed JavaScript on the first load. */
const FIRST_LOAD_BUDGET_BYTES = 200 * 1000;

const SIGN_IN: ConsoleConfig = {
  authorizationEndpoint: 'https://netconfig-123.auth.eu-west-1.amazoncognito.com/oauth2/authorize',
  tokenEndpoint: 'https://netconfig-123.auth.eu-west-1.amazoncognito.com/oauth2/token',
  clientId: 'console-client',
  scopes: ['openid', 'email', 'profile'],
  rolesClaim: 'cognito:groups',
  endSessionEndpoint: 'https://netconfig-123.auth.eu-west-1.amazoncognito.com/logout',
};

let built: BuiltConsole;
type Handler = (event: unknown, context: unknown) => Promise<APIGatewayProxyResult>;
const handlers: Record<'page' | 'asset' | 'config', Handler> = {} as never;

beforeAll(async () => {
  built = buildConsole();
  vi.resetModules();
  Object.assign(process.env, consoleEnvironment(SIGN_IN), { [CONSOLE_ENV.files]: built.dir, ROUTE_ROLES: 'public' });
  for (const name of ['page', 'asset', 'config'] as const) handlers[name] = (await import(`../../functions/console/handlers/${name}.ts`)).handler as Handler;
});

/** A handler's answer as the gateway has it: status, headers and the body's text. */
const invoke = async (handler: Handler, event: unknown): Promise<APIGatewayProxyResult> => {
  const answer = await invokeParsed(handler as never, event as never);
  return { statusCode: answer.status, headers: answer.headers, body: typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body) };
};

const header = (answer: APIGatewayProxyResult, name: string) => answer.headers?.[name];

const expectSecurityHeaders = (answer: APIGatewayProxyResult) => {
  expect(header(answer, 'Content-Security-Policy')).toBe(
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' https://netconfig-123.auth.eu-west-1.amazoncognito.com; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  expect(header(answer, 'X-Content-Type-Options')).toBe('nosniff');
  expect(header(answer, 'Referrer-Policy')).toBe('no-referrer');
};

describe('console build', () => {
  it('is deterministic: two builds give the same bytes', () => {
    const a = buildConsoleFiles().files;
    const b = buildConsoleFiles().files;
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [name, contents] of a) expect(Buffer.from(b.get(name)!).equals(Buffer.from(contents)), name).toBe(true);
  });

  it('names every asset by its content hash and lists it in the manifest', () => {
    const files = readdirSync(path.join(built.dir, 'assets'));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) expect(file).toMatch(/^[a-z]+-[A-Z0-9]{8}\.(?:js|css)$/);
    expect(Object.keys(built.manifest.assets).sort()).toEqual([...files].sort());
  });

  it('writes a page with no inline script or style, referencing exactly the first-load files', () => {
    const html = readFileSync(path.join(built.dir, 'index.html'), 'utf8');
    expect(html).toContain('<div id="app"></div>');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const referenced = [...html.matchAll(/%BASE%\/console\/assets\/([^"]+)"/g)].map((m) => m[1]);
    expect(referenced.sort()).toEqual([...built.manifest.firstLoad.scripts, ...built.manifest.firstLoad.styles].sort());
  });

  it('keeps the first-load JavaScript within 200 KB gzipped', () => {
    expect(built.manifest.firstLoad.scripts.length).toBeGreaterThan(0);
    expect(built.firstLoadScriptGzipBytes).toBeGreaterThan(0);
    expect(built.firstLoadScriptGzipBytes).toBeLessThanOrEqual(FIRST_LOAD_BUDGET_BYTES);
  });
});

describe('GET /console', () => {
  it('answers the page with its asset URLs absolute under the stage, not cached, with the security headers', async () => {
    const answer = await invoke(handlers.page, apiEvent({ method: 'GET', resource: '/console' }));
    expect(answer.statusCode).toBe(200);
    expect(header(answer, 'Content-Type')).toBe('text/html; charset=utf-8');
    expect(header(answer, 'Cache-Control')).toBe('no-cache');
    expectSecurityHeaders(answer);
    expect(answer.body).not.toContain('%BASE%');
    const script = built.manifest.firstLoad.scripts[0]!;
    expect(answer.body).toContain(`src="/v1/console/assets/${script}"`);
  });

  it("answers the identity provider's redirect back (code and state, or an error) with the page, and refuses other parameters", async () => {
    const callbacks: Record<string, string>[] = [
      { code: 'c0de', state: 's7ate' },
      { error: 'access_denied', error_description: 'The user said no', state: 's' },
      { code: 'c', state: 's', iss: 'https://idp' },
    ];
    for (const query of callbacks) {
      const answer = await invoke(handlers.page, apiEvent({ method: 'GET', resource: '/console', query }));
      expect(answer.statusCode, JSON.stringify(query)).toBe(200);
      expect(answer.body).not.toContain('c0de');
    }
    const refused = await invoke(handlers.page, apiEvent({ method: 'GET', resource: '/console', query: { code: 'c', redirect: 'https://evil' } }));
    expect(refused.statusCode).toBe(400);
    expectSecurityHeaders(refused);
  });

  it('takes the base path of a custom domain, with or without the trailing slash, and escapes it', async () => {
    const event = apiEvent({ method: 'GET', resource: '/console' });
    const at = (p: string) => invoke(handlers.page, { ...event, requestContext: { ...event.requestContext, path: p } });
    expect((await at('/netops/console/')).body).toContain(`src="/netops/console/assets/`);
    expect((await at('/console')).body).toContain(`src="/console/assets/`);
    // Not a base path (a quote, replacement patterns): none, rather than a page built from it.
    for (const odd of ['/a"b/console', '/x$`/console', "/x$'/console", '/x$&/console']) expect((await at(odd)).body, odd).toContain(`src="/console/assets/`);
  });
});

describe('GET /console/assets/{file}', () => {
  it('answers a hashed asset with its type, cached for a year', async () => {
    for (const asset of Object.values(built.manifest.assets)) {
      const answer = await invoke(handlers.asset, apiEvent({ method: 'GET', resource: '/console/assets/{file}', pathParameters: { file: asset.file } }));
      expect(answer.statusCode).toBe(200);
      expect(header(answer, 'Content-Type')).toBe(asset.file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(header(answer, 'Cache-Control')).toBe('public, max-age=31536000, immutable');
      expect(answer.body).toBe(readFileSync(path.join(built.dir, 'assets', asset.file), 'utf8'));
      expectSecurityHeaders(answer);
    }
  });

  it('answers 404 problem+json, with the security headers, for a name the build did not make', async () => {
    const answer = await invoke(handlers.asset, apiEvent({ method: 'GET', resource: '/console/assets/{file}', pathParameters: { file: 'main-AAAAAAAA.js' } }));
    expect(answer.statusCode).toBe(404);
    expect(header(answer, 'Content-Type')).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ title: 'Not Found', detail: 'The console has no asset named "main-AAAAAAAA.js".' });
    expectSecurityHeaders(answer);
  });

  it.each(['../manifest.json', '..%2Findex.html', '.hidden.js', 'manifest.json', 'index.html', 'constructor', '__proto__.js', 'toString.js'])(
    'refuses %s: nothing outside the listed assets is served',
    async (file) => {
      const answer = await invoke(handlers.asset, apiEvent({ method: 'GET', resource: '/console/assets/{file}', pathParameters: { file } }));
      expect([400, 404]).toContain(answer.statusCode);
      expect(header(answer, 'Content-Type')).toBe('application/problem+json');
      expectSecurityHeaders(answer);
    },
  );
});

describe('GET /console/config.json', () => {
  it('answers the sign-in settings from the environment, not cached', async () => {
    const answer = await invoke(handlers.config, apiEvent({ method: 'GET', resource: '/console/config.json' }));
    expect(answer.statusCode).toBe(200);
    expect(header(answer, 'Cache-Control')).toBe('no-cache');
    expect(JSON.parse(answer.body)).toEqual(SIGN_IN);
    expectSecurityHeaders(answer);
  });
});

describe('console model', () => {
  it('takes the base path from the request path', () => {
    expect(basePathOf('/v1/console')).toBe('/v1');
    expect(basePathOf('/v1/console/')).toBe('/v1');
    expect(basePathOf('/console')).toBe('');
    expect(basePathOf(undefined)).toBe('');
  });

  it('adds only the token endpoint origin to connect-src', () => {
    expect(contentSecurityPolicy('https://idp.example.com:8443/realms/x/token')).toContain("connect-src 'self' https://idp.example.com:8443;");
    expect(contentSecurityPolicy('not a url')).toContain("connect-src 'self';");
    expect(contentSecurityPolicy(undefined)).toContain("connect-src 'self';");
  });
});
