/**
 * GET /health/system against DynamoDB Local (up), a closed loopback port (down), a server
 * that never answers (timeout), and the local secrets store (up, and broken).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { createTables } from '../../tools/local/table-copies.js';
import { captureStdout } from '../support/stdout.js';
import { freePort } from '../support/dynamodb-local.js';

type Handler = Parameters<typeof invoke>[0];
const event = () => apiEvent({ method: 'GET', resource: '/health/system' });

let dir: string;
let tables: Record<string, string>;

/** A fresh copy of the handler, built from the environment as it is now. */
const loadHandler = async (env: Record<string, string> = {}): Promise<Handler> => {
  vi.resetModules();
  // As deployed: the stack binds this function to the trees and adapters tables, and the
  // profiles table that every function using DynamoDB reads (createTables sets every table's
  // variable, the idempotency, compliance and changelog tables included).
  const base = {
    SECRETS_BACKEND: 'local',
    SECRETS_FILE: path.join(dir, 'secrets.json'),
    LOG_LEVEL: 'warn',
    IDEMPOTENCY_TABLE: '',
    COMPLIANCE_TABLE: '',
    CHANGELOG_TABLE: '',
  };
  for (const [k, v] of Object.entries({ ...base, ...env })) vi.stubEnv(k, v);
  return (await import('../../functions/health/handlers/system.js')).handler;
};

beforeAll(async () => {
  tables = await createTables();
  dir = await mkdtemp(path.join(tmpdir(), 'health-system-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('GET /health/system', () => {
  it('answers 200 with each bound table and the secrets store up, each with its latency', async () => {
    const handler = await loadHandler();
    const res = await invoke(handler, event());
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(res.headers['Cache-Control']).toBe('no-store');
    expect(res.body).toEqual({
      status: 'up',
      health: 'up',
      checkedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      dependencies: {
        'dynamodb:trees': { status: 'up', latencyMs: expect.any(Number) },
        'dynamodb:adapters': { status: 'up', latencyMs: expect.any(Number) },
        'dynamodb:profiles': { status: 'up', latencyMs: expect.any(Number) },
        'dynamodb:configs': { status: 'up', latencyMs: expect.any(Number) },
        secrets: { status: 'up', backend: 'local', latencyMs: expect.any(Number) },
      },
    });
  });

  it('answers 503 problem+json naming DynamoDB when it cannot be reached, and logs the failure with the correlation id', async () => {
    const port = await freePort();
    const handler = await loadHandler({ AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}` });
    const log = captureStdout();
    const ev = event();
    const res = await invoke(handler, ev);
    log.restore();
    expect(res.status).toBe(503);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.headers['Retry-After']).toBe('30');
    expect(res.body).toMatchObject({
      type: 'urn:netconfig:problem:dependency-down',
      status: 503,
      health: 'down',
      requestId: ev.requestContext.requestId,
      dependencies: {
        'dynamodb:trees': { status: 'down', reason: expect.stringMatching(/^(error|timeout)$/), latencyMs: expect.any(Number) },
        'dynamodb:adapters': { status: 'down' },
        secrets: { status: 'up' },
      },
    });
    expect(res.body.detail).toBe('A dependency is down: dynamodb:trees, dynamodb:adapters, dynamodb:profiles, dynamodb:configs.');
    // Neither the endpoint nor an SDK error name reaches the client or the log.
    const failures = log.entries().filter((l) => l['message'] === 'health check failed');
    expect(failures.map((l) => l['dependency']).sort()).toEqual(['dynamodb:adapters', 'dynamodb:configs', 'dynamodb:profiles', 'dynamodb:trees']);
    for (const text of [JSON.stringify(res.body), ...failures.map((l) => JSON.stringify(l))]) {
      expect(text).not.toContain(String(port));
      expect(text).not.toMatch(/ECONNREFUSED|Exception|TimeoutError/);
    }
    expect(failures.every((l) => l['correlationId'] === ev.requestContext.requestId)).toBe(true);
  });

  it('reports a table that does not exist as down', async () => {
    const handler = await loadHandler({ TREES_TABLE: `${tables['trees']}-missing` });
    const res = await invoke(handler, event());
    expect(res.status).toBe(503);
    expect(res.body.dependencies['dynamodb:trees']).toMatchObject({ status: 'down', reason: 'error' });
    expect(res.body.dependencies['dynamodb:adapters']).toMatchObject({ status: 'up' });
  });

  it('reports a dependency that does not answer as down by timeout, within its own time limit', async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const handler = await loadHandler({ AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`, HEALTH_CHECK_TIMEOUT_MS: '300' });
      const res = await invoke(handler, event());
      expect(res.status).toBe(503);
      expect(res.body.dependencies['dynamodb:trees']).toMatchObject({ status: 'down', reason: 'timeout' });
      expect(res.body.dependencies['secrets']).toMatchObject({ status: 'up' });
      expect(held.length).toBeGreaterThan(0);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('answers 503 when the secrets store is down, with DynamoDB still up', async () => {
    // A directory where the store file should be: the local store cannot read it.
    const handler = await loadHandler({ SECRETS_FILE: dir });
    const res = await invoke(handler, event());
    expect(res.status).toBe(503);
    expect(res.body.detail).toBe('A dependency is down: secrets.');
    expect(res.body.dependencies).toMatchObject({
      'dynamodb:trees': { status: 'up' },
      'dynamodb:adapters': { status: 'up' },
      secrets: { status: 'down', backend: 'local', reason: 'error' },
    });
    expect(JSON.stringify(res.body)).not.toContain(dir);
  });

  it('refuses a request body (400), like every read route', async () => {
    const handler = await loadHandler();
    const res = await invoke(handler, apiEvent({ method: 'GET', resource: '/health/system', body: { probe: true } }));
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
  });
});
