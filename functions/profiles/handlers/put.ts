/**
 * PUT /profiles/{id}: replaces a profile's settings (omitted ones take their defaults). When the
 * profile is the active one, every warm function follows within the settings cache period (10 s).
 */
import { putProfile as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { profileSettings } from '../../runtime/profile-model.js';
import { changeBy, profileIdFromPath, refusalsAsProblems } from '../service.js';
import { createProfileStore } from '../../runtime/profile-store.js';

const store = createProfileStore();

export const handler = httpHandler({ operation: 'putProfile', validate }, async (event) => {
  const id = profileIdFromPath(event);
  return json(200, await refusalsAsProblems(id, () => store.replace(id, profileSettings(event.body), changeBy(event))));
});
