/**
 * `GET /health/applications/{name}` (admin, apiread): one application's state and the health of
 * what it depends on. 200 when it runs and every dependency answers; 503 (problem+json carrying
 * the same members, the application's status as `health`) when it is stopped or a dependency
 * is down; 404 for no such application.
 */
import { applicationFromPath } from '../../applications/service.js';
import { getApplicationHealth as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { ApplicationUnhealthy, applicationsHealth } from '../application-health.js';
import { NO_STORE } from '../about.js';
import { applicationHealthDeps } from '../application-wiring.js';

export const handler = httpHandler({ operation: 'getApplicationHealth', validate }, async (event) => {
  const [health] = await applicationsHealth([applicationFromPath(event)], applicationHealthDeps());
  const { status, ...rest } = health!;
  if (status === 'up') return json(200, { ...health, health: status }, NO_STORE);
  // In a problem, `status` is the HTTP status: the application's is `health`.
  throw new ApplicationUnhealthy(`The application ${rest.name} is ${status}.`, { ...rest, health: status });
});
