/**
 * What the application routes share: the application named by the path, and the view of an
 * application (its run state, its settings in the active profile, its routes).
 */
import { APPLICATIONS, APPLICATION_DESCRIPTIONS, isApplicationName, type ApplicationName } from '../platform/applications.js';
import type { HttpEvent } from '../runtime/http.js';
import { NotFound } from '../platform/problem.js';
import { indexedRoutes } from '../generated/route-index.js';
import type { Profile, ProfileLogLevel } from '../runtime/profile-model.js';
import type { ApplicationRun, RuntimeRecord } from '../runtime/profile-store.js';

export interface ApplicationView extends ApplicationRun {
  readonly name: ApplicationName;
  readonly description: string;
  /** The level its functions log at: its own, else the profile's. */
  readonly logLevel: ProfileLogLevel;
  /** Its settings in the active profile, every default filled in. */
  readonly settings: Profile['applications'][ApplicationName];
  /** The id of the active profile. */
  readonly profile: string;
  /** Its routes, `METHOD /path`: each answers 503 while it is stopped. */
  readonly routes: readonly string[];
}

/** The application of the path's `name`; 404 naming the applications there are otherwise. */
export const applicationFromPath = (event: HttpEvent<unknown>): ApplicationName => {
  const name = event.pathParameters?.['name'];
  if (isApplicationName(name)) return name;
  throw new NotFound(`No application has this name; the applications are ${APPLICATIONS.join(' and ')}.`);
};

const routesOf = (name: ApplicationName): string[] => indexedRoutes.filter((r) => r.application === name).map((r) => `${r.method} ${r.path}`);

export const applicationView = (name: ApplicationName, runtime: RuntimeRecord, profile: Profile): ApplicationView => ({
  name,
  description: APPLICATION_DESCRIPTIONS[name],
  ...runtime.applications[name],
  logLevel: profile.applications[name].logLevel ?? profile.logLevel,
  settings: profile.applications[name],
  profile: profile.id,
  routes: routesOf(name),
});
