/**
 * PUT /applications/{name}/loglevel `{ level }`: the application's log level, kept in the active
 * profile; every function of the application logs at it within the settings cache period (10 s).
 */
import { setApplicationLogLevel as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import type { ProfileLogLevel } from '../../runtime/profile-model.js';
import { changeBy, refusalsAsProblems } from '../../profiles/service.js';
import { createProfileStore } from '../../runtime/profile-store.js';
import { applicationFromPath, applicationView } from '../service.js';

const store = createProfileStore();

export const handler = httpHandler<{ readonly level: ProfileLogLevel }>({ operation: 'setApplicationLogLevel', validate }, async (event) => {
  const name = applicationFromPath(event);
  const profile = await refusalsAsProblems(name, () => store.setApplicationLogLevel(name, event.body.level, changeBy(event)));
  return json(200, applicationView(name, await store.runtime(), profile));
});
