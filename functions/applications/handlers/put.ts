/**
 * PUT /applications/{name}: replaces the application's settings in the active profile (omitted
 * ones take their defaults). The route's schema holds every application's members; a member of
 * another application is refused here, which makes the check exactly the application's own
 * schema (`GET /schema/applications/{name}`).
 */
import { putApplication as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { BadRequest } from '../../platform/problem.js';
import { APPLICATION_SETTINGS_SCHEMAS, applicationSettings } from '../../runtime/profile-model.js';
import { changeBy, refusalsAsProblems } from '../../profiles/service.js';
import { createProfileStore } from '../../runtime/profile-store.js';
import { applicationFromPath, applicationView } from '../service.js';

const store = createProfileStore();

export const handler = httpHandler<Record<string, unknown>>({ operation: 'putApplication', validate }, async (event) => {
  const name = applicationFromPath(event);
  const own = Object.keys(APPLICATION_SETTINGS_SCHEMAS[name]['properties'] as object);
  const foreign = Object.keys(event.body).filter((key) => !own.includes(key));
  if (foreign.length > 0) {
    throw new BadRequest(
      `The request is invalid: ${foreign.map((f) => `${f} is not a setting of ${name}`).join('; ')}.`,
      foreign.map((field) => ({ in: 'body' as const, field, message: `is not a setting of ${name}` })),
    );
  }
  const profile = await refusalsAsProblems(name, () => store.setApplicationSettings(name, applicationSettings(name, event.body), changeBy(event)));
  return json(200, applicationView(name, await store.runtime(), profile));
});
