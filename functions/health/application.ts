/**
 * `GET /health/applications/{name}` (admin, apiread): one application's state and the health of
 * what it depends on. 200 when it runs and every dependency answers; 503 (problem+json carrying
 * the same members) when it is stopped or a dependency is down; 404 for no such application.
 */
import { applicationFromPath } from '../applications/service.js';
import { getApplicationHealth as validate } from '../generated/validators.js';
import { httpHandler, json } from '../shared/http.js';
import { ApplicationUnhealthy, applicationsHealth } from './application-health.js';
import { NO_STORE } from './service.js';
import { applicationHealthDeps } from './application-wiring.js';

export const handler = httpHandler({ operation: 'getApplicationHealth', validate }, async (event) => {
  const [health] = await applicationsHealth([applicationFromPath(event)], applicationHealthDeps());
  if (health!.status === 'up') return json(200, health, NO_STORE);
  throw new ApplicationUnhealthy(`The application ${health!.name} is ${health!.status}.`, { ...health });
});
