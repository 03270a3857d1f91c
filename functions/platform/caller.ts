/**
 * Who made a request, as the Lambda authorizer passed it to the function: its context's
 * `principal` (the token subject; `principalId` beside it) and `roles` (comma-separated). The
 * audit trail names this caller on every log line of the request (`http-core.ts`) and in the
 * access log (infra/stack.ts).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { InternalError } from './problem.js';

export interface Caller {
  /** The token subject (`sub`). */
  readonly subject: string;
  /** The granted roles the authorizer found in the token, in its order. */
  readonly roles: readonly string[];
}

/** The request's caller, or none for a request no authorizer saw (a public route). */
export const requestCaller = (event: Pick<APIGatewayProxyEvent, 'requestContext'>): Caller | undefined => {
  const authorizer = (event.requestContext?.authorizer ?? {}) as Record<string, unknown>;
  const subject = authorizer['principal'] ?? authorizer['principalId'];
  if (typeof subject !== 'string' || subject === '') return undefined;
  const roles = typeof authorizer['roles'] === 'string' ? authorizer['roles'].split(',').filter(Boolean) : [];
  return { subject, roles };
};

/** The caller's token subject on a route behind the authorizer, which always passes one (500 naming `route` otherwise). */
export const callerSubject = (event: Pick<APIGatewayProxyEvent, 'requestContext'>, route: string): string => {
  const caller = requestCaller(event);
  if (!caller) throw new InternalError(`${route} was reached without the authorizer context`);
  return caller.subject;
};
