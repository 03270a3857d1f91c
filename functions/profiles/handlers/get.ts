/** GET /profiles/{id}: one profile, with `active`. */
import { getProfile as validate } from '../../generated/validators.js';
import { httpHandler, json } from '../../runtime/http.js';
import { NotFound } from '../../platform/problem.js';
import { profileIdFromPath } from '../service.js';
import { createProfileStore } from '../../runtime/profile-store.js';

const store = createProfileStore();

export const handler = httpHandler({ operation: 'getProfile', validate }, async (event) => {
  const id = profileIdFromPath(event);
  const profile = await store.get(id);
  if (!profile) throw new NotFound(`No profile has the id ${id}.`);
  return json(200, profile);
});
