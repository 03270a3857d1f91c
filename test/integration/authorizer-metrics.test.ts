/**
 * What the authorizer counts, against a real JWKS server on 127.0.0.1: a refused token is a
 * denial (401 or 403, `AuthorizerDenials`) and never an `AuthorizerFailures`, the metric the
 * authorizer's failure alarm watches; a request it cannot decide (issuer keys never fetched, an
 * unexpected exception) is a failure, and still never a 401.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RoleAuthorizerResult } from '../../functions/authorizer/service.js';
import { authorizerEvent, claims, signJwt, startJwksServer, testKey, type JwksServer, type TestKey } from '../../tools/simulators/jwks.js';
import { stdoutDuring } from '../support/stdout.js';

const ISSUER = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_METRICS';
const AUDIENCE = 'metrics-client-id';
const SERVICE = 'netconfig-metrics-test';

type Handler = (event: APIGatewayRequestAuthorizerEvent) => Promise<RoleAuthorizerResult>;

let server: JwksServer;
let key: TestKey;

/** A fresh container (modules loaded anew) whose authorizer reads `jwksUrl`, with metrics on. */
const container = async (jwksUrl: string): Promise<Handler> => {
  vi.resetModules();
  vi.stubEnv('JWT_ISSUER', ISSUER);
  vi.stubEnv('JWT_AUDIENCE', AUDIENCE);
  vi.stubEnv('JWKS_URL', jwksUrl);
  vi.stubEnv('METRICS_DISABLED', 'false');
  vi.stubEnv('SERVICE_NAME', SERVICE);
  return (await import('../../functions/authorizer/handlers/authorize.js')).handler;
};

const token = (extra: Record<string, unknown> = {}): string =>
  signJwt({ alg: 'RS256', typ: 'JWT', kid: key.kid }, claims(ISSUER, AUDIENCE, { 'cognito:groups': ['admin'], ...extra }), key);

/** Runs one invocation; returns how it ended and the EMF documents it wrote. */
const invoke = async (handler: Handler, event: APIGatewayRequestAuthorizerEvent) => {
  let outcome: { result?: RoleAuthorizerResult; error?: Error } = {};
  const out = await stdoutDuring(async () => {
    outcome = await handler(event).then(
      (result) => ({ result }),
      (error: unknown) => ({ error: error as Error }),
    );
  });
  const emf = out.entries().filter((e) => '_aws' in e);
  const metric = (name: string) =>
    emf
      .filter((d) => d._aws.CloudWatchMetrics.some((m: { Metrics: { Name: string }[] }) => m.Metrics.some((x) => x.Name === name)))
      .map((d) => ({
        reason: d['Reason'] as string,
        value: d[name] as number,
        service: d['Service'] as string,
        rollups: d._aws.CloudWatchMetrics[0].Dimensions as string[][],
      }));
  const logs = out.entries().filter((e) => !('_aws' in e));
  return { ...outcome, denials: metric('AuthorizerDenials'), failures: metric('AuthorizerFailures'), emf, logs };
};

beforeAll(async () => {
  key = testKey('rsa', 'metrics-key');
  server = await startJwksServer({ keys: [key.jwk] });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

afterAll(async () => {
  await server.stop();
});

describe('authorizer metrics: refused tokens are denials, not failures', () => {
  it('answers an expired token with 401 and counts a denial (reason expired), no failure', async () => {
    const handler = await container(server.url);
    const expired = token({ exp: Math.floor(Date.now() / 1000) - 3600 });
    const { error, denials, failures } = await invoke(handler, authorizerEvent({ token: expired }));
    expect(error?.message).toBe('Unauthorized');
    expect(denials).toEqual([{ reason: 'expired', value: 1, service: SERVICE, rollups: [['Service', 'Reason'], ['Service']] }]);
    expect(failures).toEqual([]);
  });

  it('answers a missing token with 401 and a forged one with 401, never counting a failure', async () => {
    const handler = await container(server.url);
    const forged = signJwt({ alg: 'RS256', kid: key.kid }, claims(ISSUER, AUDIENCE, { 'cognito:groups': ['admin'] }), testKey('rsa', key.kid));
    for (const [event, reason] of [
      [authorizerEvent({}), 'missing'],
      [authorizerEvent({ token: forged }), 'signature'],
    ] as const) {
      const { error, denials, failures } = await invoke(handler, event);
      expect(error?.message).toBe('Unauthorized');
      expect(denials.map((d) => d.reason)).toEqual([reason]);
      expect(failures).toEqual([]);
    }
  });

  it('denies (403: an explicit Deny) a valid token without a granted role, counting a denial and no failure', async () => {
    const handler = await container(server.url);
    const { result, error, denials, failures } = await invoke(handler, authorizerEvent({ token: token({ 'cognito:groups': [] }) }));
    expect(error).toBeUndefined();
    expect(result?.policyDocument.Statement[0]?.Effect).toBe('Deny');
    expect(denials.map((d) => d.reason)).toEqual(['no-granted-role']);
    expect(failures).toEqual([]);
  });

  it('counts nothing for an accepted token', async () => {
    const handler = await container(server.url);
    const { result, denials, failures } = await invoke(handler, authorizerEvent({ token: token() }));
    expect(result?.policyDocument.Statement[0]?.Effect).toBe('Allow');
    expect(denials).toEqual([]);
    expect(failures).toEqual([]);
  });
});

describe('authorizer metrics: failures', () => {
  it('counts a failure (issuer-keys-unavailable) when the JWKS endpoint is down in a container that never got the keys, and answers no 401', async () => {
    const down = await startJwksServer({ keys: [key.jwk] });
    await down.stop(); // connection refused from now on
    const handler = await container(down.url);
    const { error, denials, failures } = await invoke(handler, authorizerEvent({ token: token() }));
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).not.toBe('Unauthorized');
    expect(failures).toEqual([{ reason: 'issuer-keys-unavailable', value: 1, service: SERVICE, rollups: [['Service', 'Reason'], ['Service']] }]);
    expect(denials).toEqual([]);
  });

  it('still counts junk as a denial, not a failure, while the issuer keys are unavailable', async () => {
    const down = await startJwksServer({ keys: [key.jwk] });
    await down.stop();
    const handler = await container(down.url);
    const { error, denials, failures } = await invoke(handler, authorizerEvent({ token: 'aaaa.bbbb.cccc' }));
    expect(error?.message).toBe('Unauthorized');
    expect(denials.map((d) => d.reason)).toEqual(['malformed']);
    expect(failures).toEqual([]);
  });

  it('counts a failure (unexpected) for a request it cannot decide, such as a method ARN it cannot parse', async () => {
    const handler = await container(server.url);
    const event = { ...authorizerEvent({ token: token() }), methodArn: 'not-an-arn' };
    const { error, denials, failures, logs } = await invoke(handler, event);
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).not.toBe('Unauthorized');
    expect(failures.map((f) => f.reason)).toEqual(['unexpected']);
    expect(denials).toEqual([]);
    // The cause is logged, as the error's name and message, on the request's line.
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'error',
        message: 'authorizer failed',
        error: { name: 'Error', message: error?.message },
        correlationId: event.requestContext.requestId,
        operation: 'authorize',
      }),
    ]);
  });
});

describe('authorizer logs and context', () => {
  it('logs an accepted token at debug: principal, roles and the number of routes they allow, on the request id', async () => {
    vi.stubEnv('LOG_LEVEL', 'debug');
    const handler = await container(server.url);
    const event = authorizerEvent({ token: token({ sub: 'erin', 'cognito:groups': ['apiread', 'admin'] }) });
    const { result, logs, emf } = await invoke(handler, event);
    expect(result?.context).toEqual({ principal: 'erin', roles: 'admin,apiread' });
    const { allowedRoutes } = await import('../../functions/authorizer/policy.js');
    expect(logs).toEqual([
      {
        level: 'debug',
        timestamp: expect.any(String),
        service: SERVICE,
        message: 'bearer token accepted',
        correlationId: event.requestContext.requestId,
        operation: 'authorize',
        principal: 'erin',
        roles: 'admin,apiread',
        allowedRoutes: allowedRoutes(['admin', 'apiread']).length,
      },
    ]);
    expect(allowedRoutes(['admin', 'apiread']).length).toBeGreaterThan(allowedRoutes(['apiread']).length);
    expect(emf).toEqual([]);
  });

  it('puts the request id on the metrics it writes too', async () => {
    const handler = await container(server.url);
    const event = authorizerEvent({ token: 'aaaa.bbbb.cccc' });
    const { denials, emf } = await invoke(handler, event);
    expect(denials.map((d) => d.reason)).toEqual(['malformed']);
    expect(emf).toEqual([expect.objectContaining({ correlationId: event.requestContext.requestId })]);
  });

  it('answers an event without a request context (a direct invocation) like any other', async () => {
    vi.stubEnv('LOG_LEVEL', 'debug');
    const handler = await container(server.url);
    const { requestContext: _omitted, ...event } = authorizerEvent({ token: token() });
    const { result, logs } = await invoke(handler, event as APIGatewayRequestAuthorizerEvent);
    expect(result?.policyDocument.Statement[0]?.Effect).toBe('Allow');
    expect(logs).toEqual([expect.objectContaining({ message: 'bearer token accepted', operation: 'authorize' })]);
    expect(logs[0]).not.toHaveProperty('correlationId');
  });
});
