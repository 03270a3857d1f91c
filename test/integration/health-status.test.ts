/**
 * GET /status (public) and GET /health/server: what they answer, and that /status needs no
 * dependency (its bundle holds no AWS SDK, and its version is inlined at build time).
 */
import { build } from 'esbuild';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { PROJECT_ROOT } from '../../infra/paths.js';
import { apiEvent, invoke, lambdaContext } from '../../tools/simulators/api-events.js';

type Handler = Parameters<typeof invoke>[0];

const fresh = async (module: string, env: Record<string, string> = {}): Promise<Handler> => {
  vi.resetModules();
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  return ((await import(module)) as { handler: Handler }).handler;
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('GET /status', () => {
  it('answers 200 with the service name, the package version and "running", uncached', async () => {
    // A public route: the stack gives its function `ROUTE_ROLES=public`, and no authorizer runs.
    const handler = await fresh('../../functions/health/handlers/status.js', { SERVICE_NAME: 'netconfig', ROUTE_ROLES: 'public' });
    const res = await invoke(handler, apiEvent({ method: 'GET', resource: '/status', authorizer: {} }));
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(res.headers['Cache-Control']).toBe('no-store');
    expect(res.body).toEqual({ service: 'netconfig', version: packageJson.version, status: 'running' });
  });

  it('answers even when every dependency is unreachable', async () => {
    const handler = await fresh('../../functions/health/handlers/status.js', {
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
      SECRETS_BACKEND: 'vault',
      VAULT_ADDR: 'http://127.0.0.1:1',
    });
    expect((await invoke(handler, apiEvent({ method: 'GET', resource: '/status' }))).status).toBe(200);
  });

  it('is bundled without any AWS SDK or secrets client, with the version inlined', async () => {
    const out = await build({
      entryPoints: [path.join(PROJECT_ROOT, 'functions/health/handlers/status.ts')],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      logLevel: 'silent',
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.some((i) => i.includes('@aws-sdk') || i.includes('/secrets/') || i.includes('platform/dynamo'))).toBe(false);
    const code = out.outputFiles[0]!.text;
    expect(code).toContain(`"${packageJson.version}"`);
    expect(code).not.toMatch(/readFileSync\([^)]*package\.json/);
  });
});

describe('GET /health/server', () => {
  it('reports runtime, region, memory and function, cold on the first invocation and warm after', async () => {
    const handler = await fresh('../../functions/health/handlers/server.js', {
      AWS_REGION: 'eu-west-1',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    });
    const context = lambdaContext(10_000, 'netconfig-GetServerHealth');
    const first = await invoke(handler, apiEvent({ method: 'GET', resource: '/health/server' }), context);
    const second = await invoke(handler, apiEvent({ method: 'GET', resource: '/health/server' }), context);
    expect(first.status).toBe(200);
    expect(first.headers['Cache-Control']).toBe('no-store');
    expect(first.body).toEqual({
      status: 'up',
      runtime: { name: 'nodejs', version: process.version, architecture: process.arch, executionEnv: 'AWS_Lambda_nodejs22.x' },
      region: 'eu-west-1',
      function: { name: 'netconfig-GetServerHealth', version: '$LATEST' },
      memory: {
        configuredMb: 512,
        rssMb: expect.any(Number),
        heapUsedMb: expect.any(Number),
        heapTotalMb: expect.any(Number),
        externalMb: expect.any(Number),
      },
      container: {
        start: 'cold',
        invocation: 1,
        initializationType: 'on-demand',
        startedAt: expect.stringMatching(/Z$/),
        uptimeSeconds: expect.any(Number),
      },
    });
    expect(first.body.memory.rssMb).toBeGreaterThan(0);
    expect(second.body.container).toMatchObject({ start: 'warm', invocation: 2, startedAt: first.body.container.startedAt });
  });

  it('falls back to the context’s memory size outside Lambda', async () => {
    const handler = await fresh('../../functions/health/handlers/server.js', { AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '' });
    const res = await invoke(handler, apiEvent({ method: 'GET', resource: '/health/server' }));
    expect(res.body.memory.configuredMb).toBe(512);
  });
});
