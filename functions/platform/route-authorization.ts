/**
 * The function's own check of the caller, behind the authorizer's: every route function
 * refuses a request that does not carry the authorizer's context (a principal and roles), and
 * one whose roles do not allow the function's route. API Gateway only invokes a function after
 * the authorizer allowed the route, so for the API this check never refuses. It stops what
 * reaches a function without the authorizer's decision: a method left without the authorizer,
 * a deputy that passes on an event it did not get from the authorizer, a role set the route
 * does not allow. It is not authentication: whoever may call `lambda:InvokeFunction` on the
 * function can write any context into an event. That is kept to API Gateway, for this method of
 * this API in this account, by the function's resource policy (infra/stack.ts, `allowMethodInvoke`).
 *
 * The roles of the route are the function's own, never the event's: the stack sets
 * `ROUTE_ROLES` on each function from its route table entry (one function per route), so an
 * event cannot name another route to borrow its roles. A missing or unreadable value refuses
 * every request (500): the function cannot tell who may call it.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { logger } from './logger.js';
import { Forbidden, InternalError } from './problem.js';
import { ROLES, type Role } from './route.js';

/** The variable naming the roles that may call the function's route: `admin,apiread`, or `public` for a route without authorizer. */
export const ROUTE_ROLES_VARIABLE = 'ROUTE_ROLES';

/** The value of {@link ROUTE_ROLES_VARIABLE} for a route: its roles joined by commas, or `public`. */
export const routeRolesValue = (roles: readonly Role[] | 'public'): string => (roles === 'public' ? 'public' : roles.join(','));

const isRole = (name: string): name is Role => (ROLES as readonly string[]).includes(name);

/**
 * The route's roles from the variable's value, `public`, or undefined when the value is not a
 * non-empty list of known roles (a configuration fault).
 */
export const parseRouteRoles = (raw: string | undefined): readonly Role[] | 'public' | undefined => {
  if (raw === 'public') return 'public';
  const names = (raw ?? '').split(',').map((n) => n.trim());
  return names.length > 0 && names.every(isRole) ? names : undefined;
};

/** The caller as the authorizer's context names it: principal and roles, or undefined when either is missing. */
export const authorizedCaller = (event: Pick<APIGatewayProxyEvent, 'requestContext'>): { principal: string; roles: readonly string[] } | undefined => {
  const context = (event.requestContext?.authorizer ?? {}) as Record<string, unknown>;
  // API Gateway sets `principalId` from the authorizer's answer; ours puts it in `principal` too.
  const principal = context['principal'] ?? context['principalId'];
  const roles = context['roles'];
  if (typeof principal !== 'string' || principal === '' || typeof roles !== 'string' || roles === '') return undefined;
  return { principal, roles: roles.split(',') };
};

/** The route's roles, from the environment; a configuration fault refuses the request (500). */
const routeRoles = (): readonly Role[] | 'public' => {
  const raw = process.env[ROUTE_ROLES_VARIABLE];
  const roles = parseRouteRoles(raw);
  if (roles === undefined) throw new InternalError(`configuration error: ${ROUTE_ROLES_VARIABLE} is not "public" or a list of roles`, { value: raw ?? null });
  return roles;
};

/**
 * Refuses (403 {@link Forbidden}) a request of a non-public route without the authorizer's
 * context, or whose roles allow none of the route's. Runs before anything reads a table.
 */
export const routeAuthorization = (): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: (request) => {
    const allowed = routeRoles();
    if (allowed === 'public') return;
    const caller = authorizedCaller(request.event);
    if (!caller) {
      logger.warn('request refused: no authorizer context');
      throw new Forbidden('The request carries no authorization for this route.');
    }
    if (!caller.roles.some((role) => (allowed as readonly string[]).includes(role))) {
      logger.warn('request refused: the caller’s roles do not allow this route', { principal: caller.principal, roles: caller.roles.join(',') });
      throw new Forbidden('The roles of this token do not allow this route.');
    }
  },
});
