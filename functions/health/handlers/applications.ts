/**
 * `GET /health/applications` (admin, apiread): each application's state and the health of what
 * it depends on (see `application-health.ts`). 200 when every application is up; 503
 * (problem+json carrying the same `checkedAt` and `applications`) otherwise.
 */
import { getApplicationsHealth as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { APPLICATIONS } from '../../platform/applications.js';
import { ApplicationUnhealthy, applicationsHealth } from '../application-health.js';
import { NO_STORE } from '../about.js';
import { applicationHealthDeps } from '../application-wiring.js';

export const handler = httpHandler({ operation: 'getApplicationsHealth', validate }, async () => {
  const applications = await applicationsHealth(APPLICATIONS, applicationHealthDeps());
  const status = applications.every((a) => a.status === 'up') ? 'up' : 'down';
  const body = { status, health: status, checkedAt: applications[0]!.checkedAt, applications };
  if (status === 'up') return json(200, body, NO_STORE);
  const notUp = applications.filter((a) => a.status !== 'up').map((a) => `${a.name} (${a.status})`);
  throw new ApplicationUnhealthy(`Not every application is up: ${notUp.join(', ')}.`, { health: status, checkedAt: body.checkedAt, applications });
});
