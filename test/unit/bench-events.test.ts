/**
 * `npm run bench` measures a cold first call of every function that answers requests (the
 * stack test checks that every function has one), and fails a run whose first call is refused:
 * here every route's first call passes the route's own validator.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { firstCallEvent, type CallContext } from '../../bench/events.js';
import * as validators from '../../functions/generated/validators.js';
import { liveRoutes } from '../../functions/api/routes.js';

const ctx: CallContext = {
  round: 3,
  treeId: '5cb0a3b7e1c4f20012a9d3e1',
  simulatorUrl: 'http://127.0.0.1:8443',
  simulatorCredentials: { username: 'admin', password: 'admin' },
  token: 'token',
  runId: 'run',
};

/** The event as the validator sees it in a handler (`http-core.ts`): headers lower-cased, maps never null, the JSON body parsed. */
const asValidated = (event: APIGatewayProxyEvent) => ({
  ...event,
  headers: Object.fromEntries(Object.entries(event.headers).map(([k, v]) => [k.toLowerCase(), v])),
  pathParameters: event.pathParameters ?? {},
  queryStringParameters: event.queryStringParameters ?? {},
  body: event.body === null ? undefined : (JSON.parse(event.body) as unknown),
});

describe('bench first calls', () => {
  it.each(liveRoutes.map((r) => [r.operationId] as const))('%s has a first call its route accepts', (operationId) => {
    const event = firstCallEvent(operationId, ctx) as APIGatewayProxyEvent;
    const validate = (validators as Record<string, ((data: unknown) => boolean) & { errors?: unknown }>)[operationId];
    if (!validate) throw new Error(`no generated validator for ${operationId}`);
    const ok = validate(asValidated(event));
    expect(validate.errors ?? [], `${operationId}: ${JSON.stringify(validate.errors)}`).toEqual([]);
    expect(ok).toBe(true);
  });

  it('has a first call for the authorizer', () => {
    expect(firstCallEvent('authorizer', ctx)).toMatchObject({ type: 'REQUEST' });
  });
});
