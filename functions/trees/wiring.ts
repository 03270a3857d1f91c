/**
 * What the version, node, export and import handlers share: their dependencies (created once
 * per container), the caller's identity and the paths of what they create.
 */
import type { HttpEvent } from '../runtime/http.js';
import type { VersionDeps } from './version-service.js';
import { createVersionStore } from './version-store.js';

export const versionDeps: VersionDeps = {
  store: createVersionStore(),
  now: () => new Date(),
};

/** The caller's token subject as the authorizer passed it (`principal` in its context). */
export const callerOf = (event: HttpEvent<unknown>): string => {
  const authorizer = (event.requestContext?.authorizer ?? {}) as Record<string, unknown>;
  const subject = authorizer['principal'] ?? authorizer['principalId'];
  return typeof subject === 'string' && subject !== '' ? subject : 'unknown';
};

/** The path parameters the validator checked. */
export const params = (event: HttpEvent<unknown>): Record<string, string> => (event.pathParameters ?? {}) as Record<string, string>;

/**
 * The path of something created under the requested path, as the client addressed it (stage or
 * custom-domain base path included, from `requestContext.path`), so that `Location` resolves
 * against the request URL: `replace` swaps the request path's tail for the new resource's.
 */
export const locationFor = (event: HttpEvent<unknown>, tail: string, replace: string): string => {
  const requestPath = (event.requestContext?.path ?? '').replace(/\/+$/, '');
  return requestPath.endsWith(tail) ? `${requestPath.slice(0, -tail.length)}${replace}` : replace;
};
