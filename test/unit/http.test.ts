import { describe, expect, it, vi } from 'vitest';
import { getTree, relayRestAction } from '../../functions/generated/validators.js';
import { httpHandler, json, staticHttpHandler } from '../../functions/runtime/http.js';
import { Conflict, InternalError, ServiceUnavailable } from '../../functions/platform/problem.js';
import { apiEvent, invoke } from '../../tools/simulators/api-events.js';
import { logger } from '../../functions/platform/logger.js';
import { stdoutDuring } from '../support/stdout.js';

const RELAY = '/orch_manager/restAction/{adapterId}';
const echo = httpHandler({ operation: 'relayRestAction', validate: relayRestAction, timeoutEarlyInMillis: 0 }, async (event) =>
  json(200, { body: event.body, adapter: event.pathParameters?.['adapterId'] }),
);
const relayEvent = (body: unknown, headers?: Record<string, string>) =>
  apiEvent({ method: 'POST', resource: RELAY, pathParameters: { adapterId: 'lab-nso' }, body, ...(headers ? { headers } : {}) });
const valid = { params: { path: '/restconf/data', accept: 'application/yang-data+json' }, body: {} };

describe('httpHandler', () => {
  it('passes a valid request to the business function with its body parsed', async () => {
    const res = await invoke(echo, relayEvent(valid));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ body: valid, adapter: 'lab-nso' });
  });

  it.each([
    [{ body: {} }, 'body', 'params', 'is required'],
    [{ params: valid.params }, 'body', 'body', 'is required'],
    [{ params: { accept: 'a/b' }, body: {} }, 'body', 'params.path', 'is required'],
    [{ params: { path: '/x' }, body: {} }, 'body', 'params.accept', 'is required'],
    [{ ...valid, extra: 1 }, 'body', 'extra', 'is not allowed'],
    [{ params: { ...valid.params, path: 5 }, body: {} }, 'body', 'params.path', 'must be string'],
    [{ params: valid.params, body: [] }, 'body', 'body', 'must be object'],
  ])('answers 400 naming the field for %j', async (body, where, field, message) => {
    const res = await invoke(echo, relayEvent(body));
    expect(res.status).toBe(400);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body).toMatchObject({ type: 'urn:netconfig:problem:validation', status: 400, title: 'Bad Request' });
    expect(res.body.errors).toContainEqual({ in: where, field, message });
    expect(res.body.detail).toContain(field);
    expect(res.body.requestId).toEqual(expect.any(String));
  });

  it('answers 400 when the body is not JSON, and 415 when it is not declared JSON', async () => {
    const bad = await invoke(echo, relayEvent('{"params":'));
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/not valid JSON/);
    const text = await invoke(echo, relayEvent('hello', { 'Content-Type': 'text/plain' }));
    expect(text.status).toBe(415);
    expect(text.contentType).toBe('application/problem+json');
  });

  it('accepts JSON media types with parameters and +json suffixes', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json', 'APPLICATION/JSON']) {
      expect((await invoke(echo, relayEvent(valid, { 'Content-Type': type }))).status).toBe(200);
    }
  });

  it('rejects a body with any property on a route that takes none, and accepts none or {}', async () => {
    const read = httpHandler({ operation: 'getTree', validate: getTree, timeoutEarlyInMillis: 0 }, async () => json(200, {}));
    const ev = (body?: unknown) =>
      apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId: 'a'.repeat(24) }, body });
    expect((await invoke(read, ev())).status).toBe(200);
    expect((await invoke(read, ev({}))).status).toBe(200);
    const res = await invoke(read, ev({ a: 1 }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ in: 'body', field: 'a', message: 'is not allowed' }]);
  });

  it('names a path parameter that fails its pattern', async () => {
    const read = httpHandler({ operation: 'getTree', validate: getTree, timeoutEarlyInMillis: 0 }, async () => json(200, {}));
    const res = await invoke(read, apiEvent({ method: 'GET', resource: '/configuration_manager/configs/{treeId}', pathParameters: { treeId: 'XYZ' } }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ in: 'path', field: 'treeId', message: expect.stringContaining('must match pattern') }]);
  });

  it('renders typed errors with their status and headers', async () => {
    const conflict = httpHandler({ operation: 't', timeoutEarlyInMillis: 0 }, async () => {
      throw new Conflict('A tree named core exists.');
    });
    expect(await invoke(conflict, apiEvent({ method: 'POST', resource: '/x' }))).toMatchObject({
      status: 409,
      body: { type: 'urn:netconfig:problem:conflict', detail: 'A tree named core exists.' },
    });
    const down = httpHandler({ operation: 't', timeoutEarlyInMillis: 0 }, async () => {
      throw new ServiceUnavailable('The database is unavailable.', 7);
    });
    const res = await invoke(down, apiEvent({ method: 'GET', resource: '/x' }));
    expect(res.status).toBe(503);
    expect(res.headers['Retry-After']).toBe('7');
  });

  it('never shows the cause of an unexpected error or an internal one', async () => {
    for (const error of [new TypeError('secret internals at line 3'), new InternalError('damaged item', { id: 'x' })]) {
      const failing = httpHandler({ operation: 't', timeoutEarlyInMillis: 0 }, async () => {
        throw error;
      });
      const res = await invoke(failing, apiEvent({ method: 'GET', resource: '/x' }));
      expect(res.status).toBe(500);
      expect(JSON.stringify(res.body)).not.toMatch(/secret internals|damaged|TypeError/);
      expect(res.body.type).toBe('urn:netconfig:problem:internal');
    }
  });
});

describe('staticHttpHandler (no active profile)', () => {
  it('serves a route of no application, and refuses with 500 to serve a route of an application (it would skip the stopped-application gate)', async () => {
    let ran = 0;
    const handler = staticHttpHandler({ operation: 'getStatus', timeoutEarlyInMillis: 0 }, async () => {
      ran++;
      return json(200, { ok: true });
    });
    expect((await invoke(handler, apiEvent({ method: 'GET', resource: '/status' }))).status).toBe(200);
    expect(ran).toBe(1);
    for (const resource of [RELAY, '/configuration_manager/configs/{treeId}']) {
      const res = await invoke(handler, apiEvent({ method: 'GET', resource }));
      expect(res.status, resource).toBe(500);
      expect(res.contentType).toBe('application/problem+json');
    }
    expect(ran).toBe(1);
  });
});

describe('the caller on every line of a request', () => {
  const logging = staticHttpHandler({ operation: 'getStatus', timeoutEarlyInMillis: 0 }, async (event) => {
    logger.error('first line');
    logger.warn('second line', { detail: 1 });
    if (event.queryStringParameters?.['fail']) throw new Error('boom');
    return json(200, { ok: true });
  });
  const authorized = (principal: string, roles: string, query?: Record<string, string>) =>
    apiEvent({ method: 'GET', resource: '/status', authorizer: { principalId: principal, principal, roles }, ...(query ? { query } : {}) });

  it('names the subject and roles on each line, the failure lines of the request included', async () => {
    const ok = await stdoutDuring(() => invoke(logging, authorized('alice@bank.example', 'admin,apiread')));
    const failed = await stdoutDuring(() => invoke(logging, authorized('bob@bank.example', 'apiread', { fail: '1' })));
    expect(ok.entries().map((l) => l['message'])).toEqual(['first line', 'second line']);
    for (const line of ok.entries()) expect(line['caller']).toEqual({ subject: 'alice@bank.example', roles: ['admin', 'apiread'] });
    // The error lines toProblem writes belong to the request as well.
    expect(failed.entries().map((l) => l['message'])).toEqual(['first line', 'second line', 'unhandled error', 'request failed']);
    for (const line of failed.entries()) expect(line['caller']).toEqual({ subject: 'bob@bank.example', roles: ['apiread'] });
  });

  it('takes the subject from principalId when the context has no principal, and names no caller where no authorizer ran', async () => {
    const byId = await stdoutDuring(() =>
      invoke(logging, apiEvent({ method: 'GET', resource: '/status', authorizer: { principalId: 'carol', roles: 'apiread' } })),
    );
    expect(byId.entries().map((l) => l['caller'])).toEqual([
      { subject: 'carol', roles: ['apiread'] },
      { subject: 'carol', roles: ['apiread'] },
    ]);
    // A public route after an authorized one in the same container: the previous caller is gone.
    vi.stubEnv('ROUTE_ROLES', 'public');
    const open = await stdoutDuring(() => invoke(logging, apiEvent({ method: 'GET', resource: '/status', authorizer: {} })));
    vi.unstubAllEnvs();
    expect(open.entries()).toHaveLength(2);
    for (const line of open.entries()) expect(line).not.toHaveProperty('caller');
  });
});
