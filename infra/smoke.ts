/**
 * `npm run smoke -- <ApiUrl> [adapter]`: checks a deployed (or local) stack from outside, as a
 * client would, and exits non-zero when a check fails. The token comes from `NETCONFIG_TOKEN`
 * (an `admin` token: the relay check needs it; the others need `apiread` or nothing).
 *
 * Checks: `GET /status` answers `running` without a token; a removed route answers 410 with its
 * problem and a `Link`; a tree route answers 401 without a token; the tree list (and the first
 * tree) can be read with the token; with an adapter name, one read-only relay call (`GET
 * /restconf`, the RESTCONF root) through it.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

export interface SmokeCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

type Fetch = typeof fetch;

const problemOf = async (res: Response): Promise<Record<string, unknown> | undefined> => {
  try {
    return (await res.json()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/** Runs every check against `base` (the stage URL); never throws. */
export const runSmoke = async (o: { base: string; token?: string; adapter?: string; fetch?: Fetch; timeoutMs?: number }): Promise<SmokeCheck[]> => {
  const doFetch = o.fetch ?? fetch;
  const base = o.base.replace(/\/+$/, '');
  const checks: SmokeCheck[] = [];
  const call = (path: string, init: RequestInit & { auth?: boolean } = {}) =>
    doFetch(`${base}${path}`, {
      ...init,
      headers: { ...(init.auth && o.token ? { Authorization: `Bearer ${o.token}` } : {}), ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
    });
  const check = async (name: string, run: () => Promise<string>): Promise<void> => {
    try {
      checks.push({ name, ok: true, detail: await run() });
    } catch (error) {
      checks.push({ name, ok: false, detail: error instanceof Error ? error.message : String(error) });
    }
  };
  const expectStatus = (res: Response, status: number) => {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`);
  };

  await check('GET /status answers running without a token', async () => {
    const res = await call('/status');
    expectStatus(res, 200);
    const body = (await res.json()) as { status?: string; version?: string };
    if (body.status !== 'running') throw new Error(`status is ${JSON.stringify(body.status)}`);
    return `version ${body.version ?? '?'}`;
  });
  await check('a removed route answers 410 with its problem and a Link', async () => {
    const res = await call('/isAlive');
    expectStatus(res, 410);
    const problem = await problemOf(res);
    if (problem?.['type'] !== 'urn:netconfig:problem:route-removed') throw new Error('the body is not the route-removed problem');
    const link = res.headers.get('link');
    if (!link) throw new Error('no Link header');
    return link;
  });
  await check('a tree route answers 401 without a token', async () => {
    const res = await call('/configuration_manager/configs');
    expectStatus(res, 401);
    if ((await problemOf(res))?.['type'] !== 'urn:netconfig:problem:unauthorized') throw new Error('the body is not the unauthorized problem');
    return 'refused';
  });
  await check('trees can be read with the token', async () => {
    if (!o.token) throw new Error('NETCONFIG_TOKEN is not set');
    const res = await call('/configuration_manager/configs?limit=1', { auth: true });
    expectStatus(res, 200);
    const { items } = (await res.json()) as { items: { id: string }[] };
    if (!items.length) return 'no tree yet (the list answered)';
    const one = await call(`/configuration_manager/configs/${encodeURIComponent(items[0]!.id)}`, { auth: true });
    expectStatus(one, 200);
    return `read tree ${items[0]!.id}`;
  });
  if (o.adapter) {
    const adapter = o.adapter;
    await check(`a read-only relay through adapter ${adapter}`, async () => {
      if (!o.token) throw new Error('NETCONFIG_TOKEN is not set');
      const res = await call(`/orch_manager/restAction/${encodeURIComponent(adapter)}`, {
        method: 'POST',
        auth: true,
        body: JSON.stringify({ params: { path: '/restconf', method: 'GET', accept: 'application/yang-data+json' }, body: {} }),
      });
      if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${JSON.stringify((await problemOf(res))?.['detail'] ?? '')}`);
      const [result] = (await res.json()) as { result: string }[];
      return `the orchestrator answered ${result?.result ?? '?'}`;
    });
  }
  return checks;
};

const USAGE = 'usage: NETCONFIG_TOKEN=<token> npm run smoke -- <ApiUrl> [adapter]';

const main = async (argv: readonly string[]): Promise<number> => {
  const { positionals } = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: {} });
  const [base, adapter] = positionals;
  if (!base || positionals.length > 2 || !/^https?:\/\//.test(base)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const checks = await runSmoke({
    base,
    ...(process.env['NETCONFIG_TOKEN'] ? { token: process.env['NETCONFIG_TOKEN'] } : {}),
    ...(adapter ? { adapter } : {}),
  });
  for (const c of checks) process.stdout.write(`${c.ok ? 'pass' : 'FAIL'}  ${c.name}: ${c.detail}\n`);
  const failed = checks.filter((c) => !c.ok).length;
  process.stdout.write(failed ? `${failed} of ${checks.length} checks failed\n` : `all ${checks.length} checks passed\n`);
  return failed ? 1 : 0;
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  });
}
