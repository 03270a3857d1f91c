import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/dynamodb-local.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { captureStdout } from '../support/stdout.js';

// The functions are pointed at a loopback port where nothing listens: DynamoDB is unreachable.
let saved: { endpoint?: string; table?: string; idempotency?: string };
let handlers: Record<'get' | 'list' | 'create', Parameters<typeof invoke>[0]>;

beforeAll(async () => {
  saved = { endpoint: process.env['AWS_ENDPOINT_URL_DYNAMODB'], table: process.env['TREES_TABLE'], idempotency: process.env['IDEMPOTENCY_TABLE'] };
  process.env['AWS_ENDPOINT_URL_DYNAMODB'] = `http://127.0.0.1:${await freePort()}`;
  process.env['TREES_TABLE'] = 'trees-unreachable';
  process.env['IDEMPOTENCY_TABLE'] = 'idempotency-unreachable';
  handlers = {
    get: (await import('../../functions/trees/handlers/get.js')).handler,
    list: (await import('../../functions/trees/handlers/list.js')).handler,
    create: (await import('../../functions/trees/handlers/create.js')).handler,
  };
});

afterAll(() => {
  for (const [name, value] of [
    ['AWS_ENDPOINT_URL_DYNAMODB', saved.endpoint],
    ['TREES_TABLE', saved.table],
    ['IDEMPOTENCY_TABLE', saved.idempotency],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('tree routes when DynamoDB cannot be reached', () => {
  it.each([
    ['GET one', 'get', apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId: 'a'.repeat(24) } })],
    ['GET list', 'list', apiEvent({ method: 'GET', resource: '/configuration_manager/configs' })],
    ['POST', 'create', apiEvent({ method: 'POST', resource: '/configuration_manager/configs', body: { name: 'n', deviceType: 'd' } })],
  ] as const)('%s answers 503 problem+json with Retry-After and no internals, and logs why', async (_, which, event) => {
    const out = captureStdout();
    const res = await invoke(handlers[which], event);
    out.restore();
    expect(res.status).toBe(503);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.headers['Retry-After']).toMatch(/^\d+$/);
    expect(JSON.stringify(res.body)).not.toMatch(/ECONN|127\.0\.0\.1|Dynamo|trees-unreachable|stack/i);
    expect(out.entries()).toContainEqual(expect.objectContaining({ level: 'warn', message: 'trees store unavailable', reason: 'unreachable' }));
  });
});
