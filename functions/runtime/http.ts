/**
 * The HTTP handler of every function that may read the active profile: the shared middleware
 * stack (`http-core.ts`) with the profile applied to each request, its log level and the gate of
 * stopped applications.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { applicationOf, type ApplicationName } from '../platform/applications.js';
import { buildHttpHandler, type HandlerOptions, type HttpRun } from '../platform/http-core.js';
import { logger } from '../platform/logger.js';
import { HttpProblem } from '../platform/problem.js';
import { containerSettings, logLevelOf, type SettingsSnapshot } from './settings.js';

export * from '../platform/http-core.js';

/** Seconds a client is told to wait before retrying a route of a stopped application. */
export const STOPPED_RETRY_AFTER_SECONDS = 30;

/** 503: the route belongs to an application an administrator stopped (`PUT /applications/{name}/stop`). */
export class ApplicationStopped extends HttpProblem {
  constructor(readonly application: ApplicationName) {
    super(
      503,
      'application-stopped',
      'Service Unavailable',
      `The application ${application} is stopped (as this function read its state, at most 10 s ago); PUT /applications/${application}/start starts it, and every function follows within 10 s.`,
      { application },
      { 'Retry-After': String(STOPPED_RETRY_AFTER_SECONDS) },
    );
  }
}

const stopped = (snapshot: SettingsSnapshot, application: ApplicationName): boolean => snapshot.applications[application].state === 'STOPPED';

/**
 * The active profile, applied to every request of a function that may read it: the log level
 * (the application's own, else the profile's), and the gate: every route of a stopped
 * application answers 503 {@link ApplicationStopped}. A route belongs to the application its
 * path starts with (`event.resource`, the route's path template); the routes of applications,
 * profiles and health belong to none, so they always answer. Settings are reused for 10 s
 * (`runtime/settings.ts`): a stop or a start reaches every warm container within that bound.
 */
export const activeProfile = (): middy.MiddlewareObj<APIGatewayProxyEvent> => ({
  before: async (request) => {
    const settings = containerSettings();
    if (!settings) return;
    const application = applicationOf(request.event.resource);
    const snapshot = await settings.current();
    logger.setLevel(logLevelOf(snapshot, application));
    if (application && stopped(snapshot, application)) throw new ApplicationStopped(application);
  },
});

/** Wraps a business function as a Lambda proxy handler that follows the active profile. */
export const httpHandler = <TBody = unknown>(options: HandlerOptions, run: HttpRun<TBody>) => buildHttpHandler(options, run, activeProfile());
