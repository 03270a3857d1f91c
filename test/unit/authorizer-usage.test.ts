/**
 * The relay's usage plans as the authorizer names them: which key a caller gets (subject, then
 * client id, then the default), the environment it is read from, and the answer that carries it.
 */
import { describe, expect, it } from 'vitest';
import { authorize } from '../../functions/authorizer/service.js';
import { parseUsageKeys, serializeUsageKeys, usageKeyFor, type UsageKeys } from '../../functions/authorizer/usage.js';
import { callerOf } from '../../functions/authorizer/verify.js';
import { usageKeysOf, usageKeyValue } from '../../infra/constructs/api-exposure.js';
import { authorizerEvent } from '../../tools/simulators/jwks.js';

const KEYS: UsageKeys = {
  claim: 'azp',
  defaultKey: 'key-default',
  clients: [
    { key: 'key-pipeline', subjects: ['svc-pipeline'], clientIds: ['pipeline-app'] },
    { key: 'key-noc', subjects: ['alice', 'bob'], clientIds: [] },
  ],
};

describe('usageKeyFor', () => {
  it('gives a caller named by subject its client’s key', () => {
    expect(usageKeyFor(KEYS, { sub: 'bob' })).toBe('key-noc');
    expect(usageKeyFor(KEYS, { sub: 'svc-pipeline' })).toBe('key-pipeline');
  });

  it('gives a caller named by client id its client’s key', () => {
    expect(usageKeyFor(KEYS, { sub: 'carol', clientId: 'pipeline-app' })).toBe('key-pipeline');
  });

  it('prefers the subject over the client id when both name a client', () => {
    expect(usageKeyFor(KEYS, { sub: 'alice', clientId: 'pipeline-app' })).toBe('key-noc');
  });

  it('gives everyone else the default key, with or without a client id', () => {
    expect(usageKeyFor(KEYS, { sub: 'carol' })).toBe('key-default');
    expect(usageKeyFor(KEYS, { sub: 'carol', clientId: 'other-app' })).toBe('key-default');
    // A subject is never matched as a client id, nor the reverse.
    expect(usageKeyFor(KEYS, { sub: 'pipeline-app' })).toBe('key-default');
    expect(usageKeyFor(KEYS, { sub: 'carol', clientId: 'alice' })).toBe('key-default');
  });
});

describe('USAGE_PLAN_KEYS', () => {
  it('reads back what the stack writes', () => {
    expect(parseUsageKeys(serializeUsageKeys(KEYS))).toEqual(KEYS);
  });

  it.each([
    ['not JSON', '{', 'USAGE_PLAN_KEYS: not JSON'],
    ['no default', '{"claim":"azp","clients":[]}', 'USAGE_PLAN_KEYS: needs claim, default and clients'],
    ['null', 'null', 'USAGE_PLAN_KEYS: needs claim, default and clients'],
    [
      'a client of another shape',
      '{"claim":"azp","default":"k","clients":[["k1","alice",[]]]}',
      'USAGE_PLAN_KEYS: client 0 must be [key, subjects, clientIds]',
    ],
    ['an empty subject', '{"claim":"azp","default":"k","clients":[["k1",[""],[]]]}', 'USAGE_PLAN_KEYS: client 0 must be [key, subjects, clientIds]'],
  ])('stops the authorizer at its start on %s', (_, text, message) => {
    expect(() => parseUsageKeys(text)).toThrow(message);
  });

  it('is derived by the stack from the service and client names, one distinct key per plan and per deployment', () => {
    const plans = {
      clientIdClaim: 'azp',
      default: { rateLimit: 5, burstLimit: 10 },
      clients: [{ name: 'pipeline', clientIds: ['pipeline-app'], rateLimit: 50, burstLimit: 100 }],
    };
    const keys = usageKeysOf('netconfig-prod', plans);
    expect(keys).toEqual({
      claim: 'azp',
      defaultKey: usageKeyValue('netconfig-prod', 'default'),
      clients: [{ key: usageKeyValue('netconfig-prod', 'pipeline'), subjects: [], clientIds: ['pipeline-app'] }],
    });
    expect(keys.defaultKey).toMatch(/^[0-9a-f]{40}$/);
    expect(keys.clients[0]!.key).not.toBe(keys.defaultKey);
    expect(usageKeysOf('netconfig-staging', plans).defaultKey).not.toBe(keys.defaultKey);
  });
});

describe('the client id claim', () => {
  const now = 1_800_000_000;
  const payload = { sub: 'carol', exp: now + 60, azp: 'pipeline-app', 'cognito:groups': ['admin'] };

  it('is read only when the deployment names one, and only as a non-empty string', () => {
    expect(callerOf(payload, 'cognito:groups', now, 'azp')).toEqual({ sub: 'carol', roles: ['admin'], clientId: 'pipeline-app' });
    expect(callerOf(payload, 'cognito:groups', now)).toEqual({ sub: 'carol', roles: ['admin'] });
    expect(callerOf({ ...payload, azp: ['pipeline-app'] }, 'cognito:groups', now, 'azp')).toEqual({ sub: 'carol', roles: ['admin'] });
    expect(callerOf({ ...payload, azp: '' }, 'cognito:groups', now, 'azp')).toEqual({ sub: 'carol', roles: ['admin'] });
  });
});

describe('the authorizer answer', () => {
  const logger = { debug: () => undefined, info: () => undefined, error: () => undefined };
  const event = authorizerEvent({ token: 'a.b.c', method: 'POST', path: '/orch_manager/restAction/nso-1' });
  const verify = async () => ({ sub: 'carol', roles: ['admin' as const], clientId: 'pipeline-app' });

  it('names the caller’s plan key beside the policy when the deployment has usage plans', async () => {
    const answer = await authorize(event, { verify, logger, usage: KEYS });
    expect(answer.usageIdentifierKey).toBe('key-pipeline');
    expect(answer.principalId).toBe('carol');
  });

  it('names no key without usage plans', async () => {
    const answer = await authorize(event, { verify, logger });
    expect(answer).not.toHaveProperty('usageIdentifierKey');
  });
});
