/**
 * PUT /profiles/{id}/active: makes the profile the active one. One transaction moves the
 * active-profile pointer, checked against the profile's existence and the pointer as read, so
 * the previous profile stops being active in the same write and no reader sees two or none.
 */
import { activateProfile as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { changeBy, profileIdFromPath, refusalsAsProblems } from '../service.js';
import { createProfileStore } from '../../runtime/profile-store.js';

const store = createProfileStore();

export const handler = httpHandler({ operation: 'activateProfile', validate }, async (event) => {
  const id = profileIdFromPath(event);
  const { profile, previous } = await refusalsAsProblems(id, () => store.activate(id, changeBy(event)));
  return json(200, { ...profile, previous });
});
